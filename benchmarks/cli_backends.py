"""``sebench check-backend memory|model TARGET``: the backend checkers from the shell.

    sebench check-backend memory chroma                         # one of memory.conformance.SHIPPED
    sebench check-backend memory my_package.stores:make_store   # factory(path, embedder) -> store
    sebench check-backend model smollm2-135m                    # anything load_model accepts
    sebench check-backend model path/to/my_model.py:MyModel     # a model, or a factory taking no arguments

One line per check, PASS or FAIL and why (``memory.conformance.check_store``,
``agents.models.conformance.check_model``); the exit status is 1 when a check fails and 2 when
TARGET names nothing. Registered in ``benchmarks.cli`` as ``check-backend``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

_OBJECT = re.compile(r"^(?P<place>[\w.]+|.+\.py):(?P<attr>[\w.]+)$")  # package.module:Attr or file.py:Attr
_MODEL_SCHEMES = ("openai:", "vllm:")


class Kind(StrEnum):
    memory = "memory"
    model = "model"


def check_backend_command(
    kind: Kind = typer.Argument(..., help="memory (a MemoryStore backend) or model (a Model backend)."),
    target: str = typer.Argument(..., help="memory: a shipped backend (inmemory, inmemory-file, chroma) or "
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
    workdir: Path | None = typer.Option(None, "--workdir", help="memory: keep the stores here (default: a "
                                                                "temporary directory, removed)."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the report as JSON here."),
) -> None:
    """Check that a memory or model backend keeps its protocol, one line per check."""
    out = Console()
    if kind is Kind.memory:
        from memory.conformance import SHIPPED, check_store

        if target in SHIPPED:
            factory, default = SHIPPED[target].factory, SHIPPED[target].persistent
        else:
            factory, default = _resolve_object(target, f"a shipped backend ({', '.join(SHIPPED)})"), None
        report = check_store(factory, workdir=workdir, target=target,
                             persistent=persistent if persistent is not None else default)
    else:
        from agents.models.conformance import check_model
        from agents.models.errors import ModelError

        model: Any = target
        if _OBJECT.match(target) and not target.startswith(_MODEL_SCHEMES):
            model = _resolve_object(target, "a model name, a model directory, vllm:<model> or openai:<url>#<model>")
        try:
            report = check_model(model, batch_invariant=batch_invariant, sampling=sampling, target=target)
        except ModelError as exc:
            raise typer.BadParameter(str(exc), param_hint="TARGET") from None
    out.print(f"check-backend {kind.value} {escape(report.target)} ({report.seconds:.0f}s)", soft_wrap=True)
    for check in report.checks:
        mark = "[green]PASS[/green]" if check.passed else "[red]FAIL[/red]"
        out.print(f"{mark} [bold]{check.name}[/bold]: {escape(check.why)}", soft_wrap=True)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.to_dict(), indent=1, default=str) + "\n")
    if not report.passed:
        raise typer.Exit(1)


def _resolve_object(target: str, alternative: str) -> Any:
    """The object ``package.module:Attr`` or ``path/to/file.py:Attr`` names; BadParameter (exit 2) otherwise."""
    match = _OBJECT.match(target)
    if match is None:
        raise typer.BadParameter(f"{target!r} is neither {alternative} nor package.module:Attr or "
                                 "path/to/file.py:Attr", param_hint="TARGET")
    place, attr = match["place"], match["attr"]
    try:
        if place.endswith(".py"):
            path = Path(place).expanduser().resolve()
            if not path.is_file():
                raise FileNotFoundError(f"no such file {path}")
            name = f"sebench_check_backend_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # the memory checker finds the factory here again, by file
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(place)
    except Exception as exc:  # noqa: BLE001 - any error while importing a user's code is reported as such
        raise typer.BadParameter(f"{target!r}: importing {place} raised {type(exc).__name__}: {exc}",
                                 param_hint="TARGET") from None
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise typer.BadParameter(f"{target!r}: {place} has no attribute {attr!r}", param_hint="TARGET")
        value = getattr(value, part)
    return value
