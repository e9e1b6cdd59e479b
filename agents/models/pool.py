"""The models a process holds, shared by every agent that asks for the same one.

A named model (``qwen2.5-coder-0.5b``) is a gigabyte of weights: two agents of one run asking for
it by name get one copy, loaded once per (name, resolved dtype, engine). The pool counts who
holds each and drops a model when its last user gives it back (``Agent.close``), so its memory
can go. It is kept apart from the registry that says which factory a name means
(``agents.models.registry``): that lookup caches nothing, this is the one thing that must.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from agents.models.base import Model


class ModelPool:
    """Loaded models by key, with how many users hold each; thread-safe (two threads asking at
    once get one model)."""

    def __init__(self) -> None:
        self._models: dict[tuple, Model] = {}  # (name, resolved dtype, engine) -> model
        self._users: dict[tuple, int] = {}  # loads not yet released, per held model
        self._lock = threading.Lock()

    def share(self, key: tuple[Hashable, ...], build: Callable[[], Model]) -> Model:
        """The model held under ``key``, built now if none is; one more user holds it."""
        with self._lock:
            if key not in self._models:
                self._models[key] = build()
            self._users[key] = self._users.get(key, 0) + 1
            return self._models[key]

    def release(self, model: Model) -> bool:
        """One user of ``model`` is done with it; True when that was the last and it was dropped.
        A model the pool does not hold is not its to keep: False."""
        with self._lock:
            key = next((k for k, held in self._models.items() if held is model), None)
            if key is None:
                return False
            self._users[key] = self._users.get(key, 1) - 1
            if self._users[key] > 0:
                return False
            del self._models[key], self._users[key]
            return True

    def held(self) -> list[tuple]:
        """The keys of every model held now."""
        with self._lock:
            return sorted(self._models)
