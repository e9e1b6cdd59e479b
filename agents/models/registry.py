"""Model names -> backends, in one explicit registry (tests can build their own).

``smollm2-135m`` (embedded, offline), ``reference`` (needs ``tasks`` and ``mapping``), a local
model directory, ``vllm:<model>``, ``openai:<base_url>#<model>``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.models.base import Model
from agents.models.errors import UnknownModelError

Factory = Callable[..., Model]


class ModelRegistry:
    def __init__(self) -> None:
        self._named: dict[str, Factory] = {}
        self._cache: dict[str, Model] = {}
        self._lock = threading.Lock()  # two threads asking at once get one model

    def register(self, name: str, factory: Factory) -> None:
        self._named[name] = factory

    def load(self, name: str, *, cache: bool = True, **kwargs: Any) -> Model:
        """The backend for ``name``; embedded models are loaded once per process."""
        if name in self._named:
            if name == "reference" or not cache:
                return self._named[name](**kwargs)
            with self._lock:
                if name not in self._cache:
                    self._cache[name] = self._named[name](**kwargs)
            return self._cache[name]
        if name.startswith("vllm:"):
            from agents.models.vllm_model import VLLMModel

            return VLLMModel(name[len("vllm:"):], **kwargs)
        if name.startswith("openai:"):
            from agents.models.openai_model import OpenAIModel

            url, sep, model = name[len("openai:"):].rpartition("#")
            if not sep or not url:
                raise UnknownModelError(f"{name!r}: write openai:<base_url>#<model>, "
                                        "e.g. openai:http://127.0.0.1:8000/v1#smollm2-135m")
            return OpenAIModel(url, model, **kwargs)
        if Path(name).is_dir():
            from agents.models.transformers_model import TransformersModel

            return TransformersModel(name, **kwargs)
        raise UnknownModelError(f"unknown model {name!r}; use one of {', '.join(sorted(self._named))}, "
                                "a model directory, vllm:<model> or openai:<base_url>#<model>")


def _smollm2(**kwargs: Any) -> Model:
    from agents.models.transformers_model import load_smollm2

    return load_smollm2(**kwargs)


def _reference(tasks=None, mapping=None, **_: Any) -> Model:
    from agents.models.reference import ReferenceModel

    if tasks is None or mapping is None:
        raise UnknownModelError("the reference model answers known tasks: load_model('reference', "
                                "tasks=..., mapping=env.mapping)")
    return ReferenceModel(tasks, mapping)


def default_registry() -> ModelRegistry:
    registry = ModelRegistry()
    registry.register("smollm2-135m", _smollm2)
    registry.register("reference", _reference)
    return registry


REGISTRY = default_registry()


def load_model(name: str, **kwargs: Any) -> Model:
    return REGISTRY.load(name, **kwargs)
