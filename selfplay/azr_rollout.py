"""One Absolute-Zero round inside trl's GRPO rollout: propose, validate, estimate, solve, reward.

The trainer's dataset holds placeholder rows, one per *slot* (a role and a task type:
``propose:deduction`` ... ``solve:induction``); trl repeats each ``num_generations`` times and
hands the whole rollout batch to ``AZRRollout``, which replaces every placeholder with the real
prompt of that round and returns the real prompt ids, so the policy gradient is taken on what
the policy saw (trl's ``rollout_func`` contract: other fields go to the reward function):

1. **propose**: each propose slot of type *t* gets one proposer prompt (docs of sampled
   functions, a worked example, references drawn from the *t* buffer; ``selfplay.proposer``)
   and its group of completions is parsed and validated (``selfplay.validate``: sandbox,
   determinism, grading integrity, NumPy twin).
2. **estimate**: each accepted program becomes a *t* task (``azr_tasks.make_task``) that the
   current policy answers ``num_generations`` times; the pass rate ``p`` gives the proposal's
   learnability reward (0 at p = 0 or 1, else 1 - p), and the program joins the *t* buffer.
3. **solve**: each solve slot of type *t* draws a program from the *t* buffer (uniformly, as
   Absolute-Zero does), and its group answers the *t* task made from it; each answer is graded
   by execution (``azr_tasks.grade_many``).
4. **reward**: Absolute-Zero's table as its reference code pays it (``selfplay.azr_rewards``):
   a kept program its learnability, or ``wrong_penalty`` when the solver always or never solves
   it; an invalid program, a copy of one the proposer was shown (reason ``copied``: a verbatim
   copy would pass validation for free), an unreadable or cut-off answer (reason ``truncated``)
   ``format_penalty``; an answer 1 if right, ``wrong_penalty`` if readable but wrong,
   ``format_penalty`` if unreadable; a grader fault nothing (advantage 0). ``AZRReward`` hands
   these to trl with their slot as the key of the task-relative baseline
   (TRR++, ``learners.training.rl_reward.task_relative_advantages``).

Every round's figures go to the round log (``RoundRecord``: proposals, accepted, rejections by
reason, solve rate and learnability of the accepted programs, per-type solver pass rates), and
every proposal's text and fate to ``round-<n>/proposals.jsonl`` beside it.
"""

from __future__ import annotations

import ast
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sebench.errors import SettingError
from selfplay.azr_rewards import Penalties, proposer_reward, solver_reward
from selfplay.azr_tasks import TASK_TYPES, SolverTask, grade_many, make_task
from selfplay.curriculum import RoundLog, RoundRecord, learnability, write_results
from selfplay.reasons import Reason, Rejected
from selfplay.validate import Accepted, ValidationReport

if TYPE_CHECKING:
    from envs.zwc import ZWCEnv
    from selfplay.buffer import TaskBuffer
    from selfplay.proposer import Proposer
    from selfplay.validate import Validator

ROLES = ("propose", "solve")
PLACEHOLDER = "absolute-zero slot {slot} #{row}"  # a dataset row's prompt; never shown to the model


def slots_for(task_types: tuple[str, ...] | list[str] = TASK_TYPES) -> tuple[str, ...]:
    """The slots of a round over ``task_types``: each role for each type (Absolute-Zero's
    ablations drop a type: its proposer and its solver go together)."""
    unknown = [k for k in task_types if k not in TASK_TYPES]
    if unknown or not task_types or len(set(task_types)) != len(task_types):
        raise SettingError(f"task types must be distinct names among {', '.join(TASK_TYPES)} (got "
                         f"{', '.join(map(str, task_types)) or 'none'})")
    ordered = [k for k in TASK_TYPES if k in task_types]
    return tuple(f"{role}:{kind}" for role in ROLES for kind in ordered)


SLOTS = slots_for(TASK_TYPES)


def slot_rows(copies: int, slots: tuple[str, ...] = SLOTS) -> list[dict]:
    """The trainer's dataset: ``copies`` placeholder rows per slot, each distinct."""
    rows, number = [], 0
    for _ in range(copies):
        for slot in slots:
            rows.append({"prompt": [{"role": "user", "content": PLACEHOLDER.format(slot=slot, row=number)}]})
            number += 1
    return rows


