"""What ``ZWCEnv.run`` hands back: each input's result of untrusted code run in the sandbox.

Callers outside the environment (self-play's validator, LLM task generation) need the values a
program returns on some inputs, and why it gave none, without reading the sandbox's raw records
or knowing how values travel from the candidate's process (``sandbox/child.py`` encodes them,
``grading/grade.py`` decodes them). ``RunResult`` reads one raw answer of the pool once; values
are decoded only when read, as the callers did before, so a record a caller never reads is never
decoded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envs.zwc.grading.grade import decode


@dataclass(frozen=True)
class TestRun:
    """One input's outcome (or the program's loading, ``RunResult.load``)."""

    __test__ = False  # not a pytest class

    ok: bool
    encoded: Any = None  # the value as the sandbox wrote it (``value`` decodes it)
    error: str = ""  # the error's text where not ``ok``
    category: str = ""  # the sandbox's error category: runtime, violation, unknown_api, memory, ...

    @property
    def value(self) -> Any:
        """The returned value, made plain (tuples, complex numbers, non-finite floats restored)."""
        return decode(self.encoded)

    @property
    def opaque(self) -> bool:
        """The value holds an object the sandbox could only name (its ``repr``), not compare."""
        return _opaque(self.encoded)

    @classmethod
    def of(cls, record: dict) -> TestRun:
        return cls(ok=bool(record.get("ok")), encoded=record.get("value"), error=record.get("error", ""),
                   category=record.get("category", "runtime"))


@dataclass(frozen=True)
class RunResult:
    """One run of a program on its inputs, in the sandbox.

    ``tests`` has one entry per input, in order: ``None`` where the input never ran (the program
    crashed, was killed or never loaded). ``load`` is ``None`` when the program did not get as far
    as loading; ``finished`` says the harness wrote its last record (nothing after the tests
    crashed or was cut).
    """

    tests: list[TestRun | None]
    load: TestRun | None = None
    finished: bool = False
    server_error: str = ""  # the sandbox itself failed on this job
    killed: str = ""  # why the sandbox killed the program: "timeout", "syscall", "output", or ""
    signal: int = 0  # the signal that ended the program, if any
    violations: list[str] = field(default_factory=list)  # walls the program ran into (even if caught)
    output_exceeded: bool = False  # it printed more than the sandbox accepts
    state_changes: list[str] = field(default_factory=list)  # state shared between tests it changed

    @classmethod
    def of(cls, answer: dict, n_inputs: int) -> RunResult:
        """Read a raw answer of ``SandboxPool.run`` for ``n_inputs`` inputs."""
        records = answer.get("records", [])
        load = next((r for r in records if r.get("event") == "load"), None)
        end = next((r for r in records if r.get("event") == "end"), None)
        tests = {r["i"]: r for r in records if r.get("event") == "test"}
        return cls(tests=[TestRun.of(tests[i]) if i in tests else None for i in range(n_inputs)],
                   load=None if load is None else TestRun.of(load), finished=end is not None,
                   server_error=answer.get("server_error") or "", killed=answer.get("killed", ""),
                   signal=answer.get("signal", 0),
                   violations=[v for r in records for v in r.get("violations", [])],
                   output_exceeded=any(r.get("output_exceeded") for r in records),
                   state_changes=list((end or {}).get("state_changes") or []))

    @property
    def ran(self) -> int:
        """How many inputs ran (passing or not)."""
        return sum(t is not None for t in self.tests)

    @property
    def values(self) -> list[Any]:
        """Each input's decoded value (``None`` where it gave none)."""
        return [t.value if t is not None and t.ok else None for t in self.tests]


def _opaque(value: Any) -> bool:
    """An encoded value holding an object the sandbox could only name (``{"$repr": ...}``)."""
    if isinstance(value, list):
        return any(_opaque(v) for v in value)
    if isinstance(value, dict):
        return "$repr" in value or any(_opaque(v) for v in value.values())
    return False
