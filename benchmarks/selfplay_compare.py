"""Self-play on one build: Closed-SFT-self, Open-SFT-self and Absolute-Zero against base and Closed-SFT.

SE-Bench's third finding (§4.3, Qwen3-8B, single-function): self-play internalises the
library when coupled with SFT (Closed-SFT-self 22.5) and not with RL (Absolute-Zero 0.0).
Every learner draws on the same train slice (the first ``train_limit`` train tasks: the
self-play proposers sample functions and worked examples from it, Closed-SFT trains on it),
and each model is probed for API recall and evaluated closed-book on the single_test tasks of
the slice's functions, as ``sft_compare`` and ``rl_compare`` do.

Writes ``OUT/summary.json`` and the report ``sebench report`` makes of it (``report.md``,
``report.html``, plots: the comparison, then each self-play run's rounds: proposals, acceptance
by reason, solve rate, learnability).
Each learner's run is under ``OUT/<learner>/``, and its measured row in ``OUT/<learner>/row.json``:
a rerun after a kill neither retrains nor re-evaluates a finished row (evaluation samples at
temperature, so re-evaluating would print another figure for the same model).
"""

from __future__ import annotations

import gc
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agents import Agent, EvalReport
from agents.models.dtype import resolve_dtype
from agents.probe import ProbeReport
from benchmarks.findings import SELF_PLAY_GAP, comparison_verdict
from benchmarks.report import report_comparison
from benchmarks.runs import evolve_run, learner_overrides
from benchmarks.sft_compare import SFTRow, measure, row_summary, row_tasks
from envs.zwc import ZWCEnv
from learners.base import learner_teacher
from sebench.errors import SettingError
from sebench.version import code_version

SELFPLAY = ("closed-sft-self", "open-sft-self", "absolute-zero")
DEFAULT_LEARNERS = ("closed-sft", *SELFPLAY)
ROW_FILE = "row.json"


def learner_settings(name: str, train_limit: int, sft_steps: int, rounds: int, proposals: int,
                     gather_model: str | None, extra: dict[str, Any]) -> dict[str, Any]:
    """The settings of one row: the same train slice for all; ``extra`` (``--set``) for the
    self-play learners only: ``KEY`` for each of them, ``LEARNER.KEY`` for that one
    (``absolute-zero.num_generations``)."""
    if name == "closed-sft":
        return {"limit": train_limit, "gather_model": gather_model, "max_steps": sft_steps}
    if name not in SELFPLAY:
        raise SettingError(f"selfplay-compare runs closed-sft and {', '.join(SELFPLAY)}; got {name!r}")
    settings: dict[str, Any] = {"limit": train_limit, "rounds": rounds}
    if name != "absolute-zero":  # its proposals per round are its slots x num_generations
        settings |= {"proposals": proposals, "max_steps": sft_steps}
    return {**settings, **learner_overrides(extra, name)}


