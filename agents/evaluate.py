"""Evaluation: n samples per task, unbiased pass@k, a failure taxonomy, resumable results.

Results are JSON lines, one per (task, sample), appended and flushed as episodes finish;
``resume=True`` skips what the file already holds, so a killed run continues with nothing
lost or duplicated. The summary JSON beside it holds pass@k for every k <= n (reported
only when every task has at least k samples), failure counts, the config, the dataset's
hash and the code version.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agents.trajectory import Trajectory
from envs.zwc import Failure

if TYPE_CHECKING:
    from agents.agent import Agent
    from envs.zwc import ZWCEnv

TEST_PHASE_MODES = ("closed", "numpy")  # open and search show docs: train-phase diagnostics


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al., 2021) in product form: 1 - C(n-c, k) / C(n, k)."""
    if not 0 <= c <= n or k < 1 or k > n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@dataclass
class EvalReport:
    split: str
    mode: str
    model: str
    n_tasks: int
    n_samples: int
    pass_at: dict[int, float]
    failures: dict[str, int]
    config: dict = field(default_factory=dict)
    results_path: str = ""
    summary_path: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)


def _code_version() -> str:
    try:
        root = Path(__file__).resolve().parents[1]
        return subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"], capture_output=True,
                              text=True, timeout=5).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _dataset_hash(env: ZWCEnv, split: str) -> str:
    return hashlib.sha256((env.root / f"{split}.jsonl").read_bytes()).hexdigest()[:16]


def read_results(path: Path) -> dict[tuple[str, int], dict]:
    """(task_id, sample) -> record; a last line cut short by a kill is ignored."""
    done: dict[tuple[str, int], dict] = {}
    if not path.is_file():
        return done
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        done.setdefault((record["task_id"], int(record["sample"])), record)
    return done


def result_record(t: Trajectory) -> dict:
    return {"task_id": t.task_id, "sample": t.sample, "mode": t.mode, "passed": t.passed,
            "failure": t.failure.value, "code": t.code, "tokens": t.tokens, "seconds": round(t.seconds, 4),
            "turns": t.turns, "searches": t.searches, "detail": t.verdict.detail[:500] if t.verdict else ""}


def summarise(records: list[dict], task_ids: list[str], n: int) -> tuple[dict[int, float], dict[str, int]]:
    per_task: dict[str, list[bool]] = {tid: [] for tid in task_ids}
    failures: Counter = Counter()
    for r in records:
        if r["task_id"] in per_task:
            per_task[r["task_id"]].append(bool(r["passed"]))
            failures[r["failure"]] += 1
    pass_at = {}
    least = min((len(v) for v in per_task.values()), default=0)
    for k in range(1, min(n, least) + 1):
        pass_at[k] = sum(pass_at_k(len(v), sum(v), k) for v in per_task.values()) / max(1, len(per_task))
    return pass_at, {f.value: failures.get(f.value, 0) for f in Failure}


def evaluate(agent: Agent, env: ZWCEnv, split: str = "single_test", n: int = 5, mode: str = "closed",
             out: str | Path | None = None, limit: int | None = None, resume: bool = False,
             progress: bool = True, functions: list[str] | None = None) -> EvalReport:
    """Evaluate ``agent`` on ``split`` (the first ``limit`` tasks), ``n`` samples per task.

    ``functions`` (NumPy names as in ``selected_functions``) keeps only the tasks that use
    nothing else: e.g. the functions a learner trained on."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    tasks = env.tasks(split)
    if functions is not None:
        wanted = set(functions)
        tasks = [t for t in tasks if t.selected_functions and set(t.selected_functions) <= wanted]
    tasks = tasks[:limit] if limit is not None else tasks
    phase = "test" if mode in TEST_PHASE_MODES else "train"
    env.phase = phase
    if agent.model_spec == "reference":
        agent.bind_reference(env)
    out_path = Path(out) if out is not None else env.root / f"results-{split}-{mode}.jsonl"
    if out_path.exists() and out_path.stat().st_size and not resume:
        raise FileExistsError(f"{out_path} already holds results; pass resume=True (--resume) to continue it, "
                              "or choose another --out")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    done = read_results(out_path) if resume else {}
    pending = [(t, s) for t in tasks for s in range(n) if (t.task_id, s) not in done]
    temperature = agent.temperature if n == 1 else agent.sample_temperature
    lock = threading.Lock()
    bar = _Progress(len(pending), f"{split} · {mode} · {agent.name}", enabled=progress)
    with out_path.open("a") as handle:
        def write(trajectory: Trajectory) -> None:
            with lock:
                handle.write(json.dumps(result_record(trajectory)) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                bar.advance(trajectory.passed)

        with bar:
            agent.run_episodes(env, pending, phase=phase, mode=mode, temperature=temperature, on_done=write)
    records = list(read_results(out_path).values())
    pass_at, failures = summarise(records, [t.task_id for t in tasks], n)
    config = {"split": split, "mode": mode, "model": agent.name, "n": n, "limit": limit,
              "temperature": temperature, "max_tokens": agent.max_tokens, "max_turns": agent.max_turns,
              "functions": sorted(functions) if functions is not None else None,
              "learner": getattr(agent.learner, "name", "none"), "dataset_sha256": _dataset_hash(env, split),
              "zwc": env.mapping.origin, "code_version": _code_version()}
    summary_path = out_path.with_suffix(".summary.json")
    report = EvalReport(split=split, mode=mode, model=agent.name, n_tasks=len(tasks), n_samples=len(records),
                        pass_at=pass_at, failures=failures, config=config, results_path=str(out_path),
                        summary_path=str(summary_path))
    summary_path.write_text(report.to_json() + "\n")
    return report


class _Progress:
    """A rich progress bar with ETA and a running pass count."""

    def __init__(self, total: int, description: str, enabled: bool = True):
        self.total, self.description, self.enabled, self.passed = total, description, enabled, 0
        self._bar = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("passed {task.fields[passed]}"), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=False)
            self._bar.__enter__()
            self._id = self._bar.add_task(self.description, total=self.total, passed=0)
        self._started = time.perf_counter()
        return self

    def advance(self, passed: bool) -> None:
        self.passed += passed
        if self._bar is not None:
            self._bar.update(self._id, advance=1, passed=self.passed)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
