"""Learners with one mistake each, for the learner checker's tests: each must fail the check
that names its mistake (and pass the others). All extend the newcomer's NotesLearner."""

from __future__ import annotations

import json
from pathlib import Path

from agents.learner import EvolveReport
from tests.learners.checker.newcomer_learner import NotesLearner


class ReadsTestFile(NotesLearner):
    """Peeks at the test split's file behind the env's back and keeps a hint per test task."""

    def evolve(self, agent, env):
        report = super().evolve(agent, env)
        for line in (Path(env.root) / "single_test.jsonl").read_text().splitlines():
            record = json.loads(line)
            self.notes[f"hint {len(self.notes)}"] = record["reference"].strip().splitlines()[-1]
        return report


class ReadsTestSplit(NotesLearner):
    """Asks the env for the test split and learns from its tasks' docs."""

    def train_tasks(self, env) -> list:
        return super().train_tasks(env) + env.tasks("single_test")[:1]


class IgnoresLimit(NotesLearner):
    """Reads every train task whatever limit says."""

    def train_tasks(self, env) -> list:
        return env.tasks("train")


class LosesStateOnSave(NotesLearner):
    """Saves which tasks it has done but not the notes themselves."""

    def save(self, path) -> None:
        notes, self.notes = self.notes, {}
        try:
            super().save(path)
        finally:
            self.notes = notes


class DocsInContext(NotesLearner):
    """Keeps whole doc entries as notes: the docs reach closed-book prompts."""

    def take_notes(self, docs: str) -> None:
        for block in docs.split("## ")[1:]:
            path, _, text = block.partition("\n")
            self.notes[path.strip()] = text


class CheatSheet(NotesLearner):
    """Touches no train task: copies every function's name and the first sentence of its doc from
    ``env.docs`` (an 18 KB cheat sheet of the whole library) and shows it closed-book. No doc text
    long enough for the closed-book check, but every name is one it never met in a task: the docs."""

    def evolve(self, agent, env):
        self.config.max_notes = len(env.docs.entries)  # every function, not the newcomer's 16
        for path, entry in env.docs.entries.items():
            self.take_notes(f"## {path}\n{entry.text}")
        if self.config.state_dir:
            self.save(self.config.state_dir)
        return EvolveReport(learner=self.name, episodes=0, details={"tasks": 0, "notes": len(self.notes)})


class CrashesAfterKill(NotesLearner):
    """Marks its state_dir as busy while evolving and refuses to start over a busy one."""

    def evolve(self, agent, env):
        marker = Path(self.config.state_dir) / "BUSY" if self.config.state_dir else None
        if marker is not None and marker.exists():
            raise RuntimeError(f"{marker} exists: another evolve is running")
        if marker is not None:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("busy\n")
        report = super().evolve(agent, env)
        if marker is not None:
            marker.unlink()
        return report


class NoName(NotesLearner):
    """Forgets the protocol: no name, and context returns None when there is nothing to say."""

    name = None

    def context(self, obs):
        return super().context(obs) or None

