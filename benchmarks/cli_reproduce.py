"""``sebench reproduce``: the typer command (registered in ``benchmarks/cli.py``), thin over
``benchmarks.reproduce``.

    sebench reproduce --budget smoke --out runs/repro
    sebench reproduce --budget cpu --out runs/repro --seeds 0,1 --train-seeds 0,1 --only sft,rl

A bad budget file or an unknown ``--only`` part is a ``SettingError`` (one red line, exit 2);
a row that fails makes the exit status 1 after the others and the report have run.
"""

from __future__ import annotations

from pathlib import Path

import typer


def reproduce_command(
    ctx: typer.Context,
    budget: str = typer.Option(..., "--budget", help="smoke (CI minutes, tiny models), cpu (about 11 hours on 2 "
                                                     "cores, qwen2.5-coder-0.5b), gpu (the paper's settings, "
                                                     "Qwen3-8B), or the path of a budget file (copy one of "
                                                     "benchmarks/budgets/*.toml)."),
    out: Path = typer.Option(..., "--out", help="Directory of every run, plan.json (each row's state), logs/ and "
                                                "report/; the same command again resumes it."),
    seeds: str | None = typer.Option(None, "--seeds", help="ZWC build seeds, comma-separated (default: the "
                                                           "budget's)."),
    train_seeds: str | None = typer.Option(None, "--train-seeds", help="Training seeds of the trained rows, "
                                                                       "comma-separated (default: the budget's)."),
    only: str | None = typer.Option(None, "--only", help="Parts to run, comma-separated: validate, memory, sft, rl, "
                                                         "selfplay (default: all); the report reads every finished "
                                                         "row."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and stop."),
    time_it: bool = typer.Option(True, "--estimate/--no-estimate", help="Time a short generation of the budget's "
                                                                        "model here for the plan's estimates."),
) -> None:
    """The paper's findings end to end: design validation, memory learners, SFT, RL and its ablations, self-play,
    each a resumable run; then `sebench report`."""
    from benchmarks.reproduce import reproduce
    from benchmarks.reproduce_budget import load_budget, parse_parts, parse_seeds

    parts = parse_parts(only)  # typed errors (unknown part, bad seeds, bad budget) before any work
    zwc_seeds, trains = parse_seeds(seeds, "--seeds"), parse_seeds(train_seeds, "--train-seeds")
    chosen = load_budget(budget, ctx.find_root().command)  # the app that runs us
    raise typer.Exit(reproduce(chosen, out, parts, zwc_seeds, trains, time_it=time_it, dry_run=dry_run))
