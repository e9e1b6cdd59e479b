"""The Learner protocol: how the agent loop talks to whatever changes the agent.

The loop knows learners only through this protocol (``agents`` never imports
``learners``): ``context`` adds text to a prompt, ``observe`` sees each finished episode,
``evolve`` is the training phase, ``save``/``load`` persist state.

A learner's settings are a dataclass extending ``LearnerConfig``: the fields every caller
may set (``limit``, ``gather_model``, ``state_dir``) are declared once here, with help text
(as trl's configs carry it), so ``sebench learners`` can list them and ``Agent.evolve(env,
limit=N)`` can honour ``limit`` for any learner. ``parametric`` says whether the learner
trains weights (and then writes a model directory, ``config.model_dir``).

A learner that changes at test time (ACE online) may also offer ``evaluation()``, a context
manager ``evaluate`` holds open for the whole run (``evaluation_session``): what a task's prompt
shows must not depend on how far its own samples, or other tasks, have got.

The other side of the protocol, what a learner (and ``evaluate``) may use of the agent, is
``AgentLike``: a Protocol, not ``agents.agent.Agent``, so that this module, ``evaluate`` and
``eval_config`` import no agent (the agent imports them: tests/test_import_graph.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from sebench.errors import SettingError

if TYPE_CHECKING:
    from collections.abc import Callable

    from agents.models.base import Model
    from agents.trajectory import Trajectory
    from envs.zwc import Observation, Task, ZWCEnv


def setting(default: Any, help: str) -> Any:  # noqa: A002 - the word trl's configs use
    """A config field with its help text: ``max_steps: int = setting(8, "optimiser steps")``."""
    return field(default=default, metadata={"help": help})


SELF_GATHERED = (None, "", "self")  # gather_model values that mean the agent's own model


def teacher_of(gather_model: str | None, own: str | None = None) -> str | None:
    """The teacher a learner gathered its train data with (``reference``, a backend name), None
    when the agent's own model gathered it: ``self`` / None, or ``own`` (the agent's model) by name
    or served by vLLM (``vllm:<own>``, the same weights on a faster engine). A row trained on a
    teacher's answers is distillation, not the paper's self-gathered learner, so the comparisons
    and the report name it after the teacher (``teacher_label``)."""
    if gather_model in SELF_GATHERED or (own is not None and str(gather_model).removeprefix("vllm:") == str(own)):
        return None
    return str(gather_model)


def teacher_label(name: str, teacher: str | None) -> str:
    """``closed-sft (teacher: reference)`` for a teacher-trained row, the bare name otherwise."""
    return f"{name} (teacher: {teacher})" if teacher else name


@dataclass
class LearnerConfig:
    """What every learner's config holds; subclasses add their own settings (and may change
    a default, e.g. SFT's ``limit``)."""

    limit: int | None = setting(None, "Train tasks used: the first N of the train split (None: all of it).")
    gather_model: str | None = setting(None, "Model that answers train tasks during evolve: 'reference' (the "
                                             "verified solutions), a backend name, or None / 'self' for the "
                                             "agent's own model.")
    state_dir: str | None = setting(None, "Where the learner keeps its state while it evolves (resumes from "
                                          "here after a kill); None: a temporary directory or memory only.")

    def __post_init__(self) -> None:
        if self.limit is not None and (isinstance(self.limit, bool) or not isinstance(self.limit, int)
                                       or self.limit < 1):
            raise SettingError(f"limit must be an integer >= 1 or None, got {self.limit!r}")


@dataclass
class ParametricConfig(LearnerConfig):
    """Learners that train weights also say where the trained model goes."""

    model_dir: str | None = setting(None, "Where the trained model is written (a plain model directory, LoRA "
                                          "merged); None: STATE_DIR/model.")


def set_limit(learner: Learner, limit: int) -> None:
    """``Agent.evolve(env, limit=N)``: a ``limit`` attribute of the learner's own (a learner made of
    stages sets each), else its config's ``limit``; a named error for a learner with neither."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise SettingError(f"limit must be an integer >= 1, got {limit!r}")
    if hasattr(learner, "limit"):
        learner.limit = limit
    elif hasattr(getattr(learner, "config", None), "limit"):
        learner.config.limit = limit
    else:
        raise TypeError(f"learner {getattr(learner, 'name', learner)!r} has no limit: give it a config extending "
                        "agents.learner.LearnerConfig (learner.config.limit), which evolve reads for its train tasks")


@dataclass
class SettingHelp:
    name: str
    type: str
    default: Any
    help: str


def config_help(config_cls: type) -> list[SettingHelp]:
    """Every setting of a config dataclass (nested dataclass fields flattened: SFT's and RL's
    ``train`` settings are set by their own names), with type, default and help."""
    rows = []
    for f in fields(config_cls):
        default = f.default if f.default is not MISSING else (
            f.default_factory() if f.default_factory is not MISSING else None)
        if is_dataclass(default):
            rows += config_help(type(default))
            continue
        rows.append(SettingHelp(f.name, str(f.type), default, f.metadata.get("help", "")))
    return rows


@dataclass
class EvolveReport:
    """What a training phase did."""

    learner: str
    episodes: int = 0
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Learner(Protocol):
    name: str

    def context(self, obs: Observation) -> str: ...

    def observe(self, trajectory: Trajectory) -> None: ...

    def evolve(self, agent: AgentLike, env: ZWCEnv) -> EvolveReport: ...

    def save(self, path) -> None: ...

    def load(self, path) -> None: ...


class AgentLike(Protocol):
    """What learners and ``evaluate`` use of the agent (``agents.agent.Agent`` is the one there is):
    its model and the settings every answer is drawn with, its episodes, and its learner."""

    model: Model  # the loaded model (loads it on first use); a parametric learner sets its trained one
    model_spec: str | Model
    name: str
    dtype: str
    preset: str
    temperature: float
    max_tokens: int
    max_turns: int
    max_searches: int
    concurrency: int
    learner: Learner | None

    @property
    def weights_dtype(self) -> str | None: ...

    def engine_for(self, temperature: float) -> str | None: ...

    def unload_model(self) -> bool: ...

    def bind_reference(self, env: ZWCEnv, splits: tuple[str, ...] = ...) -> None: ...

    def run_episodes(self, env: ZWCEnv, items: list[tuple[Task, int]], phase: str, mode: str,
                     temperature: float | None = None, on_done: Callable[[Trajectory], None] | None = None,
                     docs_chars: Any = ...) -> list[Trajectory]: ...

    def evolve(self, env: ZWCEnv, limit: int | None = None) -> EvolveReport: ...


@contextlib.contextmanager
def evaluation_session(learner: Learner | None) -> Iterator[None]:
    """The learner's ``evaluation()`` context for the whole of one evaluation, if it has one (an
    optional part of the protocol: learners that never change at test time need none)."""
    session = getattr(learner, "evaluation", None)
    if session is None:
        yield
        return
    with session():
        yield
