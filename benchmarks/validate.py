"""SE-Bench's design validation on one build: the three diagnostic properties.

* impossible without the docs: closed-book must pass nothing, and no closed-book answer may
  call a real zwc name (it cannot know one);
* trivial with them: open-book and the NumPy control show the logic is within reach;
* the grader is right: the reference agent passes.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

from agents import Agent, EvalReport
from envs.zwc import ZWCEnv


@dataclass
class ValidationResult:
    reports: list[EvalReport]
    real_names_in_closed_book: list[str]

    @property
    def closed(self) -> EvalReport:
        return self.reports[0]

    @property
    def reference(self) -> EvalReport:
        return self.reports[3]

    @property
    def ok(self) -> bool:
        return (self.closed.pass_at.get(1, 0.0) == 0.0 and not self.real_names_in_closed_book
                and self.reference.pass_at.get(1, 0.0) >= 0.99)

    def verdict_text(self) -> str:
        lines = [f"closed-book pass@1 = {100 * self.closed.pass_at.get(1, 0):.1f}% (must be 0)",
                 f"closed-book answers calling a real zwc name: {len(self.real_names_in_closed_book)} (must be 0)",
                 f"reference pass@1 = {100 * self.reference.pass_at.get(1, 0):.1f}% (must be >= 99%)",
                 f"reference target use = {_percent(self.reference.target_use_rate)} (passing answers that ran "
                 "every function their task names)"]
        return "\n".join(lines) + ("\nvalid" if self.ok else "\nNOT valid")


def _percent(rate: float | None) -> str:
    return "unknown" if rate is None else f"{100 * rate:.1f}%"


def real_zwc_names(code: str, names: frozenset[str]) -> set[str]:
    """The real zwc paths a piece of code mentions (``zwc.kocito``, ``zwc.rfx.quvohe``)."""
    found = set()
    try:
        tree = ast.parse(code)
    except SyntaxError:  # unparseable answers still count if they spell a real name
        return {m for m in re.findall(r"zwc(?:\.rfx)?\.\w+", code) if m in names}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts, cur = [node.attr], node.value
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name):
                path = ".".join(["zwc", *reversed(parts)])
                if path in names:
                    found.add(path)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("zwc"):
            found |= {f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in names}
    return found


def file_part(name: str) -> str:
    """A model's name as one file-name part: a directory or ``openai:http://host/v1#m`` has slashes."""
    return re.sub(r"[^\w.+-]+", "_", name).strip("_") or "model"


def validate(env: ZWCEnv, agent: Agent, split: str = "single_test", limit: int = 20,
             out_dir: str | Path = "validate") -> ValidationResult:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs = [(agent, "closed"), (agent, "open"), (agent, "numpy"),
            (Agent(model="reference", concurrency=agent.concurrency, temperature=agent.temperature), "closed")]
    reports = []
    for i, (who, mode) in enumerate(runs):
        path = out / f"{i}-{file_part(who.name)}-{mode}.jsonl"
        path.unlink(missing_ok=True)
        reports.append(who.evaluate(env, split=split, n=1, mode=mode, out=str(path), limit=limit))
    names = frozenset(e.zwc for e in env.mapping)  # the functions; constants like zwc.pi are guessable
    real = []
    for line in Path(reports[0].results_path).read_text().splitlines():
        record = json.loads(line)
        hits = real_zwc_names(record["code"], names)
        if hits:
            real.append(f"{record['task_id']}: {', '.join(sorted(hits))}")
    return ValidationResult(reports, real)
