"""One harness for every training run of ours: SFT (``learners.training.sft_train``), RL
(``learners.training.rl_train``) and Absolute-Zero.

A run is named by its record (``run``: what makes two runs the same run — variant, data or
prompts, base model, settings). ``TrainingRun`` does what all three do around trl's
``trainer.train()``, in one place:

- **finished-run check** (``finished``): a run that finished with the same record is returned,
  not redone (also from a moved or renamed directory: its model is where this run expects it); a
  finished run of another record is refused with the keys that differ; one whose model is still
  where it was written, not here, is refused; one whose model is gone is redone (or refused, for a
  run whose redo would wipe more than its checkpoints: Absolute-Zero's rounds);
- **resume** (``start``): from the newest complete ``checkpoint-N``, refused when the checkpoints
  are another record's; the record is written before training, so a killed run says what it was;
- **measure and save** (``train``): wall time, peak memory (RSS sampled on CPU, the allocator's
  peak on CUDA), the compute dtype; then the optimiser's state released and the model saved
  atomically as a plain directory (LoRA merged);
- **result** (``finish``): ``train_result.json`` with the record, on the main process, and the
  checkpoints removed after it (unless kept): a kill before that point resumes.

The caller drops its trainer after ``finish`` and calls ``return_memory()`` before it loads the
trained model: a harness cannot drop its caller's reference.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from sebench.errors import DataError, SebenchError

RESULT_FILE = "train_result.json"
RECORD_FILE = "run.json"


class FinishedRunMismatch(SebenchError, ValueError):
    """The output directory holds a finished run of another configuration."""


@dataclass
class Trained:
    """What ``TrainingRun.train`` measured."""

    steps: int
    resumed_from: str | None
    seconds: float
    peak_memory_mb: float
    device: str
    dtype: str  # the compute dtype: bfloat16 (autocast) or float32


def main_process() -> bool:
    return int(os.environ.get("RANK", "0")) == 0


class TrainingRun:
    """Args: out_dir: trl's output (checkpoints, ``run.json``, ``train_result.json``);
    model_dir: where the trained model goes; run: the record; what: the run's kind, for messages;
    redo_missing_model: whether a finished run whose model is gone is redone (False: refused);
    legacy: for a result or checkpoint record written before ``run`` had its present keys, whether
    it is this run (None: it is not)."""

    def __init__(self, out_dir: str | Path, model_dir: str | Path, run: dict[str, Any], what: str = "training",
                 redo_missing_model: bool = True, legacy: Callable[[dict[str, Any]], bool] | None = None):
        self.out_dir, self.model_dir, self.run, self.what = Path(out_dir), Path(model_dir), run, what
        self.redo_missing_model, self.legacy = redo_missing_model, legacy
        self.resume: Path | None = None

    def _same(self, recorded: dict[str, Any] | None) -> bool:
        if recorded == self.run:
            return True
        older = recorded is None or not set(self.run) <= set(recorded)  # written before a key of the record existed
        return older and self.legacy is not None and self.legacy(recorded or {})

    @property
    def result_path(self) -> Path:
        return self.out_dir / RESULT_FILE

    def finished(self) -> dict[str, Any] | None:
        """The result of this run if it already finished; None if it has still to run."""
        if not self.result_path.is_file():
            return None
        result = json.loads(self.result_path.read_text())
        if not self._same(result.get("run") if "run" in result else {k: v for k, v in result.items() if k != "run"}):
            differ = sorted(k for k in self.run if (result.get("run") or {}).get(k) != self.run[k])
            raise FinishedRunMismatch(f"{self.out_dir} holds a finished {self.what} that differs in "
                                      f"{', '.join(differ) or 'its record'}; train into another directory (--out), "
                                      "or delete it to retrain")
        if (self.model_dir / "config.json").is_file():
            return result  # the model is where this run puts it (the directory may have moved since)
        wrote = Path(result.get("model_dir") or self.model_dir)
        if (wrote / "config.json").is_file() or not self.redo_missing_model:
            where = f"is at {wrote}" if (wrote / "config.json").is_file() else "is gone"
            raise FinishedRunMismatch(f"{self.out_dir} holds a finished {self.what} whose model {where}, not at "
                                      f"{self.model_dir}; train into another directory (--out), or delete it to "
                                      "start over")
        return None  # the model is gone: the run is redone (from its last checkpoint, if one is left)

    def start(self) -> Path | None:
        """The checkpoint to resume from (None: from the start), after refusing another record's
        checkpoints; records this run's."""
        self.resume = last_checkpoint(self.out_dir)
        record = self.out_dir / RECORD_FILE
        if self.resume is not None and record.is_file() and not self._same(json.loads(record.read_text())):
            raise DataError(f"{self.out_dir} holds checkpoints of a run with other settings or data ({record}); "
                            "train into another directory, or delete it to start over")
        if main_process():  # every process checks; the main one records
            self.out_dir.mkdir(parents=True, exist_ok=True)
            record.write_text(json.dumps(self.run, indent=1) + "\n")
        return self.resume

    @property
    def resume_step(self) -> int | None:
        return int(self.resume.name.split("-")[1]) if self.resume is not None else None

    def train(self, trainer, tokenizer=None) -> Trained:
        """``trainer.train()`` from ``start()``'s checkpoint, measured; then the optimiser released
        and the model saved to ``model_dir``."""
        import torch

        cuda = torch.cuda.is_available()
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        started = time.perf_counter()
        with PeakMemory() as memory:
            trainer.train(resume_from_checkpoint=str(self.resume) if self.resume else None)
        seconds = time.perf_counter() - started
        peak = torch.cuda.max_memory_allocated() if cuda else memory.peak
        release_optimiser(trainer)
        save_model(trainer, tokenizer if tokenizer is not None else trainer.processing_class, self.model_dir)
        return Trained(steps=trainer.state.global_step, resumed_from=self.resume.name if self.resume else None,
                       seconds=round(seconds, 2), peak_memory_mb=round(peak / 2**20, 1),
                       device="cuda" if cuda else "cpu",
                       dtype="bfloat16" if trainer.accelerator.mixed_precision == "bf16" else "float32")

    def finish(self, result: dict[str, Any], keep_checkpoints: bool = True) -> dict[str, Any]:
        """Write ``train_result.json`` (``result`` with the record and the model's place), then,
        unless kept, remove the checkpoints: only after the result is on disk."""
        record = {**result, "model_dir": str(self.model_dir), "run": self.run}
        if main_process():
            self.result_path.write_text(json.dumps(record, indent=1) + "\n")
            if not keep_checkpoints:
                for checkpoint in self.out_dir.glob("checkpoint-*"):
                    shutil.rmtree(checkpoint, ignore_errors=True)
        return record


