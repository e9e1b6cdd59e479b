"""What GRPO is rewarded with and what it rolls out: the sandbox verdict (``SandboxReward``), the
RL log's lines, Closed-RL's rollout on the doc prompt, and Absolute-Zero's task-relative
advantage. The trainer class (``learners.training.rl_trainer``) and the run
(``learners.training.rl_train``) both use them; neither is imported here, so the two do not import
each other. Why the reward is the verdict and nothing else: ``learners.training.rl_train``.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envs.zwc.grading.failure import Failure
from learners.training.training_run import main_process

if TYPE_CHECKING:
    from envs.zwc import ZWCEnv


def prompt_key(prompt: list[dict[str, str]]) -> str:
    """A prompt (chat messages) as a dictionary key."""
    return json.dumps(prompt, sort_keys=True)


class SandboxReward:
    """trl reward function: the sandbox verdict of each completion's code, 1.0 or 0.0, or None for
    a grader fault (no signal: out of the baseline, advantage 0).

    Keeps what it graded (counts per failure class, the last batch's rewards) for the log and
    for the binary advantage, and appends one JSON line per rollout batch to ``log``."""

    __name__ = "sandbox_verdict"

    def __init__(self, env: ZWCEnv, tasks_by_id: dict, log: Path | None = None):
        self.env, self.tasks_by_id, self.log = env, tasks_by_id, log
        self.last: list[float | None] = []
        self.last_keys: list[str] = []        # each reward's task: the task-relative advantage's groups
        self.history: list[float] = []        # mean reward per rollout batch
        self.completions = self.passed = self.faults = 0
        self.failures: Counter[str] = Counter()
        self.seconds = 0.0

    def __call__(self, prompts, completions, task_id, trainer_state=None, **_: Any) -> list[float]:
        from agents.prompts import extract_code

        started = time.perf_counter()
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        verdicts = self.env.check_many([(self.tasks_by_id[t], extract_code(text)) for t, text in zip(task_id, texts,
                                                                                                    strict=True)])
        self.seconds += time.perf_counter() - started
        self.last = [None if v.failure is Failure.SANDBOX_ERROR else 1.0 if v.passed else 0.0 for v in verdicts]
        self.last_keys = list(task_id)
        batch = Counter(v.failure.value for v in verdicts)
        self.failures.update(batch)
        passed, faults = sum(r == 1.0 for r in self.last), sum(r is None for r in self.last)
        self.completions += len(verdicts)
        self.passed += passed
        self.faults += faults
        self.history.append(round(passed / len(self.last), 4))
        if self.log is not None and main_process():
            step = trainer_state.global_step if trainer_state is not None else None
            append_record(self.log, {"event": "rollout", "step": step, "completions": len(verdicts), "passed": passed,
                               "grader_faults": faults, "pass_rate": self.history[-1], "failures": dict(batch)})
        return self.last


def append_record(path: Path, record: dict) -> None:
    """One JSON line, flushed to disk: the log of a killed run is complete up to the kill."""
    with path.open("a") as handle:
        handle.write(json.dumps(record) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def closed_rollout(open_prompts: dict[str, list[dict[str, str]]]):
    """trl ``rollout_func`` for Closed-RL: generate on the doc prompt, return the doc-less ids.

    ``open_prompts`` maps each doc-less prompt (``prompt_key``) to its prompt with the docs.
    Generation goes through the trainer's own path (transformers or vLLM), so weight syncing
    and sampling settings are trl's."""

    def rollout(prompts: list, trainer) -> dict[str, list]:
        docs = [open_prompts[prompt_key(p)] for p in prompts]
        open_ids, _, _ = trainer._tokenize_prompts(docs)
        closed_ids, _, _ = trainer._tokenize_prompts(prompts)
        completion_ids, logprobs = trainer._generate_single_turn(open_ids, None, {}, trainer.num_generations)
        trainer.last_rollout = {"generated_on": open_ids, "trained_on": closed_ids}
        return {"prompt_ids": closed_ids, "completion_ids": completion_ids, "logprobs": logprobs}

    return rollout


def task_relative_advantages(rewards: list[float | None], keys: list[str], eps: float = 1e-4) -> list[float]:
    """Absolute-Zero's Task-Relative REINFORCE++: each reward minus the mean of the rewards
    that share its key (task type and role), over that group's std (plus ``eps``). A key whose
    rewards are all equal gives advantage 0. A reward of None (no reward: the grader failed, not
    the policy) gets advantage 0 and stays out of its key's mean and std. Per process: under DDP
    each rank normalises its own slice of the rollout batch."""
    if len(rewards) != len(keys):
        raise ValueError(f"{len(rewards)} rewards and {len(keys)} keys")
    groups: dict[str, list[float]] = {}
    for reward, key in zip(rewards, keys, strict=True):
        if reward is not None:
            groups.setdefault(key, []).append(reward)
    stats = {}
    for key, values in groups.items():
        mean = sum(values) / len(values)
        std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
        stats[key] = (mean, std)
    return [0.0 if r is None or stats[k][1] == 0 else (r - stats[k][0]) / (stats[k][1] + eps)
            for r, k in zip(rewards, keys, strict=True)]

