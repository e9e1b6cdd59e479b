"""GRPO's settings (``RLSettings``) and the values they may take: what an RL run is asked to do,
apart from how it is done (``learners.training.rl_train``), so that the learners, the trainer class
and the CLIs read them without importing trl or the trainer."""

from __future__ import annotations

import os
from dataclasses import dataclass

from agents.learner import setting
from learners.training.train_settings import TrainerSettings

ADVANTAGES = ("group", "binary", "task-relative")
SCALES = ("group", "batch", "none")
NO_CLIP = 1e9  # an epsilon no ratio reaches: clipping off
LOSS_TYPES = ("dapo", "grpo", "bnpo", "dr_grpo")  # trl's clipped-ratio losses (where `clip` means PPO's)
ROLLOUT_ENGINES = ("grouped", "generate")
LR_SCHEDULERS = ("constant", "cosine")


@dataclass
class RLSettings(TrainerSettings):
    """GRPO settings (the shared ones, named as in ``SFTSettings``, in ``learners.training.train_settings``).
    Defaults are CPU-sized for qwen2.5-coder-0.5b (minutes on 2 cores)."""

    learning_rate: float = setting(1e-5, "Optimiser learning rate (a tenth of the SFT learner's 1e-4, the official "
                                         "scripts' RL : SFT ratio).")
    lr_scheduler: str = setting("constant", "constant | cosine: the learning rate's schedule after warm-up (the SFT "
                                            "learner's is cosine).")
    save_steps: int = setting(4, "Checkpoint every N steps (resume point of a killed run).")
    save_total_limit: int = setting(1, "Checkpoints kept on disk (a full one of a 0.5B model with Adam is ~7.5 GB).")
    logging_steps: int = setting(1, "Log every N steps.")
    max_steps: int = setting(8, "Optimiser steps.")
    prompts_per_step: int = setting(2, "Distinct train tasks per optimiser step.")
    num_generations: int = setting(4, "Completions per task (the group the baseline is taken over).")
    steps_per_generation: int = setting(1, "Optimiser steps per rollout batch. 1 (SE-Bench's recipe: train batch = "
                                           "mini-batch): the importance ratio stays 1, so the SFT-like estimator is "
                                           "SFT on the passing rollouts and clipping never binds; >1: the policy "
                                           "moves between the batch's steps (the RL log's ratio events show it).")
    num_iterations: int = setting(1, "Passes over each rollout batch.")
    max_completion_length: int = setting(160, "Tokens per rollout completion.")
    temperature: float = setting(1.0, "Sampling temperature of the rollouts.")
    advantage: str = setting("group", "group: reward - group mean (GRPO); binary: A = reward in {0, 1} (SFT-like); "
                                      "task-relative: normalised per key (task; Absolute-Zero's TRR++).")
    scale_rewards: str = setting("group", "group | batch | none: divide the group-centred advantage by the group / "
                                          "batch std, or not.")
    clip: bool = setting(True, "PPO clipping of the importance ratio at 1 +- epsilon.")
    epsilon: float = setting(0.2, "PPO clip range (ratio within 1 +- epsilon).")
    beta: float = setting(0.0, "KL penalty to the starting model (0: no reference model kept).")
    loss_type: str = setting("dapo", "trl's token-level normalisation: dapo | grpo | bnpo | dr_grpo.")
    keep_checkpoints: bool = setting(False, "A finished run deletes them: RUN/model holds the result.")
    rollout_engine: str = setting("grouped", "grouped: each distinct prompt prefilled once, finished rows leave "
                                             "the batch, per-row seeds (learners.training.grouped_rollout); generate: "
                                             "trl's padded model.generate (the path before issue 35).")
    use_vllm: bool = setting(False, "GPU only: rollouts with vLLM (imported by trl, lazily).")
    vllm_mode: str = setting("colocate", "colocate | server (`trl vllm-serve` on other GPUs).")

    def problems(self) -> list[str]:
        found = super().problems() + [f"{name} must be >= 1 (got {getattr(self, name)})" for name in
                                      ("max_steps", "prompts_per_step", "steps_per_generation", "num_iterations",
                                       "max_completion_length") if getattr(self, name) < 1]
        if self.num_generations < 2:  # trl's GRPOConfig refuses 1, whatever the advantage
            found.append(f"num_generations must be >= 2 (got {self.num_generations})")
        for name, allowed in (("loss_type", LOSS_TYPES), ("advantage", ADVANTAGES), ("scale_rewards", SCALES),
                              ("rollout_engine", ROLLOUT_ENGINES), ("lr_scheduler", LR_SCHEDULERS)):
            if getattr(self, name) not in allowed:
                found.append(f"{name} must be one of {', '.join(allowed)} (got {getattr(self, name)!r})")
        if not 0 < self.epsilon < 1:
            found.append(f"epsilon must be in (0, 1) (got {self.epsilon})")
        if self.beta < 0:
            found.append(f"beta must be >= 0 (got {self.beta})")
        if not self.temperature > 0:
            found.append(f"temperature must be > 0 (got {self.temperature})")
        if self.vllm_mode not in ("colocate", "server"):
            found.append(f"vllm_mode must be colocate or server (got {self.vllm_mode!r})")
        return found

    def rollout_batch(self) -> int:
        """Train tasks one rollout batch needs: processes x prompts_per_step x steps_per_generation
        (fewer and trl's sampler would drop the short batch and train 0 steps, saying nothing)."""
        return int(os.environ.get("WORLD_SIZE", "1")) * self.prompts_per_step * self.steps_per_generation

