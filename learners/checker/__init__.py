"""check_learner: SE-Bench as the unit test of a learner, in the spirit of Gymnasium's ``check_env``.

    from learners.checker import check_learner
    report = check_learner("path/to/my_learner.py:MyLearner", config={"max_steps": 1})
    print(*report.lines(), sep="\\n")       # or: sebench check-learner path/to/my_learner.py:MyLearner

On a small fresh build with a canary planted in every test task (``learners.checker.build``),
the checker evolves the learner once in this process, watching everything it touches
(``learners.checker.record``), evaluates its agent closed-book, and runs two fresh processes
(``learners.checker.child``). Each check gives one line, ``passed`` and a ``why`` that tells the
author what to fix:

1. ``protocol``: the ``agents.learner.Learner`` protocol at run time (``name``, callable methods
   of the right arity, ``context(obs)`` returns a str, ``evolve`` returns an ``EvolveReport``).
2. ``limit``: ``Agent(model, learner).evolve(env, limit=N)`` touches exactly the first N train tasks.
3. ``no-test-data``: during ``evolve`` the canary reaches no prompt, training example, memory
   entry (the learner's attributes) or saved file, no test split is asked for and no test split
   file is opened.
4. ``closed-book``: the test-time prompts carry no doc text and no docs section.
5. ``save-load``: ``save`` then ``load`` in a fresh process gives the same ``context`` (and, for a
   learner that trains weights, the same weights as the model the agent holds after ``evolve``).
6. ``kill-resume``: an ``evolve`` killed with SIGKILL once it has written to its ``state_dir``,
   then run again in a fresh process, finishes, and what it saves loads.
7. ``effect``: closed-book pass@1 (and API recall for parametric learners) against the
   no-learner baseline with a bootstrap 95% interval: a report, never a failure when it ran.
"""

from __future__ import annotations

import difflib
import functools
import gc
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.targets import FILE_MODULE_PREFIX, TargetError, load_object
from memory.check_report import CheckResult, ConformanceReport

__all__ = ["CHECKS", "TINY", "CheckReport", "CheckResult", "LearnerTarget", "LearnerTargetError", "as_target",
           "check_learner", "resolve_target"]

CHECKS = ("protocol", "limit", "no-test-data", "closed-book", "save-load", "kill-resume", "effect")
# Settings that make our registered learners tiny (seconds to a minute each on a CPU), used when
# the target is a registered name; the caller's config wins. A newcomer passes their own.
# LoRA: the optimiser state of full fine-tuning (~2 GB for 135M) is most of a tiny run's memory.
_SFT = {"gather_model": "reference", "docs_chars": 300, "max_steps": 1, "batch_size": 2, "max_length": 512,
        "save_steps": 100, "logging_steps": 1, "lora": True, "warmup_ratio": 0.0}  # 1 step of warmup: lr 0, no update
_SFT_SELF = {**_SFT, "rounds": 1, "proposals": 2, "samples": 1, "proposer_model": "reference"}
_RL = {"max_steps": 1, "prompts_per_step": 2, "num_generations": 2, "steps_per_generation": 1,
       "max_completion_length": 8, "save_steps": 100, "docs_chars": 200, "lora": True}
TINY: dict[str, dict[str, Any]] = {
    "none": {},
    "expel": {"gather_model": "reference", "max_reflections": 0, "insight_max_tokens": 48},
    "ace": {"gather_model": "reference", "validation": 1, "max_retries": 0, "max_tokens": 48},
    "open-sft": _SFT, "closed-sft": _SFT, "open-rl": _RL, "closed-rl": _RL,
    "closed-sft-rl": {**_RL, "gather_model": "reference", "sft_max_steps": 1, "sft_batch_size": 2,
                      "sft_max_length": 512, "sft_lora": True, "sft_warmup_ratio": 0.0},
    # the teacher proposes (re-proposes train tasks) and the reference solves: smollm2 keeps neither format
    "open-sft-self": _SFT_SELF, "closed-sft-self": _SFT_SELF,
    # one round, one step, one task type (induction: the SE-Bench episode, through env.observe and
    # env.check; all three cost 3x the tokens, most of a step on a CPU); smollm2 earns only format
    # penalties and 0s, which the binary estimator (advantage = reward) turns into a gradient where
    # the task-relative one gives 0
    "absolute-zero": {"rounds": 1, "task_types": ["induction"], "num_generations": 2, "prompts_per_step": 2,
                      "steps_per_generation": 1,
                      "max_completion_length": 8, "docs_chars": 200, "references": 0, "seed_tasks": 1,
                      "lora": True, "lora_dropout": 0.0, "save_steps": 100, "advantage": "binary"},
}


class LearnerTargetError(TargetError):
    """A target that names no learner: says what is wrong with it and how to write it."""


@dataclass(frozen=True)
class LearnerTarget:
    """A resolved target: ``factory(**config)`` builds the learner; ``target`` names it again in a
    fresh process (None when the factory cannot be found by name there)."""

    target: str | None
    factory: Callable[..., Any]
    kind: str  # "registered" | "module" | "file" | "object"


