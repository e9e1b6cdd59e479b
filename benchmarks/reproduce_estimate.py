"""How long each row of ``sebench reproduce``'s plan should take on this machine: an estimate.

Why an estimate and how it is made: the rows' real cost depends on how long the answers are, how
many rollouts pass and what else the machine runs, none of which is known before they run. What
is known is this machine's speed with the budget's model and each row's token counts. So:

1. speed: a short timed generation of the budget's model here (``measure``: in a child process,
   so that the plan's rows get the memory back; 8 prompts, 32 tokens each, batched, greedy), in
   generated tokens per second, and the seconds a process takes to start and load the model;
2. tokens per row, from the command's options (their defaults where the budget leaves them):
   generated tokens as if every answer ran to its ``max_tokens`` (evaluation, probes, rollouts,
   proposals; the ``reference`` teacher costs nothing), and trained tokens (SFT steps x batch x
   about ``EXAMPLE_TOKENS``, RL completions with their prompts);
3. seconds = model loads x load time + (generated + cost x trained) / speed, where the cost of a
   trained token, in generated tokens' seconds, is ``TRAIN_COST`` for SFT and ``RL_TRAIN_COST`` for
   an RL update (the policy's forward and backward plus the reference model's forward).

Both costs are ratios measured in docs/results/perf.md on qwen2.5-coder-0.5b in float32:
``TRAIN_COST`` from SFT (21 generated against 32 trained tokens/s), ``RL_TRAIN_COST`` from the
grouped Closed-RL step on an AVX2 CPU (383 s a step of 2 prompts x 4 completions: 70% of it, 268 s,
updates 8 completions of 160 tokens with their ~400-token prompts, 4,480 tokens, at 16.7 tokens/s,
on a machine kind that generates about 13.4 tokens/s in the timed generation: 13.4 / 16.7 = 0.8).
Every answer at full length makes the estimate an upper bound for evaluation and a fair guess for
training; the plan prints it as ``~``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TRAIN_COST = 21 / 32        # seconds of SFT training per token, in units of a generated token's seconds
RL_TRAIN_COST = 13.4 / 16.7  # the same for an RL update (module doc)
EXAMPLE_TOKENS = 512        # an SFT example: prompt + answer, closed-book (open-book is longer)
PROMPT_TOKENS = 400         # an RL completion's prompt, recomputed in the update
PROBE_TOKENS = 40           # `sebench probe`'s answer length
PROPOSAL_TOKENS = 640       # a self-play proposal (SFTSelfConfig.proposal_max_tokens)
CATALOGUE = 278             # catalogued functions of a ZWC build (probe_limit unset probes them all)
TASK_SECONDS = 0.1          # building and verifying one task in the sandbox (not the model's work)
PROMPTS, TOKENS = 8, 32


def measure(model: str, dtype: str, timeout: float = 600, time_it: bool = True,
            tiny_base: str | None = None) -> dict[str, Any]:
    """This machine's speed with ``model``: ``{"tokens_per_second", "load_seconds"}``, or
    ``{"error": why}`` when the model cannot be loaded here (then the plan has no estimates).
    With ``tiny_base`` the child first writes the tiny model at ``model`` (the smoke budget's);
    without ``time_it`` it does only that."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "benchmarks.reproduce_estimate", "--model", model, "--dtype", dtype]
    command += (["--tiny-base", tiny_base] if tiny_base else []) + ([] if time_it else ["--no-time"])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"the timed generation took over {timeout:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode == 0 and not time_it:
        return {}
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"{model} could not be timed here: {tail}"}
    result = json.loads(lines[-1])
    result["process_seconds"] = time.perf_counter() - started - result["generate_seconds"]
    return result


def _speed(model: str, dtype: str) -> dict[str, Any]:
    """The child's side of ``measure``: load, one timed batched generation, JSON on stdout."""
    from agents.models import load_model

    started = time.perf_counter()
    backend = load_model(model, dtype=dtype)
    loaded = time.perf_counter()
    prompt = [{"role": "user", "content": "Write a Python function that returns the mean of a list."}]
    out = backend.generate([prompt] * PROMPTS, n=1, temperature=0.0, max_tokens=TOKENS)
    seconds = time.perf_counter() - loaded
    tokens = sum(c.tokens for group in out for c in group)
    return {"model": model, "dtype": dtype, "load_seconds": loaded - started, "generate_seconds": seconds,
            "tokens": tokens, "tokens_per_second": tokens / seconds if seconds > 0 else 0.0}


