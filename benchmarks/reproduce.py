"""``sebench reproduce``: every run the paper's findings need, planned, resumable, then the report.

    sebench reproduce --budget smoke --out runs/repro
    sebench reproduce --budget cpu --out runs/repro --seeds 0,1 --train-seeds 0,1 --only sft,rl

Why it composes the existing commands instead of calling their code in one process: each row is
one ``sebench`` command in its own process (``python -m benchmarks.cli``), so a row's models and
trainer give their memory back when it ends, one row's crash is one failed row, and the command
the plan prints is the command that ran (a user reruns any row by hand). Those commands already
resume after a kill (trainings from their last checkpoint, self-play from its last round), so
a killed ``reproduce`` loses at most the step in progress.

What it writes in OUT:

    plan.json              every row: its command, directory, estimate, state, exit code, seconds
    speed.json             the timed generation the estimates come from (reproduce_estimate)
    logs/ROW.log           each row's output
    zwc-seedZ/             the ZWC builds and their tasks (`sebench zwc build`, `sebench tasks build`)
    validate/zwcZ/         `sebench validate`           memory/zwcZ/   `sebench compare`
    sft/zwcZ-trainT/       `sebench sft-compare`        rl/…, selfplay/… likewise (one folder per
                           learner below it with per_learner = true)
    report/                `sebench report` over every finished row: findings first

A row whose directory holds what its command writes last is finished and skipped on a rerun
(the plan says so); any other row runs, and ``plan.json`` is rewritten as each row starts and
ends, so a crash loses no record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from benchmarks.reproduce_budget import PARTS, TINY, Budget, Row, build_plan, command_options, model_name
from benchmarks.reproduce_estimate import duration, estimate, measure
from sebench.jsonl import write_json

STATUS = "plan.json"
SPEED = "speed.json"


def read_status(out: Path) -> dict[str, dict]:
    """The rows' records of an earlier run of the plan (by row id); empty when there was none."""
    path = out / STATUS
    if not path.is_file():
        return {}
    try:
        return {r["id"]: r for r in json.loads(path.read_text()).get("rows", [])}
    except (ValueError, KeyError, TypeError):
        return {}


def speed_for(budget: Budget, out: Path, console: Console, time_it: bool) -> dict[str, Any]:
    """This machine's speed with the budget's model, measured once per OUT (``speed.json``); the tiny
    model of the smoke budget is written first when it is not there."""
    model = model_name(budget, out)
    tiny = budget.model[len(TINY):] if budget.model.startswith(TINY) else None
    missing = tiny if tiny and not (Path(model) / "config.json").is_file() else None
    cached = out / SPEED
    saved = json.loads(cached.read_text()) if cached.is_file() else {}
    if (saved.get("model") == model and saved.get("dtype") == budget.dtype) or not time_it:
        if missing:
            written = measure(model, budget.dtype, time_it=False, tiny_base=missing)
            if "error" in written:
                console.print(f"[yellow]warning:[/yellow] {escape(written['error'])}")
        return saved if saved.get("model") == model else {}
    with console.status(f"timing a short generation of {model}…"):
        speed = measure(model, budget.dtype, tiny_base=missing)
    speed |= {"model": model, "dtype": budget.dtype, "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    if "error" not in speed:
        write_json(cached, speed)
    return speed


def plan_table(budget: Budget, rows: list[Row], estimates: dict[str, float | None], speed: dict) -> Table:
    """The plan as printed before anything runs."""
    rate = speed.get("tokens_per_second")
    caption = (f"estimates (~): {rate:.1f} generated tokens/s measured here with {speed.get('model')}, times each "
               "row's tokens at full answer length (benchmarks/reproduce_estimate.py); an estimate, not a promise"
               if rate else f"no estimates: {speed.get('error', 'not timed (--no-estimate)')}")
    table = Table(title=f"sebench reproduce: budget {budget.name} ({budget.path})", caption=caption)
    for col in ("row", "part", "command", "estimate", "state"):
        table.add_column(col, justify="right" if col == "estimate" else "left", overflow="fold")
    for row in rows:
        table.add_row(row.id, row.part, escape(row.command), "~" + duration(estimates[row.id])
                      if estimates[row.id] is not None else "unknown", "finished" if row.done else "to run")
    total = sum(e for r in rows if not r.done and (e := estimates[r.id]) is not None)
    table.add_row("", "", "total of the rows to run", "~" + duration(total), "")
    return table


def _run_row(row: Row, out: Path, record: dict, save, console: Console, index: str, started: float) -> int:
    """Run one row's command in its own process, output to ``logs/ROW.log``; returns its exit code."""
    log = out / "logs" / f"{row.id}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    row.out.parent.mkdir(parents=True, exist_ok=True)
    record.update(state="running", started=time.strftime("%Y-%m-%d %H:%M:%S"), log=str(log), rc=None)
    save()
    console.print(f"{index} [bold]{row.id}[/bold] started: {escape(row.command)}", highlight=False)
    begun = time.perf_counter()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "160"}
    with log.open("a") as handle:
        handle.write(f"$ {row.command}\n")
        handle.flush()
        process = subprocess.Popen([sys.executable, "-m", "benchmarks.cli", *row.args], stdout=handle,
                                   stderr=subprocess.STDOUT, env=env)
        try:
            rc = process.wait()
        except KeyboardInterrupt:  # the child got the same Ctrl-C: let it stop, record the row, stop too
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            record.update(state="interrupted", rc=process.returncode, seconds=time.perf_counter() - begun)
            save()
            raise
    seconds = time.perf_counter() - begun
    ok = rc in row.ok_codes and row.done
    record.update(state="done" if ok else "failed", rc=rc, seconds=round(seconds, 1),
                  finished=time.strftime("%Y-%m-%d %H:%M:%S"))
    save()
    elapsed = duration(time.perf_counter() - started)
    if ok:
        console.print(f"{index} [green]{row.id} finished[/green] in {duration(seconds)} (exit {rc}; elapsed "
                      f"{elapsed}); log: {log}", highlight=False)
    else:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        console.print(f"{index} [red]{row.id} failed[/red] (exit {rc}) after {duration(seconds)} (elapsed "
                      f"{elapsed}); log: {log}\n{escape(tail)}", highlight=False)
    return rc


