"""LLM-driven task generation, SE-Bench's own pipeline, for users with model access
(``sebench tasks propose``). It lived in ``envs/zwc/tasks/``; it moved here because it drives
chat models, which the environment should not need to know about (issue 13). Self-play's
own proposer, in a format small models keep, is ``proposer.py``.

1. *Propose*: a model gets a sampled function and writes a task in a sectioned format
   (problem, signature, >= 8 test inputs, a NumPy solution).
2. *Execute*: the proposed solution runs in the sandbox (NumPy control mode: it is model
   code) on the inputs; expected outputs come only from that execution.
3. *Consensus*: each solver model must solve the task in NumPy form (graded in the
   sandbox against those outputs); a task that any solver fails is dropped.
4. *Verify*: the solution is translated to ZWC and must pass closed-book grading.
A random 10% of kept tasks is exported for human review. Every drop is counted by
stage, so the acceptance rate is reported honestly: with the embedded 135M model it is
low, which is the point of the consensus filter, not a defect of the pipeline.

Models are anything with ``generate(prompts, n=, temperature=, max_tokens=)`` (the agents'
Model protocol); this module imports none of them.
"""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.seeding import derive_seed, supports_seeds
from envs.zwc import CATALOGUE, MIN_TESTS, Entry, Task, TestCase, ZWCEnv, selected_name, summary, translate_numpy

PROPOSE = """Write a small programming task that is solved by calling numpy.{name}.
{summary}
Answer in exactly this format:
PROBLEM:
<the task in plain words; do not name any numpy function>
SIGNATURE:
def solve(<parameters>):
INPUTS:
<one test input per line as keyword arguments, for example: x=[1.0, 2.0]; at least 8 lines>
SOLUTION:
```python
import numpy as np

def solve(<parameters>):
    ...
```"""
SOLVE = ("Solve the task with NumPy (import numpy as np). Answer with one ```python code block.\n\n"
         "{query}\n\nComplete this function:\n{signature}\n\nExample: with {example} the result is {output}")


class ChatModel(Protocol):
    name: str

    def generate(self, prompts: list, *, n: int = 1, temperature: float = 0.0, max_tokens: int = 512,
                 stop: list[str] | None = None) -> list: ...


@dataclass
class Proposal:
    entry: Entry
    query: str
    signature: str
    inputs: list[str]
    solution: str


@dataclass
class LLMReport:
    attempts: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    review: list[str] = field(default_factory=list)

    @property
    def acceptance_rate(self) -> float:
        return self.kept / self.attempts if self.attempts else 0.0


_SECTION = re.compile(r"^(PROBLEM|SIGNATURE|INPUTS|SOLUTION):\s*$", re.MULTILINE)
_CODE = re.compile(r"```(?:python|py)?\s*\n(.*?)(?:```|\Z)", re.DOTALL)


def parse_proposal(text: str, entry: Entry) -> Proposal | str:
    """The proposal in ``text``, or the reason it cannot be used."""
    parts = _SECTION.split(text)
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    missing = [s for s in ("PROBLEM", "SIGNATURE", "INPUTS", "SOLUTION") if not sections.get(s)]
    if missing:
        return f"missing section {missing[0]}"
    signature = sections["SIGNATURE"].splitlines()[0].strip()
    if not re.match(r"^def\s+\w+\s*\(.*\)\s*:$", signature):
        return "signature is not a def line"
    inputs = []
    for line in sections["INPUTS"].splitlines():
        line = line.strip().strip("`").strip()
        try:
            call = ast.parse(f"f({line})", mode="eval").body
        except SyntaxError:
            continue
        if isinstance(call, ast.Call) and call.keywords and not call.args:
            inputs.append(line)
    if len(inputs) < MIN_TESTS:
        return f"only {len(inputs)} usable inputs"
    code = _CODE.search(sections["SOLUTION"])
    solution = (code.group(1) if code else sections["SOLUTION"]).strip() + "\n"
    try:
        ast.parse(solution)
    except SyntaxError:
        return "solution does not parse"
    return Proposal(entry, sections["PROBLEM"], signature, inputs, solution)


