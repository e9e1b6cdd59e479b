"""Tasks: one pydantic model that reads and writes official SE-Bench records and ours.

Official SE-Bench v1 records (the published ``*_test.jsonl`` shape; ``docs/environment.md``)
carry ``query``, ``function_name``, ``test_cases``, ``right_exe_result`` (the graded truth) and
provenance fields; ours add ``task_id``, ``split``, ``reference`` (a verified ZWC solution) and ``kind``. Unknown
fields are kept, so a record read and written again loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from envs.zwc.errors import TaskFormatError

_ENTRY = re.compile(r"^\s*def\s+([A-Za-z_]\w*)\s*\(")


class TestCase(BaseModel):
    """Inputs as keyword-argument text (``x1=[1, 2], x2=3``); the expected printed output."""

    __test__ = False  # not a pytest class

    model_config = ConfigDict(extra="allow")

    input: str
    output: str = ""

    @field_validator("input", "output", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value)


class Task(BaseModel):
    """One SE-Bench task."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    task_id: str = ""
    split: str | None = None
    kind: str | None = None
    selected_functions: list[str] = Field(default_factory=list)
    query: str
    function_name: str
    test_cases: list[TestCase]
    example: TestCase | None = None
    example_output: list[str] | None = None
    right_exe_result: str | None = None
    reference: str | None = None
    rel_tol: float | None = None  # grading tolerance when the default one would hide the answer
    abs_tol: float | None = None

    @field_validator("function_name")
    @classmethod
    def _has_def(cls, value: str) -> str:
        if not _ENTRY.match(value):
            raise ValueError(f"must be a signature like 'def solve(x1, x2):', got {value!r}")
        return value

    @field_validator("test_cases")
    @classmethod
    def _not_empty(cls, value: list[TestCase]) -> list[TestCase]:
        if not value:
            raise ValueError("a task needs at least one test case")
        return value

    @field_validator("example_output", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def model_post_init(self, _context: Any) -> None:
        if not self.task_id:
            official_id = (self.model_extra or {}).get("1func_query_id")
            digest = hashlib.sha1((self.query + self.function_name).encode()).hexdigest()[:10]
            self.task_id = f"official-{official_id}-{digest}" if official_id is not None else f"task-{digest}"

    @property
    def entry_point(self) -> str:
        """The function the tests call: ``solve`` for ``def solve(x1, x2):``."""
        match = _ENTRY.match(self.function_name)
        assert match is not None  # guaranteed by the validator
        return match.group(1)

    @property
    def is_official(self) -> bool:
        """Official records are graded against ``right_exe_result`` by the official rule."""
        return self.right_exe_result is not None

    def expected_outputs(self) -> list[str]:
        """The graded truth per test case."""
        if self.right_exe_result is None:
            return [tc.output for tc in self.test_cases]
        parts = self.right_exe_result.split("#")
        if len(parts) != len(self.test_cases):
            raise TaskFormatError(f"right_exe_result has {len(parts)} outputs for "
                                  f"{len(self.test_cases)} test cases", field="right_exe_result")
        return parts

    def inputs(self) -> list[str]:
        return [tc.input for tc in self.test_cases]


def read_tasks(path: str | Path) -> list[Task]:
    """Read a JSON-lines task file (official records or ours)."""
    p = Path(path)
    if not p.is_file():
        raise TaskFormatError("no such task file", path=str(p))
    tasks = []
    with p.open() as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TaskFormatError(f"not JSON ({exc.msg} at column {exc.colno})",
                                      path=str(p), line=lineno) from None
            if not isinstance(record, dict):
                raise TaskFormatError("a task record must be a JSON object", path=str(p), line=lineno)
            try:
                task = Task.model_validate(record)
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(x) for x in err["loc"])
                raise TaskFormatError(f"{err['msg']}", path=str(p), line=lineno, field=field) from None
            try:
                task.expected_outputs()
            except TaskFormatError as exc:
                raise TaskFormatError(str(exc).split(" (field")[0], path=str(p), line=lineno,
                                      field=exc.field) from None
            tasks.append(task)
    return tasks


def write_tasks(tasks: list[Task], path: str | Path) -> None:
    """Write tasks as JSON lines, official fields and ours, byte-stable for equal input."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w") as handle:
        for task in tasks:
            record = task.model_dump(mode="json", exclude_none=True)
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
