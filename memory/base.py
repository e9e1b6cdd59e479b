"""The MemoryStore protocol: what memory-based learners need from a vector store.

Items have an id, a text, a metadata dict (str/int/float/bool values) and an embedding made
by the store's Embedder (or given). ``add`` upserts; ``search`` takes text or a vector, a top-k
and an equality ``where`` filter on metadata; ``get``/``update``/``delete``/``len`` manage
items; ``persist``/``close`` keep them. Every backend passes ``memory.conformance.check_store``
(``tests/memory`` runs it on ours); ``docs/memory-backends.md`` shows how to add one.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sebench.errors import SebenchError

Metadata = dict[str, str | int | float | bool]


class MemoryStoreError(SebenchError):
    """Bad input to a memory store; the message names the item and the fix."""


@dataclass(frozen=True)
class Hit:
    id: str
    text: str
    metadata: Metadata = field(default_factory=dict)
    score: float = 0.0  # cosine similarity, higher is closer


@runtime_checkable
class MemoryStore(Protocol):
    def add(self, texts: Sequence[str], metadatas: Sequence[Metadata | None] | None = None,
            ids: Sequence[str] | None = None, embeddings: np.ndarray | None = None) -> list[str]: ...

    def search(self, query: str | np.ndarray, k: int = 5, where: Metadata | None = None) -> list[Hit]: ...

    def get(self, id: str) -> Hit | None: ...  # noqa: A002 - the protocol's name

    def update(self, id: str, text: str | None = None, metadata: Metadata | None = None) -> None: ...  # noqa: A002

    def delete(self, ids: Sequence[str]) -> None: ...

    def __len__(self) -> int: ...

    def persist(self) -> None: ...

    def close(self) -> None: ...


def normalise_add(texts: Sequence[str], metadatas: Sequence[Metadata | None] | None,
                  ids: Sequence[str] | None) -> tuple[list[str], list[Metadata], list[str]]:
    """Checked, aligned lists for ``add`` (shared by the backends)."""
    texts = list(texts)
    if any(not isinstance(t, str) for t in texts):
        raise MemoryStoreError("texts must be strings")
    metas = [dict(m or {}) for m in (metadatas if metadatas is not None else [None] * len(texts))]
    ids = [str(i) for i in ids] if ids is not None else [uuid.uuid4().hex for _ in texts]
    if not len(texts) == len(metas) == len(ids):
        raise MemoryStoreError(f"texts ({len(texts)}), metadatas ({len(metas)}) and ids ({len(ids)}) must align")
    if len(set(ids)) != len(ids):
        raise MemoryStoreError("ids must be unique within one add() call")
    for i, meta in zip(ids, metas, strict=True):
        for key, value in meta.items():
            if not isinstance(key, str) or not isinstance(value, (str, int, float, bool)):
                raise MemoryStoreError(f"item {i}: metadata {key!r} = {value!r} must map a string to "
                                   "str/int/float/bool (encode lists as text)")
    return texts, metas, ids


def vectors_for(texts: list[str], embeddings: np.ndarray | None, embedder: Any) -> np.ndarray:
    """Unit vectors for ``texts``: the given embeddings, or the embedder's (shared by the backends)."""
    vectors = unit(embeddings) if embeddings is not None else embedder.embed(texts)
    if len(vectors) != len(texts):
        raise MemoryStoreError(f"{len(vectors)} embeddings for {len(texts)} texts")
    return vectors


def matches(metadata: Metadata, where: Metadata | None) -> bool:
    return not where or all(metadata.get(k) == v for k, v in where.items())


def unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)

