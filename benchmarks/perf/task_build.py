"""Task build speed: time to generate and sandbox-verify the default task sets.

    python -m benchmarks.perf.task_build [--seed 0] [--workers N] [--no-embed]

Builds a fresh ZWC (seed 0) and its three splits at the default sizes (718 train, 278
single_test, 440 multiple_test) as `sebench tasks build` does (with the MiniLM embedder for
the near-duplicate check of split hygiene; ``--no-embed``: without it, as the library default)
and prints the build time, the embedder's share of it, kept tasks per second and the hygiene
counts (verbatim and near-duplicate test/train query pairs, shared inputs: all should be 0).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envs.zwc.env import build_directory
from envs.zwc.library.names import Mapping
from envs.zwc.tasks import build_tasks
from memory import Embedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--no-embed", action="store_true", help="skip the near-duplicate check (no embedder)")
    parser.add_argument("--out", type=Path, default=Path(".bench/task_build.json"))
    args = parser.parse_args()
    embed = None
    if not args.no_embed:
        embedder = Embedder()
        embedder.embed(["load the model before the clock starts"])
        embed = embedder.embed
    with tempfile.TemporaryDirectory(prefix="zwc-taskbench-") as tmp:
        started = time.perf_counter()
        build_directory(Mapping.generate(args.seed), tmp)
        zwc_seconds = time.perf_counter() - started
        report = build_tasks(tmp, seed=args.seed, workers=args.workers, embed=embed)
    kept = sum(s.kept for s in report.splits.values())
    table = Table(title=f"task build, seed {args.seed}, {args.workers} workers")
    for col in ("stage", "seconds", "tasks", "tasks/s"):
        table.add_column(col, justify="right")
    table.add_row("zwc package + docs", f"{zwc_seconds:.1f}", "", "")
    table.add_row("tasks (generate + verify)", f"{report.seconds:.1f}", str(kept), f"{report.tasks_per_second:.0f}")
    table.add_row("  of which: embedding queries", f"{report.hygiene_seconds:.1f}" if embed else "not run", "", "")
    Console().print(table)
    hygiene = {split: {"verbatim_pairs": h.verbatim_pairs, "near_duplicate_pairs": h.near_duplicate_pairs,
                       "shared_inputs": h.shared_inputs, "max_cosine": h.max_cosine}
               for split, h in report.hygiene.items()}
    Console().print(f"split hygiene: {hygiene}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"seed": args.seed, "workers": args.workers, "zwc_seconds": zwc_seconds,
                                    "task_seconds": report.seconds, "embed_seconds": report.hygiene_seconds,
                                    "tasks": kept, "tasks_per_second": report.tasks_per_second,
                                    "hygiene": hygiene}, indent=1))


if __name__ == "__main__":
    main()
