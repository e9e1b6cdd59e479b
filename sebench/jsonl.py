"""Append-only JSON-lines files that survive a kill (self-play buffers and round logs; the
evaluation results, whose appends start after ``cut_torn_tail``).

An append is one ``write`` of whole lines to a file opened with ``O_APPEND``, then
``fsync``: after it returns, the lines are on disk. A process killed inside the write may
leave a prefix of its lines: every line that ends with a newline is whole, and at most the
last line is cut. ``read_records`` keeps the whole lines and drops the cut one with a
warning, and (``repair=True``) truncates the file after the last whole line, so the next
append starts on a fresh line instead of gluing a record onto the torn one. A bad line
anywhere else is not a kill's trace: it raises ``JsonlCorruptError`` naming the file and line.

One writer per file: appends from two processes could interleave with a repair.

``write_json`` is the whole-file counterpart: a JSON record replaced whole or not at all.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable
from pathlib import Path

from sebench.errors import SebenchError


def write_json(path: Path, data) -> None:
    """Whole or not at all: a kill mid-write leaves the previous file (or none)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1, default=str) + "\n")
    partial.replace(path)


class JsonlCorruptError(SebenchError, ValueError):
    """A JSON-lines file with a bad line that is not a torn last line."""

    def __init__(self, path: Path, line: int, problem: str):
        self.path, self.line = path, line
        super().__init__(f"{path}, line {line}: {problem}; the file was edited or damaged: fix or remove that line")


def append_records(path: str | Path, records: Iterable[dict]) -> None:
    """Append ``records`` as JSON lines in one write, then fsync (and the directory on creation)."""
    target = Path(path)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    if not data:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    created = not target.exists()
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        _fsync_directory(target.parent)


def read_records(path: str | Path, repair: bool = True) -> list[dict]:
    """Every whole record of ``path`` ([] when there is no file); a torn last line is
    dropped with a warning and, with ``repair``, cut off the file."""
    target = Path(path)
    if not target.is_file():
        return []
    data = target.read_bytes()
    whole, _, tail = data.rpartition(b"\n")
    records = []
    for lineno, line in enumerate(whole.split(b"\n") if whole else [], 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise JsonlCorruptError(target, lineno, f"not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise JsonlCorruptError(target, lineno, "a record must be a JSON object")
        records.append(record)
    if tail.strip():
        warnings.warn(f"{target}: ignored a half-written last line ({len(tail)} bytes, the trace of a killed "
                      f"write){'; truncated the file after the last whole line' if repair else ''}", stacklevel=2)
        if repair:
            cut_torn_tail(target)
    return records


def cut_torn_tail(path: str | Path) -> int:
    """Truncate ``path`` after its last newline (a kill's half-written line), so that the next
    append starts a line of its own; the bytes cut (0 when the file ends whole or is absent)."""
    target = Path(path)
    if not target.is_file():
        return 0
    data = target.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep == len(data):
        return 0
    with target.open("r+b") as handle:
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    return len(data) - keep


def rewrite_records(path: str | Path, records: Iterable[dict]) -> None:
    """Replace ``path`` by ``records`` atomically: a kill leaves the old file or the new one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")  # a stale one from a killed rewrite is overwritten
    with tmp.open("w") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, target)
    _fsync_directory(target.parent)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
