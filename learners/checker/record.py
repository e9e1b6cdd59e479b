"""What the learner checker watches while a learner evolves and while its agent is tested.

- ``RecordingEnv``: the env a learner's ``evolve`` is handed. It forwards everything to the
  real ``ZWCEnv`` and records the tasks each call carries (``observe``, ``check``,
  ``check_many``, ``docs_for`` ... any method given a ``Task``) and every split requested.
  A test split asked for during evolve is recorded with the line that asked (the framework's
  ``reference`` teacher binds the train split only in phase train, so any request is a leak).
- ``RecordingModel``: wraps a model backend and records every prompt it is sent.
- ``recording(recorder)``: while active, every model loaded by name (``agents.models``'
  registry) comes back wrapped, every ``datasets.Dataset.from_list``/``from_dict`` (how the
  trainers build their training sets) is recorded, and an audit hook records any open of the
  build's test split files (a learner reading ``single_test.jsonl`` behind the env's back).
- ``find_in_object`` / ``find_in_files``: where a string occurs in a learner's attributes
  (its memory) or in the bytes of the files under a directory (its saved state, sqlite and
  safetensors included).

Not isolated: the learner runs in this process and could undo any of it on purpose; the
checker looks for mistakes, not for an adversary (the sandbox is where adversaries are met).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

from envs.zwc import Task

TEST_SPLITS = ("single_test", "multiple_test")
_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKER_FILES = {os.path.join(_HERE, f"checker{suffix}.py") for suffix in ("", "_record", "_build", "_checks",
                                                                            "_effect", "_child")}
_ENV_DIR = os.path.join(os.path.dirname(_HERE), "envs") + os.sep
_STDLIB = os.path.dirname(os.__file__) + os.sep


@dataclass
class Recorder:
    """Everything seen during one check. ``stage`` labels prompts: ``evolve`` or ``test``."""

    canary: str
    split_of: dict[str, str]                      # task id -> split, for the checker's build
    watched_files: frozenset[str] = frozenset()   # absolute paths of the build's test split files
    stage: str = "evolve"
    prompts: list[tuple[str, str, str]] = field(default_factory=list)   # (stage, model, text)
    training_rows: int = 0
    training_leaks: list[str] = field(default_factory=list)             # snippets around the canary
    touched: dict[str, set[str]] = field(default_factory=dict)          # task id -> env methods that got it
    split_requests: list[tuple[str, str]] = field(default_factory=list)  # (split, where) of test splits
    file_reads: list[tuple[str, str]] = field(default_factory=list)     # (path, where)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def prompt(self, model: str, text: str) -> None:
        with self.lock:
            self.prompts.append((self.stage, model, text))

    def rows(self, rows: Any) -> None:
        text = repr(rows)
        with self.lock:
            self.training_rows += len(rows) if hasattr(rows, "__len__") else 1
            if self.canary in text:
                self.training_leaks.append(snippet(text, self.canary))

    def task(self, task: Task, method: str) -> None:
        with self.lock:
            self.touched.setdefault(task.task_id, set()).add(method)

    def touched_in(self, split: str) -> list[str]:
        return sorted(t for t in self.touched if self.split_of.get(t) == split)


def snippet(text: str, needle: str, width: int = 60) -> str:
    at = text.find(needle)
    return text[max(0, at - width): at + len(needle) + width].replace("\n", " ")


def where(skip: int = 2) -> str:
    """The first caller outside the checker, the env and the standard library: the line to fix."""
    frame = sys._getframe(skip)
    while frame is not None:
        name = frame.f_code.co_filename
        if name not in _CHECKER_FILES and not name.startswith((_ENV_DIR, _STDLIB)) and not name.startswith("<"):
            return f"{name}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return "an unknown caller"


class RecordingModel:
    """A model backend that records every prompt (then answers with the wrapped one)."""

    def __init__(self, inner: Any, recorder: Recorder):
        self.inner, self.recorder = inner, recorder
        # not "reference": the agent would rebind that name to a fresh, unrecorded reference model
        self.name = inner.name if inner.name != "reference" else "reference (recorded)"

    def generate(self, prompts, **kwargs):
        for prompt in prompts:
            self.recorder.prompt(self.name, "\n".join(str(m.get("content", "")) for m in prompt))
        return self.inner.generate(prompts, **kwargs)

    def __getattr__(self, name: str) -> Any:  # path, tokenizer, model, dtype ... of the wrapped backend
        return getattr(self.__dict__["inner"], name)


def unwrap(model: Any) -> Any:
    while isinstance(model, RecordingModel):
        model = model.inner
    return model


class RecordingEnv:
    """The env a learner evolves in: the real one, with every task and split it is asked about recorded."""

    def __init__(self, env: Any, recorder: Recorder):
        object.__setattr__(self, "_env", env)
        object.__setattr__(self, "_recorder", recorder)

    def tasks(self, split: str) -> list[Task]:
        if split in TEST_SPLITS:
            with self._recorder.lock:
                self._recorder.split_requests.append((split, where()))
        return self._env.tasks(split)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._env, name)
        if not callable(value) or name.startswith("_") or isinstance(value, type):
            return value
        recorder = self._recorder

        def recorded(*args: Any, **kwargs: Any) -> Any:
            for arg in (*args, *kwargs.values()):
                for task in _tasks_in(arg):
                    recorder.task(task, name)
            return value(*args, **kwargs)

        return recorded

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._env, name, value)  # learners set env.phase / env.docs_chars today

    def __repr__(self) -> str:
        return f"RecordingEnv({self._env!r})"


def _tasks_in(value: Any, depth: int = 0) -> Iterator[Task]:
    if isinstance(value, Task):
        yield value
    elif depth < 2 and isinstance(value, list | tuple):
        for item in value:
            yield from _tasks_in(item, depth + 1)


# -- process-wide instrumentation, active for one recorder at a time ---------------------------
_ACTIVE: Recorder | None = None
_HOOKED = False


def _audit(event: str, args: tuple) -> None:
    recorder = _ACTIVE
    if recorder is None or event != "open" or not args:
        return
    path = args[0]
    if isinstance(path, str | bytes | os.PathLike):
        text = os.path.abspath(os.fsdecode(path))
        if text in recorder.watched_files:
            with recorder.lock:
                recorder.file_reads.append((text, where(2)))


@contextmanager
def recording(recorder: Recorder) -> Iterator[Recorder]:
    """Wrap models loaded by name, record training sets built with ``datasets``, and watch the
    test split files, until the block ends."""
    global _ACTIVE, _HOOKED
    import datasets

    from agents.models import registry

    if not _HOOKED:
        sys.addaudithook(_audit)  # audit hooks cannot be removed: it does nothing while _ACTIVE is None
        _HOOKED = True
    def wrap(model: Any) -> Any:
        return RecordingModel(model, recorder)

    originals = {name: datasets.Dataset.__dict__[name] for name in ("from_list", "from_dict")}

    inside = threading.local()  # from_list calls from_dict: record the outer call only

    def recorded_constructor(original):
        def build(cls, data, *args: Any, **kwargs: Any):
            if getattr(inside, "depth", 0) == 0:
                recorder.rows(data)
            inside.depth = getattr(inside, "depth", 0) + 1
            try:
                return original.__func__(cls, data, *args, **kwargs)
            finally:
                inside.depth -= 1
        return classmethod(build)

    for name, original in originals.items():
        setattr(datasets.Dataset, name, recorded_constructor(original))
    _ACTIVE = recorder
    try:
        with registry.wrapping_loads(wrap):
            yield recorder
    finally:
        _ACTIVE = None
        for name, original in originals.items():
            setattr(datasets.Dataset, name, original)


# -- where a string went -----------------------------------------------------------------------
_OPAQUE_MODULES = ("torch", "transformers", "trl", "peft", "chromadb", "sentence_transformers", "numpy", "datasets",
                   "accelerate", "langgraph", "threading", "concurrent", "_thread", "httpx", "tokenizers", "queue",
                   "sqlite3", "rich", "logging")
# ours that hold no learner state: the env (its tasks are what is looked for), docs, the agent
_OPAQUE_OURS = {"envs.zwc.env", "envs.zwc.sandbox.pool", "envs.zwc.library.docs", "envs.zwc.library.names",
                "agents.agent", "agents.batching"}


def _opaque(obj: Any) -> bool:
    """Objects not searched: code, models, envs, recorders and third-party internals (weights
    and databases are searched on disk, after ``save``)."""
    if isinstance(obj, ModuleType | FunctionType | type | RecordingEnv | Recorder | RecordingModel):
        return True
    module = type(obj).__module__ or ""
    if module.startswith(_OPAQUE_MODULES) or module in _OPAQUE_OURS:
        return True
    return callable(getattr(obj, "generate", None))  # a model backend


def find_in_object(root: Any, needle: str, label: str = "learner", budget: int = 200_000) -> list[str]:
    """Attribute paths under ``root`` (dicts, lists, dataclasses, plain objects) whose string holds ``needle``."""
    found, seen, stack = [], set(), [(root, label)]
    while stack and budget > 0:
        obj, path = stack.pop()
        budget -= 1
        if isinstance(obj, str):
            if needle in obj:
                found.append(path)
            continue
        if isinstance(obj, bytes | bytearray):
            if needle.encode() in obj:
                found.append(path)
            continue
        if obj is None or isinstance(obj, int | float | complex) or id(obj) in seen or _opaque(obj):
            continue
        seen.add(id(obj))
        if isinstance(obj, dict):
            stack += [(k, f"{path} key") for k in obj if isinstance(k, str)]
            stack += [(v, f"{path}[{k!r}]") for k, v in obj.items()]
        elif isinstance(obj, list | tuple | set | frozenset):
            stack += [(v, f"{path}[{i}]") for i, v in enumerate(obj)]
        else:
            attributes = dict(getattr(obj, "__dict__", {}))
            for slot in getattr(type(obj), "__slots__", ()):
                if isinstance(slot, str) and hasattr(obj, slot):
                    attributes[slot] = getattr(obj, slot)
            stack += [(v, f"{path}.{k}") for k, v in attributes.items()]
    return found


def find_in_files(root: str | Path, needle: str, chunk: int = 8 << 20) -> list[str]:
    """Files under ``root`` whose bytes hold ``needle`` (read in chunks: model files are large)."""
    target, found = needle.encode(), []
    base = Path(root)
    if not base.exists():
        return found
    for path in sorted(p for p in base.rglob("*") if p.is_file() and not p.is_symlink()):
        tail = b""
        with path.open("rb") as handle:
            while block := handle.read(chunk):
                if target in tail + block:
                    found.append(str(path))
                    break
                tail = block[-len(target):]
    return found
