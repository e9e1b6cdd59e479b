"""ChromaStore: chromadb's embedded ``PersistentClient`` on disk, with our own embeddings.

Telemetry is off and the collection has no embedding function: every add and query passes
vectors made by our Embedder, so chromadb's default embedder (which downloads a model) is
never called. Cosine space; scores are similarities (1 - distance). Persistent by nature: a
store opened on the same path in another process reads the same items.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memory.base import Hit, MemoryStoreError, Metadata, normalise_add, unit, vectors_for
from memory.embed import Embedder

_MAX_BATCH = 4000  # below chromadb's max batch size


class ChromaStore:
    def __init__(self, path: str | Path, embedder: Embedder | None = None, collection: str = "memory"):
        import chromadb
        from chromadb.config import Settings

        self.path = Path(path)
        self.embedder = embedder or Embedder()
        self._client = chromadb.PersistentClient(path=str(self.path),
                                                 settings=Settings(anonymized_telemetry=False))
        self._collection = self._client.get_or_create_collection(
            collection, embedding_function=None, metadata={"hnsw:space": "cosine"})

    def add(self, texts, metadatas=None, ids=None, embeddings=None) -> list[str]:
        texts, metas, ids = normalise_add(texts, metadatas, ids)
        if not texts:
            return []
        vectors = vectors_for(texts, embeddings, self.embedder)
        for start in range(0, len(texts), _MAX_BATCH):
            end = start + _MAX_BATCH
            # chromadb's upsert merges metadata into an existing item's (old keys stay); ours replaces it
            self._collection.delete(ids=ids[start:end])
            self._collection.add(ids=ids[start:end], documents=texts[start:end],
                                    embeddings=vectors[start:end].tolist(),
                                    metadatas=[m or None for m in metas[start:end]])
        return ids

    def search(self, query, k: int = 5, where: Metadata | None = None) -> list[Hit]:
        if k < 1:
            raise MemoryStoreError(f"k must be >= 1, got {k}")
        count = len(self)
        if count == 0:
            return []
        vector = unit(self.embedder.embed([query])[0] if isinstance(query, str) else np.asarray(query))
        result = self._collection.query(query_embeddings=[vector.tolist()], n_results=min(k, count),
                                        where=_where(where), include=["documents", "metadatas", "distances"])
        return [Hit(i, doc or "", dict(meta or {}), 1.0 - float(dist))
                for i, doc, meta, dist in zip(result["ids"][0], result["documents"][0], result["metadatas"][0],
                                              result["distances"][0], strict=True)]

    def get(self, id: str) -> Hit | None:  # noqa: A002
        result = self._collection.get(ids=[id], include=["documents", "metadatas"])
        if not result["ids"]:
            return None
        return Hit(result["ids"][0], result["documents"][0] or "", dict(result["metadatas"][0] or {}), 1.0)

    def update(self, id: str, text: str | None = None, metadata: Metadata | None = None) -> None:  # noqa: A002
        current = self.get(id)
        if current is None:
            raise KeyError(f"no memory item {id!r}")
        if text is None:
            stored = self._collection.get(ids=[id], include=["embeddings"])["embeddings"][0]
            self.add([current.text], [metadata if metadata is not None else current.metadata], [id],
                     embeddings=np.asarray([stored]))
        else:
            self.add([text], [metadata if metadata is not None else current.metadata], [id])

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._collection.delete(ids=list(ids))

    def __len__(self) -> int:
        return int(self._collection.count())

    def persist(self) -> None:
        return None  # PersistentClient writes through

    def close(self) -> None:
        """Let go of chromadb's client. chromadb keeps one open database per path for the whole
        process until its last client closes; a store left open would keep answering for that path
        after the directory is deleted, and a new store made there would fail to write ("readonly
        database"). Idempotent; reopen by making a new store on the same path."""
        self.persist()
        client, self._client = self._client, None
        if client is not None:
            client.close()


def _where(where: Metadata | None) -> dict | None:
    """Our equality filter in chromadb's syntax."""
    if not where:
        return None
    clauses = [{k: {"$eq": v}} for k, v in where.items()]
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}

