"""The self-play curriculum: rounds of propose -> validate -> solve -> learn, and their measures.

Learnability is Absolute-Zero's proposer reward (Zhao et al. 2025, eq. 4). For one
proposed task, the solver is sampled ``n`` times and ``p`` is its mean pass rate::

    r = 0        if p == 0 or p == 1   (always or never solved: nothing to learn)
    r = 1 - p    otherwise              (harder, but still solvable, is worth more)

A round's learnability is the mean of ``r`` over its accepted tasks. ``RoundLoop`` runs the
rounds in a run directory::

    RUN/buffer-<type>.jsonl   the accepted tasks, with their round, solver pass rate and learnability
    RUN/rounds.jsonl          one ``RoundRecord`` per finished round (``RoundLog``, fsynced)
    RUN/round-<r>/            the round's proposals and whatever its learn step writes
    RUN/rounds.png            accepted tasks, solve rate and learnability per round (``plot_rounds``)

Resumable: a round is finished once its record is in the log, and a resumed run starts at
the first unfinished one. A round killed midway is redone whole: its directory is emptied and
its buffer entries dropped. The solve step is the ordinary agent episode with the docs
(``env.observe(task, phase="train", mode="open")``, graded by ``env.check`` in the sandbox);
what the learn step does (fine-tune, update a memory, nothing) is the caller's.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from types import EllipsisType
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from envs.zwc import Task
from sebench.errors import DataError, SettingError
from sebench.jsonl import JsonlCorruptError, append_records, read_records
from selfplay.validate import Accepted, ValidationReport, Validator

if TYPE_CHECKING:
    from agents.agent import Agent
    from agents.trajectory import Trajectory
    from envs.zwc import ZWCEnv
    from selfplay.proposal import Proposal
    from selfplay.reasons import Rejected


def learnability(pass_rates: float | Sequence[float]) -> float:
    """Absolute-Zero's proposer reward for one task.

    Args:
        pass_rates: the solver's outcomes on the task, one per sample (bools, or pass
            rates in [0, 1]), or their mean.

    Returns:
        0 when the mean pass rate ``p`` is 0 or 1, else ``1 - p``.
    """
    rates = [float(pass_rates)] if isinstance(pass_rates, (int, float)) else [float(r) for r in pass_rates]
    if not rates:
        raise ValueError("learnability needs at least one solver outcome for the task")
    if any(not 0.0 <= r <= 1.0 for r in rates):
        raise ValueError(f"pass rates must lie in [0, 1], got {rates}")
    p = sum(rates) / len(rates)
    return 0.0 if p in (0.0, 1.0) else 1.0 - p


def mean_learnability(per_task: Sequence[float | Sequence[float]]) -> float | None:
    """A round's learnability: the mean of each task's ``learnability`` (None without tasks)."""
    return sum(learnability(t) for t in per_task) / len(per_task) if per_task else None


def solve_rate(per_task: Sequence[float | Sequence[float]]) -> float | None:
    """The solver's mean pass rate over tasks, each task weighing the same (None without tasks)."""
    if not per_task:
        return None
    means = [float(t) if isinstance(t, (int, float)) else sum(map(float, t)) / len(t) for t in per_task]
    return sum(means) / len(means)


class RoundRecord(BaseModel):
    """What one self-play round did.

    ``solve_rate`` and ``learnability`` are over the round's accepted tasks (None when no
    task was accepted or none was solved yet); difficulty is ``1 - solve_rate``.
    """

    round: int = Field(ge=0)
    proposals: int = Field(ge=0)
    accepted: int = Field(ge=0)
    rejections: dict[str, int] = Field(default_factory=dict)  # reason -> count
    solve_rate: float | None = None
    learnability: float | None = None
    seconds: float = 0.0
    extra: dict[str, Any] = Field(default_factory=dict)  # the loop's own figures (loss, buffer sizes ...)

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.proposals if self.proposals else 0.0

    @classmethod
    def from_round(cls, round: int, report: ValidationReport, pass_rates: Sequence[float | Sequence[float]] = (),
                   seconds: float = 0.0, **extra: Any) -> RoundRecord:
        """A record from the round's validation report and the solver's outcomes on its
        accepted tasks (one entry per task: its samples' outcomes, or its pass rate)."""
        return cls(round=round, proposals=report.proposals, accepted=report.accepted,
                   rejections=dict(report.rejections.most_common()), solve_rate=solve_rate(pass_rates),
                   learnability=mean_learnability(pass_rates), seconds=seconds, extra=extra)


