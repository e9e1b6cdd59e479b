"""The learner side of the protocol: re-exports, the registry, and the no-learning baseline.

A new learner is one file and one line in ``REGISTRY``; ``make(name, **config)`` builds one.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.learner import EvolveReport, Learner
from envs.zwc import Observation

__all__ = ["PARAMETRIC", "REGISTRY", "EvolveReport", "Learner", "NoLearner", "make", "progress_bar", "warn_empty"]


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


class RunDirectories:
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


class NoLearner:
    """The baseline: adds nothing to prompts, learns nothing, saves an empty state."""

    name = "none"

    def context(self, obs: Observation) -> str:
        return ""

    def observe(self, trajectory) -> None:
        return None

    def evolve(self, agent, env) -> EvolveReport:
        return EvolveReport(learner=self.name)

    def save(self, path) -> None:
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        (target / "learner.json").write_text(json.dumps({"learner": self.name}) + "\n")

    def load(self, path) -> None:
        state = json.loads((Path(path) / "learner.json").read_text())
        if state.get("learner") != self.name:
            raise ValueError(f"{path}: holds a {state.get('learner')!r} learner, not {self.name!r}")


def _expel(**config: Any) -> Learner:
    from learners.expel import ExpelLearner

    return ExpelLearner(**config)


def _ace(**config: Any) -> Learner:
    from learners.ace import AceLearner

    return AceLearner(**config)


def _open_sft(**config: Any) -> Learner:
    from learners.sft import OpenSFTLearner

    return OpenSFTLearner(**config)


def _closed_sft(**config: Any) -> Learner:
    from learners.sft import ClosedSFTLearner

    return ClosedSFTLearner(**config)


def _rl(name: str) -> Callable[..., Learner]:
    def build(**config: Any) -> Learner:
        from learners import rl

        return {"open-rl": rl.OpenRLLearner, "closed-rl": rl.ClosedRLLearner,
                "closed-sft-rl": rl.ClosedSFTRLLearner}[name](**config)

    return build


REGISTRY: dict[str, Callable[..., Learner]] = {"none": NoLearner, "expel": _expel, "ace": _ace,
                                               "open-sft": _open_sft, "closed-sft": _closed_sft,
                                               **{n: _rl(n) for n in ("open-rl", "closed-rl", "closed-sft-rl")}}
# learners that write a model directory (RUN/model)
PARAMETRIC = frozenset({"open-sft", "closed-sft", "open-rl", "closed-rl", "closed-sft-rl"})


def make(name: str, **config: Any) -> Learner:
    """A learner by registry name; unknown names list the known ones."""
    try:
        return REGISTRY[name](**config)
    except KeyError:
        raise KeyError(f"unknown learner {name!r}; known: {', '.join(sorted(REGISTRY))}") from None
