"""Build the task splits for a ZWC directory, verified in the sandbox, with a report.

``train`` (single-function, every function covered; 718 tasks by default like SE-Bench v1:
two per function and a third for 162 functions drawn by seed), ``single_test`` (one new task
per function: other data, other wording) and ``multiple_test`` (compositions). Every kept
task's reference, translated to ZWC, passed its tests in the sandbox and the static checks;
everything dropped is counted by reason. Same seed, same files, byte for byte.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from envs.zwc.catalogue import CATALOGUE
from envs.zwc.env import ZWCEnv
from envs.zwc.task import write_tasks
from envs.zwc.tasks.compose import make_multi
from envs.zwc.tasks.single import Draft, make_single
from envs.zwc.translate import translate_numpy

OFFICIAL_TRAIN_SIZE = 718
DEFAULT_MULTI = 440
ATTEMPTS = 3  # fresh draws for a function whose task was dropped


@dataclass
class SplitReport:
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    kept_by_kind: dict[str, int] = field(default_factory=dict)
    dropped_by_kind: dict[str, int] = field(default_factory=dict)
    functions_covered: int = 0


@dataclass
class BuildReport:
    seed: int
    splits: dict[str, SplitReport]
    seconds: float = 0.0
    tasks_per_second: float = 0.0
    uncovered: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)


def _allocation(seed: int, per_function: int | None) -> dict[str, int]:
    """Tasks per function in train: ``per_function`` each, or SE-Bench's 718 in all."""
    if per_function is not None:
        return {e.numpy: per_function for e in CATALOGUE}
    base, extra = divmod(OFFICIAL_TRAIN_SIZE, len(CATALOGUE))
    lucky = set(random.Random(f"{seed}-allocation").sample([e.numpy for e in CATALOGUE], extra))
    return {e.numpy: base + (e.numpy in lucky) for e in CATALOGUE}


def _drafts_single(split: str, seed: int, counts: dict[str, int], report: SplitReport,
                   progress: Callable[[int], None]) -> list[Draft]:
    drafts = []
    for entry in CATALOGUE:
        for i in range(counts[entry.numpy]):
            for attempt in range(ATTEMPTS):
                rng = random.Random(f"{seed}-{split}-{entry.numpy}-{i}-{attempt}")
                draft = make_single(entry, rng, f"{split}-{entry.numpy[6:]}-{i}", split)
                if draft.task is not None:
                    drafts.append(draft)
                    break
                _drop(report, entry.kind, draft.dropped)
            progress(1)
    return drafts


def _drop(report: SplitReport, kind: str, reason: str) -> None:
    reason = reason.split(" passes")[0] + " passes" if " passes" in reason else reason
    report.dropped[reason] = report.dropped.get(reason, 0) + 1
    report.dropped_by_kind[kind] = report.dropped_by_kind.get(kind, 0) + 1


def _verify(env: ZWCEnv, drafts: list[Draft], report: SplitReport) -> list:
    """Translate each reference to ZWC and keep the tasks whose reference passes in the sandbox."""
    pairs = []
    for draft in drafts:
        draft.task.reference = translate_numpy(draft.task.example_output[0], env.mapping)
        pairs.append((draft.task, draft.task.reference))
    kept = []
    for draft, verdict in zip(drafts, env.check_many(pairs), strict=True):
        if verdict.passed:
            kept.append(draft.task)
            report.kept_by_kind[draft.task.kind] = report.kept_by_kind.get(draft.task.kind, 0) + 1
        else:
            _drop(report, draft.task.kind, f"reference fails in the sandbox ({verdict.failure.value})")
    report.kept = len(kept)
    return kept


def build_tasks(root: str | Path, seed: int = 0, per_function: int | None = None, multi: int = DEFAULT_MULTI,
                progress: Callable[[str, int, int], None] | None = None, workers: int | None = None) -> BuildReport:
    """Write the three splits and ``build_report.json`` into the ZWC build at ``root``."""
    root = Path(root)
    started = time.perf_counter()
    counts = _allocation(seed, per_function)
    totals = {"train": sum(counts.values()), "single_test": len(CATALOGUE), "multiple_test": multi}
    done: Counter = Counter()

    def tick(split: str) -> Callable[[int], None]:
        def step(n: int) -> None:
            done[split] += n
            if progress:
                progress(split, done[split], totals[split])
        return step

    reports = {split: SplitReport() for split in totals}
    uncovered: dict[str, list[str]] = {}
    with ZWCEnv.load(root, workers=workers) as env:
        for split, per in (("train", counts), ("single_test", {e.numpy: 1 for e in CATALOGUE})):
            drafts = _drafts_single(split, seed, per, reports[split], tick(split))
            tasks = _verify(env, drafts, reports[split])
            covered = {t.selected_functions[0] for t in tasks}
            reports[split].functions_covered = len(covered)
            uncovered[split] = sorted(e.numpy[6:] for e in CATALOGUE if e.numpy[6:] not in covered)
            write_tasks(tasks, root / f"{split}.jsonl")
        drafts = []
        i = 0
        while len(drafts) < multi and i < multi * 4:
            draft = make_multi(random.Random(f"{seed}-multi-{i}"), f"multiple_test-{len(drafts)}")
            if draft.task is None:
                _drop(reports["multiple_test"], "composition", draft.dropped)
            else:
                drafts.append(draft)
                tick("multiple_test")(1)
            i += 1
        tasks = _verify(env, drafts, reports["multiple_test"])
        reports["multiple_test"].functions_covered = len({f for t in tasks for f in t.selected_functions})
        write_tasks(tasks, root / "multiple_test.jsonl")
    seconds = time.perf_counter() - started
    kept = sum(r.kept for r in reports.values())
    report = BuildReport(seed=seed, splits=reports, seconds=seconds, tasks_per_second=kept / seconds,
                         uncovered=uncovered)
    (root / "build_report.json").write_text(_stable(report))
    return report


def _stable(report: BuildReport) -> str:
    """The report without timings, so that the same seed writes the same bytes."""
    data = asdict(report)
    data.pop("seconds")
    data.pop("tasks_per_second")
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def kinds_table(report: BuildReport) -> list[tuple[str, int, int]]:
    """(kind, kept, dropped) over all splits, for printing."""
    kept: defaultdict[str, int] = defaultdict(int)
    dropped: defaultdict[str, int] = defaultdict(int)
    for split in report.splits.values():
        for kind, n in split.kept_by_kind.items():
            kept[kind] += n
        for kind, n in split.dropped_by_kind.items():
            dropped[kind] += n
    return [(k, kept[k], dropped[k]) for k in sorted(set(kept) | set(dropped))]