class RoundLog:
    """The finished rounds of a run, one fsynced JSON line each (``RUN/rounds.jsonl``)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._records: list[RoundRecord] = []
        for lineno, record in enumerate(read_records(self.path), 1):
            try:
                self._records.append(RoundRecord.model_validate(record))
            except ValueError as exc:
                raise JsonlCorruptError(self.path, lineno, f"not a round record ({exc})") from None

    @classmethod
    def in_run(cls, run_dir: str | Path) -> RoundLog:
        return cls(Path(run_dir) / "rounds.jsonl")

    def append(self, record: RoundRecord) -> None:
        if record.round in self.finished:
            raise DataError(f"round {record.round} is already recorded in {self.path}; a finished round "
                             "is not redone")
        append_records(self.path, [record.model_dump(mode="json")])
        self._records.append(record)

    @property
    def records(self) -> list[RoundRecord]:
        return list(self._records)

    @property
    def finished(self) -> set[int]:
        return {r.round for r in self._records}

    @property
    def next_round(self) -> int:
        """The first round a resumed run has to do."""
        return max(self.finished, default=-1) + 1


def plot_rounds(records: Sequence[RoundRecord], path: str | Path, title: str = "self-play") -> Path:
    """Accepted tasks, solve rate and learnability per round, as one PNG (matplotlib, Agg)."""
    if not records:
        raise DataError("no rounds to plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ordered = sorted(records, key=lambda r: r.round)
    rounds = [r.round for r in ordered]
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(6.0, 6.4), sharex=True)
    top.bar(rounds, [r.proposals for r in ordered], color="#c8d3de", label="proposals")
    top.bar(rounds, [r.accepted for r in ordered], color="#3b7dd8", label="accepted")
    top.set_ylabel("tasks")
    top.legend(loc="upper left", fontsize=8)
    for axis, field, colour in ((middle, "solve_rate", "#2e9e4f"), (bottom, "learnability", "#d9822b")):
        points = [(r.round, getattr(r, field)) for r in ordered if getattr(r, field) is not None]
        if points:
            axis.plot(*zip(*points, strict=True), marker="o", color=colour)
        axis.set_ylim(-0.02, 1.02)
        axis.set_ylabel(field.replace("_", " "))
        axis.grid(alpha=0.3)
    bottom.set_xlabel("round")
    bottom.set_xticks(rounds)
    top.set_title(title)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


# -- the round loop ------------------------------------------------------------------------------
class TaskProposer(Protocol):
    """What the loop asks of a proposer (``Proposer``, ``TeacherProposer``)."""

    def propose(self, count: int, references: Sequence[Task] = (), round: int = 0) -> list[Proposal | Rejected]: ...


def proposer_name(proposer: Any) -> str:
    """The name a proposer is reported under: its own, else its model's."""
    return str(getattr(proposer, "name", None) or getattr(getattr(proposer, "model", None), "name", None)
               or type(proposer).__name__)


def solve(agent: Agent, env: ZWCEnv, tasks: Sequence[Task], samples: int = 1,
          docs_chars: int | None | EllipsisType = ...,
          on_done: Callable[[Trajectory], None] | None = None) -> dict[str, list[Trajectory]]:
    """The solver's open-book attempts at ``tasks``, ``samples`` each, by task id: the ordinary
    episode path (``env.observe(task, phase="train", mode="open")`` puts the task's docs in the
    prompt, ``env.check`` grades the answer in the sandbox), each sampled at the agent's
    ``temperature`` (seeded per task and sample by the agent)."""
    if samples < 1:
        raise SettingError(f"samples must be >= 1, got {samples}")
    attempts: dict[str, list[Trajectory]] = {t.task_id: [] for t in tasks}
    if not tasks:
        return attempts
    for trajectory in agent.run_episodes(env, [(t, s) for t in tasks for s in range(samples)], phase="train",
                                         mode="open", temperature=agent.temperature, on_done=on_done,
                                         docs_chars=docs_chars):
        attempts[trajectory.task_id].append(trajectory)
    return attempts


