"""Our model backends as ``sebench.models`` entries, registered in ``pyproject.toml`` exactly as a
third-party package registers its own (``sebench/plugins.py``).

A name's factory is called as ``factory(dtype=..., engine=..., **options)``; a prefix's as
``factory(rest, dtype=..., engine=..., **options)`` with ``rest`` what follows the prefix.
Attributes a factory may carry, read by ``ModelRegistry``:

* ``shared`` (default True for names): one model per (name, dtype, engine), kept until its
  last user releases it (``Agent.close``); prefixes are never shared.
* ``weights_directory(name_or_rest) -> Path | None``: the local weights behind a spec without
  loading it (SFT fine-tunes them; ``Agent.weights_dtype`` reports their dtype). Without it a
  backend's weights are not ours (a remote server, the reference answers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.models.base import Model
from agents.models.errors import UnknownModelError


def local_model(path: str | Path, *, name: str | None = None, dtype: str = "auto", engine: str = "transformers",
                **kwargs: Any) -> Model:
    """A model directory on ``engine``: a ``TransformersModel`` for ``transformers`` (or ``auto``
    without ctranslate2), else a ``LocalModel`` that loads each engine on first use."""
    from agents.models.local_model import resolve_engine

    if resolve_engine(engine) == "transformers":
        from agents.models.transformers_model import TransformersModel

        return TransformersModel(path, name=name, dtype=dtype, **kwargs)
    from agents.models.local_model import LocalModel

    return LocalModel(path, name=name, engine=engine, dtype=dtype, **kwargs)


def _embedded(name: str):
    def load(**kwargs: Any) -> Model:
        from agents.models.embedded import embedded_directory

        return local_model(embedded_directory(name), name=name, **kwargs)

    def weights_directory(_name: str) -> Path:
        from agents.models.embedded import embedded_directory

        return embedded_directory(name)

    load.weights_directory = weights_directory
    load.__doc__ = f"The embedded {name}, de-quantised once into the cache (agents/models/embedded.py)."
    return load


qwen2_5_coder_0_5b = _embedded("qwen2.5-coder-0.5b")
smollm2_135m = _embedded("smollm2-135m")


def reference(*, tasks=None, mapping=None, **_: Any) -> Model:
    """Answers each known task with its verified reference solution: the upper bound."""
    from agents.models.reference import ReferenceModel

    if tasks is None or mapping is None:
        raise UnknownModelError("the reference model answers known tasks: load_model('reference', "
                                "tasks=..., mapping=env.mapping)")
    return ReferenceModel(tasks, mapping)


reference.shared = False  # answers known tasks: no weights, nothing to keep


def vllm(model: str, *, dtype: str = "auto", engine: str = "transformers", **kwargs: Any) -> Model:
    """vLLM in process (GPU): ``vllm:<model directory or hub name>``."""
    from agents.models.vllm_model import VLLMModel

    if dtype != "auto":  # vLLM's own auto reads the checkpoint's dtype
        kwargs["dtype"] = dtype
    return VLLMModel(model, **kwargs)


def _vllm_weights(model: str) -> Path | None:
    return Path(model) if (Path(model) / "config.json").is_file() else None


vllm.weights_directory = _vllm_weights


def openai(rest: str, *, dtype: str = "auto", engine: str = "transformers", **kwargs: Any) -> Model:
    """Any OpenAI-compatible endpoint: ``openai:<base_url>#<model>``; the server keeps its dtype."""
    from agents.models.openai_model import OpenAIModel

    url, sep, model = rest.rpartition("#")
    if not sep or not url:
        raise UnknownModelError(f"openai:{rest}: write openai:<base_url>#<model>, "
                                "e.g. openai:http://127.0.0.1:8000/v1#smollm2-135m")
    return OpenAIModel(url, model, **kwargs)
