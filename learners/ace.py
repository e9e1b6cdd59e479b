"""AceLearner (Zhang et al., 2025, Agentic Context Engineering): an evolving playbook.

The generator (the agent) sees the playbook and cites the bullet ids it uses. After each
episode a Reflector call diagnoses the trajectory from its execution feedback and tags the
bullets the answer cited helpful, harmful or neutral (counters move by code; a tag of a bullet
the answer did not cite moves nothing, as in ACE); a Curator call proposes delta
operations that ``learners.playbook`` merges — never a rewrite. Grow-and-refine then merges
near-duplicates (embedding cosine >= 0.9, counters summed) and enforces the token budget.
On failure, reflect-then-retry rounds (default 3) stop once correct.

The bullets live in a memory store (``store``: any registered backend, e.g. ``--set
store=chroma --set store_path=DIR``, or a store object), embedded once when written: the
de-duplication asks the store for each new or reworded bullet's nearest neighbours, and with
``retrieve_k`` > 0 the prompt shows the k bullets nearest the task (0, the paper's: all of them).
The playbook (ids, order, counters) is saved as JSON, the store through its own persistence.

Offline mode (``evolve``): epochs over the train slice, the best playbook on a held-out
validation slice (closed-book pass rate) kept. Online mode (``online=True``): each *test*
episode seen by ``observe`` also updates the playbook — it sees test feedback, so report it
apart from offline numbers. Within one ``evaluate`` (``evaluation()``, which it holds open for the
whole run) every sample of a test task sees the playbook as it was when the first of them asked,
however many samples run at once and however long the run: the n samples behind pass@k stay
independent of each other, whatever ``concurrency``. A task first asked later sees what the earlier
tasks taught, and so does a later evaluation. Outside an evaluation (episodes run by hand) the
snapshot lasts while samples of the task are under way.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.learner import EvolveReport, setting
from agents.prompts import closed_book_outcome
from envs.zwc import Observation
from learners.base import gathering_agent, load_state, progress_bar, save_state, warn_empty
from learners.held_store import HeldStore, StoreSettings
from learners.playbook import Playbook, cited, parse_deltas, parse_tags
from memory import MemoryStore
from sebench.errors import SettingError


@dataclass
class AceConfig(StoreSettings):
    """ACE's settings; CPU-sized defaults, the paper's noted."""

    epochs: int = setting(1, "Offline passes over the train slice (paper: up to 5).")
    max_retries: int = setting(3, "Reflect-then-retry rounds after a failure (paper: 3).")
    validation: int = setting(4, "Held-out train tasks that pick the best epoch's playbook.")
    budget_tokens: int = setting(800, "The playbook's size cap, enforced.")
    dedup_threshold: float = setting(0.9, "Cosine above which bullets merge.")
    online: bool = setting(False, "Also learn from test episodes (reported separately).")
    max_tokens: int = setting(192, "Per reflector / curator answer.")
    retrieve_k: int = setting(0, "Bullets in the prompt: the k nearest the task in the store (0: the whole "
                                 "playbook, as the paper).")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.epochs < 1 or self.max_retries < 0 or self.validation < 0 or self.budget_tokens < 50 \
                or self.retrieve_k < 0:
            raise SettingError(f"invalid AceConfig {self}: epochs >= 1, retries/validation/retrieve_k >= 0, "
                               "budget >= 50")


REFLECT = """You are the Reflector. Diagnose this attempt at a coding task that uses the Python library zwc.
Task: {question}
Answer:
{answer}
Execution feedback: {outcome}
Playbook bullets the answer cited:
{bullets}
First explain in two sentences what worked or went wrong. Then tag each cited bullet id on its own line
as <id>: helpful, <id>: harmful or <id>: neutral."""
CURATE = """You are the Curator of a playbook for using the Python library zwc.
Playbook:
{playbook}
Reflection on the latest attempt:
{reflection}
Propose at most 3 changes, one per line, each one of:
ADD [strategies]: <a new, general, reusable insight>
UPDATE <id>: <better wording>
REMOVE <id>
For example:
ADD [strategies]: Call the library function once on the whole list instead of looping."""


class AceLearner:
    """ACE: a generator, reflector and curator grow a playbook of bullets from open-book attempts
    on the train tasks; the playbook goes into the closed-book prompt."""

    name = "ace"
    parametric = False
    config_class = AceConfig
    # the learner checker's tiny settings (learners.checker): the reference gathers, one validation task
    checker_settings: dict[str, Any] = {"gather_model": "reference", "validation": 1, "max_retries": 0,
                                        "max_tokens": 48}

    def __init__(self, config: AceConfig | None = None, store: MemoryStore | str | None = None, **overrides):
        if isinstance(store, str):  # a registered backend's name: the config says which
            overrides["store"], store = store, None
        self.config = config or AceConfig(**overrides)
        self.playbook_state = Playbook(budget_tokens=self.config.budget_tokens)
        self.retry_notes: dict[str, str] = {}
        self.malformed = 0
        self.updates = 0
        self.generated_tokens = 0  # this run's: answers, reflections, curations, validation (the report's cost)
        self.online_updates = 0
        self._model = None
        self._held = HeldStore(self.config, store, "playbook")  # the bullets, embedded
        self._stored: dict[str, str] = {}  # bullet id -> the text the store holds for it
        self._lock = threading.RLock()
        self._shown: dict[str, list] = {}  # online: task -> [the playbook its samples see, samples under way]
        self._frozen: dict[str, str] | None = None  # online, inside evaluate: task -> its snapshot, for the run

    @property
    def playbook(self) -> Playbook:
        return self.playbook_state

    @property
    def store(self) -> MemoryStore:
        return self._held.get()

    # -- the protocol ---------------------------------------------------------------------------
    def context(self, obs: Observation) -> str:
        parts = []
        with self._lock:
            online = self.config.online and obs.phase == "test"  # sample s+1 must not see what sample s taught
            if online and self._frozen is not None:  # inside evaluate: the task's snapshot, for the whole run
                if obs.task_id not in self._frozen:
                    self._frozen[obs.task_id] = self._render_for(obs.question)
                rendered = self._frozen[obs.task_id]
            else:
                rendered = self._render_for(obs.question)
                if online:
                    shown = self._shown.setdefault(obs.task_id, [rendered, 0])
                    shown[1] += 1
                    rendered = shown[0]
        if rendered:
            parts.append("Playbook (cite the ids of the bullets you use, like [str-00001]):\n" + rendered)
        note = self.retry_notes.get(obs.task_id)
        if note and obs.phase == "train":
            parts.append("Reflection on your previous attempt:\n" + note)
        return "\n\n".join(parts)

    def observe(self, trajectory) -> None:
        if self.config.online and trajectory.phase == "test" and self._model is not None:
            self.update(trajectory)
            self.online_updates += 1
        with self._lock:
            shown = self._shown.get(trajectory.task_id)
            if shown is not None and trajectory.phase == "test":
                shown[1] -= 1
                if shown[1] <= 0:  # every sample that saw this snapshot is done: the next run sees the playbook
                    del self._shown[trajectory.task_id]

    @contextlib.contextmanager
    def evaluation(self) -> Iterator[None]:
        """Held open by ``evaluate`` for its whole run: each test task's playbook snapshot, taken when
        the task is first asked, stays what all of its samples see until the run ends (online
        updates still happen, and show in tasks first asked after them)."""
        with self._lock:
            outer, self._frozen = self._frozen, {}
        try:
            yield
        finally:
            with self._lock:
                self._frozen = outer

    def bind(self, model) -> None:
        """The model that plays Reflector and Curator (the agent's, by default)."""
        self._model = model

    # -- one update: reflect, tag, curate, refine ---------------------------------------------------
    def update(self, trajectory) -> str:
        with self._lock:
            answer = trajectory.messages[-1]["content"] if trajectory.messages else trajectory.code
            outcome = "passed all tests" if trajectory.passed else self._outcome(trajectory)
            used = set(cited(answer))
            shown = [b.render() for b in self.playbook_state.bullets if b.id in used]
            reflection = self._ask(REFLECT.format(question=trajectory.messages[1]["content"][-1500:]
                                                  if len(trajectory.messages) > 1 else "", answer=answer[:1500],
                                                  outcome=outcome, bullets="\n".join(shown) or "(none)"))
            tags = {k: v for k, v in parse_tags(reflection).items() if k in used}
            for bullet_id in used - set(tags):  # cited but untagged: the outcome decides
                tags[bullet_id] = "helpful" if trajectory.passed else "harmful"
            self.playbook_state.tag(tags)
            deltas = parse_deltas(self._ask(CURATE.format(playbook=self.playbook_state.render() or "(empty)",
                                                          reflection=reflection[:1200])))
            if not deltas:
                self.malformed += 1
            self.playbook_state.apply(deltas)
            self._refine()
            self.updates += 1
            return reflection

    @staticmethod
    def _outcome(trajectory) -> str:
        """A failure as the reflector may see it: online updates happen in phase test, where the
        grader's detail ("expected ..., got ...") would carry hidden tests' answers into the playbook."""
        if trajectory.verdict is None:
            return trajectory.failure.value
        if trajectory.phase == "test":
            return " ".join(closed_book_outcome(trajectory.verdict))[:300]
        return f"{trajectory.failure.value}: {trajectory.verdict.detail[:300]}"

    def _ask(self, prompt: str) -> str:
        [[answer]] = self._model.generate([[{"role": "user", "content": prompt}]], n=1, temperature=0.0,
                                          max_tokens=self.config.max_tokens)
        self.generated_tokens += answer.tokens
        return answer.text

    def _render_for(self, question: str) -> str:
        """The whole playbook, or (``retrieve_k``) the bullets the store finds nearest the task."""
        book, k = self.playbook_state, self.config.retrieve_k
        if k == 0 or len(book.bullets) <= k:
            return book.render()
        self._sync()
        hits = self.store.search(question, k=k, where={"learner": self.name})
        return book.render({h.id for h in hits if book.get(h.id) is not None})

    def _sync(self) -> list[str]:
        """Make the store hold the playbook's bullets: new and reworded ones written (embedded by the
        store), removed ones deleted. Returns the ids written."""
        bullets = self.playbook_state.bullets
        gone = [i for i in self._stored if self.playbook_state.get(i) is None]
        if gone:
            self.store.delete(gone)
        written = [b for b in bullets if self._stored.get(b.id) != b.content]
        if written:
            self.store.add([b.content for b in written], [{"learner": self.name, "section": b.section}
                                                          for b in written], ids=[b.id for b in written])
        self._stored = {b.id: b.content for b in bullets}
        return [b.id for b in written]

    def _refine(self) -> None:
        """Grow-and-refine: each new or reworded bullet merges with any bullet the store finds at
        cosine >= ``dedup_threshold`` (the older stays, counters summed); then the token budget."""
        book = self.playbook_state
        for bullet_id in self._sync():
            if book.get(bullet_id) is None:
                continue  # merged into an earlier one already
            bullet = book.get(bullet_id)
            for hit in self.store.search(bullet.content, k=min(8, len(book.bullets)), where={"learner": self.name}):
                if hit.id != bullet_id and hit.score >= self.config.dedup_threshold:
                    removed = book.merge(bullet_id, hit.id)
                    if removed is not None and removed.id == bullet_id:
                        break
        book.enforce_budget()
        self._sync()

    # -- offline training -------------------------------------------------------------------------
    def evolve(self, agent, env) -> EvolveReport:
        started = time.perf_counter()
        self.generated_tokens = 0
        self.bind(agent.model)
        if self.config.state_dir and (Path(self.config.state_dir) / "ace.json").is_file():
            self.load(self.config.state_dir)  # a killed run resumes with the playbook it had saved
        tasks = env.tasks("train")
        tasks = tasks[: self.config.limit] if self.config.limit is not None else tasks
        held = min(self.config.validation, max(0, len(tasks) - 1))
        train, validation = tasks[: len(tasks) - held], tasks[len(tasks) - held:]
        generator = gathering_agent(agent, self.config.gather_model, learner=self)
        best, best_score, scores, episodes = copy.deepcopy(self.playbook_state), -1.0, [], 0
        for _epoch in range(self.config.epochs):
            pending = list(train)
            for _round in range(self.config.max_retries + 1):
                if not pending:
                    break
                failed = []
                with progress_bar(f"ace: epoch {_epoch + 1}, round {_round + 1}: {generator.name} answers, "
                                  f"{agent.name} reflects and curates", total=2 * len(pending)) as progress:
                    trajectories = generator.run_episodes(env, [(t, 0) for t in pending], phase="train", mode="open",
                                                          on_done=progress.advance)
                    episodes += len(trajectories)
                    self.generated_tokens += sum(t.tokens for t in trajectories)
                    for task, trajectory in zip(pending, trajectories, strict=True):
                        reflection = self.update(trajectory)
                        if trajectory.passed:
                            self.retry_notes.pop(task.task_id, None)
                        else:
                            self.retry_notes[task.task_id] = reflection[:600]
                            failed.append(task)
                        self._save_if_configured()
                        progress.advance()
                pending = failed
            score = self._validate(agent, env, validation)
            scores.append(score)
            if score > best_score:
                best, best_score = copy.deepcopy(self.playbook_state), score
        self.playbook_state = best
        with self._lock:
            self._sync()
        self.retry_notes.clear()
        self._save_if_configured()
        report = EvolveReport(learner=self.name, episodes=episodes, seconds=time.perf_counter() - started,
                              details={"tasks": len(train), "validation_tasks": len(validation),
                                       "validation_scores": scores, "bullets": len(best.bullets),
                                       "updates": self.updates, "malformed_curations": self.malformed,
                                       "curations_parsed": self.updates - self.malformed,
                                       "dropped_operations": best.dropped_ops,
                                       "generated_with": self.config.gather_model or agent.name,
                                       "generated_tokens": self.generated_tokens})
        if not best.bullets:
            parsed = self.updates - self.malformed
            warn_empty(report, f"the playbook is empty, so the closed-book context is empty ({parsed} of "
                               f"{self.updates} curations parsed, curated by {agent.name})")
        return report

    def _validate(self, agent, env, tasks) -> float:
        if not tasks:
            return 0.0
        online, self.config.online = self.config.online, False  # validation must not train
        try:
            trajectories = agent.run_episodes(env, [(t, 0) for t in tasks], phase="test", mode="closed")
        finally:
            self.config.online = online
        self.generated_tokens += sum(t.tokens for t in trajectories)
        return sum(t.passed for t in trajectories) / len(tasks)

    # -- state ------------------------------------------------------------------------------------
    def _save_if_configured(self) -> None:
        if self.config.state_dir:
            self.save(self.config.state_dir)

    def save(self, path) -> None:
        with self._lock:
            self._sync()
            save_state(path, self.name, {"config": asdict(self.config), "playbook": self.playbook_state.to_dict(),
                                         "updates": self.updates, "malformed": self.malformed,
                                         "store": self._held.record(Path(path))}, "ace.json")
            self._held.persist()

    def load(self, path) -> None:
        state = load_state(path, self.name, "ace.json")
        with self._lock:
            self.playbook_state = Playbook.from_dict(state["playbook"])
            self.updates, self.malformed = state.get("updates", 0), state.get("malformed", 0)
            store = self._held.reopen(state.get("store"), Path(path))
            held = store.search("zwc", k=len(store), where={"learner": self.name}) if len(store) else []
            # every bullet the store holds: those of the playbook as saved need no second embedding, the
            # rest (written after the last save by a killed run) go; _sync then writes what is missing
            self._stored = {h.id: h.text for h in held}
            self._sync()

    def close(self) -> None:
        """Persist and let go of a store this learner opened (one passed in is its caller's)."""
        with self._lock:
            self._held.close()
            self._stored = {}
