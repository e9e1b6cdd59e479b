"""One base for every error sebench raises on purpose.

A ``SebenchError`` is bad input or a missing prerequisite, and its message names the file, line,
field or value and the fix; the ``sebench`` command prints it in one line and exits 2. Anything
else that escapes is a bug and keeps its traceback. The typed errors keep their built-in bases
too (``ValueError``, ``KeyError``, …), so ``except ValueError`` callers go on working.
"""

from __future__ import annotations


class SebenchError(Exception):
    """Base class of every error sebench raises on purpose (the message says the fix)."""


class SettingError(SebenchError, ValueError):
    """A setting (a learner's, a trainer's, a command's) is unknown or out of range; the message
    names the setting, the value and what it accepts."""


class DataError(SebenchError, ValueError):
    """Files or data the run needs are missing, empty or of another run; the message names them
    and what to do (delete, rebuild, raise a limit)."""
