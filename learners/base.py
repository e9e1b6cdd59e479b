"""What every learner shares: state files, the gathering agent, progress bars, run
directories, and the no-learning baseline.

Learners are found by name through the ``sebench.learners`` entry-point group
(``learners.registry``): a new learner is one file and one entry-point line.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.learner import SELF_GATHERED, EvolveReport, Learner, LearnerConfig, teacher_label, teacher_of
from envs.zwc import Observation
from sebench.errors import SebenchError

__all__ = ["EvolveReport", "Learner", "LearnerStateError", "NoLearner", "gathering_agent", "load_state",
           "learner_teacher", "progress_bar", "save_state", "teacher_label", "teacher_of", "warn_empty"]


class ProgressCallback:
    """``progress(done, total)`` for code that counts, ``advance()`` (thread-safe, any arguments:
    it can be an ``on_done`` hook) for code that finishes one step at a time."""

    def __init__(self, bar, task, total: int | None = None):
        self._bar, self._task, self.total, self.done = bar, task, total, 0
        self._description = next((t.description for t in bar.tasks if t.id == task), "")
        self._lock = threading.Lock()

    def __call__(self, done: int, total: int | None) -> None:
        with self._lock:
            self.done, self.total = done, total
            self._bar.update(self._task, completed=done, total=total)

    def describe(self, text: str) -> None:
        """Show ``text`` (e.g. the last reward) beside the bar."""
        with self._lock:
            self._bar.update(self._task, description=f"{self._description} ({text})")

    def advance(self, *_: Any) -> None:
        with self._lock:
            self.done += 1
            self._bar.update(self._task, completed=self.done, total=self.total)


@contextmanager
def progress_bar(description: str, total: int | None = None) -> Iterator[ProgressCallback]:
    """A progress bar on stderr: training phases run for minutes on a CPU, and a silent one
    cannot be told from a stuck one."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True)) as bar:
        yield ProgressCallback(bar, bar.add_task(description, total=total), total)


class WeightsLearner:
    """What every learner that trains weights shares: ``parametric``, no context (what it learned
    is in the weights, ``agent.model`` after ``evolve``) and nothing to take from single episodes."""

    parametric = True

    def context(self, obs: Observation) -> str:
        return ""

    def observe(self, trajectory) -> None:
        return None


class RunDirectories(WeightsLearner):
    """``state_dir`` (a temporary one when the config names none) and ``model_dir`` (default
    STATE_DIR/model) of a learner that trains weights; its ``config`` has both fields."""

    name = "learner"

    @property
    def state_dir(self) -> Path:
        if self.config.state_dir is None:
            import tempfile

            self.config.state_dir = tempfile.mkdtemp(prefix=f"sebench-{self.name}-")
        return Path(self.config.state_dir)

    @property
    def model_dir(self) -> Path:
        return Path(self.config.model_dir) if self.config.model_dir else self.state_dir / "model"


def warn_empty(report: EvolveReport, message: str) -> EvolveReport:
    """Say that a training phase produced nothing the agent will use, in the report
    (``details["warnings"]``) and on stderr, instead of handing back an unchanged agent silently."""
    report.details.setdefault("warnings", []).append(message)
    print(f"warning: {report.learner}: {message}", file=sys.stderr, flush=True)
    return report


class LearnerStateError(SebenchError, ValueError):
    """A saved state that is missing, unreadable, or another learner's."""


def save_state(path, name: str, state: dict[str, Any], filename: str = "learner.json") -> Path:
    """Write ``state`` (plus ``"learner": name``) to PATH/FILENAME atomically: a crash mid-write
    leaves the previous file, never half of one."""
    target = Path(path)
    target.mkdir(parents=True, exist_ok=True)
    tmp = target / f"{filename}.tmp"
    with tmp.open("w") as out:  # a stale .tmp of a killed save is overwritten
        out.write(json.dumps({**state, "learner": name}, indent=1) + "\n")
        out.flush()
        os.fsync(out.fileno())  # the bytes are on disk before the rename makes them the state
    os.replace(tmp, target / filename)
    directory = os.open(target, os.O_RDONLY)
    try:
        os.fsync(directory)  # and so is the rename
    finally:
        os.close(directory)
    return target / filename


def load_state(path, name: str, filename: str = "learner.json") -> dict[str, Any]:
    """The state ``save_state`` wrote, checked to be ``name``'s."""
    file = Path(path) / filename
    try:
        state = json.loads(file.read_text())
    except FileNotFoundError:
        raise LearnerStateError(f"{file}: no saved {name!r} learner here; evolve one with "
                                f"`sebench evolve --learner {name} --out RUN` and load RUN/learner") from None
    except ValueError as exc:
        raise LearnerStateError(f"{file}: not a learner state ({exc}); it was cut short or edited") from None
    if not isinstance(state, dict) or state.get("learner") != name:
        found = state.get("learner") if isinstance(state, dict) else None
        raise LearnerStateError(f"{file}: holds a {found!r} learner, not {name!r}")
    return state


def learner_teacher(learner: Any, own: str | None = None) -> str | None:
    """The teacher behind a learner's train data, None when the agent's own model (``own``) made it
    all: its ``gather_model`` (Closed-SFT-RL: its SFT stage's), and for SFT self-play its
    ``proposer_model`` too. The comparisons name a row after it (``teacher_label``)."""
    for part in (learner, getattr(learner, "sft", None)):
        config = getattr(part, "config", None)
        for key in ("gather_model", "proposer_model"):
            teacher = teacher_of(getattr(config, key, None), own)
            if teacher is not None:
                return teacher
    return None


def gathering_agent(agent, gather_model: str | None, learner: Learner | None = None, **overrides: Any):
    """The agent that answers train tasks during ``evolve``: ``agent``'s own model (``gather_model``
    None or ``self``) or another backend (``reference``, a name, ``openai:...``), with ``agent``'s
    sampling settings (its temperature and seed: a seeded gathering is reproducible); ``learner``
    sees its episodes (``observe``)."""
    from agents import Agent

    own = gather_model in SELF_GATHERED
    settings = {"max_tokens": agent.max_tokens, "max_turns": agent.max_turns, "concurrency": agent.concurrency,
                "temperature": agent.temperature, "dtype": agent.dtype, "seed": getattr(agent, "seed", 0),
                "engine": getattr(agent, "engine", "auto"), **overrides}
    return Agent(model=agent.model if own else gather_model, learner=learner, **settings)


class NoLearner:
    """The baseline: adds nothing to prompts, learns nothing, saves an empty state."""

    name = "none"
    parametric = False
    checker_settings: dict[str, Any] = {}  # learner checker (learners.checker): nothing to make tiny

    def __init__(self, config: LearnerConfig | None = None, **overrides: Any):
        self.config = config or LearnerConfig(**overrides)

    def context(self, obs: Observation) -> str:
        return ""

    def observe(self, trajectory) -> None:
        return None

    def evolve(self, agent, env) -> EvolveReport:
        return EvolveReport(learner=self.name)

    def save(self, path) -> None:
        save_state(path, self.name, {})

    def load(self, path) -> None:
        load_state(path, self.name)
