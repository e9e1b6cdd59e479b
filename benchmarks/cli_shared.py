"""What every ``sebench`` command does the same way, in one place so no command module imports
from ``benchmarks.cli`` (which registers them): read ``--set`` pairs, split ``--learners``, open
the ZWC build, draw the evaluation tables.

Opening the build is the first piece of work a command does, after ``cli_checks`` has checked
every argument.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.cli_options import Usage
from sebench.errors import SettingError

console = Console(stderr=True)


def parse_overrides(pairs: list[str]) -> dict:
    """``--set KEY=VALUE`` pairs; values are read as JSON when they parse (numbers, true, null),
    else as text. A pair without ``=`` or a key is a ``SettingError`` naming the pair."""
    values = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise SettingError(f"--set {pair!r}: write KEY=VALUE, e.g. --set max_steps=20")
        try:
            values[key.strip()] = json.loads(raw)
        except ValueError:
            values[key.strip()] = raw
    return values


def evolve_checked(zwc: Path, learner: str, out: Path, config: dict, settings: list[str], *, model: str,
                   max_tokens: int, dtype: str, usage: Usage):
    """``sebench evolve`` and ``sebench selfplay``'s run: the ``--set`` pairs over ``config``, checked
    as the learner's settings before the build is opened, then one ``evolve_run`` (the build closed
    however it ends: a SebenchError, such as nothing to train on, stays one line)."""
    from benchmarks import cli_checks as check
    from benchmarks.runs import evolve_run

    config.update(parse_overrides(settings))
    check.settings(learner, config)
    env = load_env(zwc, usage)
    try:
        return evolve_run(env, learner, out, model=model, settings=config, max_tokens=max_tokens, dtype=dtype,
                          usage=usage)
    finally:
        env.close()


def split_names(names: str) -> list[str]:
    """``--learners a, b,,c`` -> ``['a', 'b', 'c']``."""
    return [n.strip() for n in names.split(",") if n.strip()]


def load_env(zwc: Path, usage: Usage = "standard"):
    """The ZWC build at ``zwc``; a directory that is not one is a ``ZWCEnvError`` (a ``SebenchError``:
    one line, exit 2)."""
    from envs.zwc import ZWCEnv

    return ZWCEnv.load(zwc, usage=usage)


def evaluation_tables(reports) -> list[Table]:
    """Rates per run, then the failure taxonomy with one column per run (``eval``, ``validate``)."""
    rates = Table(title="evaluation")
    numeric = ("tasks", "samples", "pass@1", "best pass@k", "target use")
    for col in ("run", "split", "mode", "model", *numeric):
        rates.add_column(col, justify="right" if col in numeric else "left")
    for i, r in enumerate(reports, 1):
        top = max(r.pass_at) if r.pass_at else 0
        best = f"@{top} {100 * r.pass_at.get(top, 0.0):.1f}%" if top else "-"
        use = "-" if r.target_use_rate is None else f"{100 * r.target_use_rate:.1f}%"
        rates.add_row(str(i), r.split, r.mode, r.model, str(r.n_tasks), str(r.n_samples),
                      f"{100 * r.pass_at.get(1, 0.0):.1f}%", best, use)
    taxonomy = Table(title="outcomes per run (failure taxonomy)")
    taxonomy.add_column("outcome")
    for i in range(len(reports)):
        taxonomy.add_column(f"run {i + 1}", justify="right")
    for outcome in reports[0].failures:
        counts = [r.failures.get(outcome, 0) for r in reports]
        if any(counts):
            taxonomy.add_row(outcome, *map(str, counts))
    rates.caption = "target use: share of passing samples that ran every function their task names (- unknown)"
    return [rates, taxonomy]