def slot_of(prompt: list[dict[str, str]]) -> str:
    text = prompt[-1]["content"]
    if not text.startswith("absolute-zero slot "):
        raise ValueError(f"not an Absolute-Zero placeholder prompt: {text[:80]!r}")
    return text.split()[2]


@dataclass
class AZRRollout:
    """trl ``rollout_func`` doing one Absolute-Zero round per rollout batch (module docstring)."""

    env: ZWCEnv
    proposer: Proposer
    validator: Validator
    buffers: dict[str, TaskBuffer]
    log: RoundLog
    penalties: Penalties = field(default_factory=Penalties)
    docs_chars: int | None = 1200
    seed: int = 0
    say: Any = None  # progress text, or None
    rounds_done: int = 0

    def __call__(self, prompts: list, trainer) -> dict[str, Any]:
        started = time.perf_counter()
        number = self.log.next_round
        rng = random.Random(f"{self.seed}-azr-{number}")
        size = trainer.num_generations
        slots = [slot_of(p) for p in prompts]
        groups = [list(range(i, i + size)) for i in range(0, len(prompts), size)]
        for group in groups:
            if len({prompts[i][-1]["content"] for i in group}) != 1:
                raise RuntimeError("the rollout batch is not in groups of num_generations copies of one row")
        real: list[list[dict[str, str]] | None] = [None] * len(prompts)
        rewards: list[float | None] = [0.0] * len(prompts)
        texts: list[str] = [""] * len(prompts)
        finished: list[bool] = [True] * len(prompts)
        ids: dict[str, list] = {"prompt": [None] * len(prompts), "completion": [None] * len(prompts),
                                "logprobs": [None] * len(prompts)}

        # 1. propose
        proposing = [g for g in groups if slots[g[0]].startswith("propose:")]
        requests = {}
        for n, group in enumerate(proposing):
            kind = slots[group[0]].split(":")[1]
            request = self.proposer.requests(1, references=self.buffers[kind].tasks(),
                                             round=number * 100 + n)[0]
            requests[group[0]] = request
            for i in group:
                real[i] = request.prompt
        self._say(f"round {number}: proposing {len(proposing) * size}")
        self._generate(trainer, [i for g in proposing for i in g], real, texts, ids, finished)
        items, owners = [], []
        for group in proposing:
            for i in group:
                item = self.proposer.parse(requests[group[0]], texts[i])
                items.append(cut_off(item, finished[i], trainer.max_completion_length))
                owners.append(i)
        self._say(f"round {number}: validating {len(items)}")
        results = self.validator.validate_many(items) if items else []

        # 2. estimate each kept program's learnability with the current policy; a copy of a program
        # the proposer was shown (a worked example, a buffer reference, a seed) is not new
        known = self._known_programs()
        copied = 0
        # keyed by (type, task): a program proposed under two types is estimated, paid and buffered
        # as each, never paid from the other type's estimate
        kept: dict[tuple[str, str], Accepted] = {}
        for n, (i, result) in enumerate(zip(owners, results, strict=True)):
            if isinstance(result, Accepted) and program_key(result.task.reference) in known:
                results[n] = Rejected(Reason.COPIED, "the program of a task the proposer was shown",
                                      result.proposal.text, result.proposal.functions)
                copied += 1
            elif isinstance(result, Accepted):
                kept.setdefault((slots[i].split(":")[1], result.task.task_id), result)
        write_results(self.log.path.parent / f"round-{number}" / "proposals.jsonl", results,
                      kinds=[slots[i].split(":")[1] for i in owners])
        estimates = self._estimate(trainer, kept, rng, number)
        for i, item, result in zip(owners, items, results, strict=True):
            outcomes = estimates[(slots[i].split(":")[1], result.task.task_id)] if isinstance(result, Accepted) \
                else None
            rewards[i] = proposer_reward(item, result, outcomes, self.penalties)
        new = 0
        for (kind, task_id), result in kept.items():
            outcomes = estimates[(kind, task_id)]
            if not outcomes:
                continue
            added = self.buffers[kind].add(result.task, round=number, pass_rate=sum(outcomes) / len(outcomes),
                                           learnability=learnability(outcomes))
            new += added is not None

        # 3. solve programs drawn from the buffers
        solving = [g for g in groups if slots[g[0]].startswith("solve:")]
        items_by_row: dict[int, SolverTask] = {}
        for group in solving:
            kind = slots[group[0]].split(":")[1]
            entries = self.buffers[kind].entries
            if not entries:
                raise RuntimeError(f"the {kind} buffer is empty: seed it before training (seed_tasks >= 1)")
            task = rng.choice(entries).task
            item = make_task(self.env, kind, task, rng.randrange(len(task.test_cases)), self.docs_chars)
            for i in group:
                real[i], items_by_row[i] = item.prompt, item
        self._say(f"round {number}: solving {len(solving)} tasks x {size}")
        rows = [i for g in solving for i in g]
        self._generate(trainer, rows, real, texts, ids, finished)
        graded = grade_many(self.env, [items_by_row[i] for i in rows], [texts[i] for i in rows])
        kinds = [k for k in TASK_TYPES if f"solve:{k}" in slots or f"propose:{k}" in slots]
        solved: dict[str, list[bool]] = {kind: [] for kind in kinds}
        for i, verdict in zip(rows, graded, strict=True):
            rewards[i] = solver_reward(verdict.passed, verdict.formatted, verdict.fault, self.penalties)
            if not verdict.fault:  # a grader fault is no outcome of the solver's
                solved[items_by_row[i].kind].append(verdict.passed)

        # 4. the round's record
        report = ValidationReport.of(results)
        per_task = [v for v in estimates.values() if v]
        extra = {"proposer_reward": {k: _mean([rewards[i] for g in proposing for i in g
                                               if slots[i] == f"propose:{k}" and rewards[i] is not None])
                                     for k in kinds},
                 "grader_faults": sum(r is None for r in rewards),
                 "solver_pass_rate": {k: _mean(v) for k, v in solved.items()},
                 "buffers": {k: len(b) for k, b in self.buffers.items()}, "new_tasks": new, "copies": copied,
                 "step": trainer.state.global_step}
        self.log.append(RoundRecord.from_round(number, report, per_task, seconds=time.perf_counter() - started,
                                               **extra))
        self.rounds_done += 1
        trainer.last_rollout = {"slots": slots, "rewards": list(rewards)}
        logprobs = None if any(lp is None for lp in ids["logprobs"]) else ids["logprobs"]
        return {"prompt_ids": ids["prompt"], "completion_ids": ids["completion"], "logprobs": logprobs,
                "azr_reward": rewards, "azr_key": slots}

    def _known_programs(self) -> set[str]:
        """The programs a proposal may not copy: every buffer's and every worked example's."""
        tasks = [t for b in self.buffers.values() for t in b.tasks()] + [t for t, _ in self.proposer.examples]
        return {program_key(t.reference) for t in tasks if t.reference}

    def _estimate(self, trainer, kept: dict[tuple[str, str], Accepted], rng: random.Random,
                  number: int) -> dict[tuple[str, str], list[bool]]:
        """Per kept program, whether each of ``num_generations`` answers of the current policy to
        a task of its type passed."""
        if not kept:
            return {}
        size = trainer.num_generations
        self._say(f"round {number}: estimating learnability of {len(kept)} programs x {size}")
        items = [make_task(self.env, kind, result.task, rng.randrange(len(result.task.test_cases)), self.docs_chars)
                 for (kind, _), result in kept.items()]
        rows = list(range(len(items) * size))
        real = [items[i // size].prompt for i in rows]
        texts = [""] * len(rows)
        scratch = {"prompt": [None] * len(rows), "completion": [None] * len(rows), "logprobs": [None] * len(rows)}
        self._generate(trainer, rows, real, texts, scratch)
        graded = grade_many(self.env, [items[i // size] for i in rows], texts)
        # a grader fault is no outcome: left out (a program with none left earns nothing and is not kept)
        return {key: [graded[n * size + j].passed for j in range(size) if not graded[n * size + j].fault]
                for n, key in enumerate(kept)}

    @staticmethod
    def _generate(trainer, rows: list[int], real: list, texts: list[str], ids: dict[str, list],
                  finished: list[bool] | None = None) -> None:
        """Generate one completion for each row in ``rows`` (groups of num_generations copies of
        one prompt) through the trainer's own generation path; fill ids, texts and whether each
        ended by itself (an end-of-turn token before the cap) in place."""
        if not rows:
            return
        prompt_ids, _, _ = trainer._tokenize_prompts([real[i] for i in rows])
        completion_ids, logprobs = trainer._generate_single_turn(prompt_ids, None, {}, trainer.num_generations)
        decoded = trainer.processing_class.batch_decode(completion_ids, skip_special_tokens=True)
        for n, i in enumerate(rows):
            ids["prompt"][i], ids["completion"][i] = prompt_ids[n], completion_ids[n]
            ids["logprobs"][i] = logprobs[n] if logprobs is not None else None
            texts[i] = decoded[n]
            if finished is not None:  # trl's own end ids: the tokenizer's and every one the model declares
                finished[i] = bool(completion_ids[n]) and completion_ids[n][-1] in trainer.eos_token_ids

    def _say(self, text: str) -> None:
        if self.say is not None:
            self.say(text)


def program_key(source: str) -> str:
    """A program's identity up to formatting, comments, docstrings, import aliases and the names
    of its own variables (the AST without docstrings, aliases resolved, every parameter and local
    renamed ``v0, v1, ...`` in order of appearance): a shown program with ``x`` renamed ``y`` is a
    copy. Library calls (``zwc.kocito``), builtins and function names keep their names."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source.strip()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    _canonical_names(tree)
    return ast.dump(tree, annotate_fields=False)


def _canonical_names(tree: ast.AST) -> None:
    """In place: import aliases become what they name (``import zwc as z`` is ``import zwc``), and
    the names a program binds (parameters, assigned names) become ``v0, v1, ...``."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname], alias.asname = alias.name, None
    bound = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    bound |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    uses = sorted((n for n in ast.walk(tree) if isinstance(n, ast.arg | ast.Name)),
                  key=lambda n: (n.lineno, n.col_offset))
    names: dict[str, str] = {}
    for node in uses:
        name = node.arg if isinstance(node, ast.arg) else node.id
        if name in bound:
            new = names.setdefault(name, f"v{len(names)}")
        elif name in aliases:
            new = aliases[name]
        else:
            continue
        if isinstance(node, ast.arg):
            node.arg = new
        else:
            node.id = new


def cut_off(parsed, finished: bool, cap: int):
    """A proposal the parser refused because the answer was cut at the token cap is ``truncated``
    (what it was where the cut fell, say ``syntax_error`` inside the INPUTS list, is not the
    proposer's mistake of form); anything else as the parser made it."""
    if finished or not isinstance(parsed, Rejected):
        return parsed
    return Rejected(Reason.TRUNCATED, f"the answer reached the cap of {cap} tokens before it ended "
                    f"({parsed.reason.value} where it was cut)", parsed.text, parsed.functions)


def _mean(values: list) -> float | None:
    return round(sum(map(float, values)) / len(values), 4) if values else None


class AZRReward:
    """trl reward function: the rewards ``AZRRollout`` computed, and their slots as the keys of the
    task-relative baseline (``last``, ``last_keys``, ``log`` as ``SandboxReward`` keeps them)."""

    __name__ = "absolute_zero"

    def __init__(self, log: Path | None = None):
        self.log = log
        self.last: list[float] = []
        self.last_keys: list[str] = []
        self.history: list[float] = []  # the solver's pass rate per rollout batch
        self.completions = self.passed = 0
        self.failures: Counter[str] = Counter()
        self.seconds = 0.0

    def __call__(self, prompts, completions, azr_reward, azr_key, trainer_state=None, **_: Any) -> list[float]:
        from learners.training.rl_reward import append_record

        # None: a grader fault, no reward (its advantage is 0 and it stays out of its key's baseline)
        self.last = [None if r is None else float(r) for r in azr_reward]
        self.last_keys = list(azr_key)
        solved = [r for r, k in zip(self.last, self.last_keys, strict=True) if k.startswith("solve:") and r is not None]
        passed = sum(1 for r in solved if r == 1.0)
        self.completions += len(solved)
        self.passed += passed
        self.failures.update({"passed": passed, "failed": len(solved) - passed})
        self.history.append(round(passed / len(solved), 4) if solved else 0.0)
        if self.log is not None:
            by_slot: dict[str, list[float]] = {}
            for r, k in zip(self.last, self.last_keys, strict=True):
                if r is not None:
                    by_slot.setdefault(k, []).append(r)
            step = trainer_state.global_step if trainer_state is not None else None
            append_record(self.log, {"event": "rollout", "step": step, "completions": len(solved), "passed": passed,
                               "pass_rate": self.history[-1], "failures": {"failed": len(solved) - passed},
                               "mean_reward": {k: _mean(v) for k, v in by_slot.items()}})
        return [0.0 if r is None else r for r in self.last]  # trl's own mean; the advantage reads ``last``
