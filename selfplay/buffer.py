"""Persistent task buffers, one per task type: what self-play has validated so far.

A buffer is a JSON-lines file (``RUN/buffer-<type>.jsonl``, e.g. ``buffer-induction.jsonl``)
of ``BufferEntry`` records: a validated Task, the round that made it, an insertion number
and free metadata (the proposer, the solver's pass rate, the learnability ...). Every
``add``/``extend`` is one fsynced append (``jsonl.py``), so a run killed at any moment,
SIGKILL included, reopens with every entry that was fully written; a half-written last
line is ignored with a warning and truncated.

Capped, first in first out: when more than ``capacity`` entries are held, the oldest
(lowest insertion number) are dropped. Absolute-Zero samples its references uniformly from
what its buffers hold, so age is the only order that matters; a priority (learnability)
can live in the metadata for a sampler that wants it. The file keeps the dropped lines
until it holds twice ``capacity``, then is rewritten atomically with the kept entries.

Tasks are deduplicated by ``task_id`` (the validator derives it from the solution and the
inputs), so a task proposed again in a later round is not held twice.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from envs.zwc import Task
from sebench.errors import SettingError
from sebench.jsonl import JsonlCorruptError, append_records, read_records, rewrite_records

TASK_TYPE = re.compile(r"^[a-z][a-z0-9_-]{0,40}$")  # it becomes part of a file name


class BufferEntry(BaseModel):
    """One buffered task and where it came from."""

    task: Task
    type: str
    round: int = Field(ge=0)  # the self-play round that made it
    seq: int = Field(ge=0)  # insertion number over the buffer's whole life (the FIFO order)
    metadata: dict[str, Any] = Field(default_factory=dict)


class TaskBuffer:
    """A capped, persistent buffer of validated tasks of one type.

    Args:
        path: the JSON-lines file (created on the first add).
        task_type: what kind of task it holds (``induction``, ``deduction``, ``abduction``,
            ``sebench`` ...): lower-case letters, digits, ``-``, ``_``.
        capacity: most entries held; the oldest are dropped first.
    """

    def __init__(self, path: str | Path, task_type: str, capacity: int = 1024):
        if not TASK_TYPE.match(task_type):
            raise SettingError(f"task type {task_type!r} must be lower-case letters, digits, '-' or '_' "
                             "(it names the buffer file)")
        if capacity < 1:
            raise SettingError(f"capacity ({capacity}) must be at least 1")
        self.path, self.type, self.capacity = Path(path), task_type, capacity
        self._entries: list[BufferEntry] = []
        self._ids: set[str] = set()
        self._next_seq = 0
        self._lines = 0  # records in the file, dropped ones included
        self._load()

    @classmethod
    def in_run(cls, run_dir: str | Path, task_type: str, capacity: int = 1024) -> TaskBuffer:
        """The buffer of ``task_type`` in a self-play run directory: ``RUN/buffer-<type>.jsonl``."""
        return cls(Path(run_dir) / f"buffer-{task_type}.jsonl", task_type, capacity)

    def _load(self) -> None:
        records = read_records(self.path)  # warns about, and cuts, a torn last line
        held: dict[str, BufferEntry] = {}  # a task dropped by the cap and added again: its later line wins
        for lineno, record in enumerate(records, 1):
            try:
                entry = BufferEntry.model_validate(record)
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(x) for x in err["loc"])
                raise JsonlCorruptError(self.path, lineno, f"field {field}: {err['msg']}") from None
            if entry.type != self.type:
                raise JsonlCorruptError(self.path, lineno, f"an entry of type {entry.type!r} in the "
                                        f"{self.type!r} buffer; open it with task_type={entry.type!r}")
            held.pop(entry.task.task_id, None)
            held[entry.task.task_id] = entry
        for entry in sorted(held.values(), key=lambda e: e.seq):
            self._keep(entry)
        self._lines = len(records)
        self._trim()

    def _keep(self, entry: BufferEntry) -> None:
        self._entries.append(entry)
        self._ids.add(entry.task.task_id)
        self._next_seq = max(self._next_seq, entry.seq + 1)

    def _trim(self) -> None:
        if len(self._entries) > self.capacity:
            for entry in self._entries[:len(self._entries) - self.capacity]:
                self._ids.discard(entry.task.task_id)
            self._entries = self._entries[-self.capacity:]

    # -- writing -------------------------------------------------------------------------
    def add(self, task: Task, round: int, **metadata: Any) -> BufferEntry | None:
        """Append one task (None when the buffer already holds its task_id)."""
        added = self.extend([task], round, metadata)
        return added[0] if added else None

    def extend(self, tasks: Iterable[Task], round: int, metadata: dict[str, Any] | None = None) -> list[BufferEntry]:
        """Append tasks made in ``round`` in one fsynced write; the entries added (tasks
        whose task_id the buffer holds, or that repeat within ``tasks``, are skipped)."""
        new: list[BufferEntry] = []
        seen = set(self._ids)
        for task in tasks:
            if task.task_id in seen:
                continue
            seen.add(task.task_id)
            new.append(BufferEntry(task=task, type=self.type, round=round, seq=self._next_seq + len(new),
                                   metadata=dict(metadata or {})))
        if not new:
            return []
        append_records(self.path, [e.model_dump(mode="json", exclude_none=True) for e in new])
        self._lines += len(new)
        for entry in new:
            self._keep(entry)
        self._trim()
        if self._lines > 2 * self.capacity:
            self._rewrite()
        return new

    def discard_rounds_after(self, round: int) -> int:
        """Drop the entries of rounds after ``round`` (a resumed run redoing a round that was
        killed before it finished); the number dropped. The file is rewritten atomically."""
        kept = [e for e in self._entries if e.round <= round]
        dropped = len(self._entries) - len(kept)
        if dropped:
            self._entries = kept
            self._ids = {e.task.task_id for e in kept}
            self._rewrite()
        return dropped

    def _rewrite(self) -> None:
        rewrite_records(self.path, [e.model_dump(mode="json", exclude_none=True) for e in self._entries])
        self._lines = len(self._entries)

    # -- reading -------------------------------------------------------------------------
    @property
    def entries(self) -> list[BufferEntry]:
        """The held entries, oldest first."""
        return list(self._entries)

    def tasks(self) -> list[Task]:
        return [e.task for e in self._entries]

    def sample(self, k: int, rng: random.Random | None = None) -> list[Task]:
        """Up to ``k`` distinct tasks, uniformly (Absolute-Zero's reference sampling)."""
        rng = rng or random.Random()
        return [e.task for e in rng.sample(self._entries, min(k, len(self._entries)))]

    @property
    def last_round(self) -> int | None:
        """The latest round with an entry held (None when empty)."""
        return max((e.round for e in self._entries), default=None)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[BufferEntry]:
        return iter(list(self._entries))

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._ids

    def __repr__(self) -> str:
        return f"TaskBuffer({self.path}, type={self.type!r}, {len(self)}/{self.capacity})"
