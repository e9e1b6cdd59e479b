"""The ``sebench`` command line (typer). Thin: every command calls the library.

    sebench zwc build --seed 7 --out runs/zwc-seed7
    sebench zwc build --official ../shared/sebench-v1/api_doc.jsonl --out runs/zwc-v1
    sebench zwc check --zwc runs/zwc-seed7 --task-file t.jsonl --code solution.py
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="SE-Bench: can an agent internalise a library it has never seen?",
                  no_args_is_help=True, pretty_exceptions_show_locals=False)
zwc_app = typer.Typer(help="Build and inspect ZWC environments.", no_args_is_help=True)
app.add_typer(zwc_app, name="zwc")
console = Console(stderr=True)


@zwc_app.command("build")
def zwc_build(
    out: Path = typer.Option(..., "--out", help="Directory to write the package, mapping and docs into."),
    seed: int | None = typer.Option(None, "--seed", help="Fresh obfuscation for this seed."),
    official: Path | None = typer.Option(None, "--official", help="SE-Bench v1 api_doc.jsonl: reproduce its names."),
) -> None:
    """Write an importable zwc package, mapping.json, api_doc.jsonl and docs.md."""
    from envs.zwc.docs import build_api_doc
    from envs.zwc.env import build_directory
    from envs.zwc.errors import ZWCEnvError
    from envs.zwc.names import Mapping

    if (seed is None) == (official is None):
        raise typer.BadParameter("give exactly one of --seed N or --official API_DOC")
    try:
        with console.status("building ZWC…"):
            if official is not None:
                import json

                mapping = Mapping.from_sebench_v1(official)
                records = [json.loads(line) for line in official.read_text().splitlines() if line.strip()]
            else:
                mapping = Mapping.generate(seed)
                records = build_api_doc(mapping)
            build_directory(mapping, out, records)
    except ZWCEnvError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    table = Table(title=f"ZWC build: {out}")
    table.add_column("functions", justify="right")
    table.add_column("of which zwc.rfx", justify="right")
    table.add_column("origin")
    table.add_row(str(len(mapping)), str(sum(".rfx." in e.zwc for e in mapping)), mapping.origin)
    Console().print(table)


@zwc_app.command("check")
def zwc_check(
    zwc: Path = typer.Option(..., "--zwc", help="A directory written by `sebench zwc build`."),
    task_file: Path = typer.Option(..., "--task-file", help="JSON-lines task file."),
    code: Path = typer.Option(..., "--code", help="A Python file with the candidate solution."),
    index: int = typer.Option(0, "--index", help="Which task of the file (0-based)."),
    mode: str = typer.Option("closed", "--mode", help="closed | numpy"),
) -> None:
    """Grade one candidate file against one task, as the benchmark would."""
    from envs.zwc import ZWCEnv, read_tasks

    tasks = read_tasks(task_file)
    if not 0 <= index < len(tasks):
        raise typer.BadParameter(f"--index {index}: {task_file} has {len(tasks)} tasks")
    with ZWCEnv.load(zwc, workers=1) as env:
        verdict = env.check(tasks[index], code.read_text(), mode=mode)  # type: ignore[arg-type]
    colour = "green" if verdict.passed else "red"
    Console().print(f"[{colour}]{verdict.failure.value}[/{colour}] "
                    f"{verdict.n_passed}/{len(verdict.tests)} tests  {verdict.detail}")
    raise typer.Exit(0 if verdict.passed else 1)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
