"""A learner as a newcomer writes it from the docs: one file, a config extending LearnerConfig,
and the five methods of the Learner protocol. The learner checker's tests use it as the
learner that passes (``sebench check-learner tests/learners/checker/newcomer_learner.py:NotesLearner``)
and subclass it, one mistake each, in ``broken_learners.py``.

During ``evolve`` it reads the docs of the first ``limit`` train tasks (allowed in phase
train) and keeps one short note per function: its zwc path and the first sentence of its
doc. At test time the notes go into the prompt: names, not the docs themselves.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.learner import EvolveReport, LearnerConfig, setting

NOTE_CHARS = 90  # a note names a function; quoting its doc would break the closed-book protocol


@dataclass
class NotesConfig(LearnerConfig):
    max_notes: int = setting(16, "Notes kept (one per function).")


class NotesLearner:
    name = "notes"
    parametric = False
    config_class = NotesConfig

    def __init__(self, config: NotesConfig | None = None, **overrides: Any):
        self.config = config or NotesConfig(**overrides)
        self.notes: dict[str, str] = {}
        self.done: list[str] = []

    def context(self, obs) -> str:
        if not self.notes:
            return ""
        return "Functions of the zwc library you have read about:\n" + "\n".join(
            f"- {path}: {note}" for path, note in sorted(self.notes.items()))

    def observe(self, trajectory) -> None:
        return None

    def train_tasks(self, env) -> list:
        return env.tasks("train")[: self.config.limit]

    def evolve(self, agent, env) -> EvolveReport:
        if self.config.state_dir and (Path(self.config.state_dir) / "notes.json").is_file():
            self.load(self.config.state_dir)  # a killed run resumes with what it had
        tasks = [t for t in self.train_tasks(env) if t.task_id not in self.done]
        for task in tasks:
            self.take_notes(env.docs_for(task))
            self.done.append(task.task_id)
            if self.config.state_dir:
                self.save(self.config.state_dir)
        return EvolveReport(learner=self.name, episodes=0, details={"tasks": len(tasks), "notes": len(self.notes)})

    def take_notes(self, docs: str) -> None:
        for block in docs.split("## ")[1:]:
            path, _, text = block.partition("\n")
            paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
            summary = paragraphs[1] if len(paragraphs) > 1 else (paragraphs[0] if paragraphs else "")
            first = re.split(r"(?<=\.)\s", " ".join(summary.split()), maxsplit=1)[0]
            if len(self.notes) < self.config.max_notes:
                self.notes[path.strip()] = first[:NOTE_CHARS]

    def save(self, path) -> None:
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        tmp = target / "notes.json.tmp"
        tmp.write_text(json.dumps({"learner": self.name, "notes": self.notes, "done": self.done}))
        tmp.replace(target / "notes.json")

    def load(self, path) -> None:
        state = json.loads((Path(path) / "notes.json").read_text())
        if state.get("learner") != self.name:
            raise ValueError(f"{path}: holds a {state.get('learner')!r} learner, not {self.name!r}")
        self.notes, self.done = state["notes"], state["done"]
