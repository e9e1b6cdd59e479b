"""The report's first section: the paper's findings, each decided by a paired interval, with the
paper's figure beside it.

Built from the same evaluations as the tables (``benchmarks/report_runs.py``) and decided by the
same code as the comparison commands' verdicts (``benchmarks/findings.py``): the Open-Book
Paradox from sft-compare rows, the RL Gap from rl-compare rows, SFT self-play above RL
self-play from selfplay-compare rows, and each learner minus the untrained row (``base`` in a
comparison, ``none`` in ``compare``). Only closed-book single_test evaluations count (the
paper's figures are single-function), and only rows of the same kind of run pair with each other.

A row's training runs are its evaluations grouped by run directory (each comparison directory
trains each learner once); the untrained row has no training run, so its evaluations are
replicates and pool. Per-task records come from the results files, else from the per-task
counts a comparison's summary keeps; a row with neither makes its findings inconclusive.
"""

from __future__ import annotations

from dataclasses import replace

from benchmarks.findings import (
    PAPER_FINDINGS,
    Finding,
    FindingGroup,
    GroupVerdict,
    Verdict,
    group_text,
    judge,
    learner_vs,
)
from benchmarks.paired_stats import Counts, RowTasks, counts_of, pool
from benchmarks.report_runs import Evaluation
from benchmarks.report_stats import task_samples

SPLIT = "single_test"
ROLES = ("sft", "rl", "selfplay", "learner")   # learner: compare / eval / evolve rows (the main table)
HEADER = ["finding", "claim", "verdict", "A − B, points [95% CI]", "paper (points)", "paired tasks",
          "samples per task", "training seeds (A, B)", "min. detectable (points)", "code version"]


def _counts(e: Evaluation) -> Counts | None:
    if e.records:
        return counts_of(task_samples(e.records), e.build)
    per_task = e.extra.get("per_task")
    return counts_of(per_task, e.build) if per_task else None


def row_tasks(name: str, evaluations: list[Evaluation], untrained: str) -> RowTasks | None:
    """The row's training runs (one per run directory; the untrained row's pool), None when an
    evaluation of it kept no per-task records."""
    groups: dict[str, list[Counts]] = {}
    for e in evaluations:
        counts = _counts(e)
        if counts is None:
            return None
        groups.setdefault("replicates" if name == untrained else str(e.run), []).append(counts)
    return RowTasks(name, [pool(g) for g in groups.values()])


def _unique(evaluations: list[Evaluation]) -> list[Evaluation]:
    """One evaluation per results file: a compare directory and its learner's evolve directory read
    the same file, which is one training run, not two."""
    seen, kept = set(), []
    for e in evaluations:
        key = str(e.results_path.resolve()) if e.results_path else id(e)
        if key not in seen:
            seen.add(key)
            kept.append(e)
    return kept


def role_rows(evaluations: list[Evaluation], role: str) -> list[tuple[str, dict[str, list[Evaluation]]]]:
    """(label, name -> evaluations) for the role's closed-book single_test rows; the main table's
    learners per base model (a learner pairs with ``none`` of its own model)."""
    rows = _unique([e for e in evaluations if e.role == role and e.mode == "closed" and e.split == SPLIT])
    keys = sorted({e.model for e in rows}) if role == "learner" else [""]
    grouped = []
    for model in keys:
        named: dict[str, list[Evaluation]] = {}
        for e in rows:
            if role != "learner" or e.model == model:
                named.setdefault(e.name, []).append(e)
        if named:
            grouped.append((model if len(keys) > 1 else "", named))
    return grouped


def judged(evaluations: list[Evaluation]) -> list[tuple[str, GroupVerdict]]:
    """(model label, verdict) of every finding the evaluations hold the rows of: the paper's first."""
    found: list[tuple[str, GroupVerdict]] = []
    for role in ROLES:
        untrained = "none" if role == "learner" else "base"
        for label, named in role_rows(evaluations, role):
            rows = {name: row_tasks(name, group, untrained) for name, group in named.items()}
            groups: list[FindingGroup] = [PAPER_FINDINGS[role]] if role in PAPER_FINDINGS else []
            groups += [learner_vs(name, untrained) for name in rows if name != untrained]
            found += [(label, v) for v in (judge(g, rows) for g in groups) if v is not None]
    paper = {g.key for g in PAPER_FINDINGS.values()}
    return sorted(found, key=lambda item: item[1].group.key not in paper)  # stable: the paper's first


def paper_cell(anchors: dict, verdict: Verdict) -> str:
    """The paper's A minus B on single-function tasks, from its two figures; a dash without both."""
    table = anchors.get("learners", {})
    a, b = (table.get("none" if n == "base" else n, {}).get("single") for n in (verdict.finding.a, verdict.finding.b))
    return "—" if a is None or b is None else f"{a - b:+.1f} ({a:.1f} − {b:.1f})"


def _versions(evaluations: list[Evaluation], names: tuple[str, str]) -> str:
    versions = dict.fromkeys(e.config.get("code_version") for e in evaluations if e.name in names)
    return ", ".join(v for v in versions if v) or "unknown"


def table_row(label: str, g: GroupVerdict, v: Verdict, part: int, anchors: dict,
              evaluations: list[Evaluation]) -> list[str]:
    title = g.group.title + (f" ({part}/{len(g.parts)})" if len(g.parts) > 1 else "") + (f", {label}" if label else "")
    word = v.word + (f" (finding: {g.word})" if len(g.parts) > 1 else "")
    d, paper = v.diff, paper_cell(anchors, v)
    numbers = ["—", paper, "—", "—", "—", "—"] if d is None else [
        f"{100 * d.point:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}]", paper, str(d.n_tasks), str(d.samples),
        f"{d.seeds_a}, {d.seeds_b}", "—" if d.mde is None else f"{100 * d.mde:.1f}"]
    return [title, labelled_claim(v.finding, evaluations), word, *numbers,
            _versions(evaluations, (v.finding.a, v.finding.b))]


def labelled_claim(finding: Finding, evaluations: list[Evaluation]) -> str:
    """The claim with each row under its table name: a row trained on a teacher's answers says so
    (``closed-sft (teacher: reference) minus open-sft (teacher: reference) > 0``), since it is not the
    paper's self-gathered row."""
    labels = {e.name: e.label for e in evaluations if e.name in (finding.a, finding.b) and e.label != e.name}
    return replace(finding, a=labels.get(finding.a, finding.a), b=labels.get(finding.b, finding.b)).claim


def findings_table(evaluations: list[Evaluation], anchors: dict) -> tuple[list[list[str]], list[str]]:
    """The findings section's rows and sentences (``group_text``); empty when the report holds none."""
    rows, texts = [], []
    for label, g in judged(evaluations):
        rows += [table_row(label, g, v, i, anchors, evaluations) for i, v in enumerate(g.parts, 1)]
        texts.append((f"[{label}] " if label else "") + group_text(g))
    return rows, texts
