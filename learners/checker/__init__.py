"""check_learner: SE-Bench as the unit test of a learner, in the spirit of Gymnasium's ``check_env``.

    from learners.checker import check_learner
    report = check_learner("path/to/my_learner.py:MyLearner", config={"max_steps": 1})
    print(*report.lines(), sep="\\n")       # or: sebench check-learner path/to/my_learner.py:MyLearner

On a small fresh build with a canary planted in every test task (``learners.checker.build``),
the checker evolves the learner once in this process, watching everything it touches
(``learners.checker.record``), evaluates its agent closed-book, and runs two fresh processes
(``learners.checker.child``). Each check gives one line, ``passed`` and a ``why`` that tells the
author what to fix, PASS, FAIL, or WARN (kept the contract, but look: no measurable effect, an
empty context):

1. ``protocol``: the ``agents.learner.Learner`` protocol at run time (``name``, callable methods
   of the right arity, ``context(obs)`` returns a str, ``evolve`` returns an ``EvolveReport``).
2. ``limit``: ``Agent(model, learner).evolve(env, limit=N)`` touches exactly the first N train tasks.
3. ``no-test-data``: during ``evolve`` the canary reaches no prompt, training example, memory
   entry (the learner's attributes) or saved file, no test split is asked for and no test split
   file is opened.
4. ``closed-book``: the test-time prompts carry no doc text and no docs section.
5. ``docs-in-context``: the closed-book contexts carry no more than ``docs_threshold`` of the doc
   entries, counting an entry whose zwc name they show but the learner never met in a train task
   it touched (the docs-in-memory loophole; ``envs.zwc.library.docs_audit``).
6. ``save-load``: ``save`` then ``load`` in a fresh process gives the same ``context`` (and, for a
   learner that trains weights, the same weights as the model the agent holds after ``evolve``).
7. ``kill-resume``: an ``evolve`` killed with SIGKILL once it has written to its ``state_dir``,
   then run again in a fresh process, finishes, and what it saves loads.
8. ``effect``: closed-book pass@1 (and API recall for parametric learners) against the
   no-learner baseline with a bootstrap 95% interval: a report, never a failure when it ran (a
   warning when no difference is measurable).
"""

from __future__ import annotations

import gc
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envs.zwc.library.docs_audit import THRESHOLD
from learners.checker.report import CHECKS, CheckReport
from learners.checker.target import LearnerTarget, LearnerTargetError, as_target, resolve_target
from sebench.check_report import CheckResult
from sebench.errors import SettingError

__all__ = ["CHECKS", "CheckReport", "CheckResult", "LearnerTarget", "LearnerTargetError", "as_target",
           "check_learner", "resolve_target", "tiny_settings"]


def tiny_settings(name: str) -> dict[str, Any]:
    """The settings that make the registered learner ``name`` tiny (seconds to a minute on a CPU): its
    class's ``checker_settings`` (each learner declares its own, so the checker names none of them;
    a learner without them runs with its defaults). The caller's config wins over them."""
    from learners.registry import registry

    return dict(getattr(registry()[name], "checker_settings", {}))


def check_learner(factory: str | LearnerTarget | Callable[..., Any], *, model: str = "smollm2-135m",
                  workdir: str | Path | None = None, limit: int = 2, config: dict[str, Any] | None = None,
                  build: Any = None, seed: int = 0, max_tokens: int = 96, samples: int = 1,
                  kill_after: float = 60.0, timeout: float = 900.0, docs_threshold: float = THRESHOLD,
                  on_check: Callable[[CheckResult, float], None] | None = None) -> CheckReport:
    """Check a learner (a target string or a factory taking keyword config) on a small fresh build.

    Args:
        factory: a callable taking keyword config and returning a learner (a learner class is one), or
            a target naming one: a registered name, ``package.module:Attr`` or ``path/to/file.py:Attr``.
        model: the agent's model (the report names it: the effect needs a model that earns rewards).
        workdir: where the build, states and results go (kept); None: a temporary directory, removed.
        limit: N in ``evolve(env, limit=N)``; the build has more train tasks than that.
        config: learner settings (tiny sizes: ``{"max_steps": 1}``); for a registered name they
            update the learner class's ``checker_settings``. The checker adds ``limit`` and ``state_dir``.
        build: a ``CheckBuild`` to reuse (checks of several learners share one and its baseline).
        seed: the build's obfuscation and task seed, when the checker makes the build.
        max_tokens, samples: the agent's answer length and the samples per test task.
        kill_after: seconds after which the kill-resume check kills an evolve that wrote nothing yet.
        timeout: seconds a fresh process may run.
        docs_threshold: the share of doc entries closed-book contexts may carry before the
            docs-in-context check fails (``envs.zwc.library.docs_audit``).
        on_check: called with each check's result and the seconds since the checks began, as each
            is decided (the command prints them as they come).
    """
    from learners.checker.build import CheckBuild
    from learners.checker.checks import CheckSession

    target = as_target(factory)
    settings = {**(tiny_settings(target.target) if target.kind == "registered" else {}), **(config or {})}
    work = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="sebench-check-"))
    work.mkdir(parents=True, exist_ok=True)
    own = build is None
    try:
        build = build if build is not None else CheckBuild.create(work / "zwc", seed=seed)
        if limit < 1 or limit >= len(build.split_ids["train"]):
            raise SettingError(f"limit must be between 1 and {len(build.split_ids['train']) - 1} (the build has "
                               f"{len(build.split_ids['train'])} train tasks, and a learner that ignores limit must "
                               f"be told apart), got {limit}; pass --limit 2, the default")
        session = CheckSession(target=target, build=build, work=Path(tempfile.mkdtemp(prefix="check-", dir=work)),
                               model=model, limit=limit, config=settings, max_tokens=max_tokens, samples=samples,
                               kill_after=kill_after, timeout=timeout, docs_threshold=docs_threshold,
                               on_check=on_check)
        return session.run()
    finally:
        if own and build is not None:
            build.close()
        if workdir is None:
            shutil.rmtree(work, ignore_errors=True)
        gc.collect()  # the trained model and its trainer sit in reference cycles: free them before the next check
