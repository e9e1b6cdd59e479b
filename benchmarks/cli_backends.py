"""``sebench check-backend memory|model TARGET``: the backend checkers from the shell.

    sebench check-backend memory chroma                         # any registered memory backend
    sebench check-backend memory my_package.stores:make_store   # factory(path, embedder) -> store
    sebench check-backend model smollm2-135m                    # anything load_model accepts (any
                                                                # registered name or prefix)
    sebench check-backend model smollm2-135m --engine ct2-int8  # on another engine (local models)
    sebench check-backend model path/to/my_model.py:MyModel     # a model, or a factory taking no arguments

One line per check, PASS or FAIL and why (``memory.conformance.check_store``,
``agents.models.conformance.check_model``); the exit status is 1 when a check fails and 2 when
TARGET names nothing. Registered in ``benchmarks.cli`` as ``check-backend``.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

_OBJECT = re.compile(r"^(?P<place>[\w.]+|.+\.py):(?P<attr>[\w.]+)$")  # package.module:Attr or file.py:Attr


class Kind(StrEnum):
    memory = "memory"
    model = "model"


def check_backend_command(
    kind: Kind = typer.Argument(..., help="memory (a MemoryStore backend) or model (a Model backend)."),
    target: str = typer.Argument(..., help="memory: a registered backend (sebench backends) or "
                                           "package.module:Attr / path/to/file.py:Attr, a factory(path, embedder); "
                                           "model: a name load_model accepts, or package.module:Attr / "
                                           "path/to/file.py:Attr, a model or a factory taking no arguments."),
    persistent: bool | None = typer.Option(None, "--persistent/--not-persistent",
                                           help="memory: require (or skip) reading items back after persist() and "
                                                "close(); default: a shipped backend's own, else when any is read."),
    batch_invariant: bool = typer.Option(True, "--batch-invariant/--no-batch-invariant",
                                         help="model: require a prompt's greedy answer not to depend on its batch."),
    sampling: bool = typer.Option(True, "--sampling/--no-sampling",
                                  help="model: require temperature > 0 to vary (off for a deterministic backend)."),
    engine: str = typer.Option("transformers", "--engine", help="model: the engine a model name or directory is "
                               "loaded on (transformers, auto, ct2-int8, ct2-float32)."),
    workdir: Path | None = typer.Option(None, "--workdir", help="memory: keep the stores here (default: a "
                                                                "temporary directory, removed)."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the report as JSON here."),
) -> None:
    """Check that a memory or model backend keeps its protocol, one line per check."""
    from benchmarks.check_output import finish_check

    if kind is Kind.memory:
        from memory import registry
        from memory.conformance import check_store

        installed = registry.backends()
        if target in installed:
            factory = registry.factory(target)
            default = registry.is_persistent(factory)
        else:
            factory, default = _resolve_object(target, f"a registered backend ({', '.join(installed)})"), None
        report = check_store(factory, workdir=workdir, target=target,
                             persistent=persistent if persistent is not None else default)
    else:
        from agents.models.conformance import check_model
        from agents.models.errors import ModelError
        from agents.models.registry import default_registry
        models = default_registry()

        model: Any = target
        try:
            if _OBJECT.match(target) and models.find(target) is None:
                model = _resolve_object(target, "a model name, a model directory, vllm:<model> or openai:<url>#<model>")
            elif engine != "transformers":
                from agents.models import load_model

                model = load_model(target, engine=engine)
            report = check_model(model, batch_invariant=batch_invariant, sampling=sampling, target=target)
        except ModelError as exc:
            raise typer.BadParameter(str(exc), param_hint="TARGET") from None
    finish_check(report, f"check-backend {kind.value} {report.target} ({report.seconds:.0f}s)", json_out)


def _resolve_object(target: str, alternative: str) -> Any:
    """The object ``package.module:Attr`` or ``path/to/file.py:Attr`` names; BadParameter (exit 2) otherwise."""
    from sebench.targets import TargetError, load_object

    if _OBJECT.match(target) is None:
        raise typer.BadParameter(f"{target!r} is neither {alternative} nor package.module:Attr or "
                                 "path/to/file.py:Attr", param_hint="TARGET")
    try:
        return load_object(target)[0]
    except TargetError as exc:
        raise typer.BadParameter(str(exc), param_hint="TARGET") from None


def backends_command() -> None:
    """The registered memory and model backends and where each comes from (its package and
    ``module:attr``): the ``sebench.memory`` and ``sebench.models`` entry-point groups."""
    from rich.console import Console
    from rich.table import Table

    from agents.models.registry import default_registry
    models = default_registry()
    from memory import registry

    table = Table(title="backends (entry-point groups sebench.memory and sebench.models)")
    for col in ("kind", "name", "where"):
        table.add_column(col, overflow="fold")
    for name, plugin in registry.backends().items():
        table.add_row("memory", name, plugin.origin)
    for entry in models.entries():
        table.add_row("model", entry.name + ("<…>" if entry.prefix else ""), entry.origin)
    table.caption = "a model directory needs no entry; check any of them with sebench check-backend memory|model NAME"
    Console().print(table)
