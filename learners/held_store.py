"""A memory learner's store, held one way for ExpeL and ACE: any registered backend or an object.

``StoreSettings`` gives a learner's config the two settings a user passes from the shell
(``--set store=chroma --set store_path=DIR``); ``HeldStore`` opens that backend once, however
many episodes ask at once (they run in threads), records in the learner's saved state which
backend and which place hold the items, and reopens it there on ``load``. A store passed in as
an object is the caller's: it is persisted on save, never replaced or closed by the learner.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.learner import LearnerConfig, setting
from memory import InMemoryStore, MemoryStore
from memory.registry import backends, make_store
from sebench.errors import SettingError


@dataclass
class StoreSettings(LearnerConfig):
    """The memory backend of a learner that keeps what it learned in a store."""

    store: str = setting("inmemory-file", "Memory backend: a registered name (sebench backends: inmemory, "
                                          "inmemory-file, chroma, or a package's).")
    store_path: str = setting("", "Where the store keeps its items (default: in the state directory; an on-disk "
                                  "backend such as chroma needs one where there is no state directory).")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.store not in (installed := backends()):
            raise SettingError(f"{type(self).__name__} store={self.store!r} is no registered memory backend; "
                               f"installed: {', '.join(installed)} (sebench backends)")


class HeldStore:
    """Args: settings: the learner's config (its ``store``, ``store_path`` and ``state_dir``);
    given: a store object (the caller's) or None to open ``settings.store`` by name;
    folder: the name of the store's place inside a state directory."""

    def __init__(self, settings: StoreSettings, given: MemoryStore | None, folder: str):
        self.settings, self.folder = settings, folder
        self._store = given
        self.given = given is not None
        self.at: Path | None = None  # where the store was opened (its backend's path)
        self._lock = threading.Lock()

    def get(self) -> MemoryStore:
        """The store, opened on first use (once, under a lock)."""
        if self._store is None:
            with self._lock:
                if self._store is None:
                    self.at = self.location(self.settings.state_dir)
                    self._store = make_store(self.settings.store, self.at)
        return self._store

    @property
    def opened(self) -> MemoryStore | None:
        return self._store

    def location(self, state_dir: Any) -> Path | None:
        """Where the store keeps its items; its parent folder is made here (a backend may expect it)."""
        where = Path(self.settings.store_path) if self.settings.store_path else (
            Path(state_dir) / self.folder if state_dir else None)
        if where is not None:
            where.parent.mkdir(parents=True, exist_ok=True)
        return where

    def record(self, target: Path) -> dict[str, Any]:
        """What the learner's saved state says of its store; an in-memory store with no place of its
        own moves to ``target`` (its items go where the state goes). A place inside ``target`` is
        recorded relative to it, so a copied or moved state directory opens its own copy."""
        if isinstance(self._store, InMemoryStore) and not self.settings.store_path:
            self._store.path = self.at = target / self.folder
        where = self.at if self._store is not None else self.location(target)
        if where is not None:
            inside = Path(where).resolve().is_relative_to(Path(target).resolve())
            where = Path(where).resolve().relative_to(Path(target).resolve()) if inside else Path(where).resolve()
        return {"backend": None if self.given else self.settings.store, "path": None if where is None else str(where)}

    def persist(self) -> None:
        if self._store is not None:
            self._store.persist()

    def reopen(self, saved: dict[str, Any] | None, path: Path) -> MemoryStore:
        """The store a saved state recorded (runs saved before stores were pluggable recorded none:
        the default backend in ``path``); a given store stays as it is."""
        saved = saved or {}
        if not self.given:
            with self._lock:
                self.settings.store = saved.get("backend") or self.settings.store
                where = Path(path) / saved["path"] if saved.get("path") else None  # relative: inside the state
                if where is not None and where.resolve() != (Path(path) / self.folder).resolve():
                    self.settings.store_path = str(where)  # a place of its own (chroma's directory ...)
                if self._store is not None:
                    self._store.close()
                self.at = self.location(path)
                self._store = make_store(self.settings.store, self.at)
        return self.get()

    def close(self) -> None:
        """Persist and let go of a store opened here (a given one is its caller's); the next use
        reopens it by name."""
        with self._lock:
            if self._store is not None and not self.given:
                self._store.persist()
                self._store.close()
                self._store = None
