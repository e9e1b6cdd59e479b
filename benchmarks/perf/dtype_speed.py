"""float32 versus bfloat16, both embedded models: generation and training speed, and what bf16 costs.

    python -m benchmarks.perf.dtype_speed [--zwc .bench/zwc-seed0] [--models smollm2-135m,qwen2.5-coder-0.5b]

For each model, in one run and on the same inputs in both dtypes:

* generation: generated tokens/s for the closed-book prompts of the first ``--prompts`` single_test
  tasks, batched, greedy, and how many greedy answers bf16 changed;
* training: SFT tokens/s (``learners.training.sft_train``, full fine-tuning, bf16 autocast over float32
  master weights) on the same reference trajectories, the same steps, each run in its own process;
* quality: open-book pass@1 (greedy) on the first ``--eval-tasks`` single_test tasks: closed-book
  is 0% by design, so the docs are in the prompt, where the models do pass tasks.

Ratios are bf16 / float32; pass@1 differences are bf16 minus float32, in points.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agents import Agent
from agents.models import load_model
from agents.models.dtype import cpu_has_bf16, resolve_dtype
from agents.models.embedded import embedded_directory
from agents.prompts import first_prompt
from envs.zwc import ZWCEnv
from learners.training.sft_data import collect
from learners.training.sft_train import SFTSettings
from sebench.version import code_version

DTYPES = ("float32", "bfloat16")


def greedy_speed(model, env: ZWCEnv, prompts: int, gen_tokens: int) -> dict:
    """Generated tokens/s over the closed-book prompts of the first ``prompts`` single_test tasks,
    batched and greedy (after a warm-up), and the answers (``engine_speed`` measures the same)."""
    tasks = env.tasks("single_test")[:prompts]
    chats = [first_prompt(env.observe(t, phase="test", mode="closed")) for t in tasks]
    model.generate(chats[:1], max_tokens=4)  # warm-up
    started = time.perf_counter()
    answers = [per[0] for per in model.generate(chats, max_tokens=gen_tokens)]
    seconds = time.perf_counter() - started
    tokens = sum(a.tokens for a in answers)
    return {"gen_tokens": tokens, "gen_seconds": round(seconds, 2), "gen_tokens_per_s": round(tokens / seconds, 1),
            "answers": [a.text for a in answers]}


def generation_and_quality(name: str, dtype: str, env: ZWCEnv, args, out: Path) -> dict:
    """Tokens/s over the closed-book prompts, then open-book pass@1, with one loaded model."""
    model = load_model(name, dtype=dtype, cache=False)
    speed = greedy_speed(model, env, args.prompts, args.gen_tokens)
    results = out / f"{name}-{dtype}-open.jsonl"
    results.unlink(missing_ok=True)
    # transformers in both dtypes: the comparison is of dtypes, not of engines (engine_speed is that)
    report = Agent(model=model, max_tokens=args.max_tokens, engine="transformers").evaluate(
        env, split="single_test", n=1, mode="open", limit=args.eval_tasks, out=str(results))
    return {**speed, "pass_at_1": report.pass_at.get(1, 0.0),
            "passed": round(report.pass_at.get(1, 0.0) * report.n_tasks), "eval_tasks": report.n_tasks}


def training(name: str, dtype: str, data: Path, args, tmp: Path) -> dict:
    """One SFT run in its own process (its memory is its own); the trainer's own token count."""
    settings = tmp / f"{name}-{dtype}.json"
    settings.write_text(json.dumps(asdict(SFTSettings(max_steps=args.train_steps, batch_size=args.batch_size,
                                                      save_steps=10 * args.train_steps, logging_steps=1,
                                                      warmup_ratio=0.0, dtype=dtype))))
    done = subprocess.run([sys.executable, "-m", "learners.training.sft_train", "--data", str(data), "--base",
                           str(embedded_directory(name)), "--variant", "closed", "--out", str(tmp / f"{name}-{dtype}"),
                           "--model-dir", str(tmp / f"{name}-{dtype}-model"), "--settings", str(settings)],
                          check=True, capture_output=True, text=True)
    result = json.loads([line for line in done.stdout.splitlines() if line.startswith('{"')][-1])
    if result["dtype"] != dtype:
        raise RuntimeError(f"asked the trainer for {dtype}, it ran {result['dtype']}")
    return {"train_tokens": result["tokens"], "train_seconds": result["seconds"],
            "train_tokens_per_s": result["tokens_per_second"], "first_loss": result["first_loss"],
            "last_loss": result["last_loss"], "peak_memory_mb": result["peak_memory_mb"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zwc", type=Path, default=Path(".bench/zwc-seed0"))
    parser.add_argument("--models", default="smollm2-135m,qwen2.5-coder-0.5b")
    parser.add_argument("--prompts", type=int, default=16, help="closed-book prompts timed for generation")
    parser.add_argument("--gen-tokens", type=int, default=64)
    parser.add_argument("--eval-tasks", type=int, default=16, help="single_test tasks for open-book pass@1")
    parser.add_argument("--max-tokens", type=int, default=160, help="answer length in the pass@1 runs")
    parser.add_argument("--train-tasks", type=int, default=8, help="reference trajectories trained on")
    parser.add_argument("--train-steps", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--out", type=Path, default=Path(".bench/dtype_speed"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    console = Console()
    console.print(f"CPU bf16 units (AMX / AVX-512-BF16): {cpu_has_bf16()}; auto resolves to {resolve_dtype('auto')}")
    runs: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="dtype-bench-") as tmp_name, ZWCEnv.load(args.zwc) as env:
        tmp = Path(tmp_name)
        data = tmp / "trajectories.jsonl"
        collect(Agent(model="reference"), env, env.tasks("train")[: args.train_tasks], data)
        for name in args.models.split(","):
            for dtype in DTYPES:
                console.print(f"{name}, {dtype}: generation, open-book pass@1, training …")
                runs.setdefault(name, {})[dtype] = {**generation_and_quality(name, dtype, env, args, args.out),
                                                    **training(name, dtype, data, args, tmp)}
    table = Table(title=f"float32 vs bfloat16 ({args.prompts} prompts x {args.gen_tokens} tokens; {args.train_steps} "
                        f"SFT steps of {args.batch_size}; open-book pass@1 on {args.eval_tasks} tasks)")
    for col in ("model", "gen tok/s fp32", "gen tok/s bf16", "gen ratio", "answers changed", "train tok/s fp32",
                "train tok/s bf16", "train ratio", "pass@1 fp32", "pass@1 bf16", "bf16 - fp32"):
        table.add_column(col, justify="left" if col == "model" else "right")
    summary = {}
    for name, by in runs.items():
        f, b = by["float32"], by["bfloat16"]
        changed = sum(x != y for x, y in zip(f["answers"], b["answers"], strict=True))
        summary[name] = {"generation_ratio": round(b["gen_tokens_per_s"] / f["gen_tokens_per_s"], 2),
                         "training_ratio": round(b["train_tokens_per_s"] / f["train_tokens_per_s"], 2),
                         "answers_changed": changed,
                         "pass_at_1_points": round(100 * (b["pass_at_1"] - f["pass_at_1"]), 1)}
        table.add_row(name, f"{f['gen_tokens_per_s']:.1f}", f"{b['gen_tokens_per_s']:.1f}",
                      f"{summary[name]['generation_ratio']:.2f}x", f"{changed}/{len(f['answers'])}",
                      f"{f['train_tokens_per_s']:.1f}", f"{b['train_tokens_per_s']:.1f}",
                      f"{summary[name]['training_ratio']:.2f}x", f"{100 * f['pass_at_1']:.1f}%",
                      f"{100 * b['pass_at_1']:.1f}%", f"{summary[name]['pass_at_1_points']:+.1f} pts")
    console.print(table)
    config = vars(args) | {"zwc": str(args.zwc), "out": str(args.out), "code_version": code_version(),
                           "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    (args.out / "summary.json").write_text(json.dumps({"config": config, "summary": summary, "runs": runs},
                                                      indent=1) + "\n")
    console.print(f"details: {args.out / 'summary.json'}")


if __name__ == "__main__":
    main()
