"""The paper's findings, stated before any run, and the verdict an interval gives each.

A finding names two rows and a claim about A minus B (closed-book pass@1 on the paired tasks,
``benchmarks/paired_stats.py``). The verdict is read off the 95% paired interval, never off the
point estimates, and no row is chosen after looking at the results (no best-of-several):

- "A minus B > 0" is *reproduced* when the whole interval lies above 0, *contradicted* when the
  whole interval lies below 0, and *inconclusive* otherwise. Strictly below: an interval that
  touches 0 from below, [0, 0] included, is inconclusive, because the percentile bootstrap gives
  [0, 0] whenever no task differs, whatever the number of tasks (two rows at 0 of 8 answers each
  do not show that A is no better than B). The interval is trusted only when the exact sign test
  on the tasks where the rows differ agrees at alpha 0.05: with three tasks, all won by A, the
  bootstrap gives [1, 1] while the sign test gives p = 0.25, and the verdict is inconclusive.
- "A minus B within +-m" (bounded) is *reproduced* when the whole interval lies within [-m, m]
  and the run could detect a difference of m (its minimum detectable effect is at most m);
  *contradicted* when the whole interval lies beyond m on one side (sign test agreeing);
  *inconclusive* otherwise.

A finding of several parts (the RL Gap: SFT-like minus GRPO > 0, and GRPO minus base bounded)
is reproduced when every part is, contradicted when any part is, inconclusive otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.exact_stats import ALPHA, POWER
from benchmarks.paired_stats import PairedDifference, RowTasks, paired_difference

REPRODUCED, CONTRADICTED, INCONCLUSIVE = "reproduced", "contradicted", "inconclusive"
NO_RECORDS = "no per-task records"
BOUND = 0.10  # GRPO minus base: within 10 points, the effect ~80 paired tasks detect from a base at 0


@dataclass(frozen=True)
class Finding:
    """One pre-specified claim about row ``a`` minus row ``b``."""

    a: str
    b: str
    kind: str = "greater"    # "greater": A - B > 0; "bounded": |A - B| <= margin
    margin: float = 0.0

    @property
    def claim(self) -> str:
        if self.kind == "bounded":
            return f"{self.a} minus {self.b} within ±{100 * self.margin:.0f} points"
        return f"{self.a} minus {self.b} > 0"


@dataclass(frozen=True)
class FindingGroup:
    """A finding of the paper, one or more parts, each a ``Finding``."""

    key: str
    title: str
    parts: tuple[Finding, ...]


OPEN_BOOK = FindingGroup("open-book-paradox", "Open-Book Paradox", (Finding("closed-sft", "open-sft"),))
RL_GAP = FindingGroup("rl-gap", "RL Gap", (Finding("closed-rl@sft-like", "closed-rl"),
                                           Finding("closed-rl", "base", "bounded", BOUND)))
SELF_PLAY_GAP = FindingGroup("selfplay", "SFT self-play above RL self-play",
                        (Finding("closed-sft-self", "absolute-zero"),))
PAPER_FINDINGS = {"sft": OPEN_BOOK, "rl": RL_GAP, "selfplay": SELF_PLAY_GAP}  # by the comparison (report role)


def learner_vs(name: str, base: str) -> FindingGroup:
    """Each learner minus the untrained row: training helped."""
    return FindingGroup(f"{name}-minus-{base}", f"{name} above {base}", (Finding(name, base),))


@dataclass
class Verdict:
    finding: Finding
    word: str
    diff: PairedDifference | None = None
    reason: str = ""   # why it is inconclusive (or what guarded it)


@dataclass
class GroupVerdict:
    group: FindingGroup
    parts: list[Verdict] = field(default_factory=list)

    @property
    def word(self) -> str:
        words = [v.word for v in self.parts]
        if CONTRADICTED in words:
            return CONTRADICTED
        return REPRODUCED if words and all(w == REPRODUCED for w in words) else INCONCLUSIVE


def _points(rate: float, signed: bool = True) -> str:
    return f"{100 * rate:+.1f}" if signed else f"{100 * rate:.1f}"


def _sign_guard(diff: PairedDifference) -> str:
    """Empty when the exact sign test agrees with the interval, else why it does not."""
    if diff.sign_p <= ALPHA:
        return ""
    return (f"the interval alone would decide, but only {diff.wins + diff.losses} of {diff.n_tasks} tasks differ "
            f"({diff.wins} for {diff.a}, {diff.losses} for {diff.b}): the exact sign test gives p = "
            f"{diff.sign_p:.3g} > {ALPHA}, too few tasks for the bootstrap to be trusted")


def decide(finding: Finding, diff: PairedDifference | None, missing: str = NO_RECORDS) -> Verdict:
    """The verdict of ``finding`` from the paired interval (the rules are in the module doc)."""
    if diff is None:
        return Verdict(finding, INCONCLUSIVE, None, missing)
    low, high = diff.low, diff.high
    if finding.kind == "bounded":
        m = finding.margin
        if -m <= low and high <= m:
            if diff.mde is not None and diff.mde <= m:
                return Verdict(finding, REPRODUCED, diff)
            return Verdict(finding, INCONCLUSIVE, diff, f"the interval lies within ±{_points(m, False)} points, but "
                           f"{diff.n_tasks} paired tasks cannot detect a difference of {_points(m, False)} points, "
                           "so they cannot bound it by that")
        if low > m or high < -m:
            guard = _sign_guard(diff)
            return Verdict(finding, INCONCLUSIVE if guard else CONTRADICTED, diff, guard)
        return Verdict(finding, INCONCLUSIVE, diff, f"the interval reaches beyond ±{_points(m, False)} points")
    if low > 0 or high < 0:
        guard = _sign_guard(diff)
        return Verdict(finding, INCONCLUSIVE if guard else REPRODUCED if low > 0 else CONTRADICTED, diff, guard)
    return Verdict(finding, INCONCLUSIVE, diff, "the interval holds 0")


def judge(group: FindingGroup, rows: dict[str, RowTasks | None], k: int = 1) -> GroupVerdict | None:
    """The verdict of ``group`` on ``rows`` (name -> its per-task records, None when the row has
    none); None when a row it names was not run at all."""
    if any(name not in rows for part in group.parts for name in (part.a, part.b)):
        return None
    verdicts = []
    for part in group.parts:
        a, b = rows[part.a], rows[part.b]
        if a is None or b is None:
            verdicts.append(decide(part, None))
            continue
        diff = paired_difference(a, b, k)
        verdicts.append(decide(part, diff, "the two rows share no task with enough samples"))
    return GroupVerdict(group, verdicts)


def sizes(diff: PairedDifference) -> str:
    builds = f"{diff.n_builds} ZWC build" + ("s" if diff.n_builds != 1 else "")
    samples = f"{diff.samples} sample" + ("s" if diff.samples != 1 else "")
    return (f"{diff.n_tasks} paired tasks ({builds}), {samples} per task, training seeds "
            f"{diff.seeds_a} ({diff.a}) and {diff.seeds_b} ({diff.b})")


def mde_text(diff: PairedDifference) -> str:
    found = "none up to 100" if diff.mde is None else _points(diff.mde, False)
    return (f"the smallest difference these tasks detect: {found} points (exact McNemar test, alpha {ALPHA}, "
            f"power {POWER}, {diff.b} at {_points(diff.rate_b, False)}%)")


def interval_text(diff: PairedDifference) -> str:
    return (f"{_points(diff.point)} points, {100 * diff.level:.0f}% interval [{_points(diff.low)}, "
            f"{_points(diff.high)}]")


def verdict_text(v: Verdict, title: str = "") -> str:
    """One sentence: the finding, the word, the paired difference and interval, sizes, the detectable effect."""
    metric = f"closed-book pass@{v.diff.k if v.diff else 1}"
    head = (f"{title} (pre-specified: {v.finding.claim}, {metric})" if title else
            f"pre-specified {v.finding.claim} ({metric})") + f": {v.word}"
    if v.diff is None:
        return f"{head}: {v.reason}."
    text = f"{head}. Paired difference {interval_text(v.diff)}, over {sizes(v.diff)}; {mde_text(v.diff)}."
    return text + (f" Inconclusive because {v.reason}." if v.reason and v.word == INCONCLUSIVE else "")


def group_text(g: GroupVerdict) -> str:
    """The finding's verdict and each part's sentence (a finding of several parts says its rule)."""
    if len(g.parts) == 1:
        return verdict_text(g.parts[0], g.group.title)
    parts = " ".join(f"Part {i}: {verdict_text(v)}" for i, v in enumerate(g.parts, 1))
    return f"{g.group.title}: {g.word} (reproduced when every part is, contradicted when any part is). {parts}"


def comparison_verdict(rows: dict[str, RowTasks | None], group: FindingGroup | None, base: str = "base") -> str:
    """A comparison command's verdict: its pre-specified finding, then each learner minus ``base``;
    one paragraph each, empty when the rows hold none of them."""
    groups = ([group] if group else []) + [learner_vs(name, base) for name in rows if name not in (base,)]
    judged = [judge(g, rows) for g in groups]
    return "\n".join(group_text(g) for g in judged if g is not None)
