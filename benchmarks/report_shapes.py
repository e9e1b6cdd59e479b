r"""The shapes a report is made of (``Report``, its ``Section``\ s, their ``Table`` and ``Bar``\ s)
and each run's configuration as the report prints it (``run_config``).

``benchmarks/report.py`` fills them from the runs; the writers (``report_html.py``,
``report_plots.py``) read them. They live here, apart from both, so that the report module
imports its writers and no writer imports the report back (tests/test_import_graph.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.report_runs import Run
from benchmarks.report_training import Curve


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass
class Bar:
    """One bar of a pass@k plot: a rate with its interval, in percent."""

    label: str
    series: str
    value: float
    low: float | None
    high: float | None


@dataclass
class Section:
    key: str                 # html id and plot file stem
    title: str
    table: Table
    notes: list[str] = field(default_factory=list)
    bars: list[Bar] = field(default_factory=list)
    plots: list[tuple[str, str]] = field(default_factory=list)  # (caption, PNG file name in OUT)
    curves: list[Curve] = field(default_factory=list)           # a line plot: percent against curve_axes[0]
    curve_axes: tuple[str, str] = ("", "")                      # (x label, title)
    findings: list[str] = field(default_factory=list)  # verdicts, warnings, failed rows: printed with the table


@dataclass
class Report:
    runs: list[Run]
    sections: list[Section]
    anchors: dict
    outcomes: list[tuple[str, dict[str, int]]]           # (evaluation label, outcome -> samples)
    budget: list[dict]                                   # sft/rl rows: name, kind, steps, recall, pass@1
    generated: str = ""
    code_version: str = ""



def run_config(run: Run) -> dict:
    """The run's configuration, and each evaluation's where the run has none of its own."""
    if run.config and run.kind not in ("eval", "validate"):
        return run.config
    return {"run": run.config, "evaluations": {f"{e.name} ({e.split}, {e.mode})": e.config for e in run.evaluations}}
