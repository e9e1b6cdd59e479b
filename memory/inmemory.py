"""InMemoryStore: exact cosine search over a NumPy matrix; the default backend.

Exact (no index), so results are the true top-k; fast enough for learner memories (10k items:
well under a millisecond per query). ``path`` makes it persistent: ``persist()`` writes an
``.npz`` (vectors) and a ``.json`` (ids, texts, metadata) atomically, and a new store on the
same path loads them.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memory.base import Hit, MemoryStoreError, Metadata, matches, normalise_add, unit, vectors_for
from memory.embed import Embedder


class InMemoryStore:
    def __init__(self, embedder: Embedder | None = None, path: str | Path | None = None):
        self.embedder = embedder or Embedder()
        self.path = Path(path) if path is not None else None
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._metas: list[Metadata] = []
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        self._index: dict[str, int] = {}
        self._lock = threading.RLock()
        if self.path is not None and self.path.with_suffix(".json").is_file():
            self._load()

    # -- writing ----------------------------------------------------------------------------
    def add(self, texts, metadatas=None, ids=None, embeddings=None) -> list[str]:
        with self._lock:
            return self._add(texts, metadatas, ids, embeddings)

    def _add(self, texts, metadatas, ids, embeddings) -> list[str]:
        texts, metas, ids = normalise_add(texts, metadatas, ids)
        if not texts:
            return []
        vectors = vectors_for(texts, embeddings, self.embedder)
        if self._vectors.size == 0:
            self._vectors = np.zeros((0, vectors.shape[1]), dtype=np.float32)
        elif vectors.shape[1] != self._vectors.shape[1]:
            raise MemoryStoreError(f"embeddings have {vectors.shape[1]} dimensions; this store holds "
                               f"{self._vectors.shape[1]}")
        new_rows = []
        for item_id, text, meta, vector in zip(ids, texts, metas, vectors, strict=True):
            if item_id in self._index:  # upsert
                row = self._index[item_id]
                self._texts[row], self._metas[row], self._vectors[row] = text, meta, vector
            else:
                self._index[item_id] = len(self._ids) + len(new_rows)
                new_rows.append((item_id, text, meta, vector))
        if new_rows:
            self._ids += [r[0] for r in new_rows]
            self._texts += [r[1] for r in new_rows]
            self._metas += [r[2] for r in new_rows]
            self._vectors = np.vstack([self._vectors, np.stack([r[3] for r in new_rows])])
        return ids

    def update(self, id: str, text: str | None = None, metadata: Metadata | None = None) -> None:  # noqa: A002
        if id not in self._index:
            raise KeyError(f"no memory item {id!r}")
        row = self._index[id]
        self.add([text if text is not None else self._texts[row]],
                 [metadata if metadata is not None else self._metas[row]], [id],
                 embeddings=None if text is not None else self._vectors[row:row + 1])

    def delete(self, ids: Sequence[str]) -> None:
        drop = {self._index[i] for i in ids if i in self._index}
        if not drop:
            return
        keep = [r for r in range(len(self._ids)) if r not in drop]
        self._ids = [self._ids[r] for r in keep]
        self._texts = [self._texts[r] for r in keep]
        self._metas = [self._metas[r] for r in keep]
        self._vectors = self._vectors[keep]
        self._index = {item_id: r for r, item_id in enumerate(self._ids)}

    # -- reading ----------------------------------------------------------------------------
    def search(self, query, k: int = 5, where: Metadata | None = None) -> list[Hit]:
        if k < 1:
            raise MemoryStoreError(f"k must be >= 1, got {k}")
        if not self._ids:
            return []
        vector = unit(self.embedder.embed([query])[0] if isinstance(query, str) else np.asarray(query))
        scores = self._vectors @ vector  # cosine: rows and query are unit length
        if where:
            mask = np.array([matches(m, where) for m in self._metas])
            scores = np.where(mask, scores, -np.inf)
        k = min(k, int(np.isfinite(scores).sum()))
        if k == 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [Hit(self._ids[r], self._texts[r], dict(self._metas[r]), float(scores[r])) for r in top]

    def get(self, id: str) -> Hit | None:  # noqa: A002
        row = self._index.get(id)
        return None if row is None else Hit(self._ids[row], self._texts[row], dict(self._metas[row]), 1.0)

    def __len__(self) -> int:
        return len(self._ids)

    # -- keeping ----------------------------------------------------------------------------
    def persist(self) -> None:
        with self._lock:
            self._persist()

    def _persist(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        vectors_tmp = self.path.with_name(self.path.name + ".tmp.npz")
        np.savez(vectors_tmp, vectors=self._vectors)
        items_tmp = self.path.with_name(self.path.name + ".tmp.json")
        items_tmp.write_text(json.dumps({"ids": self._ids, "texts": self._texts, "metadatas": self._metas}))
        os.replace(vectors_tmp, self.path.with_suffix(".npz"))
        os.replace(items_tmp, self.path.with_suffix(".json"))

    def _load(self) -> None:
        items = json.loads(self.path.with_suffix(".json").read_text())
        with np.load(self.path.with_suffix(".npz")) as data:
            self._vectors = data["vectors"].astype(np.float32)
        self._ids, self._texts, self._metas = items["ids"], items["texts"], items["metadatas"]
        self._index = {item_id: r for r, item_id in enumerate(self._ids)}

    def close(self) -> None:
        self.persist()
