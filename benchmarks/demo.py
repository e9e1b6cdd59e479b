"""``make demo``: the main job on the embedded default, one step at a time, each step timed.

Fresh ZWC names and tasks, the docs' examples checked, ``sebench validate`` (closed-book 0%,
open-book and the NumPy control above it), ExpeL against no learner with the capable model
gathering its own experience, and the paper-style report. Each step is the ``sebench`` command a
user would type (printed before it runs), so the demo is also a worked example; the step times
land in ``OUT/demo_timings.json`` and in a table at the end. Answers are decoded greedily
(``--temperature 0``): a rerun on the same kind of machine gives the same figures, and a float32
CPU model answers through CTranslate2 where it is installed (``--engine auto``). The slices (tasks, token budget)
were picked by measurement to hold the whole demo under 20 minutes on a 2-core CPU without bf16
units (``docs/results/demo.md``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

MODEL = "qwen2.5-coder-0.5b"


def steps(out: Path, *, seed: int, limit: int, train_limit: int, max_tokens: int,
          model: str) -> list[tuple[str, list[str]]]:
    """(what the step does, the command) in order."""
    zwc = out / f"zwc-seed{seed}"
    sebench = [sys.executable, "-m", "benchmarks.cli"]
    budget = ["--max-tokens", str(max_tokens), "--temperature", "0"]  # greedy: the same answers on every run
    return [
        (f"fresh ZWC names for seed {seed}", [*sebench, "zwc", "build", "--seed", str(seed), "--out", str(zwc)]),
        ("train and test tasks, verified by execution",
         [*sebench, "tasks", "build", "--zwc", str(zwc), "--seed", str(seed)]),
        ("do the docs' examples run?",
         [sys.executable, "-m", "envs.zwc.library.doc_examples", str(zwc), "--json", str(zwc / "doc_examples.json")]),
        (f"validate on {limit} tasks: closed-book, open-book, NumPy control, reference",
         [*sebench, "validate", "--zwc", str(zwc), "--model", model, "--limit", str(limit), *budget]),
        (f"ExpeL vs no learner, {train_limit} train tasks gathered by {model} itself, {limit} test tasks",
         [*sebench, "compare", "--zwc", str(zwc), "--learners", "none,expel", "--model", model, "--gather-model", "",
          "--limit", str(limit), "--train-limit", str(train_limit), *budget, "--out", str(out / "compare")]),
        ("the report (markdown, plots, one HTML page)",
         [*sebench, "report", "--runs", str(out / "compare"), str(zwc / "validate"), "--out", str(out / "report")]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=12, help="test tasks of validate and compare")
    parser.add_argument("--train-limit", type=int, default=12, help="train tasks ExpeL gathers on")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--model", default=MODEL)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    plan = steps(args.out, seed=args.seed, limit=args.limit, train_limit=args.train_limit,
                 max_tokens=args.max_tokens, model=args.model)
    timings, start = [], time.monotonic()
    for i, (what, command) in enumerate(plan, 1):
        shown = shlex.join(["sebench", *command[3:]] if command[1:3] == ["-m", "benchmarks.cli"] else command[2:])
        print(f"\n[{i}/{len(plan)}] {what}\n$ {shown}", flush=True)
        began = time.monotonic()
        done = subprocess.run(command)
        seconds = time.monotonic() - began
        timings.append({"step": what, "command": shown, "seconds": round(seconds, 1), "returncode": done.returncode})
        print(f"[{i}/{len(plan)}] {'done' if done.returncode == 0 else 'FAILED'} in {_clock(seconds)}", flush=True)
        if done.returncode != 0:
            break
    total = time.monotonic() - start
    (args.out / "demo_timings.json").write_text(json.dumps(
        {"steps": timings, "seconds": round(total, 1), "machine": _machine()}, indent=1) + "\n")
    print("\nstep times:")
    for i, row in enumerate(timings, 1):
        print(f"  {i}. {_clock(row['seconds']):>8}  {row['step']}")
    print(f"  total {_clock(total)} on {_machine()}; report: {args.out / 'report' / 'report.md'}")
    return next((row["returncode"] for row in timings if row["returncode"]), 0)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def _machine() -> str:
    from benchmarks.machine import machine

    return machine()


if __name__ == "__main__":
    sys.exit(main())
