"""Open-RL, Closed-RL, the paper's RL ablations and Closed-SFT-RL (SE-Bench §4.2, Table 3).

All train the agent's own weights with GRPO against the sandbox verdict
(``learners.training.rl_train``): no collected data, no teacher; the reward is what the policy's own
open-book rollouts earn on the train tasks.

- ``open-rl``: rollouts and gradient on the prompt with the docs.
- ``closed-rl``: rollouts on the prompt with the docs, gradient on the same completion after
  the prompt without them. Off-policy by construction (the sampler saw other context than
  the policy being trained), so vLLM's importance-sampling correction is off.
- Presets of ``closed-rl`` (``--set preset=NAME``) reproduce Table 3's ablations; see
  ``PRESETS``. The paper's finding, the *RL Gap*: standard GRPO does not internalise the
  library closed-book, the SFT-like policy gradient does.
- ``closed-sft-rl``: Closed-SFT first (``learners.sft``, same collection), then Closed-RL from
  its model.

After ``evolve`` the agent's model is the trained one; the model directory
(``RUN/model`` from ``sebench evolve``) is a plain model directory. A killed run resumes from
its last checkpoint; a finished one is not redone; other settings on the same state refuse.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from agents.learner import EvolveReport, ParametricConfig, setting
from agents.prompts import first_prompt
from learners.base import WeightsLearner, load_state, progress_bar, save_state, warn_empty
from learners.parametric import ParametricLearner
from learners.sft import ClosedSFTLearner, SFTLearnerConfig
from learners.training.rl_settings import RLSettings
from learners.training.rl_train import train_rl
from learners.training.sft_train import SFTSettings
from sebench.errors import SebenchError, SettingError

# Table 3's ablations, as changes to the default (standard GRPO) settings. The SFT-like variant is
# "larger learning rate and batch": SFT's hyper-parameters (the SFT learner's learning rate, cosine
# schedule and 5% warm-up: SFTSettings) where GRPO takes a tenth of SFT's rate, as the official
# scripts do (SFT 1e-5, RL 1e-6 for Qwen3-8B; here 1e-4 and 1e-5, scaled up for 0.5B-class models and
# a few dozen steps), and 2x GRPO's prompts per step. Every variant takes two optimiser steps per
# rollout batch (mini-batches), so the policy moves within a batch and clipping can bind: at one
# step per batch rho is 1 and "+clip" would be "sft-like" by construction.
_SCHEDULE = {"steps_per_generation": 2}
_SFT_LIKE = {**_SCHEDULE, "advantage": "binary", "clip": False, "learning_rate": SFTSettings.learning_rate,
             "lr_scheduler": "cosine", "warmup_ratio": SFTSettings.warmup_ratio, "prompts_per_step": 4}
PRESETS: dict[str, dict[str, Any]] = {
    "grpo": {},                                                    # standard GRPO: group baseline, clipping
    "grpo-minibatch": _SCHEDULE,                                   # ... on Table 3's schedule
    "sft-like": _SFT_LIKE,                                         # A = reward in {0,1}, no baseline, no clip
    "sft-like+clip": {**_SFT_LIKE, "clip": True},                  # ... with PPO clipping
    "sft-like+grpo-adv": {**_SFT_LIKE, "advantage": "group"},      # ... with the group-normalised advantage
    "sft-like-small-lr": {**_SFT_LIKE, "learning_rate": RLSettings.learning_rate},     # "-larger-lr"
    "sft-like-small-batch": {**_SFT_LIKE, "prompts_per_step": RLSettings.prompts_per_step},  # "-larger-batch"
}


class RLLearnerError(SebenchError, RuntimeError):
    """RL cannot run as configured."""


@dataclass
class RLLearnerConfig(ParametricConfig):
    """Which train tasks to roll out on and where to keep the run; ``train`` holds GRPO's
    settings. Overrides may name fields of either: ``ClosedRLLearner(limit=8, max_steps=4)``;
    ``preset`` applies a named set of settings first, explicit ones win over it."""

    limit: int | None = setting(16, "First N train tasks.")
    docs_chars: int | None = setting(1200, "Per-function doc budget in the rollout prompts (paper: the whole doc).")
    preset: str | None = setting(None, "A named set of RL settings applied first (explicit settings win): "
                                       + ", ".join(PRESETS) + ".")
    train: RLSettings = field(default_factory=RLSettings)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.gather_model not in (None, "self"):
            raise SettingError(f"gather_model={self.gather_model!r}: RL rolls out with the policy it trains; "
                             "leave gather_model unset (Closed-SFT-RL takes one for its SFT stage)")
        if self.preset is not None and self.preset not in PRESETS:
            raise SettingError(f"unknown preset {self.preset!r}; known: {', '.join(PRESETS)}")
        needed = self.train.rollout_batch()
        if self.limit is not None and 1 <= self.limit < needed:  # checked before any work, not after the build
            raise SettingError(f"limit={self.limit}: one rollout batch needs {needed} train tasks (processes x "
                               f"prompts_per_step {self.train.prompts_per_step} x steps_per_generation "
                               f"{self.train.steps_per_generation}); --limit {needed} or more, or lower those "
                               "with --set prompts_per_step=1")

    @classmethod
    def from_overrides(cls, overrides: dict[str, Any]) -> RLLearnerConfig:
        own = {f.name for f in fields(cls)} - {"train"}
        mine = {k: v for k, v in overrides.items() if k in own}
        preset = mine.get("preset")
        if preset is not None and preset not in PRESETS:
            raise SettingError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
        settings = {**PRESETS.get(preset or "grpo", {}), **{k: v for k, v in overrides.items() if k not in own}}
        return cls(**mine, train=RLSettings.from_dict(settings))

    def changed(self) -> dict[str, Any]:
        """The settings that differ from the defaults (what a preset and overrides changed)."""
        default = asdict(RLSettings())
        return {k: v for k, v in asdict(self.train).items() if v != default[k]}


def rollout_prompts(env, tasks, docs_chars: int | None) -> list[dict]:
    """Per train task, the prompt with the docs (what rollouts see) and without (what
    Closed-RL's gradient sees), built as the agent builds its first prompt."""
    return [{"task_id": t.task_id,
             "prompt_open": first_prompt(env.observe(t, phase="train", mode="open", docs_chars=docs_chars)),
             "prompt_closed": first_prompt(env.observe(t, phase="train", mode="closed"))} for t in tasks]


class _RLLearner(ParametricLearner):
    """Shared by both variants; ``variant`` picks the prompt the gradient is taken after."""

    name = "rl"
    variant = "closed"
    config_class = RLLearnerConfig
    # the learner checker's tiny settings (learners.checker): one step of one rollout batch of 2 x 2
    checker_settings: dict[str, Any] = {"max_steps": 1, "prompts_per_step": 2, "num_generations": 2,
                                        "steps_per_generation": 1, "max_completion_length": 8, "save_steps": 100,
                                        "docs_chars": 200, "lora": True}
    saved = {"train": ("result", dict)}

    def evolve(self, agent, env) -> EvolveReport:
        return self.evolve_from(agent, env, self.resolve_base(agent))

    def evolve_from(self, agent, env, base: Path) -> EvolveReport:
        """Train from the weights in ``base`` (the agent's, or Closed-SFT's for Closed-SFT-RL)."""
        started = time.perf_counter()
        self.base_model = str(base)
        tasks = env.tasks("train")[: self.config.limit]
        if not tasks:
            raise RLLearnerError("the build has no train tasks to roll out on")
        prompts = rollout_prompts(env, tasks, self.config.docs_chars)
        self.release(agent)  # Closed-SFT-RL's agent holds the SFT model
        with progress_bar(f"{self.name}: GRPO steps", total=self.config.train.max_steps) as progress:
            train_rl(prompts, base, self.variant, self.state_dir / "train", self.model_dir, self.config.train,
                     env=env, progress=progress)  # returns a finished run's result without redoing it
        self.result = json.loads((self.state_dir / "train" / "train_result.json").read_text())
        # the rows an `accelerate launch -m learners.training.rl_train` rerun (or a GPU user) trains on
        (self.state_dir / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
        self.adopt(agent)
        result = self.result
        details = {"preset": self.config.preset or "grpo", "changed_settings": self.config.changed(),
                   "tasks": len(tasks), "steps": result["steps"], "resumed_from": result["resumed_from"],
                   "completions": result["completions"], "rollout_pass_rate": result["pass_rate"],
                   "reward_per_rollout": result["reward_per_rollout"], "dtype": result["dtype"],
                   "train_seconds": result["seconds"], "grading_seconds": result["grading_seconds"],
                   "rollout_seconds": result["rollout_seconds"], "grading_share": _share(result, "grading_seconds"),
                   "rollout_share": _share(result, "rollout_seconds"),
                   "rollout_tokens_per_second": result["rollout_tokens_per_second"],
                   "update_tokens_per_second": result["update_tokens_per_second"],
                   "peak_memory_mb": result["peak_memory_mb"], "model_dir": str(self.model_dir),
                   "generated_tokens": result.get("rollout_tokens")}
        report = EvolveReport(learner=self.name, episodes=result["completions"],
                              seconds=time.perf_counter() - started, details=details)
        if result["completions"] and not result["passed"]:
            warn_empty(report, f"none of {result['completions']} rollouts passed, so every advantage was 0 and "
                               "the policy gradient was zero (only a KL term, if any, moved the weights); use a "
                               "model that earns open-book rewards, more train tasks, or more samples")
        return report

    def state(self) -> dict:
        return {"learner": self.name, **super().state()}  # the learner first, as states saved before


def _share(result: dict, key: str) -> float:
    return round(result[key] / result["seconds"], 4) if result.get("seconds") else 0.0


class OpenRLLearner(_RLLearner):
    """GRPO with the docs in the prompt, for rollouts and gradient alike: the paper's Open-RL."""

    name = "open-rl"
    variant = "open"


class ClosedRLLearner(_RLLearner):
    """Rollouts with the docs, gradient without them: the paper's Closed-RL (and, with a
    preset, its Table 3 ablations)."""

    name = "closed-rl"
    variant = "closed"


_SHARED = ("limit", "docs_chars", "dtype")  # settings both stages of Closed-SFT-RL take
_SFT_ONLY = ("gather_model", "samples", "collect_only")  # collect_only is refused with a reason


class ClosedSFTRLLearner(WeightsLearner):
    """Closed-SFT, then Closed-RL from its model (the paper's Closed-SFT-RL).

    Settings: RL's by their names (``max_steps``, ``preset`` ...); the SFT stage's with the
    prefix ``sft_`` (``sft_max_steps``, ``sft_learning_rate``); ``limit``, ``docs_chars`` and
    ``dtype`` go to both; ``gather_model`` and ``samples`` to the SFT collection."""

    name = "closed-sft-rl"
    config_class = RLLearnerConfig  # and SFTLearnerConfig's settings, each with the prefix sft_
    checker_settings: dict[str, Any] = {**_RLLearner.checker_settings, "gather_model": "reference",
                                        "sft_max_steps": 1, "sft_batch_size": 2, "sft_max_length": 512,
                                        "sft_lora": True, "sft_warmup_ratio": 0.0}

    def __init__(self, **overrides: Any):
        sft = {k[4:]: v for k, v in overrides.items() if k.startswith("sft_")}
        sft |= {k: v for k, v in overrides.items() if k in _SHARED + _SFT_ONLY}
        rl = {k: v for k, v in overrides.items() if not k.startswith("sft_") and k not in _SFT_ONLY}
        self.state_root = overrides.get("state_dir")
        for key in ("state_dir", "model_dir"):  # the SFT stage lives under STATE_DIR/sft
            sft.pop(key, None)
        if sft.pop("collect_only", False):
            raise SettingError("closed-sft-rl trains RL from the SFT model, so collect_only cannot apply; "
                             "run closed-sft with collect_only for the data alone")
        self.rl = ClosedRLLearner(config=RLLearnerConfig.from_overrides(rl))
        sft.setdefault("limit", self.rl.config.limit)  # both stages on the same train tasks
        self.sft = ClosedSFTLearner(config=SFTLearnerConfig.from_overrides(sft))

    @property
    def limit(self) -> int | None:
        return self.rl.config.limit

    @limit.setter
    def limit(self, value: int | None) -> None:  # Agent.evolve(env, limit=N): both stages
        self.sft.config.limit = self.rl.config.limit = value

    def evolve(self, agent, env) -> EvolveReport:
        started = time.perf_counter()
        root = Path(self.state_root) if self.state_root else Path(self.rl.state_dir)
        self.sft.config.state_dir = str(root / "sft")
        self.sft.config.model_dir = str(root / "sft" / "model")
        self.rl.config.state_dir = self.rl.config.state_dir or str(root)
        first = self.sft.evolve(agent, env)
        second = self.rl.evolve_from(agent, env, self.sft.model_dir)
        details = {**second.details, "sft": {k: first.details.get(k) for k in
                                             ("gathered_with", "kept", "steps", "last_loss", "train_seconds")}}
        report = EvolveReport(learner=self.name, episodes=first.episodes + second.episodes,
                              seconds=time.perf_counter() - started, details=details)
        report.details.setdefault("warnings", []).extend(second.details.get("warnings", []))
        return report

    @property
    def model_dir(self) -> Path:
        return self.rl.model_dir

    def save(self, path) -> None:
        target = Path(path)
        self.sft.save(target / "sft")
        save_state(target, self.name, {**self.rl.state(), "sft_state": str((target / "sft").resolve())})

    def load(self, path) -> None:
        state = load_state(path, self.name)
        self.sft.load(state["sft_state"])
        self.rl.restore(state)
