"""The RL Gap on one build: base, Closed-SFT, Open-RL, Closed-RL, its ablations, Closed-SFT-RL.

Same build, same train slice (the first ``train_limit`` train tasks), the same number of
optimiser steps for every RL learner; the SFT-like presets take the paper's "larger batch" (2x
the prompts per step), so the table shows each learner's rollouts (its budget) beside them.
Each trained model is probed for API recall and evaluated closed-book on the single_test tasks
of the trained functions, as ``sft_compare`` does. A learner is named by registry name, with
``@PRESET`` for Closed-RL's Table 3 ablations (``closed-rl@sft-like``).

Writes ``OUT/summary.json`` and the report ``sebench report`` makes of it (``report.md``,
``report.html``, plots: the rollouts' reward against steps, pass@k with intervals, recall against
steps); each learner's state and model under
``OUT/<learner>/`` so a rerun after a kill resumes where it stopped.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any

from agents import Agent
from agents.models.dtype import resolve_dtype
from benchmarks.findings import RL_GAP, comparison_verdict
from benchmarks.report import report_comparison
from benchmarks.runs import evolve_run, learner_overrides
from benchmarks.sft_compare import SFTRow, measure, row_summary, row_tasks
from envs.zwc import ZWCEnv
from learners.base import learner_teacher
from learners.rl import PRESETS
from sebench.errors import SettingError
from sebench.version import code_version

DEFAULT_LEARNERS = ("closed-sft", "open-rl", "closed-rl", *(f"closed-rl@{p}" for p in PRESETS if p != "grpo"),
                    "closed-sft-rl")
SFT_NAMES = ("closed-sft", "open-sft")


def parse_learner(spec: str) -> tuple[str, str | None]:
    """``closed-rl@sft-like`` -> (``closed-rl``, ``sft-like``); a named error for unknown ones."""
    name, _, preset = spec.partition("@")
    if name not in (*SFT_NAMES, "open-rl", "closed-rl", "closed-sft-rl"):
        raise SettingError(f"rl-compare runs closed-sft, open-sft, open-rl, closed-rl[@PRESET] and closed-sft-rl; "
                         f"got {spec!r}")
    if preset and (name != "closed-rl" or preset not in PRESETS):
        raise SettingError(f"{spec!r}: presets are Closed-RL's: closed-rl@{{{','.join(PRESETS)}}}")
    return name, preset or None


def row_settings(name: str, preset: str | None, *, train_limit: int, steps: int, sft_steps: int,
                 gather_model: str | None, settings: dict | None, dtype: str) -> dict[str, Any]:
    """One row's learner settings (``parse_learner``'s name and preset): the same train slice for
    all, ``sft_steps`` for the SFT rows and stage, ``steps`` and ``settings`` for the RL learners;
    ``sebench rl-compare`` checks them before any row runs."""
    config: dict[str, Any] = {"limit": train_limit, "dtype": dtype}
    if name in SFT_NAMES:
        return config | {"gather_model": gather_model, "max_steps": sft_steps}
    config |= {"max_steps": steps, **learner_overrides(settings or {}, name)}
    if preset:
        config["preset"] = preset
    if name == "closed-sft-rl":
        config |= {"gather_model": gather_model, "sft_max_steps": sft_steps}
    return config


def rl_compare(env: ZWCEnv, out: str | Path, *, model: str = "qwen2.5-coder-0.5b",
               learners: tuple[str, ...] = DEFAULT_LEARNERS, train_limit: int = 8, steps: int = 8,
               sft_steps: int = 8, n: int = 4, limit: int | None = None, gather_model: str | None = None,
               max_tokens: int = 160, settings: dict | None = None, probe_limit: int | None = None,
               dtype: str = "auto") -> list[SFTRow]:
    """``settings`` go to every RL learner (and to nothing else): ``KEY`` to each, ``LEARNER.KEY`` to
    that one (``closed-sft-rl.sft_seed``, the seed of its SFT stage); ``sft_steps`` is Closed-SFT's
    budget, for its own row and for the first stage of Closed-SFT-RL; ``gather_model`` answers their
    SFT data (None: the model itself, the paper's; a teacher names those rows after it)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    specs = [(spec, *parse_learner(spec)) for spec in learners]
    functions = sorted({f for t in env.tasks("train")[:train_limit] for f in t.selected_functions})
    numpy_paths = {f"numpy.{f}" for f in functions}
    base = Agent(model=model, max_tokens=max_tokens, dtype=dtype)
    rows = [measure("base", base, env, out, functions, numpy_paths, n, limit, {}, probe_limit)]
    base.close()  # each row's model goes before the next trains: rows hold figures, not models
    del base
    gc.collect()
    for spec, name, preset in specs:
        folder = out / spec.replace("@", "_")
        config = row_settings(name, preset, train_limit=train_limit, steps=steps, sft_steps=sft_steps,
                              gather_model=gather_model, settings=settings, dtype=dtype)
        agent, report = evolve_run(env, name, folder, model=model, settings=config, max_tokens=max_tokens, dtype=dtype)
        train = dict(getattr(agent.learner, "train_result", None) or report.details)
        rows.append(measure(spec, agent, env, out, functions, numpy_paths, n, limit, train, probe_limit, folder,
                            teacher=learner_teacher(agent.learner, model)))
        agent.close()  # its batcher's thread and the registry let go of the model
        del agent  # the trainer holds reference cycles: collect them before the next row trains
        gc.collect()
    config = {"model": model, "train_limit": train_limit, "steps": steps, "sft_steps": sft_steps, "n": n,
              "limit": limit, "probe_limit": probe_limit, "gather_model": gather_model, "max_tokens": max_tokens,
              "dtype": resolve_dtype(dtype), "settings": settings or {}, "trained_functions": functions,
              "zwc": env.mapping.origin, "code_version": code_version(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    report_comparison(out, {"config": config, "verdict": verdict(rows), "rows": [row_summary(r) for r in rows]})
    return rows


def verdict(rows: list[SFTRow]) -> str:
    """The pre-specified RL Gap, decided by paired intervals (``benchmarks/findings.py``), whichever
    way it comes out: the SFT-like policy gradient minus standard Closed-RL (GRPO) > 0, and GRPO minus
    the base model within ±10 points; then each learner minus the base model."""
    return comparison_verdict({r.name: row_tasks(r) for r in rows}, RL_GAP)
