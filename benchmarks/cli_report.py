"""``sebench report``: the typer command (registered in ``benchmarks/cli.py``), thin over ``benchmarks.report``.

    sebench report --runs runs/compare runs/zwc-seed0/validate --out runs/report

Kept in its own file so the report's options live beside nothing else; exit status 2 with a
red message naming the path when a run cannot be read. Click options take one value each, so
the directories after the first land in the ``more`` argument: ``--runs A B`` reads A and B.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table


def report_command(
    runs: list[Path] = typer.Option(..., "--runs", help="Run directories written by compare, sft-compare, "
                                    "rl-compare, validate, evolve or eval (repeat, or list several after --runs)."),
    out: Path = typer.Option(..., "--out", help="Report directory: report.md, report.html (self-contained), PNGs."),
    more: list[Path] | None = typer.Argument(None, metavar="DIR", show_default=False,
                                             help="More run directories: `--runs A B C` reads all three."),
) -> None:
    """The paper's findings and tables from runs: verdicts from paired intervals, exact bounds and bootstrap
    intervals over tasks, the paper's figures beside them."""
    from benchmarks.report import write_report
    from benchmarks.report_runs import ReportError

    err = Console(stderr=True)
    try:
        with err.status("reading runs and drawing the report…"):
            report = write_report([*runs, *(more or [])], out)
    except ReportError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None
    print_sections(report)
    console = Console()
    console.print(f"report: {out / 'report.md'}\n        {out / 'report.html'}")


PAPER_TABLES = ("findings", "main", "validation", "sft", "rl", "selfplay", "rounds")


def print_sections(report, keys: tuple[str, ...] = PAPER_TABLES) -> None:
    """The paper's tables of a report on the terminal, each with its findings (verdicts, rows that
    ended without a model); the rest is in the files."""
    console = Console(width=max(Console().width, 160))
    for section in report.sections:
        if section.key in keys:
            table = Table(title=section.title)
            for i, col in enumerate(section.table.header):
                table.add_column(col, justify="left" if i == 0 else "right")
            for row in section.table.rows:
                table.add_row(*(escape(cell) for cell in row))
            console.print(table)
            for finding in section.findings:
                console.print(escape(finding), highlight=False)


def show_comparison(out: Path) -> None:
    """What a comparison command prints at its end: its report's tables (``sebench report``'s code,
    on the directory it just wrote) and where the files are."""
    from benchmarks.report import build_report
    from benchmarks.report_runs import read_run

    print_sections(build_report([read_run(out)]))
    Console().print(f"report: {out / 'report.md'}\n        {out / 'report.html'}")
