"""Absolute-Zero (Zhao et al. 2025) over zwc programs: one policy proposes and solves, trained with GRPO.

SE-Bench §4.3 runs it as the RL side of self-play and finds it does not internalise the
library (Qwen3-8B, single-function, closed-book: 0.0, where Closed-SFT-self reaches 22.5).

Each round is one rollout batch of trl's ``GRPOTrainer`` (``learners.training.rl_train``: the same
trainer, checkpoints, bf16 rollout copy and GPU path as the RL learners); ``azr_rollout``
does the round: the policy proposes zwc programs for the three task types (deduction,
abduction, induction; ``azr_tasks``), the validator keeps the sound ones, the policy's pass
rate on each kept program gives the proposer its learnability reward, the policy solves
programs drawn from the per-type buffers with a binary executor-verified reward, format
errors are penalised, and advantages are normalised per task type and role (TRR++).
``steps_per_generation`` optimiser steps follow each round.

Files under ``state_dir`` (``RUN/`` from ``sebench selfplay``): ``buffer-<type>.jsonl`` (the
kept programs, seeded with ``seed_tasks`` of the env's train tasks each), ``rounds.jsonl`` and
``rounds.png`` (per round: proposals, accepted, rejections by reason, solve rate,
learnability), ``train/`` (trl's checkpoints, ``rl_log.jsonl``, ``train_result.json``). A
killed run resumes from its last checkpoint (one per round by default); the rounds after it
are dropped from the log and the buffers and redone. A finished run is not redone; other
settings on the same state are refused.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from agents.learner import EvolveReport, ParametricConfig, setting
from learners.base import progress_bar, warn_empty
from learners.parametric import ParametricLearner
from learners.training.rl_settings import RLSettings
from learners.training.rl_train import _resumed_log, _rollouts, grpo_parts
from learners.training.training_run import FinishedRunMismatch, TrainingRun, return_memory
from sebench.errors import SebenchError, SettingError
from sebench.jsonl import rewrite_records
from selfplay.azr_rollout import AZRReward, AZRRollout, Penalties, slot_rows, slots_for
from selfplay.azr_tasks import TASK_TYPES
from selfplay.curriculum import RoundLog, plot_rounds


class AbsoluteZeroError(SebenchError, RuntimeError):
    """Absolute-Zero cannot run as configured."""


@dataclass
class AZRSettings(RLSettings):
    """GRPO settings with Absolute-Zero's defaults: the task-relative advantage, the six slots of a
    round over all three task types (3 x 2 micro-batch groups), completions long enough for a
    proposal, a checkpoint per round."""

    prompts_per_step: int = setting(3, "Slot groups per optimiser step; x steps_per_generation must be a multiple "
                                       "of the slots of a round (propose and solve x each task type: 6).")
    steps_per_generation: int = setting(2, "Optimiser steps per round.")
    max_completion_length: int = setting(400, "Tokens per completion (a proposal is ~300, an answer fewer).")
    advantage: str = setting("task-relative", "task-relative: TRR++, per task type and role; group; binary.")
    scale_rewards: str = setting("none", "trl's own scaling (replaced by the task-relative advantage).")
    save_steps: int = setting(2, "Checkpoint every N steps (default: every round).")

    def problems(self) -> list[str]:
        found = super().problems()
        if self.num_iterations != 1:  # a round is steps_per_generation steps: the round log and resume count so
            found.append(f"num_iterations must be 1 for absolute-zero (got {self.num_iterations}); raise "
                         "steps_per_generation for more steps per round")
        if self.save_steps % self.steps_per_generation:  # a resume mid-round would shift every later round
            found.append(f"save_steps ({self.save_steps}) must be a multiple of steps_per_generation "
                         f"({self.steps_per_generation}): checkpoints fall between rounds")
        return found


@dataclass
class AbsoluteZeroConfig(ParametricConfig):
    """Rounds, proposer and rewards; ``train`` holds GRPO's settings, set by their own names:
    ``AbsoluteZeroLearner(rounds=4, num_generations=4, learning_rate=1e-6)``. ``max_steps`` is
    ``rounds x steps_per_generation``."""

    limit: int | None = setting(8, "First N train tasks: functions, worked examples and buffer seeds come from "
                                   "these only.")
    rounds: int = setting(2, "Rounds (rollout batches) of propose, validate, estimate, solve, update.")
    seed_tasks: int = setting(2, "Train tasks each buffer starts with (Absolute-Zero's seed triplets).")
    references: int = setting(2, "Buffer programs shown to the proposer per prompt.")
    docs_chars: int | None = setting(1200, "Per-function doc budget in the proposer's and induction prompts.")
    capacity: int = setting(256, "Programs each task-type buffer holds (oldest dropped first).")
    format_penalty: float = setting(-1.0, "Reward of a proposal or answer that cannot be read or was cut off, and "
                                          "of a program the validator refused (AZR: an invalid program's format "
                                          "score is 0).")
    wrong_penalty: float = setting(-0.5, "Reward of a readable wrong answer, and of a valid program the solver "
                                         "always or never solves (AZR's -0.5).")
    proposal_seed: int = setting(0, "Seed of the sampling of functions, examples, references and buffer draws.")
    min_inputs: int = setting(4, "Inputs a proposal must list, and the worked example shows (SE-Bench's tasks have 8; "
                                 "Absolute-Zero's deduction and abduction need one input and its induction shows "
                                 "half of its pairs and grades the other half, so 4 is 2 shown and 2 hidden; fewer "
                                 "inputs are fewer tokens, so proposals fit the completion cap).")
    task_types: list[str] = field(default_factory=lambda: list(TASK_TYPES), metadata={
        "help": "Task types proposed and solved (deduction, abduction, induction; comma-separated on the command "
                "line): Absolute-Zero's ablations drop one, and a type's proposer and solver go together."})
    train: AZRSettings = field(default_factory=AZRSettings)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("rounds", "seed_tasks", "capacity"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SettingError(f"{name} must be an integer >= 1, got {value!r}")
        if self.references < 0:
            raise SettingError(f"references must be >= 0, got {self.references}")
        from selfplay.proposer import check_min_inputs  # the proposer's own rule (imported when set)

        check_min_inputs(self.min_inputs)
        if isinstance(self.task_types, str):
            self.task_types = [k.strip() for k in self.task_types.split(",") if k.strip()]
        if not isinstance(self.task_types, list | tuple) or not all(isinstance(k, str) for k in self.task_types):
            raise SettingError(f"task_types must be a list of names or comma-separated text, e.g. "
                             f"--set task_types=deduction,induction (got {self.task_types!r})")
        try:
            slots = slots_for(list(self.task_types))
        except ValueError as exc:
            raise SettingError(f"task_types: {exc}; e.g. --set task_types=deduction,induction") from None
        self.task_types = [k for k in TASK_TYPES if k in self.task_types]
        rows = self.train.prompts_per_step * self.train.steps_per_generation
        if rows % len(slots):
            raise SettingError(f"prompts_per_step x steps_per_generation ({self.train.prompts_per_step} x "
                             f"{self.train.steps_per_generation}) must be a multiple of {len(slots)}, the slots of "
                             f"a round over {', '.join(self.task_types)} (propose and solve per task type); "
                             f"e.g. prompts_per_step={len(slots)} with steps_per_generation=1")
        self.train.max_steps = self.rounds * self.train.steps_per_generation

    @classmethod
    def from_overrides(cls, overrides: dict[str, Any]) -> AbsoluteZeroConfig:
        own = {f.name for f in fields(cls)} - {"train"}
        mine = {k: v for k, v in overrides.items() if k in own}
        if "max_steps" in overrides:
            raise SettingError("absolute-zero trains rounds x steps_per_generation steps; set rounds, not max_steps")
        return cls(**mine, train=AZRSettings.from_dict({k: v for k, v in overrides.items() if k not in own}))


class AbsoluteZeroLearner(ParametricLearner):
    """Self-play with RL: the agent's model proposes zwc programs and solves deduction, abduction
    and induction tasks made from them, trained by GRPO on executor-verified rewards."""

    name = "absolute-zero"
    config_class = AbsoluteZeroConfig
    # the learner checker's tiny settings (learners.checker): one round, one step, one task type
    # (induction: the SE-Bench episode, through env.observe and env.check; all three cost 3x the tokens,
    # most of a step on a CPU); smollm2 earns only format penalties and 0s, which the binary estimator
    # (advantage = reward) turns into a gradient where the task-relative one gives 0
    checker_settings: dict[str, Any] = {"rounds": 1, "task_types": ["induction"], "num_generations": 2,
                                        "prompts_per_step": 2, "steps_per_generation": 1,
                                        "max_completion_length": 8, "docs_chars": 200, "references": 0,
                                        "seed_tasks": 1, "lora": True, "lora_dropout": 0.0, "save_steps": 100,
                                        "advantage": "binary"}
    saved = {"train": ("result", dict)}

    def evolve(self, agent, env) -> EvolveReport:
        started = time.perf_counter()
        base = self.resolve_base(agent)
        tasks = env.tasks("train")[: self.config.limit]
        if not tasks:
            raise AbsoluteZeroError(f"the build has no train tasks; run `sebench tasks build --zwc {env.root}`")
        self.release(agent)
        with progress_bar(f"{self.name}: GRPO steps", total=self.config.train.max_steps) as progress:
            self.result = train_azr(env, tasks, base, self.state_dir, self.model_dir, self.config, progress)
        self.adopt(agent)
        return self._report(started)

    def _report(self, started: float) -> EvolveReport:
        root, result = self.state_dir, self.result
        records = RoundLog.in_run(root).records
        details = {"rounds": len(records), "steps": result["steps"], "resumed_from": result["resumed_from"],
                   "proposals": sum(r.proposals for r in records), "accepted": sum(r.accepted for r in records),
                   "solver_completions": result["completions"], "solver_pass_rate": result["pass_rate"],
                   "reward_per_rollout": result["reward_per_rollout"],
                   "per_round": [{"round": r.round, "proposals": r.proposals, "accepted": r.accepted,
                                  "rejections": r.rejections, "solve_rate": r.solve_rate,
                                  "learnability": r.learnability, **r.extra} for r in records],
                   "train_seconds": result["seconds"], "rollout_seconds": result["rollout_seconds"],
                   "round_seconds": result["round_seconds"], "peak_memory_mb": result["peak_memory_mb"],
                   "dtype": result["dtype"], "model_dir": str(self.model_dir),
                   "buffer": ", ".join(str(root / f"buffer-{k}.jsonl") for k in self.config.task_types),
                   "round_log": str(root / "rounds.jsonl"), "plot": str(root / "rounds.png")}
        report = EvolveReport(learner=self.name, episodes=result["completions"] + details["proposals"],
                              seconds=time.perf_counter() - started, details=details)
        if not details["accepted"]:
            warn_empty(report, f"none of {details['proposals']} proposals was kept: the proposer earned only "
                               "penalties, and the solver trained on the seed programs alone")
        if result["completions"] and not result["passed"]:
            warn_empty(report, f"none of the solver's {result['completions']} answers passed: its rewards were all "
                               "0 or format penalties")
        return report

    def run_files(self, target: Path) -> list[Path]:
        """The round log, its plot and the buffers, beside a state saved outside the run."""
        root = self.state_dir.resolve()
        if target.resolve().is_relative_to(root):
            return []
        return [root / "rounds.jsonl", root / "rounds.png",
                *(root / f"buffer-{kind}.jsonl" for kind in self.config.task_types)]


def seed_buffers(buffers: dict, proposer, count: int) -> None:
    """Each empty buffer gets ``count`` of the proposer's worked examples (verified train tasks
    with a ZWC reference), as round 0 entries: what the first solve slots draw from."""
    for buffer in buffers.values():
        if len(buffer) == 0:
            buffer.extend([task for task, _ in proposer.examples[:count]], round=0, metadata={"seed": True})


def _resume_state(root: Path, resume: Path | None, steps_per_round: int, capacity: int,
                  task_types: list[str]) -> None:
    """The rounds after the checkpoint ``resume`` (None: all) leave the round log and the buffers."""
    from selfplay.buffer import TaskBuffer

    done = int(resume.name.split("-")[1]) // steps_per_round if resume else 0
    log = RoundLog.in_run(root)
    if any(r.round >= done for r in log.records):
        rewrite_records(log.path, [r.model_dump(mode="json") for r in log.records if r.round < done])
    for kind in task_types:
        TaskBuffer.in_run(root, kind, capacity).discard_rounds_after(done - 1)


def train_azr(env, tasks, base: Path, root: Path, model_dir: Path, config: AbsoluteZeroConfig,
              progress=None) -> dict:
    """Run the rounds with GRPO from ``base`` and save the policy to ``model_dir``; the run's
    result (as ``train_result.json`` holds it)."""
    from datasets import Dataset

    from learners.training.rl_trainer import make_trainer  # imports trl: only when a trainer is built
    from selfplay.buffer import TaskBuffer
    from selfplay.proposer import Proposer, ProposerConfig
    from selfplay.validate import Validator, ValidatorConfig

    settings = config.train
    out_dir = root / "train"
    run = {"learner": "absolute-zero", "base": str(base), "usage": env.usage,
           "config": json.loads(json.dumps({k: v for k, v in asdict(config).items()
                                            if k not in ("state_dir", "model_dir")
                                            # all three (the default) as runs recorded before the setting
                                            and not (k == "task_types" and v == list(TASK_TYPES))})),
           "tasks": [t.task_id for t in tasks]}
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise AbsoluteZeroError("absolute-zero runs in one process (one GPU or the CPU): each rank would run its own "
                                "round on the shared buffers and round log; launch it without accelerate/torchrun")
    training = TrainingRun(out_dir, model_dir, run, "absolute-zero run", redo_missing_model=False)  # a redo
    # from no checkpoint would drop every round from the log and the buffers
    try:
        done = training.finished()
    except FinishedRunMismatch as exc:
        raise AbsoluteZeroError(str(exc)) from None
    if done is not None:
        return done
    resume = training.start()  # refuses another run's checkpoints before anything of the earlier run is dropped
    _resume_state(root, resume, settings.steps_per_generation, config.capacity, config.task_types)
    proposer = Proposer(env, model=None, tasks=tasks,
                        config=ProposerConfig(references=config.references, docs_chars=config.docs_chars,
                                              temperature=settings.temperature,
                                              max_tokens=max(64, settings.max_completion_length),
                                              seed=config.proposal_seed, min_inputs=config.min_inputs))
    buffers = {kind: TaskBuffer.in_run(root, kind, config.capacity) for kind in config.task_types}
    seed_buffers(buffers, proposer, config.seed_tasks)
    log_path = out_dir / "rl_log.jsonl"
    _resumed_log(log_path, training.resume_step)  # the redone rounds' entries go
    validator = Validator(env, ValidatorConfig(min_tests=config.min_inputs))
    rollout = AZRRollout(env, proposer, validator, buffers, RoundLog.in_run(root),
                         Penalties(config.format_penalty, config.wrong_penalty), config.docs_chars,
                         config.proposal_seed, say=progress.describe if progress is not None else None)
    model, tokenizer, grpo, peft = grpo_parts(base, out_dir, settings, importance_correction=False)
    slots = slots_for(config.task_types)
    copies = settings.prompts_per_step * settings.steps_per_generation // len(slots)
    reward = AZRReward(log_path)
    trainer = make_trainer(model, tokenizer, grpo, peft, Dataset.from_list(slot_rows(copies, slots)), reward, rollout,
                           settings.advantage, log_path, progress, engine=settings.rollout_engine)
    trained = training.train(trainer, tokenizer)
    records = RoundLog.in_run(root).records
    if records:
        plot_rounds(records, root / "rounds.png", title="absolute-zero")
    rollouts = _rollouts(log_path) if log_path.is_file() else []  # the whole run's, before and after a resume
    completions = sum(r["completions"] for r in rollouts)
    passed = sum(r["passed"] for r in rollouts)
    result = {"steps": trained.steps, "resumed_from": trained.resumed_from,
              "seconds": trained.seconds, "rollout_seconds": round(trainer.rollout_seconds, 2),
              "round_seconds": round(sum(r.seconds for r in records), 2),
              "completions": completions, "passed": passed,
              "pass_rate": round(passed / completions, 4) if completions else 0.0,
              "reward_per_rollout": [r["pass_rate"] for r in rollouts],
              "peak_memory_mb": trained.peak_memory_mb, "dtype": trained.dtype}
    result = training.finish(result, keep_checkpoints=settings.keep_checkpoints)
    del trainer, model
    return_memory()
    return result
