"""Supervised fine-tuning on collected trajectories, with trl's ``SFTTrainer``.

One function, ``train_sft``, used in process by the SFT learners on one device and, unchanged,
under ``accelerate launch`` on many GPUs (DDP, FSDP or DeepSpeed: the config in
``learners/accelerate/``), where this module is the entry point:

    accelerate launch --config_file learners/accelerate/fsdp.yaml -m learners.sft_train \\
        --data RUN/learner/trajectories.jsonl --base Qwen/Qwen3-8B --variant closed \\
        --out RUN/learner/train --model-dir RUN/model --settings settings.json

Loss is on the completion only (trl's prompt-completion format); full fine-tuning or LoRA
(peft, merged into the saved model so ``RUN/model`` is a plain model directory). Checkpoints
land in ``OUT/checkpoint-N`` every ``save_steps``; a run started again on the same ``OUT``
resumes from the last complete one, so a killed run loses at most ``save_steps`` steps, and a
finished one is returned, not redone (``learners.training_run``, shared with RL and Absolute-Zero).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agents.learner import setting
from agents.models.dtype import resolve_dtype
from learners.train_settings import TrainerSettings
from learners.training_run import TrainingRun, checkpointing, main_process, result_from, return_memory
from sebench.errors import DataError, SettingError


@dataclass
class SFTSettings(TrainerSettings):
    """Training settings (the shared ones in ``learners.train_settings``). Defaults are CPU-sized
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


class SamplesTooLong(DataError):
    """Every sample is longer than ``max_length``: nothing to train on at this setting."""


def run_record(data: str | Path, base_model: str | Path, variant: str, settings: SFTSettings) -> dict:
    """What makes two SFT runs the same run: the data's content (not its path: a moved state
    directory is the same run), the base model, the variant and the settings."""
    digest = hashlib.sha256(Path(data).read_bytes()).hexdigest()[:16]
    return {"variant": variant, "base": str(base_model), "data": digest, "settings": asdict(settings)}


def load_dataset_for(data: str | Path, variant: str, tokenizer, max_length: int):
    """The trl prompt-completion dataset of one variant, and how many samples were too long.

    Both variants keep the same samples: one is dropped when its *open* (longer) prompt plus
    completion exceeds ``max_length``, so Open- and Closed-SFT train on identical responses.
    """
    from datasets import Dataset

    from learners.sft_data import read_samples

    samples = read_samples(data)
    if not samples:
        raise DataError(f"{data}: no trajectories to train on (collection kept none; see its report)")
    kept, too_long = [], 0
    for sample in samples:
        text = tokenizer.apply_chat_template([*sample.prompt_open, {"role": "assistant", "content": sample.completion}],
                                             tokenize=False)
        if len(tokenizer(text, add_special_tokens=False)["input_ids"]) > max_length:
            too_long += 1
            continue
        kept.append(sample.as_prompt_completion(variant))
    if not kept:
        raise SamplesTooLong(f"{data}: every sample is longer than max_length={max_length} tokens; raise max_length")
    return Dataset.from_list(kept), too_long


def train_sft(data: str | Path, base_model: str | Path, variant: str, out_dir: str | Path,
              model_dir: str | Path, settings: SFTSettings | None = None) -> TrainResult:
    """Fine-tune ``base_model`` on ``data`` (variant ``open`` or ``closed``) and save the model;
    resumes from the last checkpoint in ``out_dir``; a run that finished with the same record is
    returned, not redone; another is refused (``learners.training_run``)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    if variant not in ("open", "closed"):
        raise SettingError(f"variant must be 'open' or 'closed', got {variant!r}")
    settings = settings or SFTSettings()
    run = TrainingRun(out_dir, model_dir, run_record(data, base_model, variant, settings), f"{variant}-book SFT",
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
    dataset, too_long = load_dataset_for(data, variant, tokenizer, settings.max_length)
    model = AutoModelForCausalLM.from_pretrained(base_model, dtype=torch.float32)
    peft_config = None
    if settings.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                                 target_modules=settings.lora_targets, task_type="CAUSAL_LM")
    config = SFTConfig(
        output_dir=str(run.out_dir), max_steps=settings.max_steps if settings.max_steps > 0 else -1,
        num_train_epochs=settings.epochs, learning_rate=settings.learning_rate,
        per_device_train_batch_size=settings.batch_size, gradient_accumulation_steps=settings.grad_accum,
        max_length=settings.max_length, warmup_steps=settings.warmup_ratio, weight_decay=settings.weight_decay,
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
                         model_dir=str(run.model_dir), losses=losses)
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
