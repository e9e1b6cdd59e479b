"""Our memory backends as ``sebench.memory`` entries (``pyproject.toml``), registered exactly as a
third-party package registers its own (``memory/registry.py``).

An entry is ``factory(path, embedder, **options) -> MemoryStore``: ``path`` is where the store
keeps its items (it need not exist; a store that keeps nothing on disk may ignore it), ``embedder``
an ``Embedder`` or None for the default one. ``factory.persistent`` (default False) says whether
items survive ``persist()`` and ``close()`` and are read back from ``path``: the conformance
check then requires it, and learners save such a store by persisting it where their state goes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.chroma import ChromaStore
from memory.inmemory import InMemoryStore


def inmemory(path: Path | None, embedder: Any = None, **options: Any) -> InMemoryStore:
    """Vectors in process memory; nothing kept on disk (``inmemory-file`` keeps a copy)."""
    return InMemoryStore(embedder, **options)


def inmemory_file(path: Path | None, embedder: Any = None, **options: Any) -> InMemoryStore:
    """In process memory, persisted to ``path`` (a JSON and a NumPy file) and read back from it."""
    return InMemoryStore(embedder, path=path, **options)


def chroma(path: Path, embedder: Any = None, **options: Any) -> ChromaStore:
    """A persistent ChromaDB collection in the directory ``path``."""
    if path is None:
        from memory.base import MemoryStoreError

        raise MemoryStoreError("the chroma store keeps its items in a directory: give it a path "
                               "(--set expel.store_path=DIR, or ChromaStore(DIR))")
    return ChromaStore(path, embedder, **options)


inmemory.persistent = False
inmemory_file.persistent = True
chroma.persistent = True
