"""Does CTranslate2's int8 keep what a learner taught the weights? Base and trained model, per engine.

    python -m benchmarks.perf.int8_learned --run .bench/int8/closed-sft [--zwc .bench/zwc-seed0]

int8 rounds each weight to 1/127 of its row's largest; fine-tuning at lr 1e-4 for a few steps
moves weights by less than that step, so int8 could evaluate a trained model as if it were
the base one. This runs, for the run's base model and its trained model (``RUN/model``, e.g.
``sebench evolve --learner closed-sft``), on each engine (transformers float32, CTranslate2
float32, CTranslate2 int8), on the same inputs:

* closed-book pass@1 (greedy, one sample) on the single_test tasks of the functions the run
  trained, with a 95% Wilson interval, and on the train tasks it trained on (what fine-tuning
  put into the weights most directly);
* API recall of the trained functions (``agents.probe``);
* how many closed-book answers are transformers float32's exactly.

The learned delta survives int8 when the trained model's int8 figures stay inside its float32
interval and apart from the base model's. Writes ``OUT/int8_learned.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agents import Agent
from agents.models.embedded import embedded_directory
from agents.probe import probe
from benchmarks.perf.engine_speed import ENGINES, load, wilson_interval
from envs.zwc import ZWCEnv


def train_limit(run: Path) -> int | None:
    """How many train tasks the run's learner used (its ``limit``; None: all)."""
    return (json.loads((run / "run.json").read_text()).get("settings") or {}).get("limit")


def trained_functions(run: Path, env: ZWCEnv) -> list[str]:
    """The numpy functions of the train tasks the run's learner used."""
    return sorted({f for t in env.tasks("train")[:train_limit(run)] for f in t.selected_functions})


def measure(label: str, path: Path, engine: str, env: ZWCEnv, functions: list[str], out: Path,
            max_tokens: int, trained: int | None) -> dict:
    model, _ = load(engine, path, f"{label}/{engine}")
    try:
        started = time.perf_counter()
        results = out / f"{label}-{engine}.jsonl"
        results.unlink(missing_ok=True)
        report = Agent(model=model, max_tokens=max_tokens, engine="transformers").evaluate(
            env, split="single_test", n=1, mode="closed", out=str(results), functions=functions)
        passed = round(report.pass_at.get(1, 0.0) * report.n_tasks)
        seen = Agent(model=model, max_tokens=max_tokens, engine="transformers").evaluate(
            env, split="train", n=1, mode="closed", out=str(out / f"{label}-{engine}-train.jsonl"), limit=trained)
        seen_passed = round(seen.pass_at.get(1, 0.0) * seen.n_tasks)
        answers = {(r := json.loads(line))["task_id"]: r["code"] for line in results.read_text().splitlines()}
        subset = [e for e in env.mapping if e.numpy in {f"numpy.{f}" for f in functions}]
        recall = probe(model, _Subset(env.mapping, subset)).recall
    finally:
        if hasattr(model, "close"):
            model.close()
    return {"model": label, "engine": engine, "tasks": report.n_tasks, "passed": passed,
            "pass_at_1": report.pass_at.get(1, 0.0), "interval": wilson_interval(passed, report.n_tasks),
            "recall": recall, "answers": answers, "train_tasks": seen.n_tasks, "train_passed": seen_passed,
            "train_interval": wilson_interval(seen_passed, seen.n_tasks),
            "seconds": round(time.perf_counter() - started, 1)}


class _Subset:
    """A mapping's entries for the probe to ask about, with the whole mapping's names and origin."""

    def __init__(self, mapping, entries):
        self._mapping, self._entries = mapping, entries
        self.origin = mapping.origin

    def __iter__(self):
        return iter(self._entries)

    def __getattr__(self, name):
        return getattr(self._mapping, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a run of sebench evolve with a trained model")
    parser.add_argument("--zwc", type=Path, default=Path(".bench/zwc-seed0"), help="the run's ZWC build")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--out", type=Path, default=Path(".bench/int8_learned"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    record = json.loads((args.run / "run.json").read_text())
    base = Path(record["model"]) if Path(record["model"]).is_dir() else embedded_directory(record["model"])
    env = ZWCEnv.load(args.zwc)
    try:
        functions = trained_functions(args.run, env)
        rows = [measure(label, path, engine, env, functions, args.out, args.max_tokens, train_limit(args.run))
                for label, path in (("base", base), ("trained", args.run / "model")) for engine in ENGINES]
    finally:
        env.close()
    table = Table(title=f"{args.run}: closed-book on the single_test tasks of {len(functions)} trained functions")
    for col in ("model", "engine", "pass@1 [95%]", "pass@1 on its train tasks [95%]", "recall (trained fns)",
                "answers = transformers f32's", "s"):
        table.add_column(col, justify="right")
    for row in rows:
        reference = next(r for r in rows if r["model"] == row["model"] and r["engine"] == "transformers")
        row["same_answers"] = sum(code == reference["answers"].get(task) for task, code in row["answers"].items())
        low, high = row["interval"]
        seen_low, seen_high = row["train_interval"]
        table.add_row(row["model"], row["engine"], f"{100 * row['pass_at_1']:.1f}% [{100 * low:.0f}, {100 * high:.0f}]",
                      f"{row['train_passed']}/{row['train_tasks']} [{100 * seen_low:.0f}, {100 * seen_high:.0f}]",
                      f"{100 * row['recall']:.1f}%", f"{row['same_answers']}/{len(reference['answers'])}",
                      f"{row['seconds']:.0f}")
    Console().print(table)
    (args.out / "int8_learned.json").write_text(json.dumps({"run": str(args.run), "functions": functions,
                                                            "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
