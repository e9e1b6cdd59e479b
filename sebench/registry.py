"""One registry for every family of plug-ins: a Mapping of entry name -> loaded object.

Learners, memory backends and model backends are all found the same way, through an entry-point
group (``sebench.plugins``), so one class looks them up. It caches nothing: every lookup reads
the group anew (``plugins.group``), so a package installed while the process runs (a test's
temporary ``.dist-info`` on ``sys.path``) is seen at once and gone once it is removed, and no test
has to reach into a module's private cache. An instance holds only its settings, so it is cheap
to build wherever a lookup happens, and a test can build its own (``extra`` adds objects beside
the group's, and wins over an entry of the same name).

What differs between families is passed in: the word for an entry in messages (``kind``), the
error class an unknown name raises (each family's own, a ``KeyError`` as a Mapping's lookup must
raise), what the list of names is called and what to add after it, and what to say when the
group is empty. A family that needs more (models' prefixes) subclasses it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from importlib.metadata import EntryPoint
from typing import Any

from sebench import plugins
from sebench.errors import SebenchError


class UnknownEntryError(SebenchError, KeyError):
    """No entry by that name (a KeyError, printed without KeyError's quotes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class EntryPointRegistry(Mapping[str, Any]):
    """The objects of the entry-point group ``group`` by name, each imported only when asked for
    (a learner's trainers pull in torch; a third party's broken import breaks its own entries only).

    Args:
        group: the entry-point group (``sebench.plugins.LEARNERS`` ...).
        kind: what an entry is called in messages (``learner``, ``memory backend``).
        error: the exception class an unknown name (or an empty group) raises.
        listed: what the list of names in that message is called (``known``, ``installed``).
        advice: text appended to that message (where to add an entry).
        when_empty: if given, the message raised (as ``error``) by any lookup when the group has no
            entry at all: an environment where our own package is not installed.
        extra: objects by name beside the group's (they win over an entry of the same name).
    """

    def __init__(self, group: str, *, kind: str = "entry", error: type[Exception] = UnknownEntryError,
                 listed: str = "known", advice: str = "", when_empty: str | None = None,
                 extra: Mapping[str, Any] | None = None) -> None:
        self.group, self.kind, self.error, self.listed = group, kind, error, listed
        self.advice, self.when_empty = advice, when_empty
        self.extra: dict[str, Any] = dict(extra or {})

    # two registries are one only when they are the same object: Mapping's __eq__ would import
    # every entry of both to compare them
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def points(self) -> dict[str, EntryPoint]:
        """The group's entry points by name, read now."""
        found = plugins.group(self.group)
        if not found and not self.extra and self.when_empty is not None:
            raise self.error(self.when_empty)
        return found

    def names(self) -> list[str]:
        """Every name, sorted (nothing imported)."""
        return sorted(set(self.points()) | set(self.extra))

    def __getitem__(self, name: str) -> Any:
        if name in self.extra:
            return self.extra[name]
        points = self.points()
        if name not in points:
            raise self.unknown(name)
        return points[name].load()

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered, without importing it (an empty group: False, as
        Mapping's lookup-based ``in`` answered)."""
        try:
            return name in self.extra or name in self.points()
        except self.error:
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def target(self, name: str) -> str:
        """Where ``name`` lives (``module:Attr``), without importing it."""
        if name in self.extra:
            return "registered in this process"
        points = self.points()
        if name not in points:
            raise self.unknown(name)
        return points[name].value

    def describe(self) -> dict[str, plugins.Plugin]:
        """Every entry of the group by name, with where it comes from (nothing imported)."""
        return {name: plugins.describe(ep) for name, ep in sorted(self.points().items())}

    def unknown(self, name: str) -> Exception:
        """The error for a name that is not registered: the names there are, the close ones."""
        names = self.names()
        close = difflib.get_close_matches(name, names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return self.error(f"unknown {self.kind} {name!r}; {self.listed}: {', '.join(names)}{hint}{self.advice}")
