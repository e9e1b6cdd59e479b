"""Where an RL step's time and memory go, one rollout path (or dtype) against another, same run.

    python -m benchmarks.perf.rl_step [--zwc .bench/zwc-seed0] [--model qwen2.5-coder-0.5b] [--steps 2]
        [--compare engine|dtype]

``--compare engine`` (the default): trl's padded ``model.generate`` (``rollout_engine=generate``, the
path before issue 35) against the grouped rollouts (``rollout_engine=grouped``: each distinct prompt
prefilled once, finished rows leave the batch), both in the machine's default dtype.
``--compare dtype``: float32 against bfloat16, both on the default engine.

For each side, in one run, the same Closed-RL training (same train tasks, same settings, same seed),
each in its own process so neither inherits the other's threads, caches or heap:

* seconds per GRPO step, and the share spent rolling out, grading (the sandbox verdicts, batched
  through the fork-server pool) and updating;
* rollout tokens/s (completion tokens generated per second) and update tokens/s (prompt +
  completion tokens through log-probs, loss and backward per second);
* peak RSS of the training process;
* the first steps' pass rate and loss, so a faster path that learns something else is visible
  (the two engines draw different samples: equal rewards are not expected, a similar level is).

Ratios are the second side over the first, measured in the same run.
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

SIDES = {"engine": (("generate", {"rollout_engine": "generate"}), ("grouped", {"rollout_engine": "grouped"})),
         "dtype": (("float32", {"dtype": "float32"}), ("bfloat16", {"dtype": "bfloat16"}))}


def one_run(zwc: str, model: str, changes: dict, steps: int, tasks: int, out: str) -> dict:
    """One Closed-RL training in this process; returns ``RLResult`` as a dict with its log's losses."""
    from agents.models.embedded import SPECS, embedded_directory
    from envs.zwc import ZWCEnv
    from learners.rl import rollout_prompts
    from learners.training.rl_settings import RLSettings
    from learners.training.rl_train import train_rl

    base = embedded_directory(model) if model in SPECS else Path(model)
    settings = RLSettings(**{"max_steps": steps, "save_steps": 10_000, **changes})
    with ZWCEnv(zwc) as env:
        prompts = rollout_prompts(env, env.tasks("train")[:tasks], 1200)
        result = train_rl(prompts, base, "closed", Path(out) / "train", Path(out) / "model", settings, env=env)
    log = [json.loads(line) for line in (Path(out) / "train" / "rl_log.jsonl").read_text().splitlines()]
    losses = [round(e["loss"], 6) for e in log if e.get("event") == "log" and "loss" in e]
    return asdict(result) | {"losses": losses}


def _row(label: str, r: dict, steps: int) -> list[str]:
    total = r["seconds"] or 1.0
    return [label, f"{r['seconds'] / max(r['steps'], 1):.0f}", f"{r['rollout_seconds'] / total:.0%}",
            f"{r['grading_seconds'] / total:.1%}", f"{r['update_seconds'] / total:.0%}",
            f"{r['rollout_tokens_per_second']:.1f}", f"{r['update_tokens_per_second']:.1f}",
            f"{r['peak_memory_mb'] / 1024:.1f}", " ".join(f"{x:.2f}" for x in r["reward_per_rollout"][:steps]),
            " ".join(f"{x:.3g}" for x in r["losses"][:steps])]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--zwc", default=".bench/zwc-seed0")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--compare", choices=sorted(SIDES), default="engine")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one side (JSON changes) in WORKDIR
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help="also write both runs' results as JSON here")
    args = parser.parse_args(argv)
    if args.one:
        result = one_run(args.zwc, args.model, json.loads(args.one), args.steps, args.tasks, args.workdir)
        print("RESULT " + json.dumps(result))
        return
    results = {}
    for label, changes in SIDES[args.compare]:
        with tempfile.TemporaryDirectory() as tmp:
            done = subprocess.run([sys.executable, "-m", "benchmarks.perf.rl_step", "--zwc", args.zwc, "--model",
                                   args.model, "--steps", str(args.steps), "--tasks", str(args.tasks), "--one",
                                   json.dumps(changes), "--workdir", tmp], capture_output=True, text=True, check=False)
            line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
            if line is None:
                sys.exit(f"the {label} run failed:\n{done.stderr[-3000:]}")
            results[label] = json.loads(line[7:]) | {"changes": changes}
            print(f"{label}: {results[label]['seconds']:.0f} s", file=sys.stderr, flush=True)
    table = Table(title=f"RL step, Closed-RL, {args.model}: {args.steps} steps on {args.tasks} train tasks")
    for col in (args.compare, "s/step", "rollout", "grading", "update", "rollout tok/s", "update tok/s",
                "peak GB", "pass rate per step", "loss per step"):
        table.add_column(col, justify="right")
    for label, r in results.items():
        table.add_row(*_row(label, r, args.steps))
    console = Console()
    console.print(table)
    (first, a), (second, b) = results.items()
    rollout = b["rollout_tokens_per_second"] / a["rollout_tokens_per_second"]
    update = b["update_tokens_per_second"] / a["update_tokens_per_second"]
    console.print(f"{second} / {first}: rollout tokens/s x{rollout:.2f}, update tokens/s x{update:.2f}, "
                  f"step time x{a['seconds'] / b['seconds']:.2f} shorter, "
                  f"peak RSS {a['peak_memory_mb'] / 1024:.1f} -> {b['peak_memory_mb'] / 1024:.1f} GB")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
