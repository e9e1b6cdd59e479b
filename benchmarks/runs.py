"""Runs: one directory per evolved learner, written and read the same way by every command.

    RUN/run.json     what made it: learner, its settings, base model, dtype, build, code version
    RUN/learner/     the learner's saved state (``learner.save``)
    RUN/model/       the trained model, for parametric learners (``--model RUN/model`` loads it)
    RUN/report.json  the EvolveReport of the training phase

``evolve_run`` writes one (``sebench evolve``, ``compare``, ``sft-compare``, ``rl-compare``);
``load_run`` gives back the evolved agent (``sebench eval --run RUN``), memory or weights alike.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, fields, is_dataclass
from pathlib import Path
from typing import Any

from agents import Agent, EvolveReport
from agents.learner import set_limit
from agents.models.dtype import resolve_dtype
from envs.zwc import ZWCEnv
from learners import make
from sebench.errors import SebenchError
from sebench.version import code_version

RUN_FILE = "run.json"


class RunError(SebenchError, ValueError):
    """A directory that is not a run, or one this code cannot load."""


def learner_overrides(extra: dict[str, Any], name: str) -> dict[str, Any]:
    """A comparison's ``--set`` values for the learner ``name``: ``KEY`` applies to every learner of
    the comparison, ``LEARNER.KEY`` to that one only (``expel.store``, ``absolute-zero.rounds``)."""
    shared = {k: v for k, v in extra.items() if "." not in k}
    own = {k.split(".", 1)[1]: v for k, v in extra.items() if k.startswith(f"{name}.")}
    return {**shared, **own}


def evolve_run(env: ZWCEnv, learner: str, out: str | Path, *, model: str = "smollm2-135m",
               settings: dict[str, Any] | None = None, max_tokens: int = 256, dtype: str = "auto",
               usage: str | None = None, temperature: float | None = None) -> tuple[Agent, EvolveReport]:
    """Make ``learner`` with ``settings`` (its config keys: ``limit``, ``gather_model``, ``max_steps``
    ...), evolve an agent on ``model`` with it, and write the run to ``out``. Returns the evolved
    agent (its model is the trained one for parametric learners) and the report.

    ``run.json`` is written before training, so a killed run still says what it was. ``temperature``:
    the agent's (None: its evaluation preset's), recorded there when given."""
    out = Path(out)
    config = dict(settings or {})
    if learner != "none":
        config.setdefault("state_dir", str(out / "learner"))
    learner_obj = make(learner, **config)
    if getattr(learner_obj, "parametric", False):  # the trained model goes to RUN/model, trained in dtype
        accepts = {f.name for f in fields(learner_obj.config)} if is_dataclass(getattr(learner_obj, "config", None)) \
            else {"model_dir"}
        given = {"model_dir": str(out / "model"), "dtype": dtype}  # a guide's ParametricConfig has no dtype
        config = {**{k: v for k, v in given.items() if k in accepts}, **config}
        learner_obj = make(learner, **config)
    out.mkdir(parents=True, exist_ok=True)
    record = {"learner": learner, "settings": {k: v for k, v in config.items() if k not in ("state_dir", "model_dir")},
              "model": model, "dtype": resolve_dtype(dtype), "max_tokens": max_tokens,
              "parametric": bool(getattr(learner_obj, "parametric", False)), "zwc": env.mapping.origin,
              "zwc_root": str(env.root), "usage": usage or env.usage, "code_version": code_version(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    if temperature is not None:
        record["temperature"] = temperature
    (out / RUN_FILE).write_text(json.dumps(record, indent=1) + "\n")
    agent = Agent(model=model, learner=learner_obj, max_tokens=max_tokens, dtype=dtype, temperature=temperature)
    report = agent.evolve(env)
    learner_obj.save(out / "learner")
    (out / "report.json").write_text(json.dumps({**asdict(report), "usage": record["usage"]}, indent=1) + "\n")
    return agent, report


def read_run(run: str | Path) -> dict[str, Any]:
    """``RUN/run.json``; a named error when ``run`` is not a run directory."""
    path = Path(run) / RUN_FILE
    if not path.is_file():
        hint = (" (it has learner/ but no run.json: it was written before runs recorded themselves; "
                "evolve it again)" if (Path(run) / "learner").is_dir() else "")
        raise RunError(f"{run}: not a run directory, no {RUN_FILE}{hint}; write one with "
                       "`sebench evolve --zwc D --learner NAME --out RUN`")
    try:
        record = json.loads(path.read_text())
    except ValueError as exc:
        raise RunError(f"{path}: not JSON ({exc})") from None
    for key in ("learner", "model"):
        if key not in record:
            raise RunError(f"{path}: field {key!r} is missing")
    return record


def load_run(run: str | Path, *, model: str | None = None, max_tokens: int | None = None,
             dtype: str | None = None, **agent_settings: Any) -> Agent:
    """The agent a run evolved: its learner loaded from ``RUN/learner`` and, for parametric
    learners, ``RUN/model`` as the model (else the run's base model, or ``model`` to try the
    learned memory on another one)."""
    run = Path(run)
    record = read_run(run)
    name = record["learner"]
    learner = make(name, **({} if name == "none" else {"state_dir": str(run / "learner")}))
    learner.load(run / "learner")
    limit = (record.get("settings") or {}).get("limit")
    if isinstance(limit, int) and limit >= 1 and name != "none":
        set_limit(learner, limit)  # what it learned from: the context audit's "met" functions read it
    parametric = bool(getattr(learner, "parametric", record.get("parametric", False)))
    if parametric:
        if not (run / "model" / "config.json").is_file():
            raise RunError(f"{run}: a {name} run without a trained model in {run / 'model'} (killed before "
                           "training finished?); rerun the same `sebench evolve` command to resume it")
        if model is not None and Path(model).resolve() != (run / "model").resolve():
            raise RunError(f"{run}: a {name} run's knowledge is its model ({run / 'model'}); --model {model} "
                           "would evaluate another one")
        chosen = str(run / "model")
    else:
        chosen = model or record["model"]
    return Agent(model=chosen, learner=learner, max_tokens=max_tokens or record.get("max_tokens", 256),
                 dtype=dtype or record.get("dtype", "auto"), **agent_settings)
