"""Memory backends by name: the ``sebench.memory`` entry-point group (``sebench/plugins.py``).

    [project.entry-points."sebench.memory"]
    sqlite = "my_package.stores:make_store"    # make_store(path, embedder, **options)

``make_store("chroma", path=DIR)`` builds one; ``backends()`` lists what is installed and where it
comes from; ``sebench check-backend memory NAME`` checks any of them. Ours (``inmemory``,
``inmemory-file``, ``chroma``: ``memory/backends.py``) register the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory.base import MemoryStore, MemoryStoreError
from sebench import plugins
from sebench.registry import EntryPointRegistry, UnknownEntryError

StoreFactory = Callable[..., MemoryStore]


class UnknownMemoryBackend(MemoryStoreError, UnknownEntryError):
    """No memory backend by that name (a KeyError, printed without its quotes)."""


def registry(extra: dict[str, StoreFactory] | None = None) -> EntryPointRegistry:
    """The memory backends installed now (read at each lookup), plus ``extra`` ones of the caller's."""
    return EntryPointRegistry(plugins.MEMORY, kind="memory backend", error=UnknownMemoryBackend, listed="installed",
                              advice=f" (a package adds one through the {plugins.MEMORY!r} entry-point group)",
                              extra=extra)


def backends() -> dict[str, plugins.Plugin]:
    """Every installed memory backend by name (nothing imported)."""
    return registry().describe()


def factory(name: str) -> StoreFactory:
    """The factory registered as ``name`` (imported now)."""
    return registry()[name]


def is_persistent(make: StoreFactory) -> bool:
    return bool(getattr(make, "persistent", False))


def make_store(name: str, path: str | Path | None = None, embedder: Any = None, **options: Any) -> MemoryStore:
    """A store of the backend ``name`` at ``path`` (None: the backend's choice, if it has one)."""
    return factory(name)(None if path is None else Path(path), embedder, **options)