@dataclass
class Round:
    """One round's work, handed to the learn step.

    Attributes:
        number: the round (from 0).
        directory: ``RUN/round-<number>/``, empty when the round starts, for the learn step's files.
        results: the validator's result per proposal, in order.
        tasks: the accepted tasks, each task id once.
        attempts: the solver's trajectories per task id (``samples`` each).
        proposer, solver: who proposed and who solved (names).
    """

    number: int
    directory: Path
    results: list[Accepted | Rejected]
    tasks: list[Task]
    attempts: dict[str, list[Trajectory]]
    proposer: str = ""
    solver: str = ""

    @property
    def report(self) -> ValidationReport:
        return ValidationReport.of(self.results)

    def outcomes(self) -> list[list[bool]]:
        """Per accepted task, whether each of the solver's attempts passed."""
        return [[t.passed for t in self.attempts[task.task_id]] for task in self.tasks]


@dataclass
class RoundLoop:
    """Rounds of propose -> validate -> solve -> learn in ``run_dir``, resumable (module docstring).

    Args:
        run_dir: where the buffer, the round log, the round directories and the plot go.
        env: the environment (phase train: proposing and solving read the docs).
        rounds: rounds in all; a resumed run does those not yet finished.
        proposals: proposals asked for per round.
        samples: solver attempts per accepted task (its pass rate; learnability needs > 1).
        docs_chars: the solver's per-function doc budget (default: the env's).
        validator: the validator (default: ``Validator(env)``).
        task_type: names the buffer (``buffer-<task_type>.jsonl``).
        capacity: tasks the buffer holds (the oldest go first).
        title: the progress bar's and the plot's title.
    """

    run_dir: Path
    env: ZWCEnv
    rounds: int
    proposals: int
    samples: int = 2
    docs_chars: int | None | EllipsisType = ...
    validator: Validator | None = None
    task_type: str = "sebench"
    capacity: int = 1024
    title: str = "self-play"
    resumed_from: int = dataclass_field(default=0, init=False)  # the first round this run did

    def __post_init__(self) -> None:
        self.run_dir = Path(self.run_dir)
        for name in ("rounds", "proposals", "samples"):
            if getattr(self, name) < 1:
                raise SettingError(f"{name} must be >= 1, got {getattr(self, name)}")

    @property
    def log(self) -> RoundLog:
        return RoundLog.in_run(self.run_dir)

    @property
    def plot_path(self) -> Path:
        return self.run_dir / "rounds.png"

    def run(self, proposer: Callable[[int], TaskProposer], solver: Callable[[int], Agent],
            learn: Callable[[Round], dict[str, Any] | None] | None = None) -> RoundLog:
        """Do the unfinished rounds; the log of all of them. ``proposer(r)`` and ``solver(r)``
        give round r's proposer and solving agent (a learner's model changes between rounds);
        ``learn(round)`` is the round's update, and the figures it returns go into the round's
        record (``extra``). The plot is written at the end."""
        from learners.base import progress_bar

        log = self.log
        buffer = self.buffer
        self.resumed_from = log.next_round
        buffer.discard_rounds_after(log.next_round - 1)  # the entries of a round killed midway
        validator = self.validator or Validator(self.env)
        with progress_bar(f"{self.title}: rounds", total=self.rounds) as progress:
            progress(min(log.next_round, self.rounds), self.rounds)
            for number in range(log.next_round, self.rounds):
                record = self._round(number, proposer, solver, learn, buffer, validator, progress.describe)
                log.append(record)
                print(round_line(record), file=sys.stderr, flush=True)
                progress(number + 1, self.rounds)
        if log.records:
            plot_rounds(log.records, self.plot_path, title=self.title)
        return log

    @property
    def buffer(self):
        """The run's task buffer, as its file holds it now."""
        from selfplay.buffer import TaskBuffer

        return TaskBuffer.in_run(self.run_dir, self.task_type, self.capacity)

    @property
    def buffer_path(self) -> Path:
        return self.run_dir / f"buffer-{self.task_type}.jsonl"

    def _round(self, number: int, proposer_for, solver_for, learn, buffer, validator,
               say: Callable[[str], None]) -> RoundRecord:
        started = time.perf_counter()
        directory = self.run_dir / f"round-{number}"
        shutil.rmtree(directory, ignore_errors=True)  # what a killed attempt at this round left
        directory.mkdir(parents=True)
        say(f"round {number}: proposing {self.proposals}")
        proposer = proposer_for(number)
        proposed_by = proposer_name(proposer)
        items = proposer.propose(self.proposals, references=buffer.tasks(), round=number)
        seeded = getattr(proposer, "seeded", None)  # a model's draws, each from a seed of its own (None: no model)
        del proposer  # it may hold the model the learn step is about to retrain
        say(f"round {number}: validating {len(items)}")
        results = validator.validate_many(items)
        write_results(directory / "proposals.jsonl", results)
        tasks = list({r.task.task_id: r.task for r in results if isinstance(r, Accepted)}.values())
        say(f"round {number}: solving {len(tasks)} tasks x {self.samples}")
        agent = solver_for(number)
        solved_by = agent.name
        attempts = solve(agent, self.env, tasks, self.samples, self.docs_chars)
        del agent
        work = Round(number, directory, results, tasks, attempts, proposed_by, solved_by)
        new = 0
        for task, outcomes in zip(tasks, work.outcomes(), strict=True):
            added = buffer.add(task, round=number, proposer=proposed_by, solver=solved_by,
                               pass_rate=sum(outcomes) / len(outcomes), learnability=learnability(outcomes))
            new += added is not None
        say(f"round {number}: learning")
        extra = dict(learn(work) or {}) if learn is not None else {}
        figures = {"episodes": sum(len(a) for a in attempts.values()), "new_tasks": new,
                   "duplicates": work.report.accepted - len(tasks), "proposer": proposed_by, "solver": solved_by,
                   "proposals_seeded": seeded}
        return RoundRecord.from_round(number, work.report, work.outcomes(), seconds=time.perf_counter() - started,
                                      **{**figures, **extra})


