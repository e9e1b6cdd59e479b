"""ExpelLearner (Zhao et al., AAAI 2024): learn rules and keep examples from practice.

Gathering: on train tasks (phase ``train``, mode ``open``: the docs are in the prompt), each
task is tried; after a failure the model writes a short reflection that goes into the next
attempt, up to ``max_reflections`` times. Every failed attempt and the success are kept.
Insight extraction: the model compares each (success, failure) pair of a task and critiques
chunks of up to 8 successes, always shown the current numbered rule list, and answers with at
most 4 operations (``learners.rules``), applied by deterministic code.
Inference: the rules and the ``k`` most similar successful trajectories (retrieved by task
text from a MemoryStore, shortest per task, never the task itself, within a token cap) go
into the prompt.

Small models write malformed operations: they are counted and skipped. State is saved after
every task, so a killed ``evolve`` resumes where it stopped.

The solved tasks live in any memory backend (``store``: a registered name, e.g. ``--set
store=chroma --set store_path=DIR``, or a store object): ``save`` persists it through the store's
own persistence and records its backend and place, ``load`` reopens it there; a store that kept
nothing (``inmemory``) is refilled from the saved records, so every backend gives the same prompts.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.learner import EvolveReport, setting
from envs.zwc import Observation, Task
from learners.base import gathering_agent, load_state, progress_bar, save_state, warn_empty
from learners.held_store import HeldStore, StoreSettings
from learners.rules import RuleBook, parse_operations
from memory import MemoryStore
from sebench.errors import SettingError


@dataclass
class ExpelConfig(StoreSettings):
    """ExpeL's settings. Defaults are CPU-sized; the paper's are noted."""

    max_reflections: int = setting(3, "Reflections per task after failures (paper: 3).")
    retrieve_k: int = setting(2, "Similar solved tasks shown at inference (paper: 2-5 by budget).")
    rule_cap: int = setting(20, "Rule list size where REMOVE starts costing 3.")
    success_chunk: int = setting(8, "Successes critiqued together.")
    context_tokens: int = setting(1200, "Cap on the examples' size in the prompt (tokens ~ chars / 4).")
    insight_max_tokens: int = setting(256, "Tokens per insight-extraction answer.")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_reflections < 0 or self.retrieve_k < 0 or self.rule_cap < 1 or self.success_chunk < 1:
            raise SettingError(f"invalid ExpelConfig {self}: counts must be >= 0 and caps >= 1")


OPERATIONS = """ADD: <a new general rule>
EDIT <number>: <better wording of that rule>
AGREE <number>: <why>
REMOVE <number>: <why>
For example:
ADD: Pass Python lists straight to zwc functions; they accept them."""
COMPARE = """You are learning to use the Python library zwc from experience.
Current rules:
{rules}

A task, a failed attempt and a successful attempt follow.
Task: {question}
Failed attempt ({failure}):
{failed}
Successful attempt:
{passed}

Update the rules with at most 4 lines, each one of:
{operations}"""
CRITIQUE = """You are learning to use the Python library zwc from experience.
Current rules:
{rules}

Successful solutions:
{successes}

