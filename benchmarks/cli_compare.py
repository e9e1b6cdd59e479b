"""``sebench compare``, ``sft-compare`` and ``rl-compare``: learners side by side against the
no-learner baseline (memory learners) or base and Closed-SFT (SFT, RL), each row evolved and
evaluated on the same build, one table and a report directory per command.

Every row's learner and settings are checked before the first row runs, so a typo in the last
learner's ``--set`` ends the command before the baseline has run and left a directory.
"""

from __future__ import annotations

from pathlib import Path

import typer

from benchmarks import cli_checks as check
from benchmarks import cli_options as opt
from benchmarks.cli_options import Dtype, Usage
from benchmarks.cli_shared import load_env, parse_overrides, split_names
from sebench.errors import SettingError

TRAINERS_DTYPE = " Also the trainers' (--set dtype=… wins)."
BASE_MODEL = "The base model (local weights)."
TEST_LIMIT = "At most N test tasks (of the trained functions)."


def compare_command(
    zwc: Path = opt.zwc_option(),
    learners: str = opt.learners_option("none,expel,ace"),
    model: str = opt.model_option(),
    dtype: Dtype = opt.dtype_option(),
    out: Path = opt.report_out_option(),
    limit: int = opt.limit_option(20, "Test tasks evaluated closed-book: the first N."),
    train_limit: int = opt.count_option("--train-limit", 20, "Train tasks each learner uses."),
    gather_model: str | None = opt.gather_model_option("reference", "Model that gathers training trajectories ('' for "
                                                                     "the agent's)."),
    max_tokens: int = opt.max_tokens_option(192),
    temperature: float | None = opt.temperature_option(),
    usage: Usage = opt.usage_option(),
    settings: list[str] = opt.settings_option("Learner setting KEY=VALUE for every learner, or LEARNER.KEY=VALUE for "
                                              "one (expel.store=chroma); repeatable."),
    numpy_control: bool = typer.Option(True, "--numpy-control/--no-numpy-control",
                                       help="Also evaluate each row on the same tasks in plain NumPy: 'NumPy "
                                            "retained', the row minus the no-learner row (forgetting)."),
) -> None:
    """Evolve each learner and compare closed-book results next to the no-learner baseline."""
    from benchmarks.cli_report import show_comparison
    from benchmarks.compare import compare
    from benchmarks.runs import learner_overrides

    names = split_names(learners)
    if "none" not in names:
        names.insert(0, "none")  # the baseline is always in the table
    check.limit(limit, "the first N test tasks")
    check.counts(train_limit=train_limit, max_tokens=max_tokens)
    check.model(model)
    check.helper_model(gather_model, "--gather-model")
    check.learners(names)
    overrides = parse_overrides(settings)
    for name in names:
        if name != "none":  # compare gives the baseline no settings
            check.settings(name, {"limit": train_limit, "gather_model": gather_model or None,
                                  **learner_overrides(overrides, name)})
    env = load_env(zwc, usage)
    try:
        compare(env, names, model, out, limit=limit, train_limit=train_limit,
                gather_model=gather_model or None, max_tokens=max_tokens, dtype=dtype,
                settings=overrides, numpy_control=numpy_control, temperature=temperature)
    finally:
        env.close()
    show_comparison(out)