def write_results(path: Path, results: Sequence[Accepted | Rejected],
                  kinds: Sequence[str] | None = None) -> None:
    """Each proposal's fate (the task id it became, or the reason and detail), and the answer
    text, so a reader can see why a round kept what it kept; ``kinds``: each one's task type."""
    rows = []
    for n, result in enumerate(results):
        row: dict = {"type": kinds[n]} if kinds is not None else {}
        if isinstance(result, Accepted):
            row.update({"accepted": True, "task_id": result.task.task_id, "text": result.proposal.text})
        else:
            row.update({"accepted": False, "reason": result.reason.value, "detail": result.detail,
                        "text": result.text})
        rows.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def round_line(record: RoundRecord) -> str:
    """One line per finished round, for the log on stderr."""
    parts = [f"round {record.round}: {record.accepted}/{record.proposals} accepted "
             f"({100 * record.acceptance_rate:.0f}%)"]
    if record.rejections:
        parts.append("rejected: " + ", ".join(f"{reason} {n}" for reason, n in record.rejections.items()))
    if record.solve_rate is None:
        parts.append("nothing to solve")
    else:
        parts.append(f"solve rate {record.solve_rate:.2f}, learnability {record.learnability:.2f}")
    shown = {k: record.extra[k] for k in ("kept", "steps", "last_loss") if record.extra.get(k) is not None}
    if shown:
        parts.append(", ".join(f"{k} {v}" for k, v in shown.items()))
    parts.append(f"{record.seconds:.0f}s")
    return "; ".join(parts)
