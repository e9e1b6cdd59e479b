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


class ContextLengthError(ModelError, ValueError):
    """A prompt (with the answer's room) longer than the model's context: said as such, not as the
    out-of-memory error or the garbage a model gives past its positions (a learner that puts the
    whole docs in its context ends here)."""


class ModelIntegrityError(ModelError, ValueError):
    """A model file whose size or sha256 is not the pinned one (damaged, or another release)."""
