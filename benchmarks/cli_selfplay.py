"""``sebench selfplay``: a self-play run from the shell, thin over ``benchmarks.runs.evolve_run``.

    sebench selfplay --zwc runs/zwc-seed0 --learner closed-sft-self --model smollm2-135m --rounds 3 \\
        --proposer-model reference --set gather_model=reference --set lora=true --out runs/sp

The run directory holds what ``sebench evolve`` writes (``run.json``, ``learner/``, ``model/``,
``report.json``) and the curriculum's files at its top: ``buffer-*.jsonl`` (the accepted tasks),
``rounds.jsonl`` (one record per finished round), ``rounds.png`` and ``round-<r>/``. The same
command again resumes: finished rounds are not redone, a killed one is redone whole, and a
larger ``--rounds`` goes on from the last one. Registered in ``benchmarks.cli`` as ``selfplay``.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Literal

import typer
from rich.console import Console
from rich.table import Table


def selfplay_command(
    zwc: Path = typer.Option(..., "--zwc", help="A ZWC build with tasks."),
    learner: str = typer.Option(..., "--learner",
                                help="A self-play learner: closed-sft-self | open-sft-self | absolute-zero."),
    model: str = typer.Option("smollm2-135m", "--model", help="The agent's model: it proposes, solves and is "
                                                              "fine-tuned, unless --proposer-model or --set "
                                                              "gather_model=... name others."),
    rounds: int = typer.Option(2, "--rounds", help="Self-play rounds in all (a rerun with more goes on)."),
    proposer_model: str | None = typer.Option(None, "--proposer-model",
                                              help="Who proposes: self (the agent's own model, the default), "
                                                   "reference (a teacher that re-proposes known train tasks: it "
                                                   "tests the loop, it is not self-play), or a backend."),
    out: Path = typer.Option(..., "--out", help="Run directory: buffers, round log and plot, round-<r>/, model/."),
    limit: int | None = typer.Option(None, "--limit", help="Train tasks the proposer draws functions and examples "
                                                           "from."),
    settings: list[str] = typer.Option([], "--set", help="Learner setting KEY=VALUE (repeatable), e.g. --set "
                                                         "proposals=8 --set max_steps=20 --set lora=true"),
    max_tokens: int = typer.Option(256, "--max-tokens", help="The agent's answer length."),
    dtype: Literal["auto", "bfloat16", "float32"] = typer.Option("auto", "--dtype",
                                                                 help="Weights / compute type (as sebench evolve)."),
    usage: Literal["standard", "strict"] = typer.Option("standard", "--usage",
                                                        help="How a pass must use the library (as sebench eval)."),
) -> None:
    """Rounds of propose -> validate -> solve -> train (SFT, or GRPO for absolute-zero), resumable; per-round
    figures and a plot."""
    from benchmarks.cli import _load_env, _overrides
    from benchmarks.runs import evolve_run

    _require_selfplay_learner(learner)
    config = {"rounds": rounds, "state_dir": str(out), **{k: v for k, v in (("limit", limit),
                                                                           ("proposer_model", proposer_model))
                                                          if v is not None}}
    config.update(_overrides(settings))
    env = _load_env(zwc, usage)
    try:
        agent, report = evolve_run(env, learner, out, model=model, settings=config, max_tokens=max_tokens,
                                   dtype=dtype, usage=usage)
    finally:  # a SebenchError (bad setting, nothing to train on, a state of other settings) is one line
        env.close()
    console = Console()
    console.print(rounds_table(Path(config["state_dir"]), f"self-play: {learner} with {model}"))
    for warning in report.details.get("warnings", []):
        console.print(f"[yellow]warning:[/yellow] {warning}")
    console.print(f"buffer: {report.details['buffer']}\nround log: {report.details['round_log']}\n"
                  f"plot: {report.details['plot']}\nfine-tuned model: {out / 'model'}  (use it with --model "
                  f"{out / 'model'})\nevaluate it: sebench eval --zwc {zwc} --run {out}")


def rounds_table(run_dir: Path, title: str) -> Table:
    """One row per finished round: proposals, acceptance and rejections, solve rate, learnability."""
    from selfplay.curriculum import RoundLog

    table = Table(title=title)
    for col in ("round", "proposals", "accepted", "rejected (most frequent)", "solve rate", "learnability", "kept",
                "seconds"):
        table.add_column(col, justify="left" if col.startswith("rejected") else "right")
    for r in RoundLog.in_run(run_dir).records:
        rejected = ", ".join(f"{reason} {n}" for reason, n in list(r.rejections.items())[:3]) or "-"
        table.add_row(str(r.round), str(r.proposals), f"{r.accepted} ({100 * r.acceptance_rate:.0f}%)", rejected,
                      "-" if r.solve_rate is None else f"{r.solve_rate:.2f}",
                      "-" if r.learnability is None else f"{r.learnability:.2f}", str(r.extra.get("kept", "-")),
                      f"{r.seconds:.0f}")
    return table


def _require_selfplay_learner(name: str) -> None:
    """A learner whose settings have ``rounds`` (a named error otherwise, listing the self-play ones)."""
    from learners.registry import REGISTRY, LearnerRegistryError, config_class

    def rounds_of(learner: str) -> bool:
        config = config_class(REGISTRY[learner])
        return config is not None and "rounds" in {f.name for f in fields(config)}

    try:
        if rounds_of(name):
            return
    except LearnerRegistryError as exc:
        raise typer.BadParameter(str(exc), param_hint="--learner") from None
    selfplay = [n for n in REGISTRY if rounds_of(n)]
    raise typer.BadParameter(f"{name!r} is not a self-play learner (its settings have no rounds); self-play "
                             f"learners: {', '.join(selfplay)}; train it with `sebench evolve --learner {name}`",
                             param_hint="--learner")


def selfplay_compare_command(
    zwc: Path = typer.Option(..., "--zwc", help="A ZWC build with tasks."),
    out: Path = typer.Option(..., "--out", help="Report directory (summary.json, report.md, report.html, plots)."),
    model: str = typer.Option("qwen2.5-coder-0.5b", "--model", help="The base model (local weights)."),
    dtype: Literal["auto", "bfloat16", "float32"] = typer.Option("auto", "--dtype", help="As sebench evolve."),
    learners: str = typer.Option("closed-sft,closed-sft-self,open-sft-self,absolute-zero", "--learners",
                                 help="Comma-separated, among closed-sft, closed-sft-self, open-sft-self, "
                                      "absolute-zero."),
    train_limit: int = typer.Option(8, "--train-limit", help="The train slice every learner draws on."),
    rounds: int = typer.Option(2, "--rounds", help="Self-play rounds."),
    proposals: int = typer.Option(8, "--proposals", help="Tasks proposed per round."),
    sft_steps: int = typer.Option(8, "--sft-steps", help="Closed-SFT's steps, and each SFT self-play round's."),
    n: int = typer.Option(2, "--n", help="Samples per test task (pass@k for k <= n)."),
    limit: int | None = typer.Option(None, "--limit", help="At most N test tasks (of the trained functions)."),
    probe_limit: int | None = typer.Option(None, "--probe-limit", help="Probe only the first N functions."),
    gather_model: str | None = typer.Option(None, "--gather-model", help="Who answers Closed-SFT's train tasks: "
                                            "default the model itself; reference (or a backend) is a teacher, "
                                            "named in its row."),
    max_tokens: int = typer.Option(160, "--max-tokens"),
    settings: list[str] = typer.Option([], "--set", help="Self-play setting KEY=VALUE (repeatable), for each "
                                                         "self-play learner."),
) -> None:
    """SFT self-play against RL self-play: recall and closed-book pass@k, and every round's figures."""
    from benchmarks.cli import _load_env, _overrides
    from benchmarks.cli_report import show_comparison
    from benchmarks.selfplay_compare import selfplay_compare

    names = tuple(n.strip() for n in learners.split(",") if n.strip())
    env = _load_env(zwc)
    try:
        selfplay_compare(env, out, model=model, learners=names, train_limit=train_limit, rounds=rounds,
                                proposals=proposals, sft_steps=sft_steps, n=n, limit=limit, probe_limit=probe_limit,
                                gather_model=gather_model or None, max_tokens=max_tokens,
                                settings=_overrides(settings), dtype=dtype)
    finally:
        env.close()
    show_comparison(out)
