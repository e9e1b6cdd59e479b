"""Typed errors of the model layer."""

from __future__ import annotations

from sebench.errors import SebenchError


class ModelError(SebenchError):
    """Base class of model-layer errors."""


class UnknownModelError(ModelError, KeyError):
    """A model name the registry cannot resolve; the message lists what it accepts."""

    def __str__(self) -> str:
        return str(self.args[0])


class ModelUnavailableError(ModelError, RuntimeError):
    """A backend needs something this machine lacks (a package, a GPU, a server)."""


class ModelIntegrityError(ModelError, ValueError):
    """A model file whose size or sha256 is not the pinned one (damaged, or another release)."""
