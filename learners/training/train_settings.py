"""The settings every trainer of ours shares (``SFTSettings``, ``RLSettings``): declared once.

A name in both means the same thing (the RL issue asks for that), so it is one field here with
one help text and one validation. A trainer whose default differs (RL checkpoints more often, a
0.5B model with Adam being ~7.5 GB a checkpoint) redeclares the field with its own default and
help; the check below still applies.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from agents.learner import setting
from agents.models.dtype import DTYPES
from sebench.errors import SettingError

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class TrainerSettings:
    """Optimiser, LoRA, checkpoint and precision settings; subclasses add their trainer's own."""

    learning_rate: float = setting(1e-4, "Optimiser learning rate.")
    warmup_ratio: float = setting(0.0, "Fraction of the steps spent warming up.")
    lora: bool = setting(False, "Train LoRA adapters (merged into RUN/model, a plain model directory) instead of all "
                                "weights; off: full fine-tuning, as the paper.")
    lora_r: int = setting(16, "LoRA rank.")
    lora_alpha: int = setting(32, "LoRA alpha.")
    lora_dropout: float = setting(0.05, "LoRA dropout.")
    lora_targets: list[str] = field(default_factory=lambda: list(LORA_TARGETS),
                                    metadata={"help": "Modules LoRA adapts."})
    save_steps: int = setting(20, "Checkpoint every N steps (resume point of a killed run).")
    save_total_limit: int = setting(2, "Checkpoints kept on disk.")
    logging_steps: int = setting(5, "Log every N steps.")
    seed: int = setting(0, "Random seed of the trainer.")
    gradient_checkpointing: bool = setting(False, "Recompute activations in the backward pass: saves memory on GPUs; "
                                                  "slower, and not needed, on CPU.")
    dtype: str = setting("auto", "auto | bfloat16 | float32: bf16 autocast where the CPU (AMX / AVX-512-BF16) or GPU "
                                 "has bf16 units; master weights and optimiser state stay float32 either way "
                                 "(agents.models.dtype).")

    def problems(self) -> list[str]:
        """What is wrong with the shared fields; a subclass adds its own to the list."""
        found = [f"{name} must be >= 1 (got {getattr(self, name)})"
                 for name in ("save_steps", "save_total_limit", "logging_steps", "lora_r") if getattr(self, name) < 1]
        if not self.learning_rate > 0:
            found.append(f"learning_rate must be > 0 (got {self.learning_rate})")
        if not 0 <= self.warmup_ratio < 1:
            found.append(f"warmup_ratio must be in [0, 1) (got {self.warmup_ratio})")
        if self.dtype not in DTYPES:
            found.append(f"dtype must be one of {', '.join(DTYPES)} (got {self.dtype!r})")
        return found

    def lora_config(self):
        """peft's ``LoraConfig`` of these settings (the one place it is written for every trainer), or
        None when ``lora`` is off: full fine-tuning. peft is imported only then."""
        if not self.lora:
            return None
        from peft import LoraConfig

        return LoraConfig(r=self.lora_r, lora_alpha=self.lora_alpha, lora_dropout=self.lora_dropout,
                          target_modules=self.lora_targets, task_type="CAUSAL_LM")

    def __post_init__(self) -> None:
        found = self.problems()
        if found:
            raise SettingError(f"invalid {type(self).__name__}: " + "; ".join(found))

    @classmethod
    def from_dict(cls, values: dict[str, Any]):
        """The settings from a dict (a settings JSON, ``--set`` pairs); unknown keys are named."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            kind = cls.__name__.removesuffix("Settings")
            raise SettingError(f"unknown {kind} setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**values)