def _task(proposal: Proposal, outputs: list[tuple[str, str]], index: int) -> Task:
    tests = [TestCase(input=i, output=o) for i, o in outputs]
    return Task(task_id=f"llm-{index}-{proposal.entry.short}", split="llm", kind=proposal.entry.kind,
                selected_functions=[selected_name(proposal.entry)], query=proposal.query,
                function_name=proposal.signature, test_cases=tests, example=tests[0],
                example_output=[proposal.solution])


def execute(env: ZWCEnv, proposal: Proposal) -> list[tuple[str, str]] | str:
    """Expected outputs by running the proposed NumPy solution in the sandbox."""
    entry_point = re.match(r"def\s+(\w+)", proposal.signature).group(1)
    run = env.run(proposal.solution, entry_point, proposal.inputs, numpy_mode=True)
    outputs = [(proposal.inputs[i], repr(t.value)) for i, t in enumerate(run.tests) if t is not None and t.ok]
    if len(outputs) < MIN_TESTS:
        return f"solution ran on only {len(outputs)} inputs"
    if len({o for _, o in outputs}) == 1:
        return "a constant answer passes"
    return outputs


def consensus(env: ZWCEnv, task: Task, solvers: list[ChatModel], max_tokens: int) -> str:
    """'' if every solver solves ``task`` in NumPy form, else who failed."""
    prompt = [{"role": "user", "content": SOLVE.format(query=task.query, signature=task.function_name,
                                                       example=task.test_cases[0].input,
                                                       output=task.test_cases[0].output)}]
    for solver in solvers:
        [[completion]] = solver.generate([prompt], n=1, temperature=0.0, max_tokens=max_tokens)
        code = _CODE.search(completion.text)
        verdict = env.check(task, code.group(1) if code else completion.text, mode="numpy")
        if not verdict.passed:
            return f"solver {solver.name} failed ({verdict.failure.value})"
    return ""


def process(env: ZWCEnv, proposal: Proposal, solvers: list[ChatModel], index: int,
            max_tokens: int = 512) -> Task | str:
    """A verified task from a parsed proposal, or the reason it was dropped."""
    names = {e.short for e in CATALOGUE} | {e.short for e in env.mapping}
    if re.search(r"\b(?:np|numpy)\.\w", proposal.query) or any(
            re.search(rf"\b{re.escape(n)}\(", proposal.query) for n in names):
        return "problem text names a function"
    outputs = execute(env, proposal)
    if isinstance(outputs, str):
        return outputs
    task = _task(proposal, outputs, index)
    failed = consensus(env, task, solvers, max_tokens)
    if failed:
        return failed
    task.reference = translate_numpy(proposal.solution, env.mapping)
    verdict = env.check(task, task.reference)
    if not verdict.passed:
        return f"ZWC translation fails ({verdict.failure.value})"
    return task


def generate_llm_tasks(env: ZWCEnv, proposer: ChatModel, solvers: list[ChatModel], attempts: int, seed: int = 0,
                       max_tokens: int = 512, review_fraction: float = 0.1,
                       progress: Any = None) -> tuple[list[Task], LLMReport]:
    """Propose ``attempts`` tasks, keep those that survive execution, consensus and verification."""
    rng = random.Random(f"{seed}-llm")
    report, kept = LLMReport(attempts=attempts), []
    drops: Counter = Counter()
    entries = [rng.choice(CATALOGUE) for _ in range(attempts)]
    prompts = [[{"role": "user", "content": PROPOSE.format(name=selected_name(e), summary=summary(e))}]
               for e in entries]
    seeded = {"seeds": [derive_seed(seed, "llm", i) for i in range(attempts)]} if supports_seeds(proposer) else {}
    completions = proposer.generate(prompts, n=1, temperature=0.7, max_tokens=max_tokens, **seeded)
    for i, (entry, [completion]) in enumerate(zip(entries, completions, strict=True)):
        proposal = parse_proposal(completion.text, entry)
        result = proposal if isinstance(proposal, str) else process(env, proposal, solvers, i, max_tokens)
        if isinstance(result, str):
            drops[result.split(" (")[0]] += 1
        else:
            kept.append(result)
        if progress:
            progress(i + 1, attempts)
    report.kept, report.dropped = len(kept), dict(drops)
    if kept:
        chosen = rng.sample(kept, max(1, round(review_fraction * len(kept))))
        report.review = [t.task_id for t in chosen]
    return kept, report