def report_args(rows: list[Row], out: Path) -> list[str] | None:
    """``sebench report`` over every finished run directory of the plan (None when there is none)."""
    runs = [str(r.out) for r in rows if r.report and r.done]
    return ["report", "--runs", *runs, "--out", str(out / "report")] if runs else None


def reproduce(budget: Budget, out: Path, parts: list[str], seeds: list[int] | None = None,
              train_seeds: list[int] | None = None, *, time_it: bool = True, dry_run: bool = False,
              console: Console | None = None) -> int:
    """Print the plan, run the rows not finished yet, then the report; the exit status: 0 when
    every row and the report finished, 1 otherwise."""
    console = console or Console(width=max(Console().width, 200))  # the commands are long: fold less
    out.mkdir(parents=True, exist_ok=True)
    rows = build_plan(budget, out, parts, seeds, train_seeds)
    every = build_plan(budget, out, list(PARTS), seeds, train_seeds)  # the report reads all parts' finished rows
    speed = speed_for(budget, out, console, time_it)
    defaults = {part: command_options(budget.commands, command) for part, command in PARTS.items()}
    estimates = {r.id: estimate(r, speed, defaults.get(r.part, {})) for r in rows}
    console.print(plan_table(budget, rows, estimates, speed))
    if dry_run:
        return 0
    earlier = read_status(out)
    records = [{**earlier.get(r.id, {}), "id": r.id, "part": r.part, "command": r.command, "out": str(r.out),
                "estimate_seconds": estimates[r.id]} for r in rows]
    by_id = {r["id"]: r for r in records}
    kept = [r for r in earlier.values() if r["id"] not in by_id]  # rows of parts --only left out keep their record
    state = {"budget": budget.name, "budget_file": str(budget.path), "parts": parts, "speed": speed,
             "rows": records + kept}

    def save() -> None:
        write_json(out / STATUS, state)

    save()
    started, failed, blocked = time.perf_counter(), [], set()
    for i, row in enumerate(rows, 1):
        index, record = f"[{i}/{len(rows)}]", by_id[row.id]
        build = row.args[row.args.index("--zwc") + 1] if "--zwc" in row.args else str(row.out)
        if row.done:
            note = "" if earlier.get(row.id, {}).get("command", row.command) == row.command else \
                " (with another command, see plan.json; delete its directory to run it again)"
            console.print(f"{index} {row.id}: already finished, skipped{note}", highlight=False)
            record["state"] = "done"
            continue
        if build in blocked:
            console.print(f"{index} [yellow]{row.id}: not run, its ZWC build failed[/yellow]", highlight=False)
            record["state"] = "blocked"
            failed.append(row.id)
            continue
        if _run_row(row, out, record, save, console, index, started) not in row.ok_codes or not row.done:
            failed.append(row.id)
            if row.part == "zwc":
                blocked.add(str(row.out))
    save()
    args = report_args(every, out)
    if args is None:
        console.print("[yellow]no finished row: no report[/yellow]")
        return 1
    report = Row("report", "report", args, out / "report", "report.html", report=False)
    record = {"id": "report", "command": report.command}
    state["report"] = record
    rc = _run_row(report, out, record, save, console, "[report]", started)
    console.print(f"finished in {duration(time.perf_counter() - started)}: {len(rows) - len(failed)} of {len(rows)} "
                  f"rows done" + (f"; failed or not run: {', '.join(failed)}" if failed else ""))
    if rc == 0:  # the findings and tables `sebench report` printed
        printed = Path(record["log"]).read_text(errors="replace").rsplit("$ sebench report", 1)[-1]
        console.print(printed.split("\n", 1)[-1], markup=False, highlight=False)
        console.print(f"report: {out / 'report' / 'report.md'}\n        {out / 'report' / 'report.html'}")
    return 0 if rc == 0 and not failed else 1
