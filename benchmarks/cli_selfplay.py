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

import typer
from rich.console import Console
from rich.table import Table

from benchmarks import cli_checks as check
from benchmarks import cli_options as opt
from benchmarks.cli_options import Dtype, Usage
from benchmarks.cli_shared import evolve_checked, load_env, parse_overrides, split_names
from sebench.errors import SettingError


def selfplay_command(
    zwc: Path = opt.zwc_option(),
    learner: str = typer.Option(..., "--learner",
                                help="A self-play learner: closed-sft-self | open-sft-self | absolute-zero."),
    model: str = opt.model_option("The agent's model: it proposes, solves and is fine-tuned, unless --proposer-model "
                                  "or --set gather_model=... name others."),
    rounds: int = opt.count_option("--rounds", 2, "Self-play rounds in all (a rerun with more goes on)."),
    proposer_model: str | None = typer.Option(None, "--proposer-model",
                                              help="Who proposes: self (the agent's own model, the default), "
                                                   "reference (a teacher that re-proposes known train tasks: it "
                                                   "tests the loop, it is not self-play), or a backend."),
    out: Path = typer.Option(..., "--out", help="Run directory: buffers, round log and plot, round-<r>/, model/."),
    limit: int | None = opt.limit_option(None, "Train tasks the proposer draws functions and examples from: the "
                                               "first N."),
    settings: list[str] = opt.settings_option("Learner setting KEY=VALUE (repeatable), e.g. --set proposals=8 --set "
                                              "max_steps=20 --set lora=true."),
    max_tokens: int = opt.max_tokens_option(256, "The agent's answer length."),
    dtype: Dtype = opt.dtype_option(" Also the trainer's (--set dtype=… wins)."),
    usage: Usage = opt.usage_option(),
) -> None:
    """Rounds of propose -> validate -> solve -> train (SFT, or GRPO for absolute-zero), resumable; per-round
    figures and a plot."""
    check.limit(limit, "the first N train tasks")
    check.counts(rounds=rounds, max_tokens=max_tokens)
    check.model(model)
    check.helper_model(proposer_model, "--proposer-model")
    require_selfplay_learner(learner)
    config = {"rounds": rounds, "state_dir": str(out), **{k: v for k, v in (("limit", limit),
                                                                           ("proposer_model", proposer_model))
                                                          if v is not None}}
    agent, report = evolve_checked(zwc, learner, out, config, settings, model=model, max_tokens=max_tokens,
                                   dtype=dtype, usage=usage)
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


def require_selfplay_learner(name: str) -> None:
    """A learner whose settings have ``rounds`` (a named error otherwise, listing the self-play ones)."""
    from learners.registry import LearnerRegistryError, config_class
    from learners.registry import registry as learner_registry
    known = learner_registry()

    def rounds_of(learner: str) -> bool:
        config = config_class(known[learner])
        return config is not None and "rounds" in {f.name for f in fields(config)}

    try:
        if rounds_of(name):
            return
    except LearnerRegistryError as exc:
        raise SettingError(f"--learner: {exc}") from None
    selfplay = [n for n in known if rounds_of(n)]
    raise SettingError(f"--learner {name!r} is not a self-play learner (its settings have no rounds); self-play "
                       f"learners: {', '.join(selfplay)}; train it with `sebench evolve --learner {name}`")


def selfplay_compare_command(
    zwc: Path = opt.zwc_option(),
    out: Path = opt.report_out_option(),
    model: str = opt.model_option("The base model (local weights)."),
    dtype: Dtype = opt.dtype_option(" Also the trainers' (--set dtype=… wins)."),
    learners: str = opt.learners_option("closed-sft,closed-sft-self,open-sft-self,absolute-zero",
                                        "Comma-separated, among closed-sft, closed-sft-self, open-sft-self, "
                                        "absolute-zero."),
    train_limit: int = opt.count_option("--train-limit", 8, "The train slice every learner draws on."),
    rounds: int = opt.count_option("--rounds", 2, "Self-play rounds."),
    proposals: int = opt.count_option("--proposals", 8, "Tasks proposed per round."),
    sft_steps: int = opt.count_option("--sft-steps", 8, "Closed-SFT's steps, and each SFT self-play round's."),
    n: int = opt.n_option(2),
    limit: int | None = opt.limit_option(None, "At most N test tasks (of the trained functions)."),
    probe_limit: int | None = opt.probe_limit_option(),
    gather_model: str | None = opt.gather_model_option(None, "Who answers Closed-SFT's train tasks: default the model "
                                                       "itself; reference (or a backend) is a teacher, named in its "
                                                       "row."),
    max_tokens: int = opt.max_tokens_option(160),
    settings: list[str] = opt.settings_option("Self-play setting KEY=VALUE (repeatable), for each self-play learner, "
                                              "or LEARNER.KEY=VALUE for one (absolute-zero.num_generations=2)."),
) -> None:
    """SFT self-play against RL self-play: recall and closed-book pass@k, and every round's figures."""
    from benchmarks.cli_report import show_comparison
    from benchmarks.selfplay_compare import learner_settings, selfplay_compare

    names = tuple(split_names(learners))
    check.limit(limit, "the first N test tasks")
    check.counts(train_limit=train_limit, rounds=rounds, proposals=proposals, sft_steps=sft_steps, n=n,
                 probe_limit=probe_limit, max_tokens=max_tokens)
    check.model(model)
    check.helper_model(gather_model, "--gather-model")
    overrides = parse_overrides(settings)
    for name in names:  # each row's settings, as selfplay_compare gives them (unknown learners named)
        check.settings(name, learner_settings(name, train_limit, sft_steps, rounds, proposals,
                                              gather_model or None, overrides))
    env = load_env(zwc)
    try:
        selfplay_compare(env, out, model=model, learners=names, train_limit=train_limit, rounds=rounds,
                                proposals=proposals, sft_steps=sft_steps, n=n, limit=limit, probe_limit=probe_limit,
                                gather_model=gather_model or None, max_tokens=max_tokens,
                                settings=overrides, dtype=dtype)
    finally:
        env.close()
    show_comparison(out)
