"""A backend that answers every prompt with one fixed program, and programs built from a task.

``FixedAnswerModel`` implements the Model protocol for real (batched prompts, n completions,
argument checks): it is the deterministic stand-in for a model that gives a particular wrong
answer, a path a sampled model takes only by chance.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from agents.models.base import Completion, Messages, check_generate_args
from envs.zwc import Task


@dataclass
class FixedAnswerModel:
    code: str
    name: str = "fixed-answer"
    seen: list[Messages] = field(default_factory=list)  # every prompt it was given

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None) -> list[list[Completion]]:
        check_generate_args(prompts, n, temperature, max_tokens)
        self.seen.extend(prompts)
        text = f"```python\n{self.code}```"
        return [[Completion(text, tokens=len(text.split()))] * n for _ in prompts]


def _params(task: Task) -> list[str]:
    [fn] = ast.parse(task.function_name + " pass").body
    return [a.arg for a in fn.args.args]


def wrong_answer(task: Task, right_on_example: bool) -> str:
    """A program that computes the task's reference (so zwc really runs) but returns a string no
    expected value holds; with ``right_on_example`` it returns the reference's value on the
    task's example input: an answer that hard-codes what the prompt showed."""
    params = _params(task)
    call, kwargs = ", ".join(params), ", ".join(f"{p}={p}" for p in params)
    example = (task.example or task.test_cases[0]).input
    reference = task.reference.replace(f"def {task.entry_point}(", "def reference_answer(", 1)
    lines = [reference, "", f"def {task.entry_point}({call}):"]
    if right_on_example:
        lines += [f"    if dict({kwargs}) == dict({example}):", f"        return reference_answer({call})"]
    lines.append(f"    return 'wrong answer ' + str(reference_answer({call}) is None)")
    return "\n".join(lines) + "\n"
