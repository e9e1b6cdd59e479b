"""Backends with scripted answers, and programs built from a task.

``FixedAnswerModel`` implements the Model protocol for real (batched prompts, n completions,
argument checks): it is the deterministic stand-in for a model that gives a particular wrong
answer, a path a sampled model takes only by chance. ``ScriptedModel`` answers each kind of
prompt (recognised by a marker in its text) with the next of that kind's scripted texts: the
stand-in for the model inside a learner (ExpeL's insight extractor, ACE's reflector and
curator), so that a learner's test checks the learner's code, not a model's words.
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass
class ScriptedModel:
    """Answers a prompt whose text holds a key of ``script`` with that key's next answer (in
    order; the last one repeats), any other prompt with ``default``. ``seen`` keeps every
    prompt's text per key (``None``: the unscripted ones)."""

    script: dict[str, list[str]]
    default: str = "```python\ndef solve():\n    return None\n```"
    name: str = "scripted"
    seen: dict[str | None, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()  # episodes call from many threads

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None) -> list[list[Completion]]:
        check_generate_args(prompts, n, temperature, max_tokens)
        out = []
        with self._lock:
            for prompt in prompts:
                text = "\n".join(m["content"] for m in prompt)
                key = next((k for k in self.script if k in text), None)
                asked = self.seen.setdefault(key, [])
                asked.append(text)
                answers = self.script.get(key)
                answer = answers[min(len(asked), len(answers)) - 1] if answers else self.default
                out.append([Completion(answer, tokens=max(1, len(answer.split())))] * n)
        return out

    def calls(self, key: str | None) -> int:
        return len(self.seen.get(key, []))


def talking_tiny_directory(root: Path) -> Path:
    """The tiny random-initialised SmolLM2 of ``agents.models.tiny`` (same shape, tokenizer and
    chat template) with its weights drawn at ``initializer_range`` 0.2 instead of 0.02: at 0.02
    the tied embeddings dominate and every greedy answer is the prompt's last token (a newline)
    repeated, which leaves no text for the checks of stop strings, streaming and cut answers.
    Still noise, still ~3M parameters, written in about a second."""
    from agents.models.tiny import tiny_model_directory

    return tiny_model_directory(Path(root) / "smollm2-tiny-talking", initializer_range=0.2)


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
