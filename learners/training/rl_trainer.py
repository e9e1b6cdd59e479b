"""The trl ``GRPOTrainer`` subclass the RL learners and Absolute-Zero train with, and its log.

``VerdictGRPOTrainer`` adds the binary ("SFT-like") and task-relative advantages, rollout timing,
grouped rollouts (``learners.training.grouped_rollout``), bf16 rollouts, the ratio-free loss without
clipping, the importance ratio's statistics (and where clipping bound) at every loss computation
and a record of the last batch; ``make_trainer`` builds it with the JSON-lines log callback.

This module imports trl (seconds, and gigabytes with vLLM) at its top, so its users import it
where they build a trainer (``learners.training.rl_train.build_trainer``, Absolute-Zero's run),
never at their own top: importing ``learners.training.rl_train`` (the CLI, the learners) does not
import trl. The settings are in
``learners.training.rl_settings``, the reward and the log in ``learners.training.rl_reward``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback
from trl import GRPOTrainer

from learners.training.rl_reward import SandboxReward, append_record, task_relative_advantages
from learners.training.rl_settings import NO_CLIP


class VerdictGRPOTrainer(GRPOTrainer):
    """trl's ``GRPOTrainer`` with the binary and task-relative advantages, rollout timing, grouped and
    bf16 rollouts, the ratio-free loss and the importance ratio's log (the module doc)."""

    def __init__(self, *args, advantage: str = "group", reward: SandboxReward, engine: str = "grouped",
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.advantage_kind, self.verdict_reward, self.rollout_engine = advantage, reward, engine
        self.rollout_seconds, self.rollout_tokens, self.update_tokens = 0.0, 0, 0
        self.last_batch: dict[str, Any] = {}
        self.last_rollout: dict[str, Any] = {}

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, *args, **kwargs):
        started = time.perf_counter()
        if self.grouped_rollouts and images is None and not multimodal_fields:
            completion_ids, logprobs = self._generate_grouped(prompt_ids), None
        elif self.bf16_rollouts and images is None and not multimodal_fields:
            completion_ids, logprobs = self._generate_bf16(prompt_ids), None
        else:
            completion_ids, logprobs = super()._generate_single_turn(prompt_ids, images, multimodal_fields,
                                                                     *args, **kwargs)
        self.rollout_seconds += time.perf_counter() - started
        self.rollout_tokens += sum(len(ids) for ids in completion_ids)
        return completion_ids, logprobs

    @property
    def bf16_rollouts(self) -> bool:
        """On a CPU with bf16 units, rollouts run on a bfloat16 copy of the policy instead of the
        fp32 master weights: 1.39x the rollout tokens/s for qwen2.5-coder-0.5b after ~530-token
        doc prompts (benchmarks/perf/rl_step.py). The copy is refreshed after every optimiser
        step, so it lags nothing; it rounds like vLLM's bf16 sampler on a GPU."""
        return self.args.bf16 and not self.use_vllm and self.accelerator.device.type == "cpu"

    @property
    def grouped_rollouts(self) -> bool:
        """Rollouts through ``learners.training.grouped_rollout`` (each distinct prompt prefilled once,
        finished rows leave the batch, per-row seeds) instead of trl's padded ``generate``;
        the default wherever trl would generate with transformers and the sampling is plain."""
        from learners.training.grouped_rollout import supported

        return self.rollout_engine == "grouped" and not self.use_vllm and \
            not self.use_transformers_continuous_batching and supported(self.generation_config)

    def _bf16_copy(self):
        """The bfloat16 copy of the policy, its weights refreshed after every optimiser step."""
        import copy

        import torch

        policy = self.accelerator.unwrap_model(self.model)
        if getattr(self, "_rollout_copy", None) is None:
            self._rollout_copy = copy.deepcopy(policy).to(torch.bfloat16).eval()
            self._rollout_step = self.state.global_step
        elif self._rollout_step != self.state.global_step:
            with torch.no_grad():
                for target, source in zip(self._rollout_copy.parameters(), policy.parameters(), strict=True):
                    target.copy_(source)
            self._rollout_step = self.state.global_step
        return self._rollout_copy

    def _rollout_seed(self) -> int:
        """The seed of one generation call: the run's seed, the process, the optimiser step and the
        call's number within the step (Absolute-Zero generates several times a step), so a rerun
        or a resumed run draws the same completions at the same step whatever the timing."""
        step = self.state.global_step
        if getattr(self, "_seed_step", None) != step:
            self._seed_step, self._seed_calls = step, 0
        self._seed_calls += 1
        return ((self.args.seed * 1_000_003 + self.accelerator.process_index) * 1_000_003 + step) * 1009 + \
            self._seed_calls

    def _generate_grouped(self, prompt_ids: list[list[int]]) -> list[list[int]]:
        from trl.models import unwrap_model_for_generation

        from learners.training.grouped_rollout import sample_grouped

        settings = {"max_new_tokens": self.max_completion_length, "temperature": self.temperature,
                    "eos_ids": self.eos_token_ids, "pad_id": self._tokenizer.pad_token_id,
                    "seed": self._rollout_seed()}
        if self.bf16_rollouts:
            return sample_grouped(self._bf16_copy(), prompt_ids, **settings)
        with unwrap_model_for_generation(self.model_wrapped, self.accelerator,
                                         gradient_checkpointing_kwargs=self.args.gradient_checkpointing_kwargs
                                         ) as policy:  # the live float32 weights, checkpointing off meanwhile
            return sample_grouped(policy, prompt_ids, **settings)

    def _generate_bf16(self, prompt_ids: list[list[int]]) -> list[list[int]]:
        import torch

        copy = self._bf16_copy()
        pad_id = self._tokenizer.pad_token_id
        width = max(len(ids) for ids in prompt_ids)
        input_ids = torch.tensor([[pad_id] * (width - len(ids)) + list(ids) for ids in prompt_ids])
        attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in prompt_ids])
        with torch.no_grad():
            generated = copy.generate(input_ids=input_ids, attention_mask=attention,
                                                    generation_config=self.generation_config)
        eos = set(self.eos_token_ids)
        completions = []
        for row in generated[:, width:].tolist():
            end = next((i for i, token in enumerate(row) if token in eos), None)
            completions.append(row if end is None else row[:end + 1])
        return completions

    @property
    def ratio_free(self) -> bool:
        """Clipping off (``RLSettings.clip`` False): the loss is the plain policy gradient
        ``-A log pi`` on the rollout batch, whatever the policy did since the rollout (the SFT-like
        estimator is SFT's gradient on the passing rollouts at every optimiser step of a batch);
        clipping on: PPO's clipped surrogate ``-min(rho A, clip(rho) A)``. At one optimiser step
        per rollout batch rho is 1 and the two are the same."""
        return self.epsilon_high >= NO_CLIP

    def _compute_loss(self, model, inputs):
        """trl's loss, and the importance ratio rho = pi / pi_old, per token of the completions,
        logged (``event: ratio``, with the share of tokens where clipping bound): 1 exactly at one
        optimiser step per rollout batch; where it moves, clipping can bind. Ratio-free (clipping
        off), trl is handed no old log-probabilities, so it takes rho = pi / sg(pi): value 1,
        gradient grad log pi."""
        measured = inputs
        if self.ratio_free and inputs.get("old_per_token_logps") is not None:
            inputs = {**inputs, "old_per_token_logps": None}
        captured = []
        original = self._get_per_token_logps_and_entropies

        def capture(*args, **kwargs):
            out = original(*args, **kwargs)
            captured.append(out[0])
            return out

        self._get_per_token_logps_and_entropies = capture
        try:
            loss = super()._compute_loss(model, inputs)
        finally:
            del self._get_per_token_logps_and_entropies  # the class's method again
        if captured:
            self._log_ratio(captured[0].detach(), measured)
        return loss

    def _log_ratio(self, logps, inputs) -> None:
        import torch

        old = inputs.get("old_per_token_logps")
        mask = inputs["completion_mask"].bool()
        ratio = torch.ones_like(logps) if old is None else torch.exp(logps - old)
        advantages = inputs["advantages"]
        advantages = (advantages.unsqueeze(1) if advantages.dim() == 1 else advantages).expand_as(ratio)
        bound = ((ratio > 1 + self.epsilon_high) & (advantages > 0)) | \
            ((ratio < 1 - self.epsilon_low) & (advantages < 0))  # where the clipped branch is taken
        ratio, bound = ratio[mask].float(), bound[mask].float()
        log = self.verdict_reward.log
        if ratio.numel() and log is not None and self.accelerator.is_main_process:
            self.last_ratio = {"mean": ratio.mean().item(), "min": ratio.min().item(), "max": ratio.max().item(),
                               "clip_fraction": bound.mean().item()}
            append_record(log, {"event": "ratio", "step": self.state.global_step, "old_logps": old is not None,
                          "ratio_free": self.ratio_free,
                          **{k: round(v, 6) for k, v in self.last_ratio.items()}})

    def _generate_and_score_completions(self, inputs):
        import torch

        output = super()._generate_and_score_completions(inputs)
        rewards = self.verdict_reward.last
        if self.advantage_kind == "binary":  # a reward of None (a grader fault) is no reward: A = 0
            output["advantages"] = torch.tensor([0.0 if r is None else r for r in rewards],
                                                dtype=output["advantages"].dtype,
                                                device=output["advantages"].device)
        elif self.advantage_kind == "task-relative":
            advantages = task_relative_advantages(rewards, self.verdict_reward.last_keys)
            output["advantages"] = torch.tensor(advantages, dtype=output["advantages"].dtype,
                                                device=output["advantages"].device)
        self.update_tokens += int(output["prompt_mask"].sum() + output["completion_mask"].sum()) * \
            self.args.num_iterations
        if self.advantage_kind == "binary":
            # SFT's normalisation: the token mean over the completions with a gradient only (with the
            # sandbox's {0, 1} rewards, the passing ones: a failing one has A = 0 and no gradient, and
            # left in the mask its tokens would shrink every step by their share; a negative reward,
            # as Absolute-Zero's penalties, keeps its completion)
            keep = (output["advantages"] != 0).to(output["completion_mask"].dtype).unsqueeze(1)
            output["completion_mask"] = output["completion_mask"] * keep
            output["num_items_in_batch"] = self.accelerator.gather(output["completion_mask"].sum()).sum()
        advantages = output["advantages"].float()
        self.last_batch = {"rewards": list(rewards), "advantages": advantages.tolist(),
                           "prompt_ids": output["prompt_ids"].cpu(), "prompt_mask": output["prompt_mask"].cpu()}
        log = self.verdict_reward.log
        if log is not None and self.accelerator.is_main_process:  # trl logs GRPO's, whatever the estimator
            append_record(log, {"event": "advantages", "step": self.state.global_step, "kind": self.advantage_kind,
                          "mean": round(advantages.mean().item(), 4), "std": round(advantages.std().item(), 4)
                          if advantages.numel() > 1 else 0.0, "min": round(advantages.min().item(), 4),
                          "max": round(advantages.max().item(), 4)})
        return output


