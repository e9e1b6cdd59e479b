"""``sebench report``: the paper's tables from run directories, with intervals, as Markdown and HTML.

    sebench report --runs runs/compare runs/zwc-seed0/validate --out runs/report

Reads what ``compare``, ``sft-compare``, ``rl-compare``, ``validate``, ``evolve`` and ``eval``
wrote (``benchmarks/report_runs.py``), groups the evaluations into the paper's tables (main:
learners x single/multi x pass@1/pass@k; design validation; SFT; the RL ablations), puts the
paper's Qwen3-8B figures beside them (``benchmarks/paper_anchors.json``, each with its source;
a dash where none could be found), and writes ``OUT/report.md``, ``OUT/report.html`` (one
self-contained page) and PNG plots. Where the runs hold the rows of one of the paper's findings,
the report opens with them: each pre-specified finding's verdict from its paired interval, the
paper's figure beside it, the sizes (``benchmarks/report_findings.py``). Every rate carries its
exact (Clopper-Pearson) 95% bounds, a bootstrap 95% interval over tasks and, when several ZWC
builds (seeds) ran the same learner, the mean and spread over them (``benchmarks/report_stats.py``).
Only what the runs hold is shown: a table without runs is left out rather than filled in.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from benchmarks.report_costs import context_cell, docs_cell, learner_costs_section
from benchmarks.report_findings import HEADER, findings_table
from benchmarks.report_runs import SPLIT_NAMES, VALIDATION_SLOTS, Evaluation, Run, read_runs
from benchmarks.report_shapes import Bar, Report, Section, Table, run_config
from benchmarks.report_stats import Estimate, common_k, estimate, outcomes, target_use_rate
from benchmarks.report_training import ROUND_HEADER, TITLES, TRAIN_COLUMNS, reward_curves, round_lines

ANCHORS = Path(__file__).with_name("paper_anchors.json")
INTERVALS = ("Rates: [exact 95%] Clopper-Pearson bounds (pass@1: passes of samples; pass@k: of tasks); "
             "tasks [..]: bootstrap 95% over tasks (1000 resamples, seed 0); with several ZWC builds, the mean over "
             "builds, tasks resampled within each, and their sd. Differences between rows: the findings section.")
EXPECTED = {"closed": "0 (impossible without the docs)", "open": "high (trivial with the docs)",
            "numpy": "high (the logic is within reach)", "reference": ">= 99% (the grader is right)"}


def load_anchors(path: Path = ANCHORS) -> dict:
    return json.loads(path.read_text())


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def rate_cell(est: Estimate) -> str:
    """``37.5 [15.2, 64.6] · tasks [12.5, 62.5]``: the exact bounds in brackets, then the bootstrap
    interval over tasks, then the spread over builds when there are several."""
    if est.point is None:
        return "—"
    exact = est.exact
    cell = percent(est.point) + (f" [{percent(exact[0])}, {percent(exact[1])}]" if exact else "")
    if est.low is not None:
        cell += f" · tasks [{percent(est.low)}, {percent(est.high)}]"
    if est.spread is not None:
        cell += f" · sd {percent(est.spread)} over {len(est.per_build)} seeds"
    return cell


def anchor_cell(anchors: dict, table: str, name: str, split: str) -> str:
    """The paper's figure for the row ``name``; a teacher-trained row's label finds none (the paper's
    rows gathered their own data), so a dash stands beside it."""
    entry = anchors.get(table, {}).get("none" if name == "base" else name)
    value = entry.get(split) if entry else None
    if value is None:
        return "—"
    return f"{value:.1f}" + (" (pass@64)" if entry.get("metric") == "pass@64" and table == "learners" else "")


def _groups(evaluations: list[Evaluation], key) -> dict[tuple, list[Evaluation]]:
    groups: dict[tuple, list[Evaluation]] = {}
    for e in evaluations:
        groups.setdefault(key(e), []).append(e)
    return groups


def _builds(evaluations: list[Evaluation]) -> str:
    return ", ".join(dict.fromkeys(e.build_label for e in evaluations))


def _pass_cells(evaluations: list[Evaluation]) -> tuple[Estimate, Estimate | None]:
    k = common_k(evaluations)
    return estimate(evaluations, 1), (estimate(evaluations, k) if k > 1 else None)


def _bar(label: str, series: str, est: Estimate | None) -> list[Bar]:
    """The rate with the wider of its two intervals on each side (exact bounds, bootstrap over tasks)."""
    if est is None or est.point is None:
        return []
    lows = [x for x in (est.low, est.exact and est.exact[0]) if x is not None]
    highs = [x for x in (est.high, est.exact and est.exact[1]) if x is not None]
    return [Bar(label, series, 100 * est.point, 100 * min(lows) if lows else None,
                100 * max(highs) if highs else None)]


def main_section(evaluations: list[Evaluation], anchors: dict) -> Section | None:
    """Learners x single/multi x pass@1/pass@k, closed-book, with the paper's figures beside them."""
    rows = [e for e in evaluations if e.role == "learner" and e.mode == "closed" and e.split in SPLIT_NAMES]
    if not rows:
        return None
    header = ["learner", "model"]
    for split in SPLIT_NAMES.values():
        header += [f"{split} pass@1 [exact 95%]", f"{split} pass@k"]
    header += ["context / answer", "docs in context", "paper single", "paper multi", "tasks", "ZWC builds"]
    table, bars = Table(header, []), []
    for (name, model), group in _groups(rows, lambda e: (e.label, e.model)).items():  # a teacher's row: its own
        cells, tasks = [name, model], []
        for split_key, split in SPLIT_NAMES.items():
            members = [e for e in group if e.split == split_key]
            one, top = _pass_cells(members) if members else (Estimate(1, None), None)
            cells += [rate_cell(one), f"@{top.k} {rate_cell(top)}" if top else "—"]
            if members:
                tasks.append(f"{split} {one.n_tasks}")
                bars += _bar(f"{name}\n{model}", f"{split} pass@1", one) + _bar(f"{name}\n{model}",
                                                                               f"{split} pass@k", top)
        table.rows.append(cells + [context_cell(group), docs_cell(group)]
                          + [anchor_cell(anchors, "learners", name, s) for s in ("single", "multi")]
                          + [" · ".join(tasks), _builds(group)])
    notes = ["Closed-book: no docs at test time. " + INTERVALS,
             "context / answer: the learner's context per answer, in the model's tokens (characters where the "
             "model has no tokenizer). docs in context: the share of the docs' entries the closed-book contexts "
             "carry, a zwc name the learner never met in its first limit train tasks counting as its entry "
             "(agents/context_audit.py); above the threshold the row is the docs in memory, not internalisation.",
             "paper: Qwen3-8B, mean accuracy over five rollouts (Table 2), except (pass@64) from Table 1; "
             "— where no source gives the figure. A small model on a small slice is not expected to reach them."]
    return Section("main", "Main table: learners, closed-book", table, notes, bars)


