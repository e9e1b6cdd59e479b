"""ZWCEnv: the SE-Bench environment — a ZWC build, its docs and tasks, and grading.

Gymnasium-like: ``reset(task, phase, mode)`` gives an observation, ``step(code)`` grades
code for that task. ``check``/``check_many`` grade without state. The phase enforces the
protocol: in phase ``test`` the docs are closed (``ProtocolError``) and observations
carry none. A built directory holds ``zwc/``, ``mapping.json``, ``api_doc.jsonl``,
``docs.md`` and, once tasks are built, ``train.jsonl``, ``single_test.jsonl`` and
``multiple_test.jsonl``.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import EllipsisType
from typing import Literal

from pydantic import BaseModel

from envs.zwc.errors import ProtocolError, ZWCEnvError
from envs.zwc.grading.checks import check_code
from envs.zwc.grading.counterfactual import recheck
from envs.zwc.grading.equality import DEFAULT_ABS_TOL, DEFAULT_REL_TOL, OFFICIAL_ABS_TOL
from envs.zwc.grading.grade import ReferenceUsage, UsageRule, decode, grade, library_tests, rejected
from envs.zwc.grading.verdict import Verdict
from envs.zwc.library.catalogue import CATALOGUE
from envs.zwc.library.docs import DocIndex, build_api_doc, write_docs
from envs.zwc.library.names import Mapping
from envs.zwc.library.package import public_names, write_package
from envs.zwc.run_result import RunResult
from envs.zwc.sandbox.pool import Limits, SandboxPool
from envs.zwc.task import Task, read_tasks
from sebench.errors import SettingError

Phase = Literal["train", "test"]
Mode = Literal["closed", "open", "search", "numpy"]
Usage = Literal["standard", "strict"]
SPLITS = ("train", "single_test", "multiple_test")
PHASES, MODES = ("train", "test"), ("closed", "open", "search", "numpy")
USAGES = ("standard", "strict")
# functions that only build an array from data: running one alone is not using the library
CONSTRUCTORS = frozenset(e.numpy for e in CATALOGUE if e.kind == "conversion")


class Observation(BaseModel):
    """What the agent sees at the start of an episode."""

    task_id: str
    question: str
    signature: str
    entry_point: str
    example_input: str = ""
    example_output: str = ""
    docs: str = ""  # the task's ground-truth docs, only in mode "open" of phase "train"
    phase: Phase
    mode: Mode
    can_search: bool = False  # mode "search": the agent may query env.docs.search


def build_directory(mapping: Mapping, root: str | Path, doc_records: list[dict] | None = None) -> Path:
    """Write package, mapping and docs for ``mapping`` into ``root``."""
    out = Path(root)
    out.mkdir(parents=True, exist_ok=True)
    write_package(mapping, out)
    mapping.save(out / "mapping.json")
    write_docs(doc_records if doc_records is not None else build_api_doc(mapping), mapping, out)
    return out


def trim_doc(text: str, chars: int | None) -> str:
    """The head of a doc (signature, summary, parameters come first), cut at a line end.

    Small models train on open-book prompts at a budget (``env.docs_chars``); the paper's
    setting is the whole doc (None)."""
    if chars is None or len(text) <= chars:
        return text
    head = text[:chars]
    cut = head.rfind("\n")
    return (head[:cut] if cut > 0 else head).rstrip() + "\n[…]"


class ZWCEnv:
    """One ZWC build with its docs, tasks and sandbox pool (started on first use)."""

    def __init__(self, root: str | Path, *, workers: int | None = None, limits: Limits | None = None,
                 usage: Usage = "standard"):
        if usage not in USAGES:
            raise SettingError(f"unknown usage rule {usage!r}; choose 'standard' (some catalogued zwc function "
                             "runs in every test) or 'strict' (single-function tasks must run their own function)")
        self.usage: Usage = usage
        self.root = Path(root).resolve()
        self.mapping = Mapping.load(self.root / "mapping.json")
        self._doc_index = DocIndex.from_file(self.root / "api_doc.jsonl", self.mapping)
        self._public = frozenset(public_names(self.mapping))
        self._counted_names = {e.short: e.zwc for e in self.mapping}
        self._constructors = frozenset(e.short for e in self.mapping if e.numpy in CONSTRUCTORS)
        self._groups = alias_groups(self.mapping)
        self._references: dict[tuple, ReferenceUsage | None] = {}  # reference runs, by task and source
        self._references_lock = threading.Lock()
        self._workers, self._limits = workers, limits
        self._pool: SandboxPool | None = None
        self.phase: Phase = "train"
        self._closed_book = 0  # evaluations in phase test in flight (``closed_book``); docs shut while > 0
        self._closed_book_lock = threading.Lock()
        self._task: Task | None = None
        self._mode: Mode = "closed"
        # the default open-book budget per function (None: the whole doc); an episode may ask for
        # its own (``observe(docs_chars=...)``), so learners never change it under others' feet
        self.docs_chars: int | None = None

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def build(cls, seed: int = 0, root: str | Path | None = None, **kwargs) -> ZWCEnv:
        """A fresh obfuscation for ``seed``: package, mapping and docs written to ``root``."""
        root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix=f"zwc-seed{seed}-"))
        build_directory(Mapping.generate(seed), root)
        return cls(root, **kwargs)

    @classmethod
    def official(cls, api_doc: str | Path | None = None, tasks_dir: str | Path | None = None,
                 root: str | Path | None = None, **kwargs) -> ZWCEnv:
        """SE-Bench v1's names and docs; ``tasks_dir`` holds official split files, if any.

        ``api_doc``: the path of SE-Bench's ``api_doc.jsonl`` (its names and its docs); None takes
        the names shipped with sebench (``Mapping.sebench_v1``) and writes the docs from NumPy.
        """
        if api_doc is None:
            mapping, records = Mapping.sebench_v1(), None
        else:
            mapping = Mapping.from_sebench_v1(api_doc)
            with Path(api_doc).open() as handle:
                records = [json.loads(line) for line in handle if line.strip()]
        root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="zwc-official-"))
        build_directory(mapping, root, records)
        if tasks_dir is not None:
            for split in SPLITS:
                src = Path(tasks_dir) / f"{split}.jsonl"
                if src.is_file() and src.resolve() != (root / src.name).resolve():
                    (root / src.name).write_bytes(src.read_bytes())
        return cls(root, **kwargs)

    @classmethod
    def load(cls, root: str | Path, **kwargs) -> ZWCEnv:
        """A directory written by ``sebench zwc build``."""
        path = Path(root)
        if not (path / "mapping.json").is_file():
            raise ZWCEnvError(f"{path}: not a ZWC build (no mapping.json); run `sebench zwc build --out {path}`")
        return cls(path, **kwargs)

    # -- docs and tasks -------------------------------------------------------------------
    @property
    def docs(self) -> DocIndex:
        """The searchable reference; closed in phase ``test`` and for the whole of a closed-book
        evaluation (``closed_book``), whatever ``phase`` says."""
        self._check_docs_open(self.phase)
        return self._doc_index

    def _check_docs_open(self, phase: Phase) -> None:
        if phase == "test":
            raise ProtocolError("the docs are closed in phase 'test' (SE-Bench's closed-book protocol)")
        if self._closed_book:
            raise ProtocolError("the docs are closed while a closed-book evaluation runs on this env (SE-Bench's "
                                "protocol): a learner may read them in evolve, never from context() at test time")

    @contextlib.contextmanager
    def closed_book(self) -> Iterator[None]:
        """Shut ``docs``, ``docs_for`` and ``search`` for everyone until the block ends: ``evaluate``
        holds it for the whole of a phase-``test`` run, so a learner that kept the env from
        ``evolve`` gets ``ProtocolError`` if it reaches for the docs during the test."""
        with self._closed_book_lock:
            self._closed_book += 1
        try:
            yield
        finally:
            with self._closed_book_lock:
                self._closed_book -= 1

    def docs_for(self, task: Task) -> str:
        """The ground-truth docs of the functions ``task`` needs (phase ``train`` only)."""
        self.docs  # noqa: B018 - raises ProtocolError in phase test
        return self._docs_text(task)

    def function_paths(self, task: Task) -> list[str]:
        """The zwc paths of the functions ``task`` names (its ``selected_functions``)."""
        paths = []
        for name in task.selected_functions:
            try:
                paths.append(self.mapping.to_zwc(name if "." in name else f"numpy.{name}"))
            except KeyError:
                paths.append(self.mapping.to_zwc(f"numpy.linalg.{name.rsplit('.', 1)[-1]}"))
        return paths

    def search(self, query: str, k: int = 5, *, phase: Phase):
        """Search the docs for an episode in ``phase``: closed in phase ``test`` whatever
        ``env.phase`` says, so concurrent episodes of both phases each keep the protocol."""
        self._check_docs_open(phase)
        return self._doc_index.search(query, k=k)

    def _docs_text(self, task: Task, docs_chars: int | None | EllipsisType = ...) -> str:
        index = self._doc_index
        budget = self.docs_chars if docs_chars is ... else docs_chars
        return "\n\n".join(f"## {path}\n{trim_doc(index.lookup(path).text.strip(), budget)}"
                             for path in self.function_paths(task))

    def tasks(self, split: str) -> list[Task]:
        if split not in SPLITS:
            raise SettingError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
        path = self.root / f"{split}.jsonl"
        if not path.is_file():
            raise ZWCEnvError(f"{path}: no {split} tasks in this build; run `sebench tasks build --zwc {self.root}`")
        return read_tasks(path)

    # -- episodes -------------------------------------------------------------------------
    def reset(self, task: Task, phase: Phase = "train", mode: Mode = "closed") -> Observation:
        """Start an episode: the observation, and ``step`` will grade code for ``task``."""
        obs = self.observe(task, phase, mode)
        self.phase, self._task, self._mode = phase, task, mode
        return obs

    def observe(self, task: Task, phase: Phase = "train", mode: Mode = "closed",
                docs_chars: int | None | EllipsisType = ...) -> Observation:
        """The observation ``reset`` gives, without touching the env's state (episodes may run
        concurrently). The protocol holds all the same: no docs in phase ``test``.
        ``docs_chars``: this episode's open-book budget per function (default: ``env.docs_chars``)."""
        if phase not in PHASES:
            raise SettingError(f"unknown phase {phase!r}; choose 'train' or 'test'")
        if mode not in MODES:
            raise SettingError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        if phase == "test" and mode in ("open", "search"):
            raise ProtocolError(f"mode {mode!r} shows docs, which phase 'test' forbids; "
                                "use phase='train' for open-book diagnostics")
        example = task.example or task.test_cases[0]
        example_output = example.output
        if task.is_official and task.example is None:
            example_output = task.expected_outputs()[0]
        return Observation(task_id=task.task_id, question=task.query, signature=task.function_name,
                           entry_point=task.entry_point, example_input=example.input,
                           example_output=example_output,
                           docs=self._docs_text(task, docs_chars) if mode == "open" else "",
                           phase=phase, mode=mode, can_search=mode == "search")

    def step(self, code: str) -> Verdict:
        """Grade ``code`` for the task of the last ``reset``."""
        if self._task is None:
            raise ZWCEnvError("call reset(task, ...) before step(code)")
        return self.check(self._task, code, mode=self._mode)

    def check(self, task: Task, code: str, mode: Mode = "closed", usage: Usage | None = None) -> Verdict:
        """Grade ``code`` for ``task``: static checks, then the sandbox, then comparison.

        A pass means the values are right, a catalogued zwc function ran in every test
        (``usage``: default ``env.usage``), and nothing the candidate did changed the record."""
        return self.check_many([(task, code)], mode=mode, usage=usage)[0]

    def usage_rule(self, task: Task, mode: Mode = "closed", usage: Usage | None = None) -> UsageRule:
        """How ``task``'s run-time zwc calls are judged (nothing is required in mode ``numpy``)."""
        usage = usage or self.usage
        if usage not in USAGES:
            raise SettingError(f"unknown usage rule {usage!r}; choose one of {', '.join(USAGES)}")
        try:
            targets = frozenset(path.rsplit(".", 1)[1] for path in self.function_paths(task))
        except KeyError:  # a proposed task may name something outside the catalogue
            targets = frozenset()
        return UsageRule(names=self._counted_names, constructors=self._constructors, targets=targets,
                         groups=self._groups, strict=usage == "strict", required=mode != "numpy",
                         reference=self._references.get(_reference_key(task, self.mapping)),
                         official=task.is_official, inputs=tuple(task.inputs()), **_tolerance(task))

    def reference_usage(self, tasks: list[Task]) -> list[ReferenceUsage | None]:
        """What each task's reference solution ran per test, from its own library log (run once
        per task and source, then kept): where a test demands a zwc call (``usage.py``)."""
        todo: dict[tuple, tuple[Task, str]] = {}
        for task in tasks:
            key = _reference_key(task, self.mapping)
            if key is not None and key not in self._references and key not in todo:
                todo[key] = (task, key[1])
        if todo:
            jobs = [(code, task.entry_point, task.inputs(), False, False) for task, code in todo.values()]
            answers = self.pool.run_many(jobs)
            with self._references_lock:
                for (key, (task, _)), answer in zip(todo.items(), answers, strict=True):
                    self._references[key] = _usage_of(answer, len(task.test_cases))
        return [self._references.get(_reference_key(t, self.mapping)) for t in tasks]

    def check_many(self, pairs: list[tuple[Task, str]], mode: Mode = "closed",
                   usage: Usage | None = None) -> list[Verdict]:
        """Grade many (task, code) pairs in parallel through the sandbox pool."""
        numpy_mode = mode == "numpy"
        verdicts: list[Verdict | None] = [None] * len(pairs)
        jobs, slots = [], []
        for i, (task, code) in enumerate(pairs):
            rejection = check_code(code or "", task.entry_point, self._public, numpy_mode=numpy_mode)
            if rejection is not None:
                verdicts[i] = rejected(rejection)
            else:
                jobs.append((code, task.entry_point, task.inputs(), numpy_mode, task.is_official))
                slots.append(i)
        if jobs and not numpy_mode:
            self.reference_usage([pairs[i][0] for i in slots])
        if jobs:
            items = []
            for i, answer in zip(slots, self.pool.run_many(jobs), strict=True):
                rule = self.usage_rule(pairs[i][0], mode, usage)
                verdicts[i] = grade(pairs[i][0], answer, rule)
                items.append((pairs[i][0], pairs[i][1], answer, rule, verdicts[i]))
            if not numpy_mode:  # answers right but not zwc's values: did they move with the calls?
                for k, verdict in recheck(self.pool, items).items():
                    verdicts[slots[k]] = verdict
        return [v for v in verdicts if v is not None]

    def run(self, code: str, entry_point: str, inputs: Sequence[str], *, numpy_mode: bool = False,
            limits: Limits | None = None) -> RunResult:
        """Run untrusted ``code``'s ``entry_point`` on each input (keyword-argument text) in the
        sandbox, ungraded: each input's decoded value or error (``RunResult``). Nothing of
        ``code`` runs in this process; ``numpy_mode`` lets it import NumPy (the reasoning
        control); ``limits``: default the env's."""
        return self.run_many([(code, entry_point, inputs)], numpy_mode=numpy_mode, limits=limits)[0]

    def run_many(self, jobs: Sequence[tuple[str, str, Sequence[str]]], *, numpy_mode: bool = False,
                 limits: Limits | None = None) -> list[RunResult]:
        """``run`` for many (code, entry_point, inputs) jobs, every sandbox worker busy; in order."""
        if not jobs:
            return []
        answers = self.pool.run_many([(code, entry, list(inputs), numpy_mode, False, limits)
                                      for code, entry, inputs in jobs])
        return [RunResult.of(answer, len(inputs)) for (_, _, inputs), answer in zip(jobs, answers, strict=True)]

    @property
    def pool(self) -> SandboxPool:
        if self._pool is None:
            self._pool = SandboxPool(self.root, workers=self._workers, limits=self._limits)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> ZWCEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ZWCEnv({self.root}, {self.mapping.origin})"