class JsonLinesLog(TrainerCallback):
    """trl's logs (reward, advantages' spread, clip ratios, KL, entropy, lr) as JSON lines,
    and the progress bar's step and last reward."""

    def __init__(self, path: Path, progress=None):
        self.path, self.progress = path, progress

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and logs:
            append_record(self.path, {"event": "log", "step": state.global_step, **logs})
            if self.progress is not None and "reward" in logs:
                self.progress.describe(f"reward {logs['reward']:.2f}")

    def on_step_end(self, args, state, control, **kwargs):
        if self.progress is not None:
            self.progress(state.global_step, state.max_steps)


def make_trainer(model, tokenizer, config, peft_config, dataset, reward, rollout, advantage: str, log: Path,
                 progress=None, engine: str = "grouped"):
    """``VerdictGRPOTrainer`` on ``dataset`` with ``reward`` (``SandboxReward`` or one like it:
    ``last``, ``log``), the JSON-lines log callback and, with ``progress``, the bar; ``engine``
    (``RLSettings.rollout_engine``): grouped rollouts or trl's ``generate``."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in trl; we test it
    trainer = VerdictGRPOTrainer(model=model, reward_funcs=[reward], args=config, train_dataset=dataset,
                                 processing_class=tokenizer, peft_config=peft_config, rollout_func=rollout,
                                 advantage=advantage, reward=reward, engine=engine)
    trainer.add_callback(JsonLinesLog(log, progress))
    if progress is not None:  # the bar shows step and reward; the full logs are in the JSON-lines log
        from transformers.trainer_callback import PrinterCallback

        trainer.remove_callback(PrinterCallback)
    return trainer