def validation_section(evaluations: list[Evaluation], anchors: dict) -> Section | None:
    """SE-Bench's three diagnostic properties: closed-book 0, open and NumPy high, reference passes."""
    rows = [e for e in evaluations if e.role == "validation"]
    if not rows:
        return None
    order = {slot: i for i, slot in enumerate(VALIDATION_SLOTS)}
    rows.sort(key=lambda e: order.get(e.slot, len(order)))
    table = Table(["run", "model", "split", "pass@1 [exact 95%]", "target use", "expected", "check",
                   "paper (pass@64)", "tasks", "ZWC builds"], [])
    bars = []
    for (slot, model, split), group in _groups(rows, lambda e: (e.slot, e.model, e.split)).items():
        one, _ = _pass_cells(group)
        rates = [r for r in (target_use_rate(e) for e in group) if r is not None]
        check = "—"
        if slot == "closed" and one.point is not None:
            check = "ok" if one.point == 0 else "FAILS: closed-book must pass nothing"
        elif slot == "reference" and one.point is not None:
            check = "ok" if one.point >= 0.99 else "FAILS: the grader rejects reference solutions"
        short = SPLIT_NAMES.get(split, split)
        table.rows.append([slot, model, split, rate_cell(one), percent(sum(rates) / len(rates)) if rates else "—",
                           EXPECTED.get(slot, "—"), check, anchor_cell(anchors, "validation", slot, short),
                           str(one.n_tasks), _builds(group)])
        bars += _bar(slot, f"{short} pass@1", one)
    notes = ["target use: the share of passing samples that ran every function their task names.",
             "paper: Qwen3-8B pass@64 (Table 1): zero-shot on zwc, zwc docs in context, the same tasks in NumPy."]
    return Section("validation", "Design validation", table, notes, bars)


def _mean(values: list) -> str:
    known = [v for v in values if isinstance(v, int | float)]
    return percent(sum(known) / len(known)) if known else "—"