def alias_groups(mapping: Mapping) -> dict[str, str]:
    """Counted name -> the name of its alias group: names whose zwc functions run the same
    NumPy function object (``amax`` and ``max``) are one function to the usage rules."""
    import numpy

    from envs.zwc.library.catalogue import BY_PATH

    by_target: dict[int, list[str]] = {}
    for entry in mapping:
        path = BY_PATH[entry.numpy].call_target if entry.numpy in BY_PATH else entry.numpy
        target: object = numpy
        for part in path.split(".")[1:]:
            target = getattr(target, part, None)
        by_target.setdefault(id(target) if target is not None else id(entry), []).append(entry.short)
    return {name: min(names) for names in by_target.values() for name in names}


def _reference_key(task: Task, mapping: Mapping) -> tuple | None:
    """(task id, ZWC source of its reference, inputs), or None when the task has no verified ZWC
    ``reference`` of ours. Official records carry an accepted ``right_code``, but it is no
    reference for usage (many are plain Python): official tasks take the official rule."""
    if not task.reference:
        return None
    return task.task_id, task.reference, tuple(task.inputs())


def _usage_of(answer: dict, n_tests: int) -> ReferenceUsage | None:
    """The reference's usage from its sandbox answer (None if the library logged nothing)."""
    tests, summary = library_tests(answer)
    if not summary or summary.get("server_error") or summary.get("anomalies"):
        return None
    answers = {r["i"]: decode(r.get("value")) for r in answer.get("records", [])
               if r.get("event") == "test" and r.get("ok") and type(r.get("i")) is int}
    return ReferenceUsage.from_tests(n_tests, tests, set(answers), answers)


def _tolerance(task: Task) -> dict[str, float]:
    """The tolerance an answer is graded with: also how near a handed-out value it must be."""
    if task.is_official:
        return {"rel_tol": 0.0, "abs_tol": OFFICIAL_ABS_TOL}
    return {"rel_tol": DEFAULT_REL_TOL if task.rel_tol is None else task.rel_tol,
            "abs_tol": DEFAULT_ABS_TOL if task.abs_tol is None else task.abs_tol}
