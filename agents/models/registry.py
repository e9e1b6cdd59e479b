"""Model names -> backends, in one explicit registry (tests can build their own).

``qwen2.5-coder-0.5b`` (embedded, offline, capable: the default), ``smollm2-135m`` (embedded,
offline, fast), ``reference`` (needs ``tasks`` and ``mapping``), a local model directory,
``vllm:<model>``, ``openai:<base_url>#<model>``. ``dtype`` (``auto`` | ``bfloat16`` |
``float32``) picks the weights' type of local backends; a remote server keeps its own.
``engine`` (``local_model.ENGINES``) picks what generates for a local model: ``transformers``
(``load_model``'s default: a ``TransformersModel``, the torch module at hand), or ``auto``
(``Agent``'s and the commands' default: CTranslate2 for greedy answers where it is installed,
transformers for seeded sampling), ``ct2-int8``, ``ct2-float32``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.models.base import Model
from agents.models.dtype import check_dtype, resolve_dtype
from agents.models.errors import UnknownModelError
from agents.models.local_model import check_engine, resolve_engine

Factory = Callable[..., Model]
DEFAULT_MODEL = "qwen2.5-coder-0.5b"  # Agent()'s model: the capable embedded one


class ModelRegistry:
    def __init__(self) -> None:
        self._named: dict[str, Factory] = {}
        self._cache: dict[tuple[str, str, str], Model] = {}  # (name, resolved dtype, engine) -> model
        self._users: dict[tuple[str, str, str], int] = {}  # loads not yet released, per cached model
        self._lock = threading.Lock()  # two threads asking at once get one model

    def register(self, name: str, factory: Factory) -> None:
        self._named[name] = factory

    def load(self, name: str, *, cache: bool = True, dtype: str = "auto", engine: str = "transformers",
             **kwargs: Any) -> Model:
        """The backend for ``name``; embedded models are loaded once per process, dtype and engine."""
        check_dtype(dtype)
        engine = resolve_engine(check_engine(engine))
        if name in self._named:
            if name == "reference":  # answers known tasks: no weights, no dtype, nothing to cache
                return self._named[name](**kwargs)
            if not cache:
                return self._named[name](dtype=dtype, engine=engine, **kwargs)
            key = (name, resolve_dtype(dtype, kwargs.get("device")), engine)  # auto and what it means share one
            with self._lock:
                if key not in self._cache:
                    self._cache[key] = self._named[name](dtype=dtype, engine=engine, **kwargs)
                self._users[key] = self._users.get(key, 0) + 1
                return self._cache[key]
        if name.startswith("vllm:"):
            from agents.models.vllm_model import VLLMModel

            if dtype != "auto":  # vLLM's own auto reads the checkpoint's dtype
                kwargs["dtype"] = dtype
            return VLLMModel(name[len("vllm:"):], **kwargs)
        if name.startswith("openai:"):
            from agents.models.openai_model import OpenAIModel

            url, sep, model = name[len("openai:"):].rpartition("#")
            if not sep or not url:
                raise UnknownModelError(f"{name!r}: write openai:<base_url>#<model>, "
                                        "e.g. openai:http://127.0.0.1:8000/v1#smollm2-135m")
            return OpenAIModel(url, model, **kwargs)
        if Path(name).is_dir():
            return local_model(name, dtype=dtype, engine=engine, **kwargs)
        raise UnknownModelError(f"unknown model {name!r}; use one of {', '.join(sorted(self._named))}, "
                                "a model directory, vllm:<model> or openai:<base_url>#<model>")


    def release(self, model: Model) -> bool:
        """One user of a cached ``model`` is done with it (``Agent.close``); the registry drops
        the model when its last user is, so its memory can go. True when it was dropped. A model
        the registry does not cache (a directory, a remote backend) is not its to keep: False."""
        with self._lock:
            key = next((k for k, cached in self._cache.items() if cached is model), None)
            if key is None:
                return False
            self._users[key] = self._users.get(key, 1) - 1
            if self._users[key] > 0:
                return False
            del self._cache[key], self._users[key]
            return True

    def cached(self) -> list[tuple[str, str]]:
        """The (name, dtype) of every model held now (one entry per engine it is held on)."""
        with self._lock:
            return sorted((name, dtype) for name, dtype, _engine in self._cache)


def local_model(path: str | Path, *, name: str | None = None, dtype: str = "auto", engine: str = "transformers",
                **kwargs: Any) -> Model:
    """A model directory on ``engine``: a ``TransformersModel`` for ``transformers`` (or ``auto``
    without ctranslate2), else a ``LocalModel`` that loads each engine on first use."""
    if resolve_engine(engine) == "transformers":
        from agents.models.transformers_model import TransformersModel

        return TransformersModel(path, name=name, dtype=dtype, **kwargs)
    from agents.models.local_model import LocalModel

    return LocalModel(path, name=name, engine=engine, dtype=dtype, **kwargs)


def _embedded(name: str) -> Factory:
    def load(**kwargs: Any) -> Model:
        from agents.models.embedded import embedded_directory

        return local_model(embedded_directory(name), name=name, **kwargs)

    return load


def _reference(tasks=None, mapping=None, **_: Any) -> Model:
    from agents.models.reference import ReferenceModel

    if tasks is None or mapping is None:
        raise UnknownModelError("the reference model answers known tasks: load_model('reference', "
                                "tasks=..., mapping=env.mapping)")
    return ReferenceModel(tasks, mapping)


def default_registry() -> ModelRegistry:
    registry = ModelRegistry()
    registry.register("qwen2.5-coder-0.5b", _embedded("qwen2.5-coder-0.5b"))
    registry.register("smollm2-135m", _embedded("smollm2-135m"))
    registry.register("reference", _reference)
    return registry


REGISTRY = default_registry()


def load_model(name: str, **kwargs: Any) -> Model:
    return REGISTRY.load(name, **kwargs)


def release_model(model: Model) -> bool:
    """Give back a model ``load_model`` handed out (see ``ModelRegistry.release``)."""
    return REGISTRY.release(model)
