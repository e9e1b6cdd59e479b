"""``sebench compare``, ``sft-compare`` and ``rl-compare``: learners side by side against the
no-learner baseline (memory learners) or base and Closed-SFT (SFT, RL), each row evolved and
evaluated on the same build, one table and a report directory per command."""

from __future__ import annotations

from pathlib import Path

import typer

from benchmarks.cli_options import DTYPE_HELP, USAGE_HELP, Dtype, Usage


def compare_command(
    zwc: Path = typer.Option(..., "--zwc", help="A ZWC build with tasks."),
    learners: str = typer.Option("none,expel,ace", "--learners", help="Comma-separated learner names."),
    model: str = typer.Option("smollm2-135m", "--model"),
    dtype: Dtype = typer.Option("auto", "--dtype", help=DTYPE_HELP),
    out: Path = typer.Option(..., "--out", help="Report directory (summary.json, report.md, report.html, plots)."),
    limit: int = typer.Option(20, "--limit", help="Test tasks evaluated closed-book."),
    train_limit: int = typer.Option(20, "--train-limit", help="Train tasks each learner uses."),
    gather_model: str | None = typer.Option("reference", "--gather-model",
                                            help="Model that gathers training trajectories ('' for the agent's)."),
    max_tokens: int = typer.Option(192, "--max-tokens"),
    usage: Usage = typer.Option("standard", "--usage", help=USAGE_HELP),
    settings: list[str] = typer.Option([], "--set", help="Learner setting KEY=VALUE for every learner, or "
                                       "LEARNER.KEY=VALUE for one (expel.store=chroma); repeatable."),
) -> None:
    """Evolve each learner and compare closed-book results next to the no-learner baseline."""
    from benchmarks.cli import _load_env as load_env
    from benchmarks.cli import _overrides as overrides
    from benchmarks.cli_report import show_comparison
    from benchmarks.compare import compare

    names = [n.strip() for n in learners.split(",") if n.strip()]
    if "none" not in names:
        names.insert(0, "none")  # the baseline is always in the table
    env = load_env(zwc, usage)
    try:
        compare(env, names, model, out, limit=limit, train_limit=train_limit,
                          gather_model=gather_model or None, max_tokens=max_tokens, dtype=dtype,
                          settings=overrides(settings))
    finally:
        env.close()
    show_comparison(out)


def sft_compare_command(
    zwc: Path = typer.Option(..., "--zwc", help="A ZWC build with tasks."),
    out: Path = typer.Option(..., "--out", help="Report directory (summary.json, report.md, report.html, plots)."),
    model: str = typer.Option("smollm2-135m", "--model", help="The base model (local weights)."),
    dtype: Dtype = typer.Option("auto", "--dtype", help=DTYPE_HELP + " Also the trainers' (--set dtype=… wins)."),
    learners: str = typer.Option("closed-sft,open-sft", "--learners"),
    train_limit: int = typer.Option(48, "--train-limit", help="The fixed train slice: its first N tasks."),
    steps: int = typer.Option(60, "--steps", help="Optimiser steps per learner."),
    n: int = typer.Option(4, "--n", help="Samples per test task (pass@k for k <= n)."),
    limit: int | None = typer.Option(None, "--limit", help="At most N test tasks (of the trained functions)."),
    probe_limit: int | None = typer.Option(None, "--probe-limit", help="Probe only the first N functions."),
    gather_model: str | None = typer.Option(None, "--gather-model", help="Who answers the train tasks: default the "
                                            "model itself (the paper's rejection sampling); reference (or a backend) "
                                            "is a teacher, and the rows it trained say so in their names."),
    max_tokens: int = typer.Option(160, "--max-tokens"),
    settings: list[str] = typer.Option([], "--set", help="Learner setting KEY=VALUE (repeatable)."),
) -> None:
    """API recall and closed-book pass@k before vs after Closed-SFT and Open-SFT, in one table."""
    from benchmarks.cli import _load_env as load_env
    from benchmarks.cli import _overrides as overrides
    from benchmarks.cli_report import show_comparison
    from benchmarks.sft_compare import sft_compare

    names = tuple(n.strip() for n in learners.split(",") if n.strip())
    env = load_env(zwc)
    try:
        sft_compare(env, out, model=model, learners=names, train_limit=train_limit, steps=steps, n=n,
                           limit=limit, gather_model=gather_model or None, max_tokens=max_tokens,
                           settings=overrides(settings), probe_limit=probe_limit, dtype=dtype)
    finally:
        env.close()
    show_comparison(out)


def rl_compare_command(
    zwc: Path = typer.Option(..., "--zwc", help="A ZWC build with tasks."),
    out: Path = typer.Option(..., "--out", help="Report directory (summary.json, report.md, report.html, plots)."),
    model: str = typer.Option("qwen2.5-coder-0.5b", "--model", help="The base model (local weights)."),
    dtype: Dtype = typer.Option("auto", "--dtype", help=DTYPE_HELP + " Also the trainers' (--set dtype=… wins)."),
    learners: str = typer.Option(",".join(("closed-sft", "open-rl", "closed-rl", "closed-rl@sft-like",
                                           "closed-rl@sft-like+clip", "closed-rl@sft-like+grpo-adv",
                                           "closed-rl@sft-like-small-lr", "closed-rl@sft-like-small-batch",
                                           "closed-sft-rl")), "--learners",
                                 help="Comma-separated; closed-rl@PRESET for Table 3's ablations."),
    train_limit: int = typer.Option(8, "--train-limit", help="The fixed train slice: its first N tasks."),
    steps: int = typer.Option(8, "--steps", help="RL optimiser steps per learner (the same budget for all)."),
    sft_steps: int = typer.Option(8, "--sft-steps", help="Closed-SFT's steps (its row and Closed-SFT-RL's stage)."),
    n: int = typer.Option(4, "--n", help="Samples per test task (pass@k for k <= n)."),
    limit: int | None = typer.Option(None, "--limit", help="At most N test tasks (of the trained functions)."),
    probe_limit: int | None = typer.Option(None, "--probe-limit", help="Probe only the first N functions."),
    gather_model: str | None = typer.Option(None, "--gather-model", help="Who answers Closed-SFT's (and "
                                            "Closed-SFT-RL's SFT stage's) train tasks: default the model itself; "
                                            "reference (or a backend) is a teacher, named in those rows."),
    max_tokens: int = typer.Option(160, "--max-tokens"),
    settings: list[str] = typer.Option([], "--set", help="RL setting KEY=VALUE for every RL learner, or "
                                       "LEARNER.KEY=VALUE for one (closed-sft-rl.sft_seed=1); repeatable."),
) -> None:
    """The RL Gap: recall and closed-book pass@k of every RL learner against base and Closed-SFT."""
    from benchmarks.cli import _load_env as load_env
    from benchmarks.cli import _overrides as overrides
    from benchmarks.cli_report import show_comparison
    from benchmarks.rl_compare import parse_learner, rl_compare
    from sebench.errors import SettingError

    names = tuple(n.strip() for n in learners.split(",") if n.strip())
    try:
        for name in names:
            parse_learner(name)
    except SettingError as exc:
        raise typer.BadParameter(str(exc)) from None
    env = load_env(zwc)
    try:
        rl_compare(env, out, model=model, learners=names, train_limit=train_limit, steps=steps,
                          sft_steps=sft_steps, n=n, limit=limit, gather_model=gather_model or None,
                          max_tokens=max_tokens, settings=overrides(settings), probe_limit=probe_limit, dtype=dtype)
    finally:
        env.close()
    show_comparison(out)
