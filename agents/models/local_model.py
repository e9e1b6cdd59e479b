"""A local model directory on the engine that suits each request: what ``--engine`` picks.

Engines (``ENGINES``):

* ``transformers``: every request through transformers (``TransformersModel``);
* ``ct2-int8`` / ``ct2-float32``: every request through CTranslate2 (``CT2Model``), samples
  unseeded;
* ``auto`` (the Agent's and the commands' default): greedy requests through CTranslate2 in
  float32 (``AUTO_QUANTIZATION``) where ctranslate2 is installed and can convert the model and
  the weights are float32 on a CPU, sampled ones through transformers, whose rows are seeded one
  by one (``agents.seeding``), so a seeded run stays reproducible to the sample; transformers
  alone elsewhere. Float32 because it gives the answers transformers gives (16 of 16 greedy
  answers identical on the 0.5B model), so ``auto`` makes runs faster and changes no result;
  int8 is faster still but changes answers, so it is a choice (``ct2-int8``) whose pass rate is
  measured beside transformers' (docs/results/engines.md). Where the weights run in bfloat16
  (a CPU with bf16 units), ``auto`` keeps transformers: a float32 engine would answer otherwise.

Each engine is loaded on its first request, so a greedy evaluation never loads the torch
weights and a sampled one never converts. ``fast_engine`` puts a model the agent already holds
(a ``TransformersModel``, a learner's trained one) behind the same switch: CTranslate2 converts
its directory on first use, and only while the weights in memory are still the ones read from
that directory (``TransformersModel.matches_directory``): a model trained in place answers on
its own weights. What only a torch model has (``.model``, ``.device``) is the transformers
engine's, loaded when asked.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

from agents.models.base import Completion, Messages
from agents.models.errors import ModelError
from sebench.errors import SettingError

ENGINES = ("auto", "transformers", "ct2-int8", "ct2-float32")
AUTO_QUANTIZATION = "float32"  # greedy answers as transformers' float32 gives them: docs/results/engines.md
_TORCH_ONLY = ("model", "device", "batch_size")


class EngineError(ModelError, ValueError):
    """An engine setting that is not one of ``ENGINES``."""


def check_engine(value: str) -> str:
    if value not in ENGINES:
        raise EngineError(f"engine {value!r} is not one of {', '.join(ENGINES)} (auto: CTranslate2 for greedy "
                          "answers where it is installed, transformers for seeded sampling)")
    return value


def ct2_installed() -> bool:
    return importlib.util.find_spec("ctranslate2") is not None


def resolve_engine(engine: str) -> str:
    """``auto`` stays ``auto`` where ctranslate2 is installed, else means ``transformers``."""
    check_engine(engine)
    return "transformers" if engine == "auto" and not ct2_installed() else engine


class LocalModel:
    """A model directory behind two engines, each loaded on first use.

    Args:
        path: the transformers model directory.
        name: the name results are reported under.
        engine: ``auto``, ``ct2-int8`` or ``ct2-float32`` (``transformers`` needs no wrapper).
        dtype, device: the transformers engine's settings (``TransformersModel``).
    """

    def __init__(self, path: str | Path, name: str | None = None, engine: str = "auto", dtype: str = "auto",
                 device: str | None = None, transformers_model: Any = None, **transformers_kwargs: Any):
        from agents.models.dtype import resolve_dtype

        self.path = Path(path)
        self.name = name or self.path.name
        self.engine = check_engine(engine)
        if self.engine == "transformers":
            raise EngineError("LocalModel wraps two engines: load a TransformersModel for engine transformers")
        self.quantization = AUTO_QUANTIZATION if self.engine == "auto" else self.engine.split("-", 1)[1]
        self._dtype, self._device, self._kwargs = dtype, device, transformers_kwargs
        self.dtype = resolve_dtype(dtype, device)  # the weights' type on the transformers engine
        self._ct2, self._transformers = None, transformers_model
        self._adopted = transformers_model is not None  # someone else's: close() leaves it alone
        if self._adopted:
            self.dtype = transformers_model.dtype
        self._ct2_failed: str | None = None
        self._tokenizer = None
        self._lock = threading.Lock()

    @property
    def supports_seeds(self) -> bool:
        """Seeded sampling goes to transformers under ``auto``; a ct2-only engine cannot seed."""
        return self.engine == "auto"

    def engine_for(self, temperature: float) -> str:
        """Which engine answers a request at ``temperature`` (recorded in results' configs)."""
        if not self._ct2_answers(temperature) or self._ct2_failed:
            return "transformers"
        return f"ct2-{self.quantization}"

    def _ct2_answers(self, temperature: float) -> bool:
        """Whether CTranslate2 takes a request at ``temperature`` (before knowing it can load)."""
        if self.engine == "auto" and (temperature > 0 or self.dtype != AUTO_QUANTIZATION):
            return False  # seeded sampling, or bfloat16 weights a float32 engine would answer otherwise
        return self._directory_current()

    def _directory_current(self) -> bool:
        """Whether converting ``path`` gives the weights this model answers with."""
        held = self._transformers
        return held is None or not callable(getattr(held, "matches_directory", None)) or held.matches_directory()

    def _ct2_model(self):
        from agents.models.ct2_model import CT2Model
        from agents.models.errors import ModelUnavailableError

        with self._lock:
            if self._ct2 is None and self._ct2_failed is None:
                try:
                    self._ct2 = CT2Model(self.path, name=self.name, quantization=self.quantization)
                except ModelUnavailableError as exc:
                    if self.engine != "auto":
                        raise
                    self._ct2_failed = str(exc)  # auto falls back to transformers, and says so
            return self._ct2

    def transformers(self):
        """The transformers engine (loaded on first use): what the server's continuous batching drives."""
        from agents.models.transformers_model import TransformersModel

        with self._lock:
            if self._transformers is None:
                self._transformers = TransformersModel(self.path, name=self.name, dtype=self._dtype,
                                                       device=self._device, **self._kwargs)
            return self._transformers

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None,
                 seeds: list[int] | None = None) -> list[list[Completion]]:
        if not self._ct2_answers(temperature):
            return self.transformers().generate(prompts, n=n, temperature=temperature,
                                                       max_tokens=max_tokens, stop=stop, seeds=seeds)
        ct2 = self._ct2_model()
        if ct2 is None:  # auto, and CTranslate2 could not take this model
            return self.transformers().generate(prompts, n=n, temperature=temperature,
                                                       max_tokens=max_tokens, stop=stop, seeds=seeds)
        if seeds is not None and temperature > 0:
            raise SettingError(f"engine {self.engine} cannot seed samples one by one; use --engine auto or "
                               "transformers")
        return ct2.generate(prompts, n=n, temperature=temperature, max_tokens=max_tokens, stop=stop)

    @property
    def tokenizer(self):
        """The model's tokenizer (both engines use it; loading it loads no weights)."""
        engine = self._transformers or self._ct2
        if engine is not None:
            return engine.tokenizer
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(self.path)
        return self._tokenizer

    def __getattr__(self, attribute: str):
        """What only the torch model has (``.model``, ``.device``), from the transformers engine."""
        if attribute not in _TORCH_ONLY:
            raise AttributeError(f"{type(self).__name__} has no attribute {attribute!r}")
        return getattr(self.transformers(), attribute)

    def close(self) -> None:
        """Free both engines' weights; a later request loads them again."""
        with self._lock:
            if self._ct2 is not None:
                self._ct2.close()
            self._ct2 = None
            if not self._adopted:
                self._transformers = None

    def __repr__(self) -> str:
        return f"LocalModel({self.path}, engine={self.engine})"


def fast_engine(model: Any, engine: str) -> LocalModel | None:
    """``model`` behind ``engine``'s switch, or None where nothing would change: the engine is
    ``transformers`` (or ``auto`` without ctranslate2), or ``model`` is not a CPU
    ``TransformersModel`` (a GPU runs transformers fast; other backends have their own engine)."""
    from agents.models.transformers_model import TransformersModel

    engine = resolve_engine(engine)
    if engine == "transformers" or type(model) is not TransformersModel or str(model.device) != "cpu":
        return None
    if engine == "auto" and model.dtype != AUTO_QUANTIZATION:  # bfloat16 weights: float32 would answer otherwise
        return None
    return LocalModel(model.path, name=model.name, engine=engine, transformers_model=model)
