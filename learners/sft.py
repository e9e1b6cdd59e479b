"""Open-SFT and Closed-SFT (SE-Bench §4): fine-tune on rejection-sampled open-book trajectories.

Both learners collect the same data (``learners.training.sft_data.collect``: train tasks, docs in the
prompt, passing answers only) and train with trl (``learners.training.sft_train.train_sft``). By default
the agent's own model answers (rejection sampling, as the paper gathers); ``gather_model`` names a
teacher instead (``reference``: one verified solution per task, which needs no capable model but
is distillation, not the paper's Closed-SFT: the comparisons name such a row after its teacher,
``closed-sft (teacher: reference)``, ``learners.base.teacher_of``). They
differ in one thing: Open-SFT trains on (prompt *with* the docs, response), Closed-SFT on
(the same prompt *without* the docs, the same response). The paper finds the first gives 0%
closed-book and the second does not (the Open-Book Paradox): the docs in the prompt let the
model copy names instead of storing them.

After ``evolve`` the agent's model is the fine-tuned one (``agent.model`` is replaced), and
the model directory (``config.model_dir``, ``RUN/model`` from ``sebench evolve``) loads
later by path. Everything is resumable: collection skips finished tasks, training restarts
from its last checkpoint, and a finished training is not redone.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agents.learner import EvolveReport, ParametricConfig, setting
from learners.base import gathering_agent, progress_bar, teacher_of
from learners.parametric import ParametricLearner, SFTLearnerError
from learners.training.sft_data import collect, write_report
from learners.training.sft_train import SFTSettings, train_sft
from learners.training.training_run import RESULT_FILE
from sebench.errors import SettingError


@dataclass
class SFTLearnerConfig(ParametricConfig):
    """What to collect and where to keep it; ``train`` holds the optimiser settings.

    Keyword overrides given to the learner may name fields of either class:
    ``ClosedSFTLearner(limit=48, max_steps=60, lora=True)``.
    """

    limit: int | None = setting(48, "First N train tasks (None: the whole train split, as the paper).")
    samples: int = setting(1, "Rollouts per task; the passing ones are kept (rejection sampling).")
    gather_model: str | None = setting(None, "Who answers the train tasks: None / 'self' for the agent's own model "
                                             "(the paper: its open-book rollouts, kept when they pass); a teacher: "
                                             "'reference' (verified solutions) or any backend ('vllm:...', "
                                             "'openai:...'), and the row is then named after it.")
    docs_chars: int | None = setting(1200, "Per-function doc budget in open prompts (paper: None, the whole doc).")
    max_tokens: int | None = setting(None, "Rollout answer length; None = the agent's.")
    collect_only: bool = setting(False, "Stop after collection (then train with accelerate launch -m "
                                        "learners.training.sft_train).")
    train: SFTSettings = field(default_factory=SFTSettings)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.samples < 1:
            raise SettingError(f"need samples >= 1, got samples={self.samples}")

    @classmethod
    def from_overrides(cls, overrides: dict[str, Any]) -> SFTLearnerConfig:
        own = {f.name for f in fields(cls)} - {"train"}
        mine = {k: v for k, v in overrides.items() if k in own}
        train = SFTSettings.from_dict({k: v for k, v in overrides.items() if k not in own})
        return cls(**mine, train=train)


class _SFTLearner(ParametricLearner):
    """Shared by both variants; ``variant`` picks the prompt the response is trained after."""

    name = "sft"
    variant = "closed"
    config_class = SFTLearnerConfig
    # the learner checker's tiny settings (learners.checker), seconds to a minute on a CPU. LoRA: the
    # optimiser state of full fine-tuning (~2 GB for 135M) is most of a tiny run's memory; 1 step of
    # warmup would be lr 0, no update
    checker_settings: dict[str, Any] = {"gather_model": "reference", "docs_chars": 300, "max_steps": 1,
                                        "batch_size": 2, "max_length": 512, "save_steps": 100, "logging_steps": 1,
                                        "lora": True, "warmup_ratio": 0.0}
    saved = {"collect": ("collect_report", dict), "train": ("train_result", dict)}

    def evolve(self, agent, env) -> EvolveReport:
        started = time.perf_counter()
        base = self.resolve_base(agent)
        gatherer = gathering_agent(agent, self.config.gather_model,
                                   max_tokens=self.config.max_tokens or agent.max_tokens)
        tasks = env.tasks("train")[: self.config.limit]
        data = self.state_dir / "trajectories.jsonl"
        with progress_bar(f"{self.name}: collecting with {gatherer.name}") as progress:
            report = collect(gatherer, env, tasks, data, samples=self.config.samples, progress=progress,
                             docs_chars=self.config.docs_chars)
        write_report(report, self.state_dir / "collect_report.json")
        self.collect_report = {**report.__dict__, "acceptance": round(report.acceptance, 4)}
        if report.in_file == 0:
            raise SFTLearnerError(f"{gatherer.name} passed none of {report.attempts} open-book attempts on "
                                  f"{len(tasks)} train tasks, so there is nothing to fine-tune on; gather with a "
                                  "teacher (gather_model='reference' or a stronger model) or raise samples")
        if self.config.collect_only:
            return EvolveReport(learner=self.name, episodes=report.attempts, seconds=time.perf_counter() - started,
                                details={"gathered_with": gatherer.name, "kept": report.in_file, "collect_only": True,
                                         "teacher": teacher_of(self.config.gather_model, str(base)), "data": str(data)})
        self.release(agent)
        self.train_result = self._train(data, base)  # a finished training is returned, not redone
        self.adopt(agent)
        details = {"gathered_with": gatherer.name, "teacher": teacher_of(self.config.gather_model, str(base)),
                   "kept": report.in_file, "acceptance": round(report.acceptance, 3),
                   **{k: self.train_result.get(k) for k in ("samples", "too_long_dropped", "steps", "resumed_from",
                                                             "dtype", "tokens_per_second", "peak_memory_mb",
                                                             "first_loss", "last_loss")},
                   "train_seconds": self.train_result.get("seconds"), "model_dir": str(self.model_dir),
                   "trained_tokens": self.train_result.get("tokens"), "generated_tokens": report.generated_tokens}
        return EvolveReport(learner=self.name, episodes=report.attempts, seconds=time.perf_counter() - started,
                            details=details)

    def _train(self, data: Path, base: Path) -> dict:
        train_sft(data, base, self.variant, self.state_dir / "train", self.model_dir, self.config.train)
        return json.loads((self.state_dir / "train" / RESULT_FILE).read_text())

    def run_files(self, target: Path) -> list[Path]:
        """The collected data, beside the state unless it is already there."""
        return [self.state_dir / name for name in ("trajectories.jsonl", "collect_report.json")
                if (self.state_dir / name).resolve() != (target / name).resolve()]


class OpenSFTLearner(_SFTLearner):
    """Trains on (prompt with the docs, response): the paper's Open-SFT."""

    name = "open-sft"
    variant = "open"


class ClosedSFTLearner(_SFTLearner):
    """Trains on (prompt without the docs, same response): the paper's Closed-SFT."""

    name = "closed-sft"
    variant = "closed"
