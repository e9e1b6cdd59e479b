"""How the checker commands (``check-learner``, ``check-backend``) end: a header, one line per
check (PASS, WARN or FAIL, its name, why), the report as JSON when asked, exit status 1 when a
check failed (a warning does not fail). One place, so that the three checkers read and exit alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

COLOURS = {"PASS": "green", "WARN": "yellow", "FAIL": "red"}


def print_check(out: Console, check: Any, seconds: float | None = None) -> None:
    """One check's line: its mark in colour, name, why (and its warning), ``seconds`` when given."""
    mark = f"[{COLOURS[check.mark]}]{check.mark}[/{COLOURS[check.mark]}]"
    at = f" [dim]({seconds:.0f} s)[/dim]" if seconds is not None else ""
    warning = f" [yellow]warning: {escape(check.warning)}[/yellow]" if check.warning else ""
    out.print(f"{mark} [bold]{escape(check.name)}[/bold]{at}: {escape(check.why)}{warning}", soft_wrap=True)


def finish_check(report: Any, header: str, json_out: Path | None, lines: bool = True) -> None:
    """Print ``header`` and the report's checks (unless ``lines`` is False: they were printed as they
    came); write ``json_out``; exit 1 if a check failed. ``report`` is a
    ``sebench.check_report.ConformanceReport`` (or the learner checker's subclass)."""
    out = Console()
    out.print(escape(header), soft_wrap=True)
    for check in report.checks if lines else []:
        print_check(out, check)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.to_dict(), indent=1, default=str) + "\n")
    if not report.passed:
        raise typer.Exit(1)
