"""Typed errors of the ZWC environment, one hierarchy so callers can catch them together.

Every message names what was wrong (file, line, field or value) and how to fix it.
"""

from __future__ import annotations

from sebench.errors import SebenchError


class ZWCEnvError(SebenchError):
    """Base class of every error this package raises on purpose."""


class ProtocolError(ZWCEnvError):
    """The SE-Bench protocol forbids the call (docs asked for in the closed-book phase)."""


class TaskFormatError(ZWCEnvError, ValueError):
    """A task record is malformed; the message names file, line and field."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None):
        where = ":".join(str(p) for p in (path, line) if p is not None)
        prefix = f"{where}: " if where else ""
        suffix = f" (field {field!r})" if field else ""
        super().__init__(f"{prefix}{message}{suffix}")
        self.path, self.line, self.field = path, line, field


class MappingError(ZWCEnvError, ValueError):
    """A name mapping or API doc file is malformed or inconsistent with the catalogue."""


class SandboxError(ZWCEnvError, RuntimeError):
    """The sandbox itself failed (not the candidate): a server could not start or answer."""


class UnknownNameError(ZWCEnvError, KeyError):
    """A function name is not in the mapping; the message suggests close names."""

    def __str__(self) -> str:  # KeyError quotes its message; show it plainly
        return str(self.args[0])
