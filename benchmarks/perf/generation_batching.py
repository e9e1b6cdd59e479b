"""Generation throughput: 32 prompts batched versus one at a time, same model, greedy.

    python -m benchmarks.perf.generation_batching [--model smollm2-135m] [--prompts 32] [--max-tokens 64]

Prints generated tokens per second both ways and the ratio (target >= 4x on 2 CPU cores).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agents.models import load_model
from envs.zwc.library.catalogue import CATALOGUE
from envs.zwc.tasks.phrasing import summary


def prompts(count: int) -> list[list[dict[str, str]]]:
    """Distinct, task-like prompts: one per catalogued function, in catalogue order."""
    out = []
    for entry in CATALOGUE[:count]:
        out.append([{"role": "system", "content": "Answer with a single ```python code block."},
                    {"role": "user", "content": f"Write a Python function solve(x) for this task: {summary(entry)}"}])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--out", type=Path, default=Path(".bench/generation_batching.json"))
    args = parser.parse_args()
    model = load_model(args.model)
    batch = prompts(args.prompts)
    model.generate(batch[:2], max_tokens=4)  # warm-up
    started = time.perf_counter()
    one_by_one = [model.generate([p], max_tokens=args.max_tokens)[0][0] for p in batch]
    single_s = time.perf_counter() - started
    started = time.perf_counter()
    batched = [c[0] for c in model.generate(batch, max_tokens=args.max_tokens)]
    batched_s = time.perf_counter() - started
    single_tps = sum(c.tokens for c in one_by_one) / single_s
    batched_tps = sum(c.tokens for c in batched) / batched_s
    same = sum(a.text == b.text for a, b in zip(one_by_one, batched, strict=True))
    table = Table(title=f"generation, {args.model}, {args.prompts} prompts, greedy, {args.max_tokens} tokens max")
    for col in ("mode", "seconds", "tokens", "tokens/s"):
        table.add_column(col, justify="right")
    table.add_row("one at a time", f"{single_s:.1f}", str(sum(c.tokens for c in one_by_one)), f"{single_tps:.1f}")
    table.add_row("batched", f"{batched_s:.1f}", str(sum(c.tokens for c in batched)), f"{batched_tps:.1f}")
    console = Console()
    console.print(table)
    console.print(f"batching speed-up: [bold]{batched_tps / single_tps:.1f}x[/bold] (target >= 4x); "
                  f"identical answers both ways: {same}/{len(batch)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"model": args.model, "prompts": args.prompts, "max_tokens": args.max_tokens,
                                    "single_tokens_per_s": single_tps, "batched_tokens_per_s": batched_tps,
                                    "speedup": batched_tps / single_tps, "identical": same}, indent=1))


if __name__ == "__main__":
    main()
