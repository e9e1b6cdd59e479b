"""Model backends behind one protocol, resolved by name with ``load_model``."""

from agents.models.base import Completion, Messages, Model
from agents.models.dtype import DTYPES, DtypeError
from agents.models.errors import (
    ContextLengthError,
    ModelError,
    ModelIntegrityError,
    ModelUnavailableError,
    UnknownModelError,
)
from agents.models.registry import DEFAULT_MODEL, ModelRegistry, load_model, release_model

__all__ = ["DEFAULT_MODEL", "DTYPES", "Completion", "ContextLengthError", "DtypeError", "Messages", "Model",
           "ModelError", "ModelIntegrityError", "ModelRegistry", "ModelUnavailableError", "UnknownModelError",
           "load_model", "release_model"]
