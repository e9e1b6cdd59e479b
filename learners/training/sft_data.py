"""Trajectory collection for SFT: rejection-sampled, open-book rollouts on train tasks.

Each train task is tried ``samples`` times in mode ``open`` (the task's docs in the prompt)
by the gathering model (the agent's own, or a teacher: another backend, or ``reference``);
only passing answers are kept. A kept sample holds *both* prompts (with the docs, as it was
generated, and the same prompt without them) and the response, so Open-SFT and Closed-SFT
train on identical responses and differ only in what the prompt shows: the paper's
Open-Book Paradox, isolated.

The file is JSON lines, written as tasks finish (a killed collection resumes), and loads
with ``datasets``: ``load_dataset("json", data_files=path)``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import EllipsisType
from typing import TYPE_CHECKING

from pydantic import BaseModel

from agents.prompts import first_prompt
from sebench.errors import DataError, SettingError

if TYPE_CHECKING:
    from agents.agent import Agent
    from agents.trajectory import Trajectory
    from envs.zwc import Task, ZWCEnv


class SFTSample(BaseModel):
    task_id: str
    functions: list[str]            # the task's numpy functions (selected_functions)
    sample: int
    prompt_open: list[dict[str, str]]
    prompt_closed: list[dict[str, str]]
    completion: str
    source: str                     # the model that generated the response
    role: str = "solver"            # whose turn it trains: "solver" (a task's answer) or "proposer" (a proposal,
                                    # SFT self-play), each role with its own token budget (sft_train.train_sft)

    def as_prompt_completion(self, variant: str) -> dict:
        """trl's conversational prompt-completion row for ``open`` or ``closed``."""
        prompt = self.prompt_open if variant == "open" else self.prompt_closed
        return {"prompt": prompt, "completion": [{"role": "assistant", "content": self.completion}]}


@dataclass
class CollectReport:
    tasks: int = 0
    attempts: int = 0
    kept: int = 0          # samples this run added
    in_file: int = 0       # samples in the file, earlier (resumed) runs included
    duplicates: int = 0
    resumed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    source: str = ""
    generated_tokens: int = 0  # what the gatherer generated in this run's attempts (a cost: the report's column)

    @property
    def acceptance(self) -> float:
        return self.kept / self.attempts if self.attempts else 0.0


def read_samples(path: str | Path) -> list[SFTSample]:
    """The samples of a collection file; a last line cut short by a kill is skipped."""
    path = Path(path)
    if not path.is_file():
        return []
    samples, lines = [], path.read_text().splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            samples.append(SFTSample.model_validate_json(line))
        except ValueError as exc:
            if number == len(lines):
                break  # the write a kill interrupted
            raise DataError(f"{path}:{number}: not an SFT sample ({exc}); delete the line or the file") from None
    return samples


def _done_tasks(path: Path) -> set[str]:
    """Tasks whose attempts are all recorded (a marker line per finished task)."""
    marker = path.with_suffix(".done")
    return set(marker.read_text().split()) if marker.is_file() else set()


def collect(agent: Agent, env: ZWCEnv, tasks: list[Task], out: str | Path, *, samples: int = 1,
            progress: Callable[[int, int], None] | None = None,
            docs_chars: int | None | EllipsisType = ...) -> CollectReport:
    """Roll out ``samples`` open-book attempts per task with ``agent`` and keep what passes.

    ``agent`` is the gathering agent (its model is the source). Appends to ``out``; tasks
    already finished there are skipped, so a killed collection resumes.
    """
    if samples < 1:
        raise SettingError(f"samples must be >= 1, got {samples}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _done_tasks(out)
    pending = [t for t in tasks if t.task_id not in done]
    report = CollectReport(tasks=len(tasks), resumed=len(tasks) - len(pending), source=agent.name)
    by_id = {t.task_id: t for t in pending}
    finished: dict[str, list[Trajectory]] = {t.task_id: [] for t in pending}
    lock = threading.Lock()
    temperature = agent.temperature  # rejection sampling: every attempt drawn at the agent's temperature

    with out.open("a") as handle, out.with_suffix(".done").open("a") as marker:
        def on_done(trajectory: Trajectory) -> None:
            with lock:
                report.attempts += 1
                report.generated_tokens += trajectory.tokens
                report.failures[trajectory.failure.value] = report.failures.get(trajectory.failure.value, 0) + 1
                finished[trajectory.task_id].append(trajectory)
                if len(finished[trajectory.task_id]) < samples:
                    return
                tried = finished.pop(trajectory.task_id)
                for sample in passing_samples(by_id[trajectory.task_id], tried, env, report):
                    handle.write(sample.model_dump_json() + "\n")
                    report.kept += 1
                handle.flush()
                os.fsync(handle.fileno())
                marker.write(trajectory.task_id + "\n")
                marker.flush()
                if progress is not None:
                    progress(report.tasks - report.resumed - len(finished), report.tasks - report.resumed)

        agent.run_episodes(env, [(t, s) for t in pending for s in range(samples)], phase="train", mode="open",
                           temperature=temperature, on_done=on_done, docs_chars=docs_chars)
    report.in_file = len(read_samples(out))
    return report


def passing_samples(task: Task, trajectories: list[Trajectory], env: ZWCEnv,
                    report: CollectReport) -> list[SFTSample]:
    """The passing attempts of one task, distinct responses only, each with both prompts (the
    self-play learners build their samples from their own rounds' attempts with it)."""
    kept, seen = [], set()
    closed = first_prompt(env.observe(task, phase="train", mode="closed"))
    for trajectory in sorted(trajectories, key=lambda t: t.sample):
        if not trajectory.passed:
            continue
        completion = next(m["content"] for m in reversed(trajectory.messages) if m["role"] == "assistant")
        if completion in seen:
            report.duplicates += 1
            continue
        seen.add(completion)
        prompt_open = list(trajectory.messages[:2])  # system + the first user turn, docs included
        kept.append(SFTSample(task_id=task.task_id, functions=list(task.selected_functions), sample=trajectory.sample,
                              prompt_open=prompt_open, prompt_closed=closed, completion=completion,
                              source=report.source))
    return kept


def to_dataset(path: str | Path, variant: str):
    """A ``datasets.Dataset`` of trl prompt-completion rows for one variant."""
    from datasets import Dataset

    return Dataset.from_list([s.as_prompt_completion(variant) for s in read_samples(path)])


def write_report(report: CollectReport, path: str | Path) -> None:
    Path(path).write_text(json.dumps({**report.__dict__, "acceptance": report.acceptance}, indent=1) + "\n")
