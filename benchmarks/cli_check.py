"""``sebench check-learner TARGET``: the learner checker from the shell (``learners.checker``).

    sebench check-learner expel
    sebench check-learner my_package.my_learner:MyLearner --set max_steps=1
    sebench check-learner path/to/my_learner.py:MyLearner --model qwen2.5-coder-0.5b

One line per check as it is decided (PASS, WARN or FAIL, seconds so far, why); the exit status is
1 when a check fails and 2 when TARGET names no learner or a setting is wrong (checked before any
work). Registered in ``benchmarks.cli`` as ``check-learner``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from benchmarks import cli_checks as check
from benchmarks.cli_options import max_tokens_option, model_option, settings_option
from benchmarks.cli_shared import parse_overrides


def check_learner_command(
    target: str = typer.Argument(..., help="A registered learner name (sebench learners lists them), "
                                           "package.module:Attr or path/to/file.py:Attr; Attr is a learner class "
                                           "or a factory taking keyword config."),
    model: str = model_option("The agent's model. The effect check needs one that earns rewards (smollm2-135m, the "
                              "fast one, rarely does)."),
    limit: int = typer.Option(2, "--limit", help="N in evolve(env, limit=N), N >= 1; the checker's build has a few "
                                                 "more train tasks than that."),
    settings: list[str] = settings_option("Learner setting KEY=VALUE (repeatable), e.g. --set max_steps=1; "
                                          "registered learners start from tiny settings."),
    max_tokens: int = max_tokens_option(96, "The agent's answer length."),
    seed: int = typer.Option(0, "--seed", help="Seed of the checker's fresh build."),
    workdir: Path | None = typer.Option(None, "--workdir", help="Keep the build, states and logs here "
                                                                "(default: a temporary directory, removed)."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the report as JSON here."),
    docs_threshold: float = typer.Option(0.10, "--docs-threshold", min=0.0, max=1.0,
                                         help="Share of the doc entries closed-book contexts may carry before "
                                              "docs-in-context fails (a zwc name the learner never met in a train "
                                              "task counts as its entry)."),
) -> None:
    """Check that a learner keeps the SE-Bench protocol: never sees test data, honours limit,
    saves and loads, survives a kill, keeps test prompts closed-book; and report its effect."""
    from rich.console import Console

    from benchmarks.check_output import finish_check, print_check
    from learners.checker import LearnerTargetError, check_learner, resolve_target

    check.count(limit, "--limit", "N in evolve(env, limit=N)")
    check.counts(max_tokens=max_tokens)
    check.model(model)
    config = parse_overrides(settings)
    try:
        resolved = resolve_target(target)
    except LearnerTargetError as exc:
        raise typer.BadParameter(str(exc), param_hint="TARGET") from None
    if resolved.kind == "registered":
        check.settings(resolved.target, config)
    out = Console()
    out.print(f"check-learner {resolved.target or target} (model {model}): a fresh build, then evolve, evaluate and "
              "two fresh processes; each check as it is decided", soft_wrap=True)
    report = check_learner(resolved, model=model, limit=limit, config=config, max_tokens=max_tokens,
                           seed=seed, workdir=workdir, docs_threshold=docs_threshold,
                           on_check=lambda result, seconds: print_check(out, result, seconds))
    finish_check(report, f"check-learner {report.target} (learner {report.learner!r}, model {report.model}, "
                         f"{report.seconds:.0f}s): {len(report.checks) - len(report.failed())} of "
                         f"{len(report.checks)} passed, {len(report.warnings())} with a warning", json_out,
                 lines=False)
