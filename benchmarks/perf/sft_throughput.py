"""SFT training cost on this machine: tokens/second and peak memory, full fine-tuning vs LoRA.

    python -m benchmarks.perf.sft_throughput [--zwc DIR] [--steps 8] [--batch-size 4]

Same data (reference trajectories on the first 24 train tasks, closed prompts), same steps,
same batch; the ratio is LoRA's over full fine-tuning's, measured in this run. Each mode trains
in its own process (``python -m learners.training.sft_train``), so peak memory, the process's peak RSS
while training (CPU) or peak allocated (CUDA), is that mode's alone.
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

from agents import Agent
from agents.models.embedded import embedded_directory
from envs.zwc import ZWCEnv
from learners.training.sft_data import collect
from learners.training.sft_train import SFTSettings, TrainResult


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zwc", type=Path, default=Path(".bench/zwc-seed0"))
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--out", type=Path, default=Path(".bench/sft_throughput.json"))
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="sft-bench-") as tmp:
        data = Path(tmp) / "trajectories.jsonl"
        with ZWCEnv.load(args.zwc) as env:
            collect(Agent(model="reference"), env, env.tasks("train")[: args.tasks], data)
        for name, lora in (("full", False), ("lora", True)):
            settings = Path(tmp) / f"{name}.json"
            settings.write_text(json.dumps(asdict(SFTSettings(max_steps=args.steps, batch_size=args.batch_size,
                                                              lora=lora, save_steps=10 * args.steps, logging_steps=1))))
            base = embedded_directory("smollm2-135m")
            done = subprocess.run([sys.executable, "-m", "learners.training.sft_train", "--data", str(data), "--base",
                                   str(base), "--variant", "closed", "--out", str(Path(tmp) / name),
                                   "--model-dir", str(Path(tmp) / f"{name}-model"), "--settings", str(settings)],
                                  check=True, capture_output=True, text=True)
            report = [line for line in done.stdout.splitlines() if line.startswith('{"')][-1]
            results[name] = TrainResult(**json.loads(report))
    table = Table(title=f"SFT on CPU, smollm2-135m, {args.steps} steps of {args.batch_size}, closed prompts")
    for col in ("mode", "seconds", "tokens", "tokens/s", "peak MB", "loss"):
        table.add_column(col, justify="right")
    for name, r in results.items():
        table.add_row(name, f"{r.seconds:.1f}", str(r.tokens), f"{r.tokens_per_second:.1f}", f"{r.peak_memory_mb:.0f}",
                      f"{r.first_loss} → {r.last_loss}")
    console = Console()
    console.print(table)
    full, lora = results["full"], results["lora"]
    console.print(f"LoRA vs full fine-tuning: [bold]{lora.tokens_per_second / full.tokens_per_second:.2f}x[/bold] "
                  f"tokens/s, {lora.peak_memory_mb / full.peak_memory_mb:.2f}x peak memory")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({k: asdict(v) for k, v in results.items()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