What general rules do these show? Answer with at most 4 lines, each one of:
{operations}"""
REFLECT = ("Your solution to this task failed.\nTask: {question}\nYour code:\n{code}\nResult: {failure}: {detail}\n"
           "In two sentences, say what went wrong and what to do differently next time.")


@dataclass
class TaskRecord:
    task_id: str
    question: str
    failures: list[dict] = field(default_factory=list)  # {"code", "failure", "detail"}
    success: str = ""
    reflections: list[str] = field(default_factory=list)


class ExpelLearner:
    """ExpeL: gathers open-book experience on the train tasks, distils rules from successes and
    failures, and puts the rules and similar solved tasks into the closed-book prompt."""

    name = "expel"
    parametric = False
    config_class = ExpelConfig
    # the learner checker's tiny settings (learners.checker): the reference gathers, no reflection
    checker_settings: dict[str, Any] = {"gather_model": "reference", "max_reflections": 0, "insight_max_tokens": 48}

    def __init__(self, config: ExpelConfig | None = None, store: MemoryStore | str | None = None, **overrides: Any):
        if isinstance(store, str):  # a registered backend's name: the config says which
            overrides["store"], store = store, None
        self.config = config or ExpelConfig(**overrides)
        self.book = RuleBook(cap=self.config.rule_cap)
        self._held = HeldStore(self.config, store, "trajectories")  # the solved tasks, by question
        self.records: dict[str, TaskRecord] = {}
        self.malformed = 0
        self.generated_tokens = 0  # this run's: gathering, reflections, insights (the report's cost column)
        self.log: list[str] = []
        self._lock = threading.RLock()  # episodes finish in many threads at once

    # -- what the protocol asks for -----------------------------------------------------------
    @property
    def rules(self) -> list[str]:
        return [r.text for r in self.book.rules]

    @property
    def store(self) -> MemoryStore:
        return self._held.get()

    def context(self, obs: Observation) -> str:
        parts = []
        record = self.records.get(obs.task_id)
        if record is not None and record.reflections and obs.phase == "train":
            parts.append("Reflections on your earlier attempts:\n" + "\n".join(f"- {r}" for r in record.reflections))
        if self.book.rules:
            parts.append("Rules learned from practice:\n" + self.book.numbered())
        examples = self._examples(obs)
        if examples:
            parts.append("Solved tasks similar to this one:\n" + examples)
        return "\n\n".join(parts)

    def _examples(self, obs: Observation) -> str:
        if self.config.retrieve_k == 0 or len(self.store) == 0:
            return ""
        hits = self.store.search(obs.question, k=self.config.retrieve_k + 1)
        budget, shown = self.config.context_tokens * 4, []
        for hit in hits:
            if hit.metadata.get("task_id") == obs.task_id:
                continue  # never the task itself
            block = f"Task: {hit.text}\nSolution:\n```python\n{hit.metadata.get('code', '').strip()}\n```"
            if len(block) > budget or len(shown) == self.config.retrieve_k:
                break
            shown.append(block)
            budget -= len(block)
        return "\n\n".join(shown)

    def observe(self, trajectory) -> None:
        with self._lock:
            self._observe(trajectory)

    def _observe(self, trajectory) -> None:
        record = self.records.get(trajectory.task_id)
        if record is None or trajectory.phase != "train":
            return
        if trajectory.passed:
            if not record.success or len(trajectory.code) < len(record.success):
                record.success = trajectory.code  # the shortest success per task
        elif trajectory.code or trajectory.verdict is not None:
            record.failures.append({"code": trajectory.code, "failure": trajectory.failure.value,
                                    "detail": trajectory.verdict.detail[:300] if trajectory.verdict else ""})

    # -- training -------------------------------------------------------------------------------
    def evolve(self, agent, env) -> EvolveReport:
        started = time.perf_counter()
        self.generated_tokens = 0
        tasks = env.tasks("train")
        tasks = tasks[: self.config.limit] if self.config.limit is not None else tasks
        if self.config.state_dir and (Path(self.config.state_dir) / "expel.json").is_file():
            self.load(self.config.state_dir)
        gatherer = agent
        if agent.learner is not self or self.config.gather_model not in (None, "self"):
            gatherer = gathering_agent(agent, self.config.gather_model, learner=self)
        episodes = self._gather(gatherer, agent, env, tasks)
        self._remember_successes()
        self._extract(agent)
        self._save_if_configured()
        solved = sum(bool(r.success) for r in self.records.values())
        report = EvolveReport(learner=self.name, episodes=episodes, seconds=time.perf_counter() - started,
                              details={"tasks": len(tasks), "solved": solved, "rules": len(self.book.rules),
                                       "operations_applied": self.book.applied,
                                       "operations_dropped": self.book.dropped, "malformed_answers": self.malformed,
                                       "stored_trajectories": len(self.store),
                                       "gathered_with": self.config.gather_model or agent.name,
                                       "generated_tokens": self.generated_tokens})
        if not self.book.rules:
            examples = "" if len(self.store) else " and no solved task to retrieve: the closed-book context is empty"
            warn_empty(report, f"no rules learned{examples} ({gatherer.name} solved {solved} of {len(tasks)} train "
                               f"tasks; {self.malformed} insight answers held no operation)")
        return report

    def _gather(self, gatherer, agent, env, tasks: list[Task]) -> int:
        episodes = 0
        for task in tasks:
            self.records.setdefault(task.task_id, TaskRecord(task.task_id, task.query))
        for _round in range(self.config.max_reflections + 1):
            pending = [t for t in tasks if not self.records[t.task_id].success
                       and len(self.records[t.task_id].reflections) == _round]
            if not pending:
                continue  # a resumed run: its failed tasks were reflected on already, their next attempt is later
            with progress_bar(f"expel: {gatherer.name}, attempt {_round + 1}", total=len(pending)) as progress:
                trajectories = gatherer.run_episodes(env, [(t, 0) for t in pending], phase="train", mode="open",
                                                     on_done=functools.partial(self._episode_done, progress))
            episodes += len(trajectories)  # observe() recorded them: the gatherer's learner is self
            self.generated_tokens += sum(tr.tokens for tr in trajectories)
            failed = [(t, tr) for t, tr in zip(pending, trajectories, strict=True) if not tr.passed]
            if not failed or _round == self.config.max_reflections:
                continue
            prompts = [[{"role": "user", "content": REFLECT.format(
                question=t.query, code=tr.code or "(no code)", failure=tr.failure.value,
                detail=tr.verdict.detail[:300] if tr.verdict else "")}] for t, tr in failed]
            answers = agent.model.generate(prompts, n=1, temperature=0.0, max_tokens=96)
            self.generated_tokens += sum(a.tokens for [a] in answers)
            for (task, _), [answer] in zip(failed, answers, strict=True):
                self.records[task.task_id].reflections.append(answer.text.strip()[:400] or "(no reflection)")
            self._save_if_configured()
        return episodes

    def _episode_done(self, progress, _trajectory) -> None:
        self._save_if_configured()  # observe() recorded it
        progress.advance()

    def _remember_successes(self) -> None:
        solved = [r for r in self.records.values() if r.success]
        if solved:
            self.store.add([r.question for r in solved], [{"task_id": r.task_id, "code": r.success} for r in solved],
                           ids=[r.task_id for r in solved])
            self.store.persist()

    def _extract(self, agent) -> None:
        pairs = [r for r in self.records.values() if r.success and r.failures]
        successes = [r for r in self.records.values() if r.success]
        size = self.config.success_chunk
        chunks = [successes[i:i + size] for i in range(0, len(successes), size)]
        if not pairs and not chunks:
            return
        compared = [(record, failure) for record in pairs for failure in record.failures]  # every pair, as ExpeL
        with progress_bar(f"expel: insights from {agent.name}", total=len(compared) + len(chunks)) as progress:
            for record, failure in compared:
                self._ask(agent, COMPARE.format(rules=self.book.numbered(), question=record.question,
                                                operations=OPERATIONS,
                                                failure=failure["failure"], failed=failure["code"] or "(no code)",
                                                passed=record.success))
                progress.advance()
            for chunk in chunks:
                text = "\n\n".join(f"Task: {r.question}\n{r.success}" for r in chunk)
                self._ask(agent, CRITIQUE.format(rules=self.book.numbered(), successes=text, operations=OPERATIONS))
                progress.advance()

    def _ask(self, agent, prompt: str) -> None:
        [[answer]] = agent.model.generate([[{"role": "user", "content": prompt}]], n=1, temperature=0.0,
                                          max_tokens=self.config.insight_max_tokens)
        self.generated_tokens += answer.tokens
        operations = parse_operations(answer.text)
        if not operations:
            self.malformed += 1
            self.log.append(f"no operation in: {answer.text[:200]!r}")
            return
        self.book.apply(operations)
        self._save_if_configured()

    # -- state ----------------------------------------------------------------------------------
    def close(self) -> None:
        """Persist and let go of a store this learner opened (one passed in is its caller's); the
        next use reopens it by name."""
        with self._lock:
            self._held.close()

    def _save_if_configured(self) -> None:
        if self.config.state_dir:
            self.save(self.config.state_dir)

    def save(self, path) -> None:
        with self._lock:
            self._save(path)

    def _save(self, path) -> None:
        target = Path(path)
        save_state(target, self.name, {"config": asdict(self.config), "rules": self.book.to_dict(),
                                       "records": [asdict(r) for r in self.records.values()],
                                       "malformed": self.malformed, "store": self._held.record(target)}, "expel.json")
        self._held.persist()

    def load(self, path) -> None:
        state = load_state(path, self.name, "expel.json")
        self.book = RuleBook.from_dict(state["rules"])
        self.records = {r["task_id"]: TaskRecord(**r) for r in state["records"]}
        self.malformed = state.get("malformed", 0)
        if len(self._held.reopen(state.get("store"), Path(path))) == 0:  # it kept nothing: the records hold it
            self._remember_successes()
