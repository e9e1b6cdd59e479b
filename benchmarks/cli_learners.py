"""``sebench learners [NAME]``: the registered learners, and each one's settings with their help
(what ``sebench evolve --learner NAME --set KEY=VALUE`` takes; ``--learner NAME --help`` shows it too)."""

from __future__ import annotations

import inspect

import typer
from rich.console import Console
from rich.table import Table


def learners_table() -> Table:
    from learners.registry import registry as learner_registry
    known = learner_registry()

    table = Table(title="learners (entry-point group sebench.learners)")
    for col in ("name", "kind", "where", "what"):
        table.add_column(col)
    for name in known:
        factory = known[name]
        kind = "weights" if getattr(factory, "parametric", False) else "memory / none"
        summary = " ".join((inspect.getdoc(factory) or "").split("\n\n")[0].split())
        table.add_row(name, kind, known.target(name), summary)
    return table


def settings_table(name: str) -> Table:
    """A learner's settings: its config dataclass's fields (nested trainer settings flattened)."""
    from agents.learner import config_help
    from learners.registry import config_class
    from learners.registry import registry as learner_registry
    known = learner_registry()

    factory = known[name]
    config = config_class(factory)
    table = Table(title=f"{name}: settings (sebench evolve --learner {name} --set KEY=VALUE)")
    for col in ("setting", "default", "help"):
        table.add_column(col, overflow="fold")
    if config is None:
        table.caption = f"{known.target(name)} declares no config dataclass (config_class)"
        return table
    for row in config_help(config):
        table.add_row(row.name, repr(row.default), row.help)
    if name == "closed-sft-rl":
        table.caption = ("and every closed-sft setting with the prefix sft_ (sft_max_steps, sft_learning_rate ...): "
                         "sebench learners closed-sft")
    return table


def learners_command(name: str | None = typer.Argument(None, help="A learner: list its settings.")) -> None:
    """The registered learners, or one learner's settings with their help."""
    from learners.registry import LearnerRegistryError

    console = Console(width=max(Console().width, 140))
    if name is None:
        console.print(learners_table())
        return
    try:
        console.print(settings_table(name))
    except LearnerRegistryError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc.args[0]}")
        raise typer.Exit(2) from None


def print_settings_after_help(argv: list[str]) -> None:
    """``sebench evolve --learner NAME --help``: typer prints the command's help and exits before
    the options are read, so the learner's settings are printed here, after it."""
    if "evolve" not in argv or not {"--help", "-h"} & set(argv):
        return
    names = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--learner"]
    names += [a.split("=", 1)[1] for a in argv if a.startswith("--learner=")]
    for name in names:
        try:
            Console(width=max(Console().width, 140)).print(settings_table(name))
        except LookupError as exc:
            Console(stderr=True).print(f"[red]error:[/red] {exc.args[0]}")
