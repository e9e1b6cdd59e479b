"""Where an RL step's time goes, float32 against bfloat16: rollout, grading, update.

    python -m benchmarks.perf.rl_step [--zwc .bench/zwc-seed0] [--model qwen2.5-coder-0.5b] [--steps 2]

For each dtype, in one run, the same Closed-RL training (same train tasks, same settings, same
seed), each in its own process so neither inherits the other's threads or caches:

* the share of the step spent grading (the sandbox verdicts, batched through the fork-server
  pool): it should be a small fraction of generation and the update;
* rollout tokens/s (completion tokens generated per second) and update tokens/s (prompt +
  completion tokens through log-probs, loss and backward per second).

Ratios are bf16 / float32, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

DTYPES = ("float32", "bfloat16")


def one_run(zwc: str, model: str, dtype: str, steps: int, tasks: int, out: str) -> dict:
    """One Closed-RL training in this process; returns ``RLResult`` as a dict."""
    from agents.models.embedded import SPECS, embedded_directory
    from envs.zwc import ZWCEnv
    from learners.rl import rollout_prompts
    from learners.rl_train import RLSettings, train_rl

    base = embedded_directory(model) if model in SPECS else Path(model)
    settings = RLSettings(max_steps=steps, dtype=dtype, save_steps=10_000)
    with ZWCEnv(zwc) as env:
        prompts = rollout_prompts(env, env.tasks("train")[:tasks], 1200)
        result = train_rl(prompts, base, "closed", Path(out) / "train", Path(out) / "model", settings, env=env)
    return asdict(result)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--zwc", default=".bench/zwc-seed0")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one dtype in WORKDIR, print JSON
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help="also write both runs' results as JSON here")
    args = parser.parse_args(argv)
    if args.one:
        print("RESULT " + json.dumps(one_run(args.zwc, args.model, args.one, args.steps, args.tasks, args.workdir)))
        return
    results = {}
    for dtype in DTYPES:
        with tempfile.TemporaryDirectory() as tmp:
            done = subprocess.run([sys.executable, "-m", "benchmarks.perf.rl_step", "--zwc", args.zwc, "--model",
                                   args.model, "--steps", str(args.steps), "--tasks", str(args.tasks), "--one", dtype,
                                   "--workdir", tmp], capture_output=True, text=True, check=False)
            line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
            if line is None:
                sys.exit(f"the {dtype} run failed:\n{done.stderr[-3000:]}")
            results[dtype] = json.loads(line[7:])
    table = Table(title=f"RL step, Closed-RL, {args.model}: {args.steps} steps on {args.tasks} train tasks")
    for col in ("dtype", "seconds", "rollout share", "grading share", "update share", "rollout tok/s",
                "update tok/s", "rollout pass rate", "peak MB"):
        table.add_column(col, justify="right")
    for dtype, r in results.items():
        total = r["seconds"] or 1.0
        table.add_row(dtype, f"{r['seconds']:.0f}", f"{r['rollout_seconds'] / total:.1%}",
                      f"{r['grading_seconds'] / total:.1%}", f"{r['update_seconds'] / total:.1%}",
                      f"{r['rollout_tokens_per_second']:.0f}", f"{r['update_tokens_per_second']:.0f}",
                      f"{r['passed']}/{r['completions']}", f"{r['peak_memory_mb']:.0f}")
    console = Console()
    console.print(table)
    f32, b16 = results["float32"], results["bfloat16"]
    rollout = b16["rollout_tokens_per_second"] / f32["rollout_tokens_per_second"]
    update = b16["update_tokens_per_second"] / f32["update_tokens_per_second"]
    console.print(f"bf16 / float32: rollout tokens/s x{rollout:.2f}, update tokens/s x{update:.2f}, "
                  f"training time x{f32['seconds'] / b16['seconds']:.2f} shorter")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