def make_tiny(path: Path, base: str) -> None:
    """The smoke budget's model: ``agents.models.tiny``'s random-initialised ``base``, written once."""
    from agents.models.tiny import tiny_model_directory

    tiny_model_directory(path, base=base)


def _value(row, key: str, defaults: dict[str, Any]) -> Any:
    value = row.options.get(key)
    if value is None:
        param = defaults.get(key)
        value = getattr(param, "default", None)
    return value


def _set(row, key: str, default: Any) -> Any:
    return row.options.get("set", {}).get(key, default)


def row_tokens(row, defaults: dict[str, Any]) -> tuple[float, float, int]:
    """(generated tokens, trained tokens in generated tokens' seconds, model loads) of a row, from its
    options (module doc)."""
    from learners.rl import PRESETS
    from learners.training.rl_settings import RLSettings
    from learners.training.sft_train import SFTSettings

    def v(key: str) -> Any:
        return _value(row, key, defaults)

    learners = [name for name in row.learners if name != "none"]
    max_tokens = v("max_tokens") or 256
    if row.part == "validate":
        return 3 * (v("limit") or 20) * max_tokens, 0.0, 1
    if row.part == "memory":
        per = (v("limit") or 20) * max_tokens
        return (1 + len(learners)) * per + len(learners) * (v("train_limit") or 20) * max_tokens, 0.0, 1 + len(learners)
    tasks = v("limit") or v("train_limit") or 8  # about one test task per trained function (per_function = 1)
    probe = (v("probe_limit") or CATALOGUE) * PROBE_TOKENS
    measured = (1 + len(learners)) * (tasks * (v("n") or 1) * max_tokens + probe)
    batch = _set(row, "batch_size", SFTSettings.batch_size) * _set(row, "grad_accum", SFTSettings.grad_accum)
    sft_steps = v("sft_steps") or v("steps") or SFTSettings.max_steps
    generated, trained = float(measured), 0.0
    for name in learners:
        if name in ("closed-sft", "open-sft") or name.endswith("-sft-self"):
            trained += TRAIN_COST * sft_steps * batch * EXAMPLE_TOKENS * (v("rounds") or 1)
            if name.endswith("-sft-self"):
                generated += (v("rounds") or 1) * (v("proposals") or 8) * (PROPOSAL_TOKENS + 2 * max_tokens)
            continue
        preset = PRESETS.get(name.partition("@")[2] or "grpo", {})
        per_step = (_set(row, "prompts_per_step", preset.get("prompts_per_step", RLSettings.prompts_per_step))
                    * _set(row, "num_generations", RLSettings.num_generations))
        steps = v("rounds") if name == "absolute-zero" else v("steps") or RLSettings.max_steps
        length = _set(row, "max_completion_length", RLSettings.max_completion_length)
        generated += steps * per_step * length
        trained += RL_TRAIN_COST * steps * per_step * (length + PROMPT_TOKENS)
        if name == "closed-sft-rl":
            trained += TRAIN_COST * sft_steps * batch * EXAMPLE_TOKENS
    return generated, trained, 1 + 2 * len(learners)


def estimate(row, speed: dict[str, Any], defaults: dict[str, Any]) -> float | None:
    """Seconds the row should take (module doc); None without a measured speed."""
    if row.part == "zwc":
        per_function = row.options.get("per_function") or 718 / CATALOGUE
        return 10.0 if row.id.startswith("zwc-") else TASK_SECONDS * CATALOGUE * (per_function + 1 + 2)
    rate = speed.get("tokens_per_second")
    if not rate:
        return None
    generated, trained, loads = row_tokens(row, defaults)
    load = speed.get("process_seconds", speed.get("load_seconds", 0.0))
    return loads * load + (generated + trained) / rate


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    hours, rest = divmod(seconds, 3600)
    return f"{hours} h {rest // 60:02d} min" if hours else f"{rest // 60} min {rest % 60:02d} s"


def main() -> None:
    parser = argparse.ArgumentParser(description="Time a short generation of a model (sebench reproduce's plan).")
    parser.add_argument("--model", required=True)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--tiny-base", default=None, help="Write the tiny model at --model first, from this base.")
    parser.add_argument("--no-time", action="store_true", help="Only write the tiny model.")
    args = parser.parse_args()
    if args.tiny_base:
        make_tiny(Path(args.model), args.tiny_base)
    if not args.no_time:
        print(json.dumps(_speed(args.model, args.dtype)), flush=True)
    sys.stdout.flush()
    os._exit(0)  # a backend's worker threads must not keep the plan waiting


if __name__ == "__main__":
    main()
