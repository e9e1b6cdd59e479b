"""The ``reference`` model: answers each task with its verified ZWC solution.

The measured upper bound of every evaluation: if ``reference`` does not pass, the task or
the grader is wrong, not the agent. It finds the task by its question in the prompt and
answers with the task's ``reference`` (ours, verified at build time) or, for official
records, their ``example_output`` translated through the mapping.
"""

from __future__ import annotations

from agents.models.base import Completion, Messages, check_generate_args
from envs.zwc import Task
from envs.zwc.library.names import Mapping
from envs.zwc.library.translate import translate_numpy


class ReferenceModel:
    name = "reference"

    def __init__(self, tasks: list[Task], mapping: Mapping):
        self._answers: list[tuple[str, str]] = []
        for task in tasks:
            code = task.reference
            if not code and task.example_output:
                code = translate_numpy(task.example_output[0], mapping)
            if code:
                self._answers.append((task.query.strip(), code))
        self._answers.sort(key=lambda qa: len(qa[0]), reverse=True)  # longest question first

    def answer(self, prompt: Messages) -> str:
        """The reference of the task the prompt asks for: its ``Task:`` section first (a learner's
        context before it may quote other tasks' questions, longer ones included), then anywhere."""
        text = "\n".join(m["content"] for m in prompt if m["role"] == "user")
        own = text[text.rfind("Task:\n"):] if "Task:\n" in text else text
        for scope in (own, text):
            for question, code in self._answers:
                if question and question in scope:
                    return f"```python\n{code.strip()}\n```"
        return "I do not know this task."

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None) -> list[list[Completion]]:
        check_generate_args(prompts, n, temperature, max_tokens)
        out = []
        for prompt in prompts:
            text = self.answer(prompt)
            out.append([Completion(text=text, tokens=len(text.split()), finish_reason="stop")] * n)
        return out
