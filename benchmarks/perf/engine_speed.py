"""Generation engines side by side: transformers, CTranslate2 float32 and CTranslate2 int8.

    python -m benchmarks.perf.engine_speed [--zwc .bench/zwc-seed0] [--model qwen2.5-coder-0.5b]

In one run, on the same inputs, for each engine:

* generation: generated tokens/s over the closed-book prompts of the first ``--prompts`` single_test
  tasks, batched, greedy, ``--gen-tokens`` new tokens, and how many greedy answers are
  transformers' answers exactly;
* quality: open-book pass@1 (greedy) on the first ``--eval-tasks`` single_test tasks, with a 95%
  Wilson interval (closed-book is 0% by design; with the docs in the prompt the model passes tasks);
* the conversion (once per weights and quantisation, then cached: 0 s on a second run).

Ratios are against transformers in float32 measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agents import Agent
from agents.models.ct2_convert import converted_directory
from agents.models.ct2_model import CT2Model
from agents.models.embedded import embedded_directory
from agents.models.transformers_model import TransformersModel
from benchmarks.perf.dtype_speed import greedy_speed
from envs.zwc import ZWCEnv

ENGINES = ("transformers", "ct2-float32", "ct2-int8")


def wilson_interval(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a pass rate (honest at 0/n and n/n, unlike the normal one)."""
    if n == 0:
        return 0.0, 1.0
    rate = passed / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def load(engine: str, path: Path, name: str) -> tuple[object, float]:
    """The engine's model and the seconds its conversion took (0 when it was cached)."""
    if engine == "transformers":
        return TransformersModel(path, name=name, dtype="float32"), 0.0
    quantization = engine.split("-", 1)[1]
    started = time.perf_counter()
    converted_directory(path, quantization)
    return CT2Model(path, name=name, quantization=quantization), time.perf_counter() - started


def measure(engine: str, env: ZWCEnv, args, out: Path) -> dict:
    path = embedded_directory(args.model) if not Path(args.model).is_dir() else Path(args.model)
    model, convert_s = load(engine, path, args.model)
    speed = greedy_speed(model, env, args.prompts, args.gen_tokens)
    results = out / f"{engine}-open.jsonl"
    results.unlink(missing_ok=True)
    started = time.perf_counter()
    report = Agent(model=model, max_tokens=args.max_tokens, engine="transformers").evaluate(
        env, split="single_test", n=1, mode="open", limit=args.eval_tasks, out=str(results))
    passed = round(report.pass_at.get(1, 0.0) * report.n_tasks)
    if hasattr(model, "close"):
        model.close()
    return {"engine": engine, "convert_seconds": round(convert_s, 1), **speed, "passed": passed,
            "eval_tasks": report.n_tasks,
            "pass_at_1": report.pass_at.get(1, 0.0), "interval": wilson_interval(passed, report.n_tasks),
            "eval_seconds": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zwc", type=Path, default=Path(".bench/zwc-seed0"), help="a ZWC build with tasks")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="an embedded model or a model directory")
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--gen-tokens", type=int, default=96)
    parser.add_argument("--eval-tasks", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--out", type=Path, default=Path(".bench/engine_speed"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    env = ZWCEnv.load(args.zwc)
    try:
        rows = [measure(engine, env, args, args.out) for engine in ENGINES]
    finally:
        env.close()
    base = rows[0]
    table = Table(title=f"generation engines, {args.model}: {args.prompts} closed-book prompts, greedy, "
                        f"{args.gen_tokens} tokens; open-book pass@1 on {args.eval_tasks} tasks")
    for col in ("engine", "tokens/s", "vs transformers", "answers = transformers'", "open-book pass@1 [95%]",
                "eval s", "conversion s"):
        table.add_column(col, justify="right")
    for row in rows:
        same = sum(a == b for a, b in zip(row["answers"], base["answers"], strict=True))
        row["same_answers"] = same
        low, high = row["interval"]
        table.add_row(row["engine"], f"{row['gen_tokens_per_s']:.1f}",
                      f"{row['gen_tokens_per_s'] / base['gen_tokens_per_s']:.2f}x", f"{same}/{len(base['answers'])}",
                      f"{100 * row['pass_at_1']:.1f}% [{100 * low:.0f}, {100 * high:.0f}]",
                      f"{row['eval_seconds']:.0f}", f"{row['convert_seconds']:.0f}")
    Console().print(table)
    (args.out / "engine_speed.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