def rows_section(evaluations: list[Evaluation], anchors: dict, role: str, verdicts: list[str]) -> Section | None:
    """The SFT table (Open-Book Paradox), the RL ablations (the RL Gap) or self-play's table, one
    line per trained model, with the role's training columns (``benchmarks/report_training.py``)."""
    rows = [e for e in evaluations if e.role == role]
    if not rows:
        return None
    columns = TRAIN_COLUMNS[role]
    header = ["model", "base model", "recall (all)", "recall (trained fns)", "pass@1 [exact 95%]", "pass@k",
              *(name for name, _ in columns), "paper single", "paper multi", "tasks", "ZWC builds"]
    table, bars = Table(header, []), []
    for (name, model), group in _groups(rows, lambda e: (e.label, e.model)).items():
        one, top = _pass_cells(group)
        cells = [name, model, _mean([e.extra.get("recall") for e in group]),
                 _mean([e.extra.get("trained_recall") for e in group]), rate_cell(one),
                 f"@{top.k} {rate_cell(top)}" if top else "—", *(cell(group[0]) for _, cell in columns)]
        table.rows.append(cells + [anchor_cell(anchors, "learners", name, s) for s in ("single", "multi")]
                          + [str(one.n_tasks), _builds(group)])
        bars += _bar(name, "pass@1", one) + _bar(name, "pass@k", top)
    notes = ["Closed-book pass@1 on the single_test tasks of the trained functions; recall: the closed-book "
             "API-recall probe (share of functions named exactly). " + INTERVALS]
    section = Section(role, TITLES[role], table, notes, bars, findings=[v for v in verdicts if v])
    if role == "rl":
        section.curves, section.curve_axes = reward_curves(rows), ("optimiser step the rollouts were drawn at",
                                                                   "rollout pass rate (the reward) during training")
    return section


def findings_section(evaluations: list[Evaluation], anchors: dict) -> Section | None:
    """The paper's findings the runs hold the rows of, each decided by its paired interval."""
    rows, texts = findings_table(evaluations, anchors)
    if not rows:
        return None
    notes = ["Each finding was stated before the runs (benchmarks/findings.py): A minus B on closed-book pass@1, "
             "paired by task, 95% bootstrap interval over tasks (stratified by ZWC build) and training seeds. "
             "reproduced: the whole interval on the finding's side (for a bound: within it, and the run could detect "
             "the bound), with the exact sign test agreeing; contradicted: the whole interval on the other side; "
             "inconclusive otherwise. Never from point estimates; no row chosen after the results.",
             "paper: the paper's A minus B on single-function tasks (Qwen3-8B). min. detectable: the smallest "
             "difference the paired tasks detect (exact McNemar test, alpha 0.05, power 0.8, from B's rate)."]
    return Section("findings", "Findings: the paper's claims, decided by paired intervals", Table(HEADER, rows),
                   notes, findings=texts)


def rounds_section(runs: list[Run]) -> Section | None:
    """Self-play's rounds: proposals, acceptance by reason, solve rate, learnability."""
    lines, curves, notes = round_lines(runs)
    if not lines and not notes:
        return None
    return Section("rounds", "Self-play rounds", Table(ROUND_HEADER, lines), findings=notes, curves=curves,
                   curve_axes=("round", "self-play rounds: solve rate and acceptance"))


def evolve_section(runs: list[Run]) -> Section | None:
    """What each training phase did (episodes, seconds, the learner's own notes)."""
    table, warnings = Table(["run", "learner", "episodes", "seconds", "notes"], []), []
    for run in runs:
        for learner, report in (run.details.get("evolve") or {}).items():
            if learner == "none":  # no training phase to report
                continue
            details = report.get("details") or {}
            warnings += [f"warning, {learner} ({run.path}): {w}" for w in details.get("warnings") or []]
            notes = ", ".join(f"{k}={v}" for k, v in details.items() if isinstance(v, int | float | str | bool)
                              and len(str(v)) < 60)
            table.rows.append([str(run.path), learner, str(report.get("episodes", "—")),
                               f"{report.get('seconds', 0):.0f}", notes or "—"])
    return Section("evolve", "Training phases (evolve)", table, findings=warnings) if table.rows else None


def taxonomy_section(evaluations: list[Evaluation]) -> tuple[Section, list[tuple[str, dict[str, int]]]]:
    """target_use_rate and the failure taxonomy, one line per evaluation."""
    per = [(e, outcomes(e)) for e in evaluations]
    columns = list(dict.fromkeys(o for _, counts in per for o in counts))
    table = Table(["table", "learner / run", "model", "split", "mode", "ZWC build", "samples", "target use",
                   *columns], [])
    series = []
    for e, counts in per:
        samples = len(e.records) or e.summary.get("n_samples", 0)
        table.rows.append([e.role, e.label, e.model, e.split, e.mode, e.build_label, str(samples),
                           percent(target_use_rate(e)), *(str(counts.get(c, 0)) for c in columns)])
        label = f"{e.role}: {e.label}, {e.model} ({SPLIT_NAMES.get(e.split, e.split)}, {e.build_label})"
        taken = sum(existing.startswith(label) for existing, _ in series)
        series.append((label + (f" #{taken + 1}" if taken else ""), counts))  # a bar per evaluation
    notes = ["Outcomes per sample, in the grader's order of precedence (envs/zwc/grading/failure.py); "
             "target use: passing samples that ran every function their task names (— unknown)."]
    return Section("taxonomy", "Target use and failure taxonomy", table, notes), series


