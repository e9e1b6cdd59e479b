"""Memory stores for memory-based learners: one protocol, pluggable backends."""

from memory.base import Hit, MemoryStore, MemoryStoreError
from memory.chroma import ChromaStore
from memory.embed import Embedder, EmbedderUnavailable
from memory.inmemory import InMemoryStore

__all__ = ["ChromaStore", "Embedder", "EmbedderUnavailable", "Hit", "InMemoryStore", "MemoryStoreError", "MemoryStore"]
