"""Model names -> backends: one registry, filled from the ``sebench.models`` entry-point group.

Ours are entries like any third party's (``pyproject.toml``; the factories live in
``factories.py``): ``qwen2.5-coder-0.5b`` (embedded, offline, capable: the default),
``smollm2-135m`` (embedded, offline, fast), ``reference`` (needs ``tasks`` and ``mapping``), and
the prefixes ``vllm:<model>`` and ``openai:<base_url>#<model>``; a local model directory needs no
entry. A package adds a name or a prefix with one line of its ``pyproject.toml``::

    [project.entry-points."sebench.models"]
    "mine:" = "my_package.backend:make"    # load_model("mine:anything") -> make("anything", ...)

``dtype`` (``auto`` | ``bfloat16`` | ``float32``) picks the weights' type of local backends; a
remote server keeps its own. ``engine`` (``local_model.ENGINES``) picks what generates for a
local model: ``transformers`` (``load_model``'s default: a ``TransformersModel``), or ``auto``
(``Agent``'s and the commands' default: CTranslate2 for greedy answers where it is installed,
transformers for seeded sampling), ``ct2-int8``, ``ct2-float32``. Tests build a registry of their
own with ``ModelRegistry(entry_points=False)`` (its own pool of loaded models too), and hand it to
``Agent(registry=...)``.

The lookup is an ``EntryPointRegistry`` (``sebench.registry``): it caches no entry point, so a
package installed while the process runs is seen at once. What it does cache is loaded models, in
a ``ModelPool`` (``agents.models.pool``): ``PROCESS_MODELS`` is the process's, shared by every
``default_registry()``, which holds nothing else (built where a lookup happens: no registry lives
on a module global).

An instrument that must see every model loaded by name (the learner checker records the prompts a
learner sends) wraps them with ``wrapping_loads(wrapper)`` instead of patching a registry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

from agents.models.base import Model
from agents.models.dtype import check_dtype, resolve_dtype
from agents.models.errors import UnknownModelError
from agents.models.factories import local_model
from agents.models.local_model import check_engine, resolve_engine
from agents.models.pool import ModelPool
from sebench import plugins
from sebench.registry import EntryPointRegistry

Factory = Callable[..., Model]
DEFAULT_MODEL = "qwen2.5-coder-0.5b"  # Agent()'s model: the capable embedded one


@dataclass(frozen=True)
class ModelEntry:
    """A registered name or prefix (a name ending in ``:``) and where it comes from."""

    name: str
    origin: str

    @property
    def prefix(self) -> bool:
        return self.name.endswith(":")


class ModelRegistry(EntryPointRegistry):
    """Names and prefixes -> factories (the ``sebench.models`` group if ``entry_points``, and names
    ``register``-ed here), and the ``pool`` the models it loads by name are shared in (its own
    unless given one)."""

    def __init__(self, entry_points: bool = False, pool: ModelPool | None = None) -> None:
        super().__init__(plugins.MODELS, kind="model", error=UnknownModelError)
        self._entry_points = entry_points
        self._origins: dict[str, str] = {}
        self.pool = pool if pool is not None else ModelPool()

    def register(self, name: str, factory: Factory, origin: str = "registered in this process") -> None:
        """``name`` (or a prefix: a name ending in ``:``) -> ``factory``; wins over an entry point."""
        if not name or name != name.strip():
            raise UnknownModelError(f"a model name must be non-empty without surrounding spaces, not {name!r}")
        self.extra[name] = factory
        self._origins[name] = origin

    def points(self) -> dict[str, EntryPoint]:
        return super().points() if self._entry_points else {}

    def entries(self) -> list[ModelEntry]:
        """Every registered name and prefix, with its origin (entry points are not imported)."""
        found = {name: plugin.origin for name, plugin in self.describe().items()}
        found.update(self._origins)
        return [ModelEntry(name, origin) for name, origin in sorted(found.items())]

    def unknown(self, name: str) -> Exception:
        known = ", ".join(e.name + ("<…>" if e.prefix else "") for e in self.entries())
        return self.error(f"unknown model {name!r}; use one of {known}, or a model directory "
                          f"(a package adds names through the {plugins.MODELS!r} entry-point group)")

    def _factory(self, key: str) -> Factory | None:
        # a third party's import error surfaces here, for its own entries only
        return self[key] if key in self else None

    def find(self, spec: str) -> tuple[str, Factory, str | None] | None:
        """(entry name, factory, rest after a prefix or None) for ``spec``, or None."""
        factory = self._factory(spec)
        if factory is not None and not spec.endswith(":"):
            return spec, factory, None
        for entry in sorted((e for e in self.entries() if e.prefix), key=lambda e: -len(e.name)):
            if spec.startswith(entry.name):
                factory = self._factory(entry.name)
                if factory is not None:
                    return entry.name, factory, spec[len(entry.name):]
        return None

    def load(self, name: str, *, cache: bool = True, dtype: str = "auto", engine: str = "transformers",
             **kwargs: Any) -> Model:
        """The backend for ``name``; a shared named model is loaded once per process, dtype and engine
        (then passed through every wrapper ``wrapping_loads`` holds active)."""
        model = self._load(name, cache=cache, dtype=dtype, engine=engine, **kwargs)
        with _WRAPPERS_LOCK:
            wrappers = tuple(_WRAPPERS)
        for wrap in wrappers:
            model = wrap(model)
        return model

    def _load(self, name: str, *, cache: bool, dtype: str, engine: str, **kwargs: Any) -> Model:
        check_dtype(dtype)
        engine = resolve_engine(check_engine(engine))
        found = self.find(name)
        if found is None:
            if Path(name).is_dir():
                return local_model(name, dtype=dtype, engine=engine, **kwargs)
            raise self.unknown(name)
        key_name, factory, rest = found
        if rest is not None:
            return factory(rest, dtype=dtype, engine=engine, **kwargs)
        if not cache or not getattr(factory, "shared", True):
            return factory(dtype=dtype, engine=engine, **kwargs)
        key = (key_name, resolve_dtype(dtype, kwargs.get("device")), engine)  # auto and what it means share one
        return self.pool.share(key, lambda: factory(dtype=dtype, engine=engine, **kwargs))

    def weights_directory(self, spec: str) -> Path | None:
        """The local weights behind ``spec`` without loading a model (a directory, an embedded
        model, ``vllm:<directory>``), or None where its weights are not ours."""
        found = self.find(spec)
        if found is None:
            return Path(spec) if Path(spec).is_dir() else None
        name, factory, rest = found
        locate = getattr(factory, "weights_directory", None)
        return None if locate is None else locate(name if rest is None else rest)

    def has_local_weights(self, spec: str) -> bool:
        """Whether ``spec``'s weights run here (checked without de-quantising or loading them)."""
        found = self.find(spec)
        if found is None:
            return Path(spec).is_dir()
        name, factory, rest = found
        locate = getattr(factory, "weights_directory", None)
        return locate is not None and (rest is None or locate(rest) is not None)

    def release(self, model: Model) -> bool:
        """One user of a cached ``model`` is done with it (``Agent.close``); the pool drops the
        model when its last user is, so its memory can go. True when it was dropped. A model the
        registry does not cache (a directory, a remote backend) is not its to keep: False."""
        return self.pool.release(model)

    def cached(self) -> list[tuple[str, str]]:
        """The (name, dtype) of every model held now (one entry per engine it is held on)."""
        return sorted((name, dtype) for name, dtype, _engine in self.pool.held())


PROCESS_MODELS = ModelPool()  # the models this process holds, shared by every agent loading one by name
_WRAPPERS: list[Callable[[Model], Model]] = []  # wrapping_loads' active wrappers, oldest first
_WRAPPERS_LOCK = threading.Lock()


def default_registry() -> ModelRegistry:
    """The installed models (the ``sebench.models`` group, read at each lookup) over the process's
    pool of loaded models: cheap to build, so built wherever a lookup happens."""
    return ModelRegistry(entry_points=True, pool=PROCESS_MODELS)


@contextmanager
def wrapping_loads(wrapper: Callable[[Model], Model]) -> Iterator[None]:
    """While the block runs, every model any registry loads comes back as ``wrapper(model)`` (in
    every thread). For instruments that must see what a learner sends its models."""
    with _WRAPPERS_LOCK:
        _WRAPPERS.append(wrapper)
    try:
        yield
    finally:
        with _WRAPPERS_LOCK:
            _WRAPPERS.remove(wrapper)


def load_model(name: str, **kwargs: Any) -> Model:
    return default_registry().load(name, **kwargs)


def release_model(model: Model) -> bool:
    """Give back a model ``load_model`` handed out (see ``ModelRegistry.release``)."""
    return PROCESS_MODELS.release(model)
