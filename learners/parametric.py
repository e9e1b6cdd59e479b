"""``ParametricLearner``: what every learner that trains the agent's weights shares, written once.

Open-/Closed-SFT, Open-/Closed-RL, SFT self-play and Absolute-Zero differ in how they train; they
are alike in everything around it, which lives here: the constructor (a config, or keyword
overrides read by the config class), the agent's local weights resolved from its model's name
(the one place a learner asks the model registry), the agent's model dropped before a trainer
loads its own copy and replaced by the trained one after, and the saved state (the shared fields,
the learner's own results, the run's files copied beside it) read back by ``load``.

A new parametric learner declares ``name``, ``config_class`` (a ``ParametricConfig`` with a
``train`` field of trainer settings), ``saved`` (its own results in the state) and
``checker_settings``, and writes ``evolve``; docs/write-a-learner.md walks through one.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, ClassVar

from learners.base import RunDirectories, load_state, save_state
from learners.training.training_run import return_memory
from sebench.errors import SebenchError


class SFTLearnerError(SebenchError, RuntimeError):
    """SFT cannot run as configured (no local weights, nothing collected ...). Every parametric
    learner raises it for an agent model without local weights (``base_model_path``)."""


def base_model_path(model) -> Path:
    """The local weights behind a model: a backend with ``.path``, or a name, resolved without
    loading it (an embedded model, a directory, ``vllm:<directory>``). SFT needs them."""
    if isinstance(model, str | Path):
        from agents.models.registry import default_registry
        models = default_registry()

        name = str(model)
        path = models.weights_directory(name)
    else:
        name, path = model.name, getattr(model, "path", None)
    if path is None or not (Path(path) / "config.json").is_file():
        raise SFTLearnerError(f"SFT fine-tunes local weights, and the agent's model {name!r} has none here; "
                              "use an embedded model (smollm2-135m, qwen2.5-coder-0.5b), a model directory, or "
                              "vllm:<directory>")
    return Path(path)


class ParametricLearner(RunDirectories):
    """A learner that trains the agent's weights (``state_dir``, ``model_dir``: ``RunDirectories``).

    ``variant`` (None: the learner has none) is saved with the state; ``saved`` maps each key of the
    state a learner adds to ``(attribute, type of its empty value)``: the attribute starts empty,
    ``save`` writes it under the key and ``load`` reads it back."""

    config_class: ClassVar[type]
    variant: str | None = None
    saved: ClassVar[dict[str, tuple[str, type]]] = {}

    def __init__(self, config: Any = None, **overrides: Any):
        self.config = config or self.config_class.from_overrides(overrides)
        for attribute, empty in self.saved.values():
            setattr(self, attribute, empty())
        self.base_model = ""

    # -- the agent's model --------------------------------------------------------------------
    def resolve_base(self, agent) -> Path:
        """The agent's local weights (what training starts from), recorded as ``base_model``."""
        base = base_model_path(agent.model_spec)
        self.base_model = str(base)
        return base

    @staticmethod
    def release(agent) -> None:
        """Drop the agent's loaded model before training: the trainer loads its own copy."""
        if agent.unload_model():
            return_memory()

    @staticmethod
    def weights_model(directory: str | Path, name: str, dtype: str):
        """A model directory (a trained one, or the base weights) as the backend an agent answers with."""
        from agents.models.transformers_model import TransformersModel

        return TransformersModel(directory, name=name, dtype=dtype)

    def adopt(self, agent, directory: str | Path | None = None, name: str | None = None) -> None:
        """The agent answers with the weights in ``directory`` (default: ``model_dir``, the trained
        ones), named ``AGENT+LEARNER`` unless ``name`` says otherwise."""
        agent.model = self.weights_model(self.model_dir if directory is None else directory,
                                         name or f"{agent.name}+{self.name}", agent.dtype)

    # -- persistence ----------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """What ``save`` writes: the variant, the base weights, the model's place, the config and the
        learner's own results (``saved``)."""
        own = {} if self.variant is None else {"variant": self.variant}
        return {**own, "base_model": self.base_model, "model_dir": str(self.model_dir.resolve()),
                "config": asdict(self.config),
                **{key: getattr(self, attribute) for key, (attribute, _) in self.saved.items()}}

    def run_files(self, target: Path) -> list[Path]:
        """The run's files ``save`` copies beside the state in ``target`` (those that exist)."""
        return []

    def save(self, path) -> None:
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        for source in self.run_files(target):
            if source.is_file():
                shutil.copyfile(source, target / source.name)
        save_state(target, self.name, self.state())

    def load(self, path) -> None:
        self.restore(load_state(path, self.name))

    def restore(self, state: dict[str, Any]) -> None:
        """The config, base weights and results of a saved ``state`` (``load``; a learner made of
        stages restores each from its part)."""
        config = state["config"]
        config["train"] = self.settings_class().from_dict(config["train"])
        self.config = self.config_class(**config)
        self.config.model_dir = state["model_dir"]
        self.base_model = state["base_model"]
        for key, (attribute, _) in self.saved.items():
            setattr(self, attribute, state[key])

    @classmethod
    def settings_class(cls) -> type:
        """The trainer settings class of the config's ``train`` field."""
        return next(f for f in fields(cls.config_class) if f.name == "train").default_factory
