"""Supervised fine-tuning on collected trajectories, with trl's ``SFTTrainer``.

One function, ``train_sft``, used in process by the SFT learners on one device and, unchanged,
under ``accelerate launch`` on many GPUs (DDP, FSDP or DeepSpeed: the config in
``learners/accelerate/``), where this module is the entry point:

    accelerate launch --config_file learners/accelerate/fsdp.yaml -m learners.training.sft_train \\
        --data RUN/learner/trajectories.jsonl --base Qwen/Qwen3-8B --variant closed \\
        --out RUN/learner/train --model-dir RUN/model --settings settings.json

Loss is on the completion only (trl's prompt-completion format); full fine-tuning or LoRA
(peft, merged into the saved model so ``RUN/model`` is a plain model directory). Checkpoints
land in ``OUT/checkpoint-N`` every ``save_steps``; a run started again on the same ``OUT``
resumes from the last complete one, so a killed run loses at most ``save_steps`` steps, and a
finished one is returned, not redone (``learners.training.training_run``, shared with RL and Absolute-Zero).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agents.learner import setting
from agents.models.dtype import resolve_dtype
from learners.training.train_settings import TrainerSettings
from learners.training.training_run import TrainingRun, checkpointing, main_process, result_from, return_memory
from sebench.errors import DataError, SettingError


@dataclass
class SFTSettings(TrainerSettings):
    """Training settings (the shared ones in ``learners.training.train_settings``). Defaults are CPU-sized
    for the embedded 135M model (a few minutes on 2 cores). The paper fine-tunes Qwen3-8B fully
    on GPUs; its optimiser settings are not restated here: put the values from the SE-Bench
    repository into a settings JSON for ``--settings`` (or ``--set`` on ``sebench evolve``)."""

    learning_rate: float = setting(1e-4, "Optimiser learning rate (high for full fine-tuning at scale; right for 135M "
                                         "and few steps).")
    warmup_ratio: float = setting(0.05, "Fraction of the steps spent warming up.")
    max_steps: int = setting(60, "Optimiser steps; <= 0 means train `epochs` epochs instead.")
    epochs: float = setting(3.0, "Epochs when max_steps <= 0.")
    batch_size: int = setting(4, "Samples per device per step.")
    grad_accum: int = setting(1, "Gradient accumulation steps per optimiser step.")
    max_length: int = setting(1024, "Tokens of prompt + completion; longer samples are dropped, not cut.")
    weight_decay: float = setting(0.0, "AdamW weight decay.")

    def problems(self) -> list[str]:
        found = super().problems() + [f"{name} must be >= 1 (got {getattr(self, name)})" for name in
                                      ("batch_size", "grad_accum", "max_length") if getattr(self, name) < 1]
        if self.max_steps <= 0 and self.epochs <= 0:
            found.append("give max_steps > 0 or epochs > 0")
        return found


@dataclass
class TrainResult:
    """What one training run did and cost."""

    variant: str
    samples: int
    steps: int
    resumed_from: str | None
    seconds: float
    tokens: int                      # prompt + completion tokens processed in this run
    tokens_per_second: float
    peak_memory_mb: float            # peak RSS during training on CPU; peak allocated on CUDA
    device: str
    dtype: str = "float32"           # the compute dtype: bfloat16 (autocast) or float32
    first_loss: float | None = None
    last_loss: float | None = None
    model_dir: str = ""
    losses: list[float] = field(default_factory=list)
    dropped_by_role: dict[str, int] = field(default_factory=dict)  # samples over their budget, per role


class SamplesTooLong(DataError):
    """Every sample is longer than its budget (``max_length``, or its role's): nothing to train on."""


def run_record(data: str | Path, base_model: str | Path, variant: str, settings: SFTSettings,
               role_max_length: dict[str, int] | None = None) -> dict:
    """What makes two SFT runs the same run: the data's content (not its path: a moved state
    directory is the same run), the base model, the variant, the settings and the roles' budgets."""
    digest = hashlib.sha256(Path(data).read_bytes()).hexdigest()[:16]
    record = {"variant": variant, "base": str(base_model), "data": digest, "settings": asdict(settings)}
    return record | ({"role_max_length": dict(sorted(role_max_length.items()))} if role_max_length else {})


def fitting_samples(data: str | Path, tokenizer, max_length: int,
                    role_max_length: dict[str, int] | None = None) -> tuple[list, dict[str, int]]:
    """The samples of ``data`` within their budget, and how many of each role were too long.

    A sample's budget is its role's (``role_max_length``: SFT self-play's proposer examples carry
    the docs and a worked example, ~2,000 tokens, where a solution is ~500) or ``max_length``. It is
    judged on the *open* (longer) prompt plus completion, so Open- and Closed-SFT train on
    identical responses.
    """
    from learners.training.sft_data import read_samples

    samples = read_samples(data)
    if not samples:
        raise DataError(f"{data}: no trajectories to train on (collection kept none; see its report)")
    budgets = role_max_length or {}
    kept, dropped = [], {}
    for sample in samples:
        text = tokenizer.apply_chat_template([*sample.prompt_open, {"role": "assistant", "content": sample.completion}],
                                             tokenize=False)
        if len(tokenizer(text, add_special_tokens=False)["input_ids"]) > budgets.get(sample.role, max_length):
            dropped[sample.role] = dropped.get(sample.role, 0) + 1
            continue
        kept.append(sample)
    if not kept:
        roles = "".join(f", {role} examples {budgets[role]}" for role in sorted(budgets) if role in dropped)
        raise SamplesTooLong(f"{data}: every sample is longer than its budget (max_length={max_length} tokens{roles}); "
                             "raise max_length" + (" or the role's budget" if roles else ""))
    return kept, dropped


def load_dataset_for(data: str | Path, variant: str, tokenizer, max_length: int,
                     role_max_length: dict[str, int] | None = None):
    """The trl prompt-completion dataset of one variant, and how many samples were too long
    (``fitting_samples``)."""
    from datasets import Dataset

    kept, dropped = fitting_samples(data, tokenizer, max_length, role_max_length)
    return Dataset.from_list([s.as_prompt_completion(variant) for s in kept]), sum(dropped.values())


def train_sft(data: str | Path, base_model: str | Path, variant: str, out_dir: str | Path,
              model_dir: str | Path, settings: SFTSettings | None = None,
              role_max_length: dict[str, int] | None = None) -> TrainResult:
    """Fine-tune ``base_model`` on ``data`` (variant ``open`` or ``closed``) and save the model;
    resumes from the last checkpoint in ``out_dir``; a run that finished with the same record is
    returned, not redone; another is refused (``learners.training.training_run``). ``role_max_length``
    budgets the samples of a role (``{"proposer": 3072}``) apart from ``settings.max_length``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    if variant not in ("open", "closed"):
        raise SettingError(f"variant must be 'open' or 'closed', got {variant!r}")
    settings = settings or SFTSettings()
    bad = {role: n for role, n in (role_max_length or {}).items() if isinstance(n, bool) or not isinstance(n, int)
           or n < 1}
    if bad:
        raise SettingError(f"a role's max_length must be an integer >= 1, got {bad}")
    run = TrainingRun(out_dir, model_dir, run_record(data, base_model, variant, settings, role_max_length),
                      f"{variant}-book SFT",
                      legacy=lambda old: old.get("variant") == variant and old.get("settings") == asdict(settings))
    done = run.finished()
    if done is not None:
        return result_from(done, TrainResult)
    run.start()
    cuda = torch.cuda.is_available()
    bf16 = resolve_dtype(settings.dtype, "cuda" if cuda else "cpu") == "bfloat16"  # autocast; weights stay float32
    tokenizer = AutoTokenizer.from_pretrained(base_model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    from datasets import Dataset

    kept, dropped = fitting_samples(data, tokenizer, settings.max_length, role_max_length)
    dataset, too_long = Dataset.from_list([s.as_prompt_completion(variant) for s in kept]), sum(dropped.values())
    longest = max([settings.max_length, *(role_max_length or {}).values()])  # trl cuts at this; the budgets chose
    model = AutoModelForCausalLM.from_pretrained(base_model, dtype=torch.float32)
    peft_config = settings.lora_config()
    config = SFTConfig(
        output_dir=str(run.out_dir), max_steps=settings.max_steps if settings.max_steps > 0 else -1,
        num_train_epochs=settings.epochs, learning_rate=settings.learning_rate,
        per_device_train_batch_size=settings.batch_size, gradient_accumulation_steps=settings.grad_accum,
        max_length=longest, warmup_steps=settings.warmup_ratio, weight_decay=settings.weight_decay,
        lr_scheduler_type="cosine", completion_only_loss=True, save_strategy="steps",
        save_steps=settings.save_steps, save_total_limit=settings.save_total_limit,
        logging_steps=settings.logging_steps, seed=settings.seed, bf16=bf16, fp16=False, use_cpu=not cuda,
        report_to="none", disable_tqdm=False, dataloader_num_workers=0,
        **checkpointing(settings.gradient_checkpointing))
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                         peft_config=peft_config)
    trained = run.train(trainer, tokenizer)
    tokens = int(getattr(trainer, "_total_train_tokens", 0))
    losses = [round(float(e["loss"]), 4) for e in trainer.state.log_history if "loss" in e]
    result = TrainResult(variant=variant, samples=len(dataset), steps=trained.steps, resumed_from=trained.resumed_from,
                         seconds=trained.seconds, tokens=tokens,
                         tokens_per_second=round(tokens / trained.seconds, 1) if trained.seconds > 0 else 0.0,
                         peak_memory_mb=trained.peak_memory_mb, device=trained.device, dtype=trained.dtype,
                         first_loss=losses[0] if losses else None, last_loss=losses[-1] if losses else None,
                         model_dir=str(run.model_dir), losses=losses, dropped_by_role=dropped)
    run.finish(asdict(result) | {"too_long_dropped": too_long, "settings": asdict(settings)})
    del trainer, model
    return_memory()  # before the caller loads the trained model
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="SFT on collected trajectories (works under accelerate launch).")
    parser.add_argument("--data", required=True, help="trajectories.jsonl written by the SFT learners' collection")
    parser.add_argument("--base", required=True, help="base model directory or hub id")
    parser.add_argument("--variant", required=True, choices=["open", "closed"])
    parser.add_argument("--out", required=True, help="checkpoint directory (a rerun resumes from it)")
    parser.add_argument("--model-dir", required=True, help="where the fine-tuned model is written")
    parser.add_argument("--settings", help="JSON file of SFTSettings fields")
    args = parser.parse_args(argv)
    settings = SFTSettings.from_dict(json.loads(Path(args.settings).read_text())) if args.settings else SFTSettings()
    result = train_sft(args.data, args.base, args.variant, args.out, args.model_dir, settings)
    if main_process():  # one line per run, not per process
        print(json.dumps({k: v for k, v in asdict(result).items() if k != "losses"}))


if __name__ == "__main__":
    main()
