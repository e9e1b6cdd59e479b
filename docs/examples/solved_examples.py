"""A worked example learner (docs/write-a-learner.md): it keeps the train tasks it solved and
shows the closest one's solution in the closed-book prompt.

Try it: ``sebench check-learner docs/examples/solved_examples.py:SolvedExamples``.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agents.learner import EvolveReport, LearnerConfig, setting
from learners.base import gathering_agent, load_state, save_state


@dataclass
class SolvedExamplesConfig(LearnerConfig):
    """``limit``, ``gather_model`` and ``state_dir`` come from LearnerConfig; this learner adds one."""

    shown: int = setting(1, "Solved train tasks shown in each prompt, the most similar first.")


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{3,}", text.lower()))


class SolvedExamples:
    """Shows the solutions of the most similar solved train tasks in the closed-book prompt."""

    name = "solved-examples"
    parametric = False  # it changes the prompt, not the weights
    config_class = SolvedExamplesConfig

    def __init__(self, config: SolvedExamplesConfig | None = None, **settings):
        self.config = config or SolvedExamplesConfig(**settings)
        self.solved: dict[str, dict[str, str]] = {}  # task_id -> question, code

    # what the agent's loop calls
    def context(self, obs) -> str:
        words = _words(obs.question)
        ranked = sorted(self.solved.values(), key=lambda s: -len(words & _words(s["question"])))
        shown = ranked[: self.config.shown]
        return "\n\n".join(f"A solved task: {s['question']}\n```python\n{s['code']}\n```" for s in shown)

    def observe(self, trajectory) -> None:
        return None  # it learns in evolve only, never from test episodes

    def evolve(self, agent, env) -> EvolveReport:
        started = time.perf_counter()
        if self.config.state_dir and (Path(self.config.state_dir) / "learner.json").is_file():
            self.load(self.config.state_dir)  # a killed run resumes with what it had saved
        tasks = env.tasks("train")  # train tasks only: a learner never opens a test split
        tasks = tasks[: self.config.limit] if self.config.limit is not None else tasks
        pending = {t.task_id: t for t in tasks if t.task_id not in self.solved}
        lock = threading.Lock()

        def keep(trajectory) -> None:  # episodes finish concurrently: keep and save each as it lands
            if trajectory.verdict is not None and trajectory.verdict.passed:
                with lock:
                    question = pending[trajectory.task_id].query
                    self.solved[trajectory.task_id] = {"question": question, "code": trajectory.code}
                    if self.config.state_dir:
                        self.save(self.config.state_dir)

        gatherer = gathering_agent(agent, self.config.gather_model)  # docs open: phase train, mode open
        gatherer.run_episodes(env, [(t, 0) for t in pending.values()], phase="train", mode="open", on_done=keep)
        return EvolveReport(learner=self.name, episodes=len(pending), seconds=time.perf_counter() - started,
                            details={"tasks": len(tasks), "solved": len(self.solved)})

    # state: atomic, and refused if it is another learner's
    def save(self, path) -> None:
        save_state(path, self.name, {"solved": self.solved})

    def load(self, path) -> None:
        self.solved = load_state(path, self.name)["solved"]
