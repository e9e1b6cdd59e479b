"""Evaluation: n samples per task, unbiased pass@k, a failure taxonomy, resumable results.

Results are JSON lines, one per (task, sample), appended and flushed as episodes finish;
``resume=True`` skips what the file already holds, so a killed run continues with nothing
lost or duplicated. The configuration is recorded beside them before the first record
(``agents/eval_config.py``) and a resume with another one is refused, so a file never mixes
runs. Every sample of every task is drawn at one temperature, the agent's (its preset's unless
set; 0, greedy, only when asked), whatever ``n``, and the config records it. The summary JSON
beside it holds pass@k for every k <= n (reported only when every task has at least k samples),
failure counts, ``target_use_rate``, the config, the dataset's hash and the code version.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agents.context_audit import ContextLog, summarise_contexts
from agents.eval_config import ResultsExistError, check_resume, eval_config, record_config
from agents.learner import AgentLike, evaluation_session
from agents.trajectory import Trajectory
from envs.zwc import Failure
from sebench.errors import SebenchError, SettingError
from sebench.jsonl import cut_torn_tail
from sebench.version import code_version

if TYPE_CHECKING:
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
    target_use_rate: float | None = None  # see target_use()
    target_use: dict[str, int] = field(default_factory=dict)  # passed, known, used: the rate's counts
    config: dict = field(default_factory=dict)
    context: dict = field(default_factory=dict)  # context size per answer and the docs audit (agents.context_audit)
    results_path: str = ""
    summary_path: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)


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


def result_record(t: Trajectory, context: dict | None = None) -> dict:
    """One answer's record; ``context``: its context fields (``agents.context_audit.ContextLog``)."""
    return {**(context or {}), "task_id": t.task_id, "sample": t.sample, "mode": t.mode, "passed": t.passed,
            "failure": t.failure.value, "code": t.code, "tokens": t.tokens, "seconds": round(t.seconds, 4),
            "turns": t.turns, "searches": t.searches, "detail": t.verdict.detail[:500] if t.verdict else "",
            "zwc_calls": list(t.verdict.zwc_calls) if t.verdict else [],
            "target_used": t.verdict.target_used if t.verdict else None,
            "answer": next((m["content"] for m in reversed(t.messages) if m["role"] == "assistant"), "")}


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


def target_use(records: list[dict]) -> tuple[float | None, dict[str, int]]:
    """The share of passing samples that ran every function their task names (``target_used``).

    A pass says that some catalogued zwc function ran in every test, not that the task's own
    function did: a plain-Python answer with a token call of an unrelated zwc function passes
    the standard usage rule. This rate tells such passes from real use of the library, which is
    what SE-Bench claims to measure; ``--usage strict`` turns the difference into failures.
    Only passing samples whose use is known count (``target_used`` is None in the NumPy control
    and in records written before it was graded); None when no such sample exists.

    Returns:
        (rate, {"passed": passing samples, "known": of which use is known, "used": of which True}).
    """
    passed = [r for r in records if r.get("passed")]
    known = [r for r in passed if r.get("target_used") is not None]
    used = sum(r["target_used"] is True for r in known)
    counts = {"passed": len(passed), "known": len(known), "used": used}
    return (used / len(known) if known else None), counts


def evaluate(agent: AgentLike, env: ZWCEnv, split: str = "single_test", n: int = 5, mode: str = "closed",
             out: str | Path | None = None, limit: int | None = None, resume: bool = False,
             progress: bool = True, functions: list[str] | None = None) -> EvalReport:
    """Evaluate ``agent`` on ``split`` (the first ``limit`` tasks), ``n`` samples per task.

    ``functions`` (NumPy names as in ``selected_functions``) keeps only the tasks that use
    nothing else: e.g. the functions a learner trained on."""
    if n < 1:
        raise SettingError(f"n must be >= 1, got {n}")
    tasks = env.tasks(split)
    if functions is not None:
        wanted = set(functions)
        tasks = [t for t in tasks if t.selected_functions and set(t.selected_functions) <= wanted]
    tasks = tasks[:limit] if limit is not None else tasks
    phase = "test" if mode in TEST_PHASE_MODES else "train"
    if agent.model_spec == "reference":
        agent.bind_reference(env)
    out_path = Path(out) if out is not None else env.root / f"results-{split}-{mode}.jsonl"
    if out_path.exists() and out_path.stat().st_size and not resume:
        raise ResultsExistError(f"{out_path} already holds results; pass resume=True (--resume) to continue it, "
                              "or choose another --out")
    temperature = agent.temperature  # one temperature whatever n: pass@1 means the same at n = 1 and n = 5
    config = eval_config(agent, env, split=split, mode=mode, n=n, limit=limit, functions=functions,
                         temperature=temperature, code_version=code_version())
    if resume:
        check_resume(out_path, config)  # MixedResultsError names each difference
    out_path.parent.mkdir(parents=True, exist_ok=True)
    record_config(out_path, config)  # before the first record, so a killed run's file has it
    done = read_results(out_path) if resume else {}
    cut_torn_tail(out_path)  # a killed run's half line: the next record must not be glued onto it (and lost)
    pending = [(t, s) for t in tasks for s in range(n) if (t.task_id, s) not in done]
    lock = threading.Lock()
    bar = _Progress(len(pending), f"{split} · {mode} · {agent.name}", enabled=progress)
    contexts = ContextLog(out_path, fresh=not resume)
    with out_path.open("a") as handle:
        def write(trajectory: Trajectory) -> None:
            fields = contexts.fields(trajectory.context)
            with lock:
                handle.write(json.dumps(result_record(trajectory, fields)) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                bar.advance(trajectory.passed)

        # closed book for the whole run: env.docs* raise whatever a learner kept from evolve; a learner
        # that learns at test time holds what each task sees still for the whole run (evaluation_session)
        with bar, (env.closed_book() if phase == "test" else contextlib.nullcontext()), \
                evaluation_session(agent.learner):
            agent.run_episodes(env, pending, phase=phase, mode=mode, temperature=temperature, on_done=write)
    selected = {t.task_id for t in tasks}  # a resumed file may hold more tasks or samples than this run asks
    records = [r for r in read_results(out_path).values() if r["task_id"] in selected and int(r["sample"]) < n]
    pass_at, failures = summarise(records, [t.task_id for t in tasks], n)
    use_rate, use_counts = target_use(records)
    summary_path = out_path.with_suffix(".summary.json")
    report = EvalReport(split=split, mode=mode, model=agent.name, n_tasks=len(tasks), n_samples=len(records),
                        pass_at=pass_at, failures=failures, target_use_rate=use_rate, target_use=use_counts,
                        config=config, results_path=str(out_path), summary_path=str(summary_path),
                        context=summarise_contexts(records, contexts, env, agent.learner, mode,
                                                   _tokenizer(agent) if pending else None))
    summary_path.write_text(report.to_json() + "\n")
    return report


def _tokenizer(agent: AgentLike):
    """The tokenizer of the model the episodes just used (None for a backend without one)."""
    try:
        return getattr(agent.model, "tokenizer", None)
    except SebenchError:  # a model that cannot load: the context is then counted in characters
        return None


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