def sft_compare_command(
    zwc: Path = opt.zwc_option(),
    out: Path = opt.report_out_option(),
    model: str = opt.model_option(BASE_MODEL),
    dtype: Dtype = opt.dtype_option(TRAINERS_DTYPE),
    learners: str = opt.learners_option("closed-sft,open-sft"),
    train_limit: int = opt.count_option("--train-limit", 48, "The fixed train slice: its first N tasks."),
    steps: int = opt.count_option("--steps", 60, "Optimiser steps per learner."),
    n: int = opt.n_option(4),
    limit: int | None = opt.limit_option(None, TEST_LIMIT),
    probe_limit: int | None = opt.probe_limit_option(),
    gather_model: str | None = opt.gather_model_option(None, "Who answers the train tasks: default the model itself "
                                                       "(the paper's rejection sampling); reference (or a backend) is "
                                                       "a teacher, and the rows it trained say so in their names."),
    max_tokens: int = opt.max_tokens_option(160),
    settings: list[str] = opt.settings_option("Learner setting KEY=VALUE (repeatable)."),
) -> None:
    """API recall and closed-book pass@k before vs after Closed-SFT and Open-SFT, in one table."""
    from benchmarks.cli_report import show_comparison
    from benchmarks.sft_compare import sft_compare

    names = tuple(split_names(learners))
    check.limit(limit, "the first N test tasks")
    check.counts(train_limit=train_limit, steps=steps, n=n, probe_limit=probe_limit, max_tokens=max_tokens)
    check.model(model)
    check.helper_model(gather_model, "--gather-model")
    check.learners(names)
    overrides = parse_overrides(settings)
    for name in names:  # what sft_compare gives every row
        check.settings(name, {"limit": train_limit, "gather_model": gather_model or None, "max_steps": steps,
                              "dtype": dtype, **overrides})
    env = load_env(zwc)
    try:
        sft_compare(env, out, model=model, learners=names, train_limit=train_limit, steps=steps, n=n,
                           limit=limit, gather_model=gather_model or None, max_tokens=max_tokens,
                           settings=overrides, probe_limit=probe_limit, dtype=dtype)
    finally:
        env.close()
    show_comparison(out)


def rl_compare_command(
    zwc: Path = opt.zwc_option(),
    out: Path = opt.report_out_option(),
    model: str = opt.model_option(BASE_MODEL),
    dtype: Dtype = opt.dtype_option(TRAINERS_DTYPE),
    learners: str = opt.learners_option(",".join(("closed-sft", "open-rl", "closed-rl", "closed-rl@sft-like",
                                                  "closed-rl@sft-like+clip", "closed-rl@sft-like+grpo-adv",
                                                  "closed-rl@sft-like-small-lr", "closed-rl@sft-like-small-batch",
                                                  "closed-sft-rl")),
                                        "Comma-separated; closed-rl@PRESET for Table 3's ablations."),
    train_limit: int = opt.count_option("--train-limit", 8, "The fixed train slice: its first N tasks."),
    steps: int = opt.count_option("--steps", 8, "RL optimiser steps per learner (the same budget for all)."),
    sft_steps: int = opt.count_option("--sft-steps", 8, "Closed-SFT's steps (its row and Closed-SFT-RL's stage)."),
    n: int = opt.n_option(4),
    limit: int | None = opt.limit_option(None, TEST_LIMIT),
    probe_limit: int | None = opt.probe_limit_option(),
    gather_model: str | None = opt.gather_model_option(None, "Who answers Closed-SFT's (and Closed-SFT-RL's SFT "
                                                       "stage's) train tasks: default the model itself; reference (or "
                                                       "a backend) is a teacher, named in those rows."),
    max_tokens: int = opt.max_tokens_option(160),
    settings: list[str] = opt.settings_option("RL setting KEY=VALUE for every RL learner, or LEARNER.KEY=VALUE for one "
                                              "(closed-sft-rl.sft_seed=1); repeatable."),
) -> None:
    """The RL Gap: recall and closed-book pass@k of every RL learner against base and Closed-SFT."""
    from benchmarks.cli_report import show_comparison
    from benchmarks.rl_compare import parse_learner, rl_compare, row_settings

    names = tuple(split_names(learners))
    try:
        specs = [parse_learner(name) for name in names]
    except SettingError as exc:
        raise SettingError(f"--learners: {exc}") from None
    check.limit(limit, "the first N test tasks")
    check.counts(train_limit=train_limit, steps=steps, sft_steps=sft_steps, n=n, probe_limit=probe_limit,
                 max_tokens=max_tokens)
    check.model(model)
    check.helper_model(gather_model, "--gather-model")
    overrides = parse_overrides(settings)
    for name, preset in specs:
        check.settings(name, row_settings(name, preset, train_limit=train_limit, steps=steps, sft_steps=sft_steps,
                                          gather_model=gather_model or None, settings=overrides, dtype=dtype))
    env = load_env(zwc)
    try:
        rl_compare(env, out, model=model, learners=names, train_limit=train_limit, steps=steps,
                          sft_steps=sft_steps, n=n, limit=limit, gather_model=gather_model or None,
                          max_tokens=max_tokens, settings=overrides, probe_limit=probe_limit, dtype=dtype)
    finally:
        env.close()
    show_comparison(out)