def resolve_target(target: str) -> LearnerTarget:
    """A registered learner name, ``package.module:Attr`` or ``path/to/file.py:Attr`` (``Attr`` a
    learner class or a factory taking keyword config; dotted for a nested attribute)."""
    from learners import REGISTRY, make

    if ":" not in target:
        names = sorted(REGISTRY)
        if target in names:
            return LearnerTarget(target, functools.partial(make, target), "registered")
        close = difflib.get_close_matches(target, names, n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""  # first: the list after it grows
        raise LearnerTargetError(target, f"{hint}no learner registered by that name (registered: {', '.join(names)})",
                                 "give a registered name, package.module:Attr or path/to/file.py:Attr")
    value, kind = load_object(target, error=LearnerTargetError, hint_for=_learners_in)
    if not callable(value):
        attr = target.rpartition(":")[2]
        raise LearnerTargetError(target, f"{attr} is a {type(value).__name__}, not a learner class or factory",
                                 "name a class (or a function) that takes keyword config and returns a learner")
    return LearnerTarget(target, value, kind)


def _learners_in(module: Any) -> str:
    found = [n for n, v in vars(module).items() if not n.startswith("_") and callable(v)
             and callable(getattr(v, "evolve", None))]
    return f"learners found there: {', '.join(found)}" if found else "no learner class is defined there"


def as_target(factory: str | LearnerTarget | Callable[..., Any]) -> LearnerTarget:
    """A target string, a resolved target, or a factory (found again by name in a fresh process
    when it is a top-level attribute of an importable module or of a file)."""
    if isinstance(factory, LearnerTarget):
        return factory
    if isinstance(factory, str):
        return resolve_target(factory)
    if not callable(factory):
        raise LearnerTargetError(repr(factory), "not callable",
                                 "pass a learner class or a factory taking keyword config")
    module, qualname = getattr(factory, "__module__", None), getattr(factory, "__qualname__", "")
    source = sys.modules.get(module) if module else None
    if source is None or "<" in qualname:
        return LearnerTarget(None, factory, "object")
    if module.startswith(FILE_MODULE_PREFIX) or module == "__main__":
        file = getattr(source, "__file__", None)
        return LearnerTarget(f"{file}:{qualname}" if file else None, factory, "object")
    return LearnerTarget(f"{module}:{qualname}", factory, "object")


@dataclass(kw_only=True)
class CheckReport(ConformanceReport):
    """The memory and model checkers' report (``memory.check_report``), plus the learner's name,
    the model the checks ran with and the effect figures (``EffectFigure``, one per metric)."""

    learner: str
    model: str
    effect: list = field(default_factory=list)


def check_learner(factory: str | LearnerTarget | Callable[..., Any], *, model: str = "smollm2-135m",
                  workdir: str | Path | None = None, limit: int = 2, config: dict[str, Any] | None = None,
                  build: Any = None, seed: int = 0, max_tokens: int = 96, samples: int = 1,
                  kill_after: float = 60.0, timeout: float = 900.0) -> CheckReport:
    """Check a learner (a target string or a factory taking keyword config) on a small fresh build.

    Args:
        factory: a callable taking keyword config and returning a learner (a learner class is one), or
            a target naming one: a registered name, ``package.module:Attr`` or ``path/to/file.py:Attr``.
        model: the agent's model (the report names it: the effect needs a model that earns rewards).
        workdir: where the build, states and results go (kept); None: a temporary directory, removed.
        limit: N in ``evolve(env, limit=N)``; the build has more train tasks than that.
        config: learner settings (tiny sizes: ``{"max_steps": 1}``); for a registered name they
            update ``TINY[name]``. The checker adds ``limit`` and ``state_dir``.
        build: a ``CheckBuild`` to reuse (checks of several learners share one and its baseline).
        seed: the build's obfuscation and task seed, when the checker makes the build.
        max_tokens, samples: the agent's answer length and the samples per test task.
        kill_after: seconds after which the kill-resume check kills an evolve that wrote nothing yet.
        timeout: seconds a fresh process may run.
    """
    from learners.checker.build import CheckBuild
    from learners.checker.checks import CheckSession

    target = as_target(factory)
    settings = {**(TINY.get(target.target, {}) if target.kind == "registered" else {}), **(config or {})}
    work = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="sebench-check-"))
    work.mkdir(parents=True, exist_ok=True)
    own = build is None
    try:
        build = build if build is not None else CheckBuild.create(work / "zwc", seed=seed)
        if limit < 1 or limit >= len(build.split_ids["train"]):
            raise ValueError(f"limit must be between 1 and {len(build.split_ids['train']) - 1} (the build has "
                             f"{len(build.split_ids['train'])} train tasks, and a learner that ignores limit must "
                             f"be told apart), got {limit}")
        session = CheckSession(target=target, build=build, work=Path(tempfile.mkdtemp(prefix="check-", dir=work)),
                               model=model, limit=limit, config=settings, max_tokens=max_tokens, samples=samples,
                               kill_after=kill_after, timeout=timeout)
        return session.run()
    finally:
        if own and build is not None:
            build.close()
        if workdir is None:
            shutil.rmtree(work, ignore_errors=True)
        gc.collect()  # the trained model and its trainer sit in reference cycles: free them before the next check
