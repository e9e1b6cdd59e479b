"""How the checker commands (``check-learner``, ``check-backend``) end: a header, one line per
check (PASS or FAIL, its name, why), the report as JSON when asked, exit status 1 when a check
failed. One place, so that the three checkers read and exit alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape


def finish_check(report: Any, header: str, json_out: Path | None) -> None:
    """Print ``header`` and the report's checks; write ``json_out``; exit 1 if a check failed.
    ``report`` is a ``sebench.check_report.ConformanceReport`` (or the learner checker's subclass)."""
    out = Console()
    out.print(escape(header), soft_wrap=True)
    for check in report.checks:
        mark = "[green]PASS[/green]" if check.passed else "[red]FAIL[/red]"
        out.print(f"{mark} [bold]{escape(check.name)}[/bold]: {escape(check.why)}", soft_wrap=True)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.to_dict(), indent=1, default=str) + "\n")
    if not report.passed:
        raise typer.Exit(1)