def runs_section(runs: list[Run]) -> Section:
    """Where every number came from: kind, path, model, build, code version, date."""
    table = Table(["#", "kind", "path", "model", "ZWC builds", "code version", "date"], [])
    for i, run in enumerate(runs, 1):
        versions = dict.fromkeys([run.config.get("code_version")] + [e.config.get("code_version")
                                                                      for e in run.evaluations])
        models = dict.fromkeys([run.config.get("model")] + [e.model for e in run.evaluations])
        table.rows.append([str(i), run.kind, str(run.path), ", ".join(m for m in models if m) or "—",
                           _builds(run.evaluations) or "—", ", ".join(v for v in versions if v) or "unknown",
                           run.config.get("date") or "—"])
    return Section("runs", "Runs", table, ["The full configuration of each run is at the end of the report."])


def budget_points(evaluations: list[Evaluation]) -> list[dict]:
    """Recall and pass@1 against the optimiser steps a model trained for (sft and rl rows)."""
    points = []
    for e in evaluations:
        if e.role in ("sft", "rl") and isinstance(e.extra.get("trained_recall"), int | float):
            steps = (e.extra.get("train") or {}).get("steps", 0 if e.name == "base" else None)
            if isinstance(steps, int | float):
                points.append({"name": e.label, "kind": e.role, "steps": steps, "build": e.build_label,
                               "trained_recall": 100 * e.extra["trained_recall"],
                               "pass_at_1": 100 * (estimate([e], 1).point or 0.0)})
    return points


def build_report(runs: list[Run], anchors: dict | None = None) -> Report:
    from sebench.version import code_version

    anchors = anchors if anchors is not None else load_anchors()
    evaluations = [e for run in runs for e in run.evaluations]
    verdicts = {role: [r.details.get("verdict", "") for r in runs if r.kind == f"{role}-compare"]
                for role in TRAIN_COLUMNS}
    taxonomy, series = taxonomy_section(evaluations)
    sections = [s for s in (findings_section(evaluations, anchors), main_section(evaluations, anchors),
                            validation_section(evaluations, anchors),
                            *(rows_section(evaluations, anchors, role, verdicts[role]) for role in TRAIN_COLUMNS),
                            rounds_section(runs), evolve_section(runs), learner_costs_section(runs), taxonomy,
                            runs_section(runs))
                if s is not None]
    return Report(runs, sections, anchors, series, budget_points(evaluations),
                  time.strftime("%Y-%m-%d %H:%M:%S"), code_version())


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(report: Report) -> str:
    lines = ["# SE-Bench report", "",
             f"Generated {report.generated} by sebench {report.code_version} from {len(report.runs)} run(s). "
             f"Beside our figures, the paper's ({report.anchors['model']}; {report.anchors['paper']}).", ""]
    for section in report.sections:
        lines += [f"## {section.title}", "", "| " + " | ".join(section.table.header) + " |",
                  "|" + "---|" * len(section.table.header)]
        lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in section.table.rows]
        lines += [""] + [f"{line}\n" for note in section.findings + section.notes for line in note.splitlines()]
        lines += [f"![{caption}]({name})\n" for caption, name in section.plots]
    lines += ["## Sources of the paper's figures", ""]
    lines += [f"- {key}: {text}" for key, text in report.anchors["sources"].items()]
    lines += ["", "## Configurations", ""]
    for i, run in enumerate(report.runs, 1):
        lines += [f"### {i}. {run.kind}: {run.path}", "", "```json", json.dumps(run_config(run), indent=1), "```", ""]
    return "\n".join(lines) + "\n"


def write_report(run_paths: list[str | Path], out: str | Path) -> Report:
    """Read the runs, write ``OUT/report.md``, ``OUT/report.html`` and the plots; returns the report."""
    from benchmarks.report_html import to_html
    from benchmarks.report_plots import draw_plots

    out = Path(out)
    report = build_report(read_runs(list(run_paths)))
    out.mkdir(parents=True, exist_ok=True)
    draw_plots(report, out)
    (out / "report.md").write_text(to_markdown(report))
    (out / "report.html").write_text(to_html(report, out))
    return report


def report_comparison(out: str | Path, summary: dict) -> Report:
    """A comparison command's data (``OUT/summary.json``) and then its report, by this module's code:
    the tables of ``compare``, ``sft-compare``, ``rl-compare`` and ``selfplay-compare`` are the
    ones ``sebench report`` shows for the same directory."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    return write_report([out], out)