def selfplay_compare(env: ZWCEnv, out: str | Path, *, model: str = "qwen2.5-coder-0.5b",
                     learners: tuple[str, ...] = DEFAULT_LEARNERS, train_limit: int = 8, rounds: int = 2,
                     proposals: int = 8, sft_steps: int = 8, n: int = 2, limit: int | None = None,
                     probe_limit: int | None = None, gather_model: str | None = None,
                     max_tokens: int = 160, settings: dict | None = None, dtype: str = "auto") -> list[SFTRow]:
    """Measure base and each learner's model; ``settings`` go to the self-play learners only;
    ``gather_model`` is Closed-SFT's (None: the model itself; a teacher names its row after it)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    configs = {name: learner_settings(name, train_limit, sft_steps, rounds, proposals, gather_model,
                                      settings or {}) for name in learners}  # every name checked before any work
    functions = sorted({f for t in env.tasks("train")[:train_limit] for f in t.selected_functions})
    numpy_paths = {f"numpy.{f}" for f in functions}
    common = {"model": model, "n": n, "limit": limit, "probe_limit": probe_limit, "functions": functions,
              "max_tokens": max_tokens, "dtype": resolve_dtype(dtype), "zwc": env.mapping.origin}
    rows = [_row("base", out / "base", common, lambda: _measured(
        "base", Agent(model=model, max_tokens=max_tokens, dtype=dtype), {}, env, out, functions, numpy_paths, n,
        limit, probe_limit, out / "base"))]
    gc.collect()
    failed: dict[str, str] = {}
    for name in learners:
        folder = out / name

        def run(name=name, folder=folder) -> SFTRow:
            agent, report = evolve_run(env, name, folder, model=model, settings=configs[name],
                                       max_tokens=max_tokens, dtype=dtype)
            train = dict(getattr(agent.learner, "train_result", None) or report.details)
            row = _measured(name, agent, train, env, out, functions, numpy_paths, n, limit, probe_limit, folder)
            row.teacher = learner_teacher(agent.learner, model)
            return row

        try:
            rows.append(_row(name, folder, {**common, "settings": configs[name]}, run))
        except RuntimeError as exc:  # e.g. SFT self-play kept nothing to train on: said, and the others still run
            failed[name] = str(exc)
            print(f"warning: {name}: no model to measure: {exc}", file=sys.stderr, flush=True)
        gc.collect()  # each row's model goes before the next trains
    config = {**common, "learners": list(learners), "train_limit": train_limit, "rounds": rounds,
              "proposals": proposals, "sft_steps": sft_steps, "gather_model": gather_model,
              "settings": settings or {}, "failed": failed, "code_version": code_version(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    write_summary(rows, out, config)
    return rows


def _measured(name, agent, train, env, out, functions, numpy_paths, n, limit, probe_limit, folder) -> SFTRow:
    try:
        return measure(name, agent, env, out, functions, numpy_paths, n, limit, train, probe_limit, folder)
    finally:
        agent.close()  # the row's model goes (batcher thread, registry) before the next row trains


def _row(name: str, folder: Path, config: dict, make) -> SFTRow:
    """The row measured before with the same ``config`` (``folder/row.json``), else ``make()``'s,
    recorded."""
    path = folder / ROW_FILE
    if path.is_file():
        saved = json.loads(path.read_text())
        if saved.get("config") == json.loads(json.dumps(config)):
            return row_from_dict(saved["row"])
    row = make()
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"config": config, "row": row_to_dict(row)}, indent=1, default=str) + "\n")
    return row


def row_to_dict(row: SFTRow) -> dict:
    probe = {k: v for k, v in asdict(row.probe).items() if k != "answers"}  # the answers stay in probe.json
    return {"name": row.name, "probe": probe, "trained_recall": row.trained_recall,
            "evaluation": asdict(row.evaluation), "train": row.train, "per_task": row.per_task,
            "teacher": row.teacher}


def row_from_dict(data: dict) -> SFTRow:
    """A saved row; one saved before rows kept their per-task records loads with ``per_task``
    None, and its verdicts say so (inconclusive: no per-task records)."""
    evaluation = dict(data["evaluation"])
    evaluation["pass_at"] = {int(k): v for k, v in evaluation["pass_at"].items()}
    return SFTRow(data["name"], ProbeReport(**data["probe"]), data["trained_recall"], EvalReport(**evaluation),
                  data["train"], data.get("per_task"), data.get("teacher"))


def rounds_of(folder: Path) -> list[dict]:
    """A self-play run's round records (``rounds.jsonl`` at the top of its state directory)."""
    from selfplay.curriculum import RoundLog

    for path in (folder / "learner" / "rounds.jsonl", folder / "rounds.jsonl"):
        if path.is_file():
            return [r.model_dump(mode="json") | {"acceptance_rate": r.acceptance_rate}
                    for r in RoundLog(path).records]
    return []


def verdict(rows: list[SFTRow]) -> str:
    """The pre-specified finding, Closed-SFT-self minus Absolute-Zero > 0 (the paper's §4.3 row), decided
    by its paired interval (``benchmarks/findings.py``), whichever way it comes out; then each learner
    minus the base model. Open-SFT-self is measured and has its own line against the base model,
    but is never swapped in for Closed-SFT-self when it happens to score higher: choosing the
    better of two rows after seeing them would bias the test towards the finding."""
    return comparison_verdict({r.name: row_tasks(r) for r in rows}, SELF_PLAY_GAP)


def write_summary(rows: list[SFTRow], out: Path, config: dict) -> None:
    """``OUT/summary.json`` (rows, each self-play run's rounds, the learners that ended without a
    model) and the report ``sebench report`` makes of it."""
    names = [r.name for r in rows] + list(config.get("failed", {}))
    report_comparison(out, {"config": config, "verdict": verdict(rows), "rows": [row_summary(r) for r in rows],
                            "rounds": {name: rounds_of(out / name) for name in names if name in SELFPLAY}})