def result_from(record: dict[str, Any], result_class):
    """A result dataclass from a ``train_result.json`` record (its own fields only)."""
    return result_class(**{f.name: record[f.name] for f in fields(result_class) if f.name in record})


def last_checkpoint(out_dir: str | Path) -> Path | None:
    """The newest complete ``checkpoint-N`` (one holding trainer_state.json), or None."""
    out = Path(out_dir)
    if not out.is_dir():
        return None
    done = [p for p in out.glob("checkpoint-*") if (p / "trainer_state.json").is_file() and p.name[11:].isdigit()]
    return max(done, key=lambda p: int(p.name[11:]), default=None)


def checkpointing(on: bool) -> dict[str, bool]:
    """Activation checkpointing under the name this transformers knows (renamed in 5.x)."""
    from trl import SFTConfig

    names = {f.name for f in fields(SFTConfig)}
    return {"activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing": on}


class PeakMemory:
    """Samples this process's RSS in a thread (CPU has no allocator counter to ask)."""

    def __init__(self, interval: float = 0.05):
        import psutil

        self._process, self._interval = psutil.Process(), interval
        self.peak = self._process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.peak = max(self.peak, self._process.memory_info().rss)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def release_optimiser(trainer) -> None:
    """Free what only training needed before the model is saved and the next model loaded: Adam's
    two moments and the gradients (3x the float32 weights) and an RL trainer's bf16 rollout copy. On 24 GB,
    a 0.5B RL run that kept them was OOM-killed while saving; a kill from here on resumes from the
    last checkpoint, which holds them."""
    if trainer.optimizer is not None:
        trainer.optimizer.state.clear()
    trainer.model.zero_grad(set_to_none=True)
    if hasattr(trainer, "_rollout_copy"):
        trainer._rollout_copy = None
    return_memory()


def return_memory() -> None:
    """Collect reference cycles (a trainer has them) and hand freed arenas back to the OS: glibc
    keeps them mapped, and RSS, which the OOM killer reads, would not fall."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def save_model(trainer, tokenizer, model_dir: Path) -> None:
    """Write a plain model directory (LoRA merged in), atomically: a crash leaves no half model.

    Called on every process: under FSDP or DeepSpeed ``trainer.save_model`` gathers the full
    weights; the main process then merges a LoRA adapter and moves the directory in place."""
    partial = model_dir.with_name(model_dir.name + ".partial")
    main = trainer.is_world_process_zero()
    if main:
        shutil.rmtree(partial, ignore_errors=True)
    trainer.accelerator.wait_for_everyone()
    if trainer.accelerator.num_processes == 1:
        model = trainer.model
        if hasattr(model, "merge_and_unload"):
            model = model.merge_and_unload()
        model.save_pretrained(partial)
    else:
        trainer.save_model(str(partial))
    trainer.accelerator.wait_for_everyone()
    if not main:
        return
    if (partial / "adapter_config.json").is_file():  # sharded LoRA run: merge on the main process
        from peft import AutoPeftModelForCausalLM

        merged = AutoPeftModelForCausalLM.from_pretrained(partial).merge_and_unload()
        shutil.rmtree(partial)
        merged.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    if model_dir.exists():
        shutil.rmtree(model_dir)
    partial.rename(model_dir)
