"""Build the task splits for a ZWC directory, verified in the sandbox, with a report.

``train`` (single-function, every function covered; 718 tasks by default like SE-Bench v1:
two per function and a third for 162 functions drawn by seed), ``single_test`` (one new task
per function: other data, other wording) and ``multiple_test`` (compositions). Every kept
task's reference, translated to ZWC, passed its tests in the sandbox and the static checks;
everything dropped is counted by reason. Same seed, same files, byte for byte.

Split hygiene (hygiene.py): test tasks are drafted after train is final, never draw an input a
train task of their function used, are worded in the test style, and a draft whose query is
verbatim or (with an ``embed`` function) a near-duplicate of a train query is redrawn. The
report counts what remains between train and each test split.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from envs.zwc.env import ZWCEnv
from envs.zwc.library.catalogue import CATALOGUE
from envs.zwc.library.translate import translate_numpy
from envs.zwc.task import write_tasks
from envs.zwc.tasks.compose import make_multi
from envs.zwc.tasks.hygiene import NEAR_DUPLICATE, Embed, EmbeddingCache, Guard, SplitHygiene, audit
from envs.zwc.tasks.single import Draft, make_single

OFFICIAL_TRAIN_SIZE = 718
DEFAULT_MULTI = 440
ATTEMPTS = 3  # fresh draws for a function whose task was dropped (or whose query was too close)
TOO_CLOSE = "query too close to a train query"


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
    hygiene: dict[str, SplitHygiene] = field(default_factory=dict)  # test split -> what it shares with train
    near_duplicate_check: str = ""  # how near-duplicates were looked for, or why they were not
    hygiene_seconds: float = 0.0  # the near-duplicate checks' share of ``seconds``

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
                   progress: Callable[[int], None], guard: Guard | None = None) -> list[Draft]:
    """Drafts in catalogue order. With a ``guard`` (test splits): inputs train used are skipped
    while drawing, and drafts whose query is too close to a train query are redrawn, in rounds
    so that the embedder sees one batch per round."""
    slots = [(entry, i) for entry in CATALOGUE for i in range(counts[entry.numpy])]
    attempts = dict.fromkeys(range(len(slots)), 0)
    kept: dict[int, Draft] = {}
    pending = list(range(len(slots)))
    while pending:
        made: list[tuple[int, Draft]] = []
        for slot in pending:
            entry, i = slots[slot]
            avoid = guard.avoid_for([entry.numpy[6:]]) if guard is not None else None
            while attempts[slot] < ATTEMPTS:
                rng = random.Random(f"{seed}-{split}-{entry.numpy}-{i}-{attempts[slot]}")
                attempts[slot] += 1
                draft = make_single(entry, rng, f"{split}-{entry.numpy[6:]}-{i}", split, avoid)
                if draft.task is not None:
                    made.append((slot, draft))
                    break
                _drop(report, entry.kind, draft.dropped)
            else:
                progress(1)
        close = guard.too_close([d.task for _, d in made]) if guard is not None else set()
        pending = []
        for j, (slot, draft) in enumerate(made):
            if j in close:
                _drop(report, draft.entry.kind, TOO_CLOSE)
                if attempts[slot] < ATTEMPTS:
                    pending.append(slot)
                    continue
            else:
                kept[slot] = draft
            progress(1)
    return [kept[slot] for slot in sorted(kept)]


def _drafts_multi(seed: int, multi: int, report: SplitReport, progress: Callable[[int], None],
                  guard: Guard) -> list[Draft]:
    """``multi`` composition drafts (seeds in order; too-close ones replaced by later seeds)."""
    drafts: list[Draft] = []
    i = 0
    while len(drafts) < multi and i < multi * 4:
        batch: list[Draft] = []
        while len(drafts) + len(batch) < multi and i < multi * 4:
            draft = make_multi(random.Random(f"{seed}-multi-{i}"), "", avoid=guard.avoid_for)
            if draft.task is None:
                _drop(report, "composition", draft.dropped)
            else:
                batch.append(draft)
            i += 1
        close = guard.too_close([d.task for d in batch])
        for j, draft in enumerate(batch):
            if j in close:
                _drop(report, "composition", TOO_CLOSE)
                continue
            draft.task.task_id = f"multiple_test-{len(drafts)}"
            drafts.append(draft)
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
                progress: Callable[[str, int, int], None] | None = None, workers: int | None = None,
                embed: Embed | None = None, near_duplicate: float = NEAR_DUPLICATE) -> BuildReport:
    """Write the three splits and ``build_report.json`` into the ZWC build at ``root``.

    ``embed``: texts -> vectors (a sentence embedder; ``sebench tasks build`` passes MiniLM).
    Without it the near-duplicate check does not run, and the report says so; the verbatim and
    shared-input rules hold either way. ``near_duplicate``: the cosine at which a test query of
    a function is too close to a train query of it."""
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
    clock = [0.0]
    cache = EmbeddingCache(_timed(embed, clock)) if embed is not None else None
    with ZWCEnv.load(root, workers=workers) as env:
        drafts = _drafts_single("train", seed, counts, reports["train"], tick("train"))
        train = _verify(env, drafts, reports["train"])
        guard = Guard(train, cache, near_duplicate)
        single = _verify(env, _drafts_single("single_test", seed, {e.numpy: 1 for e in CATALOGUE},
                                             reports["single_test"], tick("single_test"), guard),
                         reports["single_test"])
        for split, tasks in (("train", train), ("single_test", single)):
            covered = {t.selected_functions[0] for t in tasks}
            reports[split].functions_covered = len(covered)
            uncovered[split] = sorted(e.numpy[6:] for e in CATALOGUE if e.numpy[6:] not in covered)
            write_tasks(tasks, root / f"{split}.jsonl")
        drafts = _drafts_multi(seed, multi, reports["multiple_test"], tick("multiple_test"), guard)
        multiple = _verify(env, drafts, reports["multiple_test"])
        reports["multiple_test"].functions_covered = len({f for t in multiple for f in t.selected_functions})
        write_tasks(multiple, root / "multiple_test.jsonl")
    hygiene = {"single_test": audit(train, single, cache, near_duplicate),
               "multiple_test": audit(train, multiple, cache, near_duplicate)}
    for split, drafted in (("single_test", reports["single_test"]), ("multiple_test", reports["multiple_test"])):
        hygiene[split].regenerated = drafted.dropped.get(TOO_CLOSE, 0)
    seconds = time.perf_counter() - started
    kept = sum(r.kept for r in reports.values())
    report = BuildReport(seed=seed, splits=reports, seconds=seconds, tasks_per_second=kept / seconds,
                         uncovered=uncovered, hygiene=hygiene, near_duplicate_check=_check_text(embed, near_duplicate),
                         hygiene_seconds=clock[0] if embed is not None else 0.0)
    (root / "build_report.json").write_text(_stable(report))
    return report


def _timed(embed: Embed, clock: list[float]) -> Embed:
    def timed(texts):
        started = time.perf_counter()
        try:
            return embed(texts)
        finally:
            clock[0] += time.perf_counter() - started
    return timed


def _check_text(embed: Embed | None, threshold: float) -> str:
    if embed is None:
        return "not run: build_tasks got no embedder (sebench tasks build passes MiniLM)"
    owner = getattr(embed, "__self__", None)
    name = (f"{type(owner).__module__}.{type(owner).__qualname__}.{embed.__name__}" if owner is not None
            else f"{getattr(embed, '__module__', '?')}.{getattr(embed, '__qualname__', type(embed).__name__)}")
    return f"cosine >= {threshold:.2f} between a test query and a train query of one function, by {name}"


def _stable(report: BuildReport) -> str:
    """The report without timings, so that the same seed writes the same bytes."""
    data = asdict(report)
    data.pop("seconds")
    data.pop("tasks_per_second")
    data.pop("hygiene_seconds")
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


def hygiene_table(report: BuildReport) -> list[tuple]:
    """(test split, verbatim pairs, near-duplicate pairs, shared inputs, max cosine, redrawn), for printing."""
    def shown(value) -> str:
        return "not run" if value is None else str(value)
    return [(split, h.verbatim_pairs, shown(h.near_duplicate_pairs), h.shared_inputs, shown(h.max_cosine),
             h.regenerated) for split, h in report.hygiene.items()]
