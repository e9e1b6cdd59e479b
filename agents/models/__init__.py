"""Model backends behind one protocol, resolved by name with ``load_model``."""

from agents.models.base import Completion, Messages, Model
from agents.models.errors import ModelError, ModelUnavailableError, UnknownModelError
from agents.models.registry import ModelRegistry, load_model

__all__ = ["Completion", "Messages", "Model", "ModelError", "ModelRegistry", "ModelUnavailableError",
           "UnknownModelError", "load_model"]
