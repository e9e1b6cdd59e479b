"""Memory backends by name: the ``sebench.memory`` entry-point group (``sebench/plugins.py``).

    [project.entry-points."sebench.memory"]
    sqlite = "my_package.stores:make_store"    # make_store(path, embedder, **options)

``make_store("chroma", path=DIR)`` builds one; ``backends()`` lists what is installed and where it
comes from; ``sebench check-backend memory NAME`` checks any of them. Ours (``inmemory``,
``inmemory-file``, ``chroma``: ``memory/backends.py``) register the same way.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory.base import MemoryStore, MemoryStoreError
from sebench import plugins

StoreFactory = Callable[..., MemoryStore]


class UnknownMemoryBackend(MemoryStoreError, KeyError):
    """No memory backend by that name (a KeyError, printed without its quotes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def backends() -> dict[str, plugins.Plugin]:
    """Every installed memory backend by name (nothing imported)."""
    return {name: plugins.describe(ep) for name, ep in sorted(plugins.group(plugins.MEMORY).items())}


def factory(name: str) -> StoreFactory:
    """The factory registered as ``name`` (imported now)."""
    points = plugins.group(plugins.MEMORY)
    if name not in points:
        close = difflib.get_close_matches(name, sorted(points), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownMemoryBackend(f"unknown memory backend {name!r}; installed: {', '.join(sorted(points))}{hint} "
                                   f"(a package adds one through the {plugins.MEMORY!r} entry-point group)")
    return points[name].load()


def is_persistent(make: StoreFactory) -> bool:
    return bool(getattr(make, "persistent", False))


def make_store(name: str, path: str | Path | None = None, embedder: Any = None, **options: Any) -> MemoryStore:
    """A store of the backend ``name`` at ``path`` (None: the backend's choice, if it has one)."""
    return factory(name)(None if path is None else Path(path), embedder, **options)
