"""Reinforcement learning against the sandbox verdict, with trl's ``GRPOTrainer``.

One function, ``train_rl``, used in process by the RL learners (``learners/rl.py``) and,
unchanged, under ``accelerate launch`` on many GPUs, where this module is the entry point:

    accelerate launch --config_file learners/accelerate/ddp.yaml -m learners.training.rl_train \\
        --prompts RUN/learner/prompts.jsonl --zwc runs/zwc-seed0 --base Qwen/Qwen3-8B \\
        --variant closed --out RUN/learner/train --model-dir RUN/model --settings settings.json

**The reward is the verdict and nothing else**: each completion's code (read as the agent
reads it, ``agents.prompts.extract_code``) is graded by ``env.check_many`` through the
fork-server pool, batched per rollout, 1.0 for a pass and 0.0 for anything else (no code,
wrong answer, timeout, no zwc call, bypass attempt). No LLM judge, no partial credit a policy
could farm. A grader fault (``sandbox_error``: the grader's failure, not the candidate's) is no
reward at all: None, which trl keeps out of its group's baseline and gives advantage 0 (the binary
and task-relative advantages do the same); faults are counted per rollout and per run.

``variant`` says what the gradient sees. ``open``: the prompt with the task's docs, as the
rollout saw it (Open-RL). ``closed``: rollouts are generated on the prompt *with* the docs,
and the policy gradient is taken on the same completion after the prompt *without* them
(Closed-RL, SE-Bench §4.2). Closed-RL is therefore off-policy by construction: the sampler
and the policy condition on different prompts, so with vLLM the importance-sampling
correction (which would compare the two) is switched off.

``advantage`` picks the estimator. ``group``: GRPO's reward minus the group mean (divided by
the group's std unless ``scale_rewards='none'``). ``binary``: the paper's "SFT-like" policy
gradient, advantage = reward in {0, 1}: no baseline, failing completions leave the loss, and
the loss is normalised as SFT's (token mean over the passing completions, ``loss_type`` dapo), so
at ratio 1 its gradient is SFT's on the policy's own passing rollouts (at ``temperature`` 1: trl
takes log-probabilities of the logits divided by the rollout temperature). Clipping (``clip``)
is PPO's, at ``epsilon``; it only binds when the policy has moved since the rollout, which
SE-Bench's recipe of one optimiser step per rollout batch (``steps_per_generation`` 1, the
default) never lets happen; the RL log's ``ratio`` events show the ratio and the share of tokens
where clipping bound (``clip_fraction``) at every step. Without clipping the loss is ratio-free,
``-A log pi`` (``VerdictGRPOTrainer.ratio_free``), so with several optimiser steps per rollout batch
the SFT-like estimator stays SFT's gradient at every step while ``+clip`` does not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agents.models.dtype import resolve_dtype
from learners.training.rl_reward import SandboxReward, closed_rollout, prompt_key
from learners.training.rl_settings import NO_CLIP, RLSettings
from learners.training.training_run import TrainingRun, checkpointing, main_process, result_from, return_memory
from sebench.errors import DataError, SettingError

if TYPE_CHECKING:
    from envs.zwc import ZWCEnv


@dataclass
class RLResult:
    """What one RL run did and cost; ``reward_per_rollout`` holds the pass rate of every rollout batch."""

    variant: str
    prompts: int
    steps: int
    resumed_from: str | None
    seconds: float
    rollout_seconds: float           # generating completions
    grading_seconds: float           # the sandbox verdicts (the reward)
    update_seconds: float            # everything else: log-probs, loss, backward, optimiser
    rollout_tokens: int
    rollout_tokens_per_second: float
    update_tokens_per_second: float  # prompt + completion tokens through the update per second
    peak_memory_mb: float
    device: str
    dtype: str
    completions: int                 # graded this run
    passed: int
    grader_faults: int = 0           # sandbox errors: no reward, advantage 0
    clip_fraction: float = 0.0       # share of completion tokens where PPO's clipping bound, over the run's steps
    ratio_max: float = 1.0           # the largest importance ratio a loss saw (1: one step per rollout batch)
    reward_per_rollout: list[float] = field(default_factory=list)
    model_dir: str = ""

    @property
    def pass_rate(self) -> float:
        return self.passed / self.completions if self.completions else 0.0



def grpo_parts(base_model: str | Path, out_dir: Path, settings: RLSettings, importance_correction: bool):
    """What every GRPO run here shares: the fp32 policy (with evaluation's stop tokens), its
    tokenizer, trl's ``GRPOConfig`` from ``settings`` and the LoRA config (or None). Used by
    ``build_trainer`` and by Absolute-Zero."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    cuda = torch.cuda.is_available()
    bf16 = resolve_dtype(settings.dtype, "cuda" if cuda else "cpu") == "bfloat16"
    tokenizer = AutoTokenizer.from_pretrained(base_model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(base_model, dtype=torch.float32)
    # rollouts stop where evaluation stops (agents.models.transformers_model: EOS or pad), so the
    # reward grades the text an evaluated answer would be
    declared = model.generation_config.eos_token_id
    declared = [declared] if isinstance(declared, int) else list(declared or [])
    model.generation_config.eos_token_id = sorted({*declared, tokenizer.eos_token_id, tokenizer.pad_token_id})
    epsilon = settings.epsilon if settings.clip else NO_CLIP
    config = GRPOConfig(
        output_dir=str(out_dir), max_steps=settings.max_steps, learning_rate=settings.learning_rate,
        # micro-batches of num_generations completions, accumulated to prompts_per_step x
        # num_generations per optimiser step: peak memory grows with the micro-batch, not the step
        # (logits are 4 bytes x 152k vocabulary per token). trl shuffles the rollout batch before
        # splitting it, so a micro-batch mixes tasks; the group baseline is computed before that.
        # trl counts steps_per_generation in micro-batches.
        per_device_train_batch_size=settings.num_generations, gradient_accumulation_steps=settings.prompts_per_step,
        num_generations=settings.num_generations,
        steps_per_generation=settings.prompts_per_step * settings.steps_per_generation,
        num_iterations=settings.num_iterations,
        max_completion_length=settings.max_completion_length, temperature=settings.temperature,
        epsilon=epsilon, epsilon_high=epsilon, beta=settings.beta, loss_type=settings.loss_type,
        scale_rewards=settings.scale_rewards, warmup_steps=settings.warmup_ratio, lr_scheduler_type="cosine"
        if settings.lr_scheduler == "cosine" else "constant" if settings.warmup_ratio == 0 else "constant_with_warmup",
        save_strategy="steps",
        save_steps=settings.save_steps, save_total_limit=settings.save_total_limit,
        logging_steps=settings.logging_steps, seed=settings.seed, bf16=bf16, fp16=False, use_cpu=not cuda,
        report_to="none", disable_tqdm=True, dataloader_num_workers=0, use_vllm=settings.use_vllm,
        vllm_mode=settings.vllm_mode, vllm_importance_sampling_correction=importance_correction,
        **checkpointing(settings.gradient_checkpointing))
    return model, tokenizer, config, settings.lora_config()


def build_trainer(prompts: list[dict], base_model: str | Path, variant: str, out_dir: str | Path,
                  settings: RLSettings, env: ZWCEnv, progress=None):
    """The trainer of one RL run: a dataset of train-task prompts, the verdict reward, and,
    for ``closed``, the rollout that generates with the docs and trains without them.

    ``prompts`` rows: ``{"task_id", "prompt_open", "prompt_closed"}`` (chat messages)."""
    from datasets import Dataset

    from learners.training.rl_trainer import make_trainer  # imports trl: only when a trainer is built

    if variant not in ("open", "closed"):
        raise SettingError(f"variant must be 'open' or 'closed', got {variant!r}")
    if not prompts:
        raise DataError("no train prompts to roll out on")
    needed = settings.rollout_batch()
    if len(prompts) < needed:  # trl's sampler would drop the short batch and train 0 steps, saying nothing
        raise SettingError(f"one rollout batch needs {needed} train tasks (processes x prompts_per_step x "
                           f"steps_per_generation) and {len(prompts)} were given; raise limit or lower those settings")
    if len(prompts) % needed:
        print(f"warning: {len(prompts) % needed} of {len(prompts)} train tasks do not fill a rollout batch of "
              f"{needed} and are left out of each pass", file=sys.stderr)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks_by_id = {t.task_id: t for t in env.tasks("train")}
    unknown = sorted({p["task_id"] for p in prompts} - set(tasks_by_id))
    if unknown:
        raise DataError(f"prompts name train tasks this build does not have: {', '.join(unknown[:5])}")
    model, tokenizer, config, peft_config = grpo_parts(base_model, out_dir, settings, variant == "open")
    column = "prompt_open" if variant == "open" else "prompt_closed"
    dataset = Dataset.from_list([{"prompt": p[column], "task_id": p["task_id"]} for p in prompts])
    reward = SandboxReward(env, tasks_by_id, out_dir / "rl_log.jsonl")
    rollout = None
    if variant == "closed":
        rollout = closed_rollout({prompt_key(p["prompt_closed"]): p["prompt_open"] for p in prompts})
    return make_trainer(model, tokenizer, config, peft_config, dataset, reward, rollout, settings.advantage,
                        out_dir / "rl_log.jsonl", progress, engine=settings.rollout_engine)


def _fingerprint(prompts: list[dict]) -> str:
    return hashlib.sha256(json.dumps(prompts, sort_keys=True).encode()).hexdigest()[:16]


def run_record(prompts: list[dict], base_model: str | Path, variant: str, settings: RLSettings, usage: str) -> dict:
    """What makes two RL runs the same run: resuming or reusing across any difference is refused."""
    return {"variant": variant, "base": str(base_model), "prompts": _fingerprint(prompts), "usage": usage,
            "settings": asdict(settings)}


def _resumed_log(path: Path, step: int | None) -> None:
    """Drop what a killed run logged after the checkpoint it resumes from: those rollouts are redone."""
    if not path.is_file():
        return
    if step is None:
        path.unlink()
        return
    keep = []
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the line a kill cut short
        logged = entry.get("step") or 0
        if logged < step or (entry.get("event") == "log" and logged == step):
            keep.append(line)
    path.write_text("".join(line + "\n" for line in keep))


def _rollouts(path: Path, event: str = "rollout") -> list[dict]:
    return [e for e in map(json.loads, path.read_text().splitlines()) if e.get("event") == event]


def train_rl(prompts: list[dict], base_model: str | Path, variant: str, out_dir: str | Path, model_dir: str | Path,
             settings: RLSettings | None = None, *, env: ZWCEnv, progress=None) -> RLResult:
    """Train ``base_model`` with GRPO on ``prompts`` against ``env``'s verdicts and save the
    model (LoRA merged) to ``model_dir``. Resumes from the last checkpoint in ``out_dir``; a run
    that finished with the same configuration is returned, not redone; another is refused
    (``learners.training.training_run``)."""
    settings = settings or RLSettings()
    run = TrainingRun(out_dir, model_dir, run_record(prompts, base_model, variant, settings, env.usage),
                      f"{variant}-book RL run")
    done = run.finished()
    if done is not None:
        return result_from(done, RLResult)
    run.start()
    trainer = build_trainer(prompts, base_model, variant, out_dir, settings, env, progress)
    log = run.out_dir / "rl_log.jsonl"
    if main_process():
        _resumed_log(log, run.resume_step)
    trained = run.train(trainer)
    reward = trainer.verdict_reward
    update_seconds = max(trained.seconds - trainer.rollout_seconds - reward.seconds, 1e-9)
    # the whole run's rollouts, before and after a resume, are in the log (timings are this process's)
    rollouts = _rollouts(log) if log.is_file() else []
    ratios = _rollouts(log, "ratio") if log.is_file() else []
    completions = sum(r["completions"] for r in rollouts) or reward.completions
    passed = sum(r["passed"] for r in rollouts) if rollouts else reward.passed
    failures: Counter[str] = Counter()
    for r in rollouts:
        failures.update(r["failures"])
    result = RLResult(
        variant=variant, prompts=len(prompts), steps=trained.steps, resumed_from=trained.resumed_from,
        seconds=trained.seconds, rollout_seconds=round(trainer.rollout_seconds, 2),
        grading_seconds=round(reward.seconds, 2), update_seconds=round(update_seconds, 2),
        rollout_tokens=trainer.rollout_tokens,
        rollout_tokens_per_second=round(trainer.rollout_tokens / trainer.rollout_seconds, 1)
        if trainer.rollout_seconds else 0.0,
        update_tokens_per_second=round(trainer.update_tokens / update_seconds, 1),
        peak_memory_mb=trained.peak_memory_mb, device=trained.device, dtype=trained.dtype,
        completions=completions, passed=passed,
        grader_faults=sum(r.get("grader_faults", 0) for r in rollouts) if rollouts else reward.faults,
        clip_fraction=round(sum(r.get("clip_fraction", 0.0) for r in ratios) / len(ratios), 6) if ratios else 0.0,
        ratio_max=max((r["max"] for r in ratios), default=1.0),
        reward_per_rollout=[r["pass_rate"] for r in rollouts] or reward.history, model_dir=str(model_dir))
    run.finish(asdict(result) | {"pass_rate": round(result.pass_rate, 4),
                                 "failures": dict(failures or reward.failures), "settings": asdict(settings)},
               keep_checkpoints=settings.keep_checkpoints)
    del trainer
    return_memory()  # before the caller loads the trained model beside what is left of this one
    return result


def read_prompts(path: str | Path) -> list[dict]:
    """The prompt rows an RL learner wrote (``prompts.jsonl``)."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    for number, row in enumerate(rows, 1):
        missing = {"task_id", "prompt_open", "prompt_closed"} - set(row)
        if missing:
            raise DataError(f"{path}:{number}: missing {', '.join(sorted(missing))}")
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="GRPO against the sandbox verdict (works under accelerate launch).")
    parser.add_argument("--prompts", required=True, help="prompts.jsonl written by the RL learners")
    parser.add_argument("--zwc", required=True, help="the ZWC build whose train tasks the prompts are")
    parser.add_argument("--base", required=True, help="base model directory or hub id")
    parser.add_argument("--variant", required=True, choices=["open", "closed"])
    parser.add_argument("--out", required=True, help="checkpoint directory (a rerun resumes from it)")
    parser.add_argument("--model-dir", required=True, help="where the trained model is written")
    parser.add_argument("--settings", help="JSON file of RLSettings fields")
    parser.add_argument("--usage", default="standard", choices=["standard", "strict"])
    return parser


def main(argv: list[str] | None = None) -> None:
    from envs.zwc import ZWCEnv

    args = build_parser().parse_args(argv)
    settings = RLSettings.from_dict(json.loads(Path(args.settings).read_text())) if args.settings else RLSettings()
    with ZWCEnv(args.zwc, usage=args.usage) as env:
        result = train_rl(read_prompts(args.prompts), args.base, args.variant, args.out, args.model_dir, settings,
                          env=env)
    if main_process():
        print(json.dumps({k: v for k, v in asdict(result).items() if k != "reward_per_rollout"}))


if __name__ == "__main__":
    main()
