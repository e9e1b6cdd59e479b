"""The round loop (RoundLoop): propose -> validate -> solve -> learn, resumable, with the learnability
reward per round. The teacher proposes (smollm2 cannot keep the format) and the reference solves:
the loop is under test, not the models. Each round re-proposes its own train tasks, so every
round adds new tasks to the buffer."""

import json
import threading

import pytest

from agents import Agent
from agents.models import load_model
from agents.models.base import Completion, check_generate_args
from selfplay.buffer import TaskBuffer
from selfplay.curriculum import RoundLog, RoundLoop
from selfplay.teacher import TeacherProposer


class HalfRight:
    """A solver that answers each prompt right (the reference solution) the first time it sees
    it and wrong the second: with two samples per task, each task's pass rate is exactly 1/2."""

    name = "half-right"

    def __init__(self, reference):
        self.reference, self.seen, self.lock = reference, {}, threading.Lock()

    def generate(self, prompts, *, n=1, temperature=0.0, max_tokens=512, stop=None):
        check_generate_args(prompts, n, temperature, max_tokens)
        out = []
        for prompt in prompts:
            key = prompt[-1]["content"]
            with self.lock:
                self.seen[key] = self.seen.get(key, 0) + 1
                first = self.seen[key] == 1
            text = self.reference.answer(prompt) if first else "I give up."
            out.append([Completion(text, tokens=len(text.split()))] * n)
        return out


class Killed(Exception):
    """Stands for a SIGKILL inside a round: the round's record is never written."""


def teacher_by_round(env, per_round=2):
    """Round r re-proposes train tasks [r * per_round, (r + 1) * per_round): new tasks each round."""
    train = env.tasks("train")
    return lambda r: TeacherProposer(env, train[r * per_round:(r + 1) * per_round])


def test_a_finished_round_is_not_redone_and_a_killed_one_is_redone_whole(task_env, tmp_path, capsys):
    proposer, learned = teacher_by_round(task_env), []

    def learn_then_die_in_round_1(work):
        (work.directory / "half-written.bin").write_bytes(b"x")
        if work.number == 1:
            raise Killed("in round 1, after its tasks reached the buffer")
        learned.append(work.number)
        return {"kept": len(work.tasks)}

    loop = RoundLoop(tmp_path, task_env, rounds=2, proposals=2, samples=1)
    with pytest.raises(Killed):
        loop.run(proposer, lambda r: Agent(model="reference"), learn_then_die_in_round_1)
    assert learned == [0] and RoundLog.in_run(tmp_path).finished == {0}
    killed_buffer = TaskBuffer.in_run(tmp_path, "sebench")
    assert killed_buffer.last_round == 1  # the killed round's tasks were written before it died

    def learn(work):
        assert not (work.directory / "half-written.bin").exists()  # a redone round starts afresh
        learned.append(work.number)
        return {"kept": len(work.tasks)}

    again = RoundLoop(tmp_path, task_env, rounds=2, proposals=2, samples=1)
    log = again.run(proposer, lambda r: Agent(model="reference"), learn)
    assert again.resumed_from == 1 and learned == [0, 1], "round 0 was finished: it must not run again"
    assert [r.round for r in log.records] == [0, 1]
    buffer = TaskBuffer.in_run(tmp_path, "sebench")
    per_round = {r: sorted(e.task.task_id for e in buffer if e.round == r) for r in (0, 1)}
    assert per_round[1] == sorted(e.task.task_id for e in killed_buffer if e.round == 1)  # redone, held once
    assert len(buffer) == sum(r.extra["new_tasks"] for r in log.records) == log.records[0].accepted + \
        log.records[1].accepted
    assert (tmp_path / "rounds.png").read_bytes()[:4] == b"\x89PNG"
    proposals = [json.loads(line) for line in (tmp_path / "round-1" / "proposals.jsonl").read_text().splitlines()]
    assert len(proposals) == 2 and all(p["text"].startswith("```python") for p in proposals)
    assert "round 1: " in capsys.readouterr().err

    RoundLoop(tmp_path, task_env, rounds=2, proposals=2, samples=1).run(proposer, lambda r: Agent(model="reference"),
                                                                       learn)
    assert learned == [0, 1], "a finished run does nothing when run again"
    RoundLoop(tmp_path, task_env, rounds=3, proposals=2, samples=1).run(proposer, lambda r: Agent(model="reference"),
                                                                       learn)
    assert learned == [0, 1, 2] and RoundLog.in_run(tmp_path).next_round == 3  # more rounds go on from the last


def test_learnability_per_round_is_one_minus_the_pass_rate_and_zero_when_always_solved(task_env, tmp_path, capsys):
    reference = load_model("reference", tasks=task_env.tasks("train"), mapping=task_env.mapping)
    solvers = {0: Agent(model=HalfRight(reference)), 1: Agent(model="reference")}
    loop = RoundLoop(tmp_path, task_env, rounds=2, proposals=2, samples=2)
    log = loop.run(teacher_by_round(task_env), solvers.__getitem__)
    half, always = log.records
    assert half.accepted >= 1 and always.accepted >= 1
    assert half.extra["episodes"] == 2 * half.accepted and half.extra["solver"] == "half-right"
    assert half.solve_rate == 0.5 and half.learnability == 0.5  # 1 - p, with p = 1/2 on every task
    assert always.solve_rate == 1.0 and always.learnability == 0.0  # always solved: nothing to learn
    buffer = TaskBuffer.in_run(tmp_path, "sebench")
    assert {(e.round, e.metadata["pass_rate"], e.metadata["learnability"]) for e in buffer} == {(0, 0.5, 0.5),
                                                                                               (1, 1.0, 0.0)}
    assert "solve rate 0.50, learnability 0.50" in capsys.readouterr().err


def test_the_loop_refuses_empty_rounds(task_env, tmp_path):
    for bad in ({"rounds": 0}, {"proposals": 0}, {"samples": 0}):
        with pytest.raises(ValueError, match=f"{next(iter(bad))} must be >= 1"):
            RoundLoop(tmp_path, task_env, **{"rounds": 1, "proposals": 1, **bad})
