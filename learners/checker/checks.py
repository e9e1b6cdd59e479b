"""The checks of ``learners.checker.check_learner``, run in order by one ``CheckSession``.

The session evolves the learner once in this process (recorded: ``learners.checker.record``),
saves it, evaluates its agent closed-book, runs two fresh processes (``learners.checker.child``:
one killed mid-``evolve``, one that loads the saved state and then evolves again), and turns
what it saw into one ``CheckResult`` per check. Every ``why`` names what was seen and what to fix.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from envs.zwc.library.docs_audit import THRESHOLD, met_functions
from learners.checker.build import TEST_SPLITS, CheckBuild
from learners.checker.record import (
    Recorder,
    RecordingEnv,
    RecordingModel,
    find_in_files,
    find_in_object,
    recording,
    snippet,
    unwrap,
)
from learners.checker.report import CHECKS, CheckReport
from learners.checker.target import LearnerTarget
from sebench.check_report import CheckResult

DOC_CHUNK = 120  # characters of a doc entry that count as the doc quoted verbatim
_PROTOCOL_CALLS = {"context": ("obs",), "observe": ("trajectory",), "evolve": ("agent", "env"), "save": ("path",),
                   "load": ("path",)}


def _error(exc: BaseException) -> str:
    """The exception and the innermost line outside the framework that raised it."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = ("/agents/", "/envs/", "/learners/checker")
    line = next((f for f in reversed(frames) if not any(p in f.filename for p in ours)), frames[-1] if frames else None)
    where = f" at {line.filename}:{line.lineno}" if line else ""
    return f"{type(exc).__name__}: {str(exc)[:300]}{where}"


@dataclass
class CheckSession:
    target: LearnerTarget
    build: CheckBuild
    work: Path
    model: str
    limit: int
    config: dict[str, Any]
    max_tokens: int = 96
    samples: int = 1
    kill_after: float = 60.0
    timeout: float = 900.0
    docs_threshold: float = THRESHOLD
    on_check: Callable[[CheckResult, float], None] | None = None  # each check as it is decided, with seconds so far
    results: dict[str, CheckResult] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    effect: list = field(default_factory=list)

    # -- the run ------------------------------------------------------------------------------------
    def run(self) -> CheckReport:
        started = self.started = time.perf_counter()
        env = self.build.env
        self.state_dir, self.saved = self.work / "state", self.work / "saved"
        self.recorder = Recorder(canary=self.build.canary,
                                 split_of={i: s for s, ids in self.build.split_ids.items() for i in ids},
                                 watched_files=frozenset(str((self.build.root / f"{s}.jsonl").resolve())
                                                         for s in TEST_SPLITS))
        self.observations = ([env.observe(t, phase="train", mode="closed") for t in env.tasks("train")[:2]]
                             + [env.observe(t, phase="test", mode="closed") for t in self.build.test_tasks()[:2]])
        learner_name = "?"
        try:
            learner = self.target.factory(**{**self.config, "limit": self.limit, "state_dir": str(self.state_dir)})
        except Exception as exc:  # noqa: BLE001 - the author's error, reported as the protocol check
            keys = ", ".join(sorted({*self.config, "limit", "state_dir"}))
            self._fail_all(f"the factory could not build a learner from keyword config ({keys}): {_error(exc)}; "
                           "take keyword settings (extend agents.learner.LearnerConfig, which declares limit, "
                           "gather_model and state_dir) and accept these keys")
        else:
            learner_name = str(getattr(learner, "name", "?"))
            try:
                self._run_checks(learner)
            except Exception as exc:  # noqa: BLE001 - a learner that breaks a step the checks depend on
                for name in CHECKS:
                    if name not in self.results:  # through _set: the command prints each as it is decided
                        self._set(name, False, f"not run: the checker stopped at {_error(exc)}")
        self.details.setdefault("seconds", {})["total"] = round(time.perf_counter() - started, 1)
        return CheckReport(target=self.target.target or repr(self.target.factory), learner=learner_name,
                           model=self.model, checks=[self.results[name] for name in CHECKS], effect=self.effect,
                           details=self.details, seconds=self.details["seconds"]["total"])

    def _timed(self, label: str, step) -> Any:
        started = time.perf_counter()
        try:
            return step()
        finally:
            self.details.setdefault("seconds", {})[label] = round(time.perf_counter() - started, 1)

    def _set(self, name: str, passed: bool, why: str, warning: str = "") -> None:
        self.results[name] = result = CheckResult(name, passed, why, warning)
        if self.on_check is not None:
            self.on_check(result, time.perf_counter() - self.started)

    def _fail_all(self, why: str) -> None:
        self.details.setdefault("seconds", {})
        self._set("protocol", False, why)
        for name in CHECKS[1:]:
            self._set(name, False, "not run: the learner could not be built (see protocol)")

    def _run_checks(self, learner: Any) -> None:
        from agents import Agent
        from agents.models import load_model

        problems = self._protocol_problems(learner)
        env = self.build.env
        base = (load_model(self.model) if self.model != "reference" else  # the upper bound knows every task
                load_model("reference", tasks=[t for s in ("train", *TEST_SPLITS) for t in env.tasks(s)],
                           mapping=env.mapping))
        agent = Agent(model=RecordingModel(base, self.recorder), learner=learner, max_tokens=self.max_tokens)
        report, evolve_error = None, None
        started = time.perf_counter()
        with recording(self.recorder):
            try:
                report = agent.evolve(RecordingEnv(env, self.recorder), limit=self.limit)
            except Exception as exc:  # noqa: BLE001 - reported in the checks
                evolve_error = _error(exc)
        self.details.setdefault("seconds", {})["evolve"] = round(time.perf_counter() - started, 1)
        self.details["recorded"] = {"prompts": len(self.recorder.prompts), "training_rows": self.recorder.training_rows,
                                    "test_split_requests": len(self.recorder.split_requests)}
        self.details["evolve_report"] = asdict(report) if hasattr(report, "__dataclass_fields__") else repr(report)
        declared, replaced = getattr(learner, "parametric", None), unwrap(agent.model) is not base
        self.parametric = bool(declared) if declared is not None else replaced
        self.details["parametric"] = self.parametric
        problems += self._report_problems(report, evolve_error)
        if declared is False and replaced:
            problems.append("evolve replaced agent.model but parametric is False: set parametric = True (a learner "
                            "that trains weights writes config.model_dir and the checker compares the weights)")
        self._set("protocol", not problems, "; ".join(problems) if problems else
                  "name, context, observe, evolve, save and load keep the Learner protocol; context(obs) returns "
                  "str; evolve returns an EvolveReport")
        self._check_limit(evolve_error)
        save_error = None
        try:
            learner.save(self.saved)
        except Exception as exc:  # noqa: BLE001 - reported in save-load
            save_error = _error(exc)
        self._check_test_data(learner, evolve_error)
        if evolve_error is not None:
            for name in ("closed-book", "docs-in-context", "effect"):
                self._set(name, False, f"not run: evolve raised {evolve_error}")
        else:
            self._timed("evaluate", lambda: self._evaluate(agent))
            self._timed("docs audit", lambda: self._check_docs_in_context(learner))
        self._timed("fresh processes", lambda: self._fresh_processes(learner, agent, report, save_error))

    # -- 1. protocol --------------------------------------------------------------------------------
    def _protocol_problems(self, learner: Any) -> list[str]:
        import inspect

        from agents.learner import Learner

        problems = []
        name = getattr(learner, "name", None)
        if not isinstance(name, str) or not name.strip():
            problems.append(f"name is {name!r}: give the class a non-empty str attribute, e.g. name = 'my-learner'")
        missing = [m for m in _PROTOCOL_CALLS if not callable(getattr(learner, m, None))]
        if missing:
            problems.append(f"{', '.join(missing)} missing or not callable: agents.learner.Learner needs "
                            "context(obs), observe(trajectory), evolve(agent, env), save(path) and load(path)")
        elif not isinstance(learner, Learner):
            problems.append("not an agents.learner.Learner at run time (isinstance fails)")
        for method, args in _PROTOCOL_CALLS.items():
            if method in missing:
                continue
            try:
                inspect.signature(getattr(learner, method)).bind(*args)
            except TypeError:
                problems.append(f"{method}{inspect.signature(getattr(learner, method))} cannot be called as "
                                f"{method}({', '.join(args)})")
            except ValueError:
                pass  # no signature to read (a builtin): the calls below will tell
        parametric = getattr(learner, "parametric", None)
        if parametric is not None and not isinstance(parametric, bool):
            problems.append(f"parametric is {parametric!r}: make it True (the learner trains weights and writes "
                            "config.model_dir) or False")
        if "context" not in missing:
            for obs in (self.observations[0], self.observations[-1]):
                try:
                    text = learner.context(obs)
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.append(f"context(obs) of a fresh learner (phase {obs.phase}) raised {_error(exc)}; "
                                    "return '' while there is nothing to show")
                    break
                if not isinstance(text, str):
                    problems.append(f"context(obs) returned {type(text).__name__}, not str ('' when there is none)")
                    break
        return problems

    @staticmethod
    def _report_problems(report: Any, evolve_error: str | None) -> list[str]:
        from agents.learner import EvolveReport

        if evolve_error is not None:
            return [f"Agent(model, learner).evolve(env, limit=N) raised {evolve_error}"]
        if not isinstance(report, EvolveReport):
            return [f"evolve returned {type(report).__name__}; return agents.learner.EvolveReport(learner=self.name, "
                    "episodes=..., details={...})"]
        return []

    # -- 2. limit -----------------------------------------------------------------------------------
    def _check_limit(self, evolve_error: str | None) -> None:
        recorder, n = self.recorder, self.limit
        touched = recorder.touched_in("train")
        first = self.build.split_ids["train"][:n]
        calls = sorted({m for t in touched for m in recorder.touched[t]})
        self.details["touched_train_tasks"] = touched
        if evolve_error is not None and len(touched) <= n:
            self._set("limit", False, f"not known: evolve raised {evolve_error} after touching {len(touched)} train "
                                      "tasks")
        elif not touched:
            self._set("limit", True, f"touched no train task with limit={n} (it learns from no task: nothing to limit)")
        elif set(touched) == set(first):
            self._set("limit", True, f"touched exactly the first {n} train tasks (through {', '.join(calls)})")
        elif len(touched) > n:
            self._set("limit", False, f"touched {len(touched)} train tasks with limit={n} ({', '.join(touched)}); "
                                      "use env.tasks('train')[:config.limit] (Agent.evolve(env, limit=N) sets the "
                                      "learner's limit; a registered learner also gets limit=N as config)")
        else:
            self._set("limit", False, f"touched {', '.join(touched)} with limit={n}, not the first {n} train tasks "
                                      f"({', '.join(first)}); limit means the first N of the train split, so that "
                                      "learners compared at one limit learn from the same tasks")

    # -- 3. no test data ----------------------------------------------------------------------------
    def _check_test_data(self, learner: Any, evolve_error: str | None) -> None:
        recorder, canary = self.recorder, self.build.canary
        leaks = [f"a request for the {split} split from {where}" for split, where in recorder.split_requests[:2]]
        leaks += [f"an open of {path} from {where}" for path, where in recorder.file_reads[:2]]
        tests = [t for t in recorder.touched if recorder.split_of.get(t) in TEST_SPLITS]
        leaks += [f"test task {t} given to env.{', '.join(sorted(recorder.touched[t]))}" for t in tests[:2]]
        leaks += [f"a prompt to {model}: …{snippet(text, canary)}…" for stage, model, text in recorder.prompts
                  if stage == "evolve" and canary in text][:2]
        leaks += [f"a training example: …{s}…" for s in recorder.training_leaks[:2]]
        leaks += [f"the learner's memory at {path}" for path in find_in_object(learner, canary)[:3]]
        files = sorted(set(find_in_files(self.state_dir, canary) + find_in_files(self.saved, canary)))
        leaks += [f"the saved file {f}" for f in files[:3]]
        n_files = sum(1 for d in (self.state_dir, self.saved) if d.exists() for p in d.rglob("*") if p.is_file())
        if leaks:
            self._set("no-test-data", False, "test data reached the learner during evolve: " + "; ".join(leaks) +
                      "; evolve may read env.tasks('train') and the docs, never a test split or its file")
        elif evolve_error is not None:
            self._set("no-test-data", False, f"incomplete: evolve raised {evolve_error} (no leak seen before that)")
        else:
            self._set("no-test-data", True, f"the canary planted in every test task reached none of "
                      f"{sum(s == 'evolve' for s, _, _ in recorder.prompts)} prompts, {recorder.training_rows} "
                      f"training rows, the learner's attributes or {n_files} saved files; no test split was read")

    # -- 4. closed book, 8. effect ------------------------------------------------------------------
    def _evaluate(self, agent: Any) -> None:
        from learners.checker.effect import NO_EFFECT, figure, pass_per_task, recall_per_function

        self.recorder.stage = "test"
        agent.model = RecordingModel(unwrap(agent.model), self.recorder)
        try:
            scores = pass_per_task(agent, self.build.env, TEST_SPLITS, self.samples, self.work / "eval")
        except Exception as exc:  # noqa: BLE001 - reported
            for name in ("closed-book", "effect"):
                self._set(name, False, f"the closed-book evaluation raised {_error(exc)}")
            return
        finally:
            agent.model = unwrap(agent.model)
        self._check_closed_book()
        try:
            figures = [figure("closed-book pass@1", self._baseline(), scores)]
            if self.parametric:
                mapping, functions = self.build.env.mapping, self.build.functions()
                learned = recall_per_function(unwrap(agent.model), mapping, functions)
                figures.append(figure("API recall", self._baseline_recall(), learned))
        except Exception as exc:  # noqa: BLE001 - reported
            self._set("effect", False, f"the baseline or the probe raised {_error(exc)}")
            return
        self.effect = figures
        quiet = all(f.verdict == NO_EFFECT for f in figures)
        self._set("effect", True, "; ".join(f.sentence() for f in figures) + f" (model {self.model})",
                  warning=f"no measurable effect on {figures[0].n} test tasks with {self.model}: the learner may "
                          "have learned nothing, or this model and size cannot show it (try --model "
                          "qwen2.5-coder-0.5b, --limit 4)" if quiet else "")

    def _baseline(self) -> dict[str, float]:
        from agents import Agent
        from learners.checker.effect import pass_per_task

        key = ("pass", self.model, self.max_tokens, self.samples)
        with self.build.lock:
            if key not in self.build.baselines:
                out = self.build.root / "baselines" / f"{len(self.build.baselines)}"
                agent = Agent(model=self.model, learner=None, max_tokens=self.max_tokens)
                self.build.baselines[key] = pass_per_task(agent, self.build.env, TEST_SPLITS, self.samples, out)
            return self.build.baselines[key]

    def _baseline_recall(self) -> dict[str, float]:
        from agents.models import load_model
        from learners.checker.effect import recall_per_function

        key = ("recall", self.model)
        with self.build.lock:
            if key not in self.build.baselines:
                self.build.baselines[key] = recall_per_function(load_model(self.model), self.build.env.mapping,
                                                                self.build.functions())
            return self.build.baselines[key]

    def _check_closed_book(self) -> None:
        import re

        from agents.prompts import LIBRARY

        task_text = self._task_text()
        chunks = {text[i:i + DOC_CHUNK] for text in (t.strip() for t in self._docs().values())
                  for i in range(0, len(text) - DOC_CHUNK + 1, DOC_CHUNK)}
        chunks = {c for c in chunks if c not in task_text}  # the task's own words are not the docs
        headers = [("the docs section header 'Documentation:'", re.compile(r"(?m)^Documentation:$")),
                   ("a doc entry header '## zwc.…'", re.compile(r"(?m)^## zwc\.")),
                   ("the open-book instruction", re.compile(re.escape(LIBRARY["open"])))]
        prompts = [text for stage, _, text in self.recorder.prompts if stage == "test"]
        found = []
        for text in prompts:
            found += [what for what, pattern in headers if pattern.search(text)]
            found += [f"doc text verbatim: '{c[:60]}…'" for c in chunks if c in text][:1]
            if found:
                break
        if not prompts:
            self._set("closed-book", False, "the closed-book evaluation sent no prompt to the model")
        elif found:
            self._set("closed-book", False, f"a closed-book test prompt holds {found[0]}; context(obs) in phase test "
                                            "must not return the docs (SE-Bench trains with the docs and tests "
                                            "without them)")
        else:
            self._set("closed-book", True, f"none of {len(prompts)} closed-book test prompts holds a docs header or "
                                           f"{DOC_CHUNK} characters of any doc entry")

    def _task_text(self) -> str:
        """Every task's own words (query, signature, example input): what a context may repeat."""
        return "\n".join(f"{t.query}\n{t.function_name}\n{t.example.input if t.example else ''}"
                         for split in ("train", *TEST_SPLITS) for t in self.build.env.tasks(split))

    def _docs(self) -> dict[str, str]:
        from envs.zwc.library.docs import DocIndex

        index = DocIndex.from_file(self.build.root / "api_doc.jsonl", self.build.env.mapping)
        return {path: entry.text for path, entry in index.entries.items()}

    # -- 5. docs in context (envs.zwc.library.docs_audit) ------------------------------------------------
    def _check_docs_in_context(self, learner: Any) -> None:
        """The contexts the closed-book evaluation itself used (its records and their contexts file:
        not a second call of ``context``, which a learner could answer differently), audited as the
        evaluation's summary is (``agents.context_audit.audit_records``), with the functions the
        learner met being those of the train tasks it touched."""
        from agents.context_audit import ContextLog, audit_records
        from agents.evaluate import read_results

        env, texts, records = self.build.env, {}, []
        for split in TEST_SPLITS:
            results = self.work / "eval" / f"{split}.jsonl"
            texts.update(ContextLog(results, fresh=False).texts)
            records += list(read_results(results).values()) if results.is_file() else []
        if not records or any(r.get("context_sha") not in texts for r in records):
            self._set("docs-in-context", False, "the closed-book evaluation left no record of the contexts it used "
                                                f"({self.work / 'eval'}); see the closed-book check")
            return
        touched = set(self.recorder.touched_in("train"))
        met = met_functions([t for t in env.tasks("train") if t.task_id in touched], env.mapping, env.function_paths)
        found = audit_records(records, texts, env, met, self.docs_threshold)
        self.details["docs_in_context"] = {**asdict(found), "carried": found.carried[:20],
                                           "unmet_names": found.unmet_names[:20]}
        if found.is_docs:
            self._set("docs-in-context", False, f"the closed-book contexts carry the docs: {found.sentence()}; docs in "
                                                "memory is not internalisation: keep what the learner did and "
                                                "concluded (trajectories, insights), not the documentation")
        else:
            self._set("docs-in-context", True, found.sentence())

    # -- 6. save-load, 7. kill-resume ---------------------------------------------------------------
    def _fresh_processes(self, learner: Any, agent: Any, report: Any, save_error: str | None) -> None:
        from learners.checker.child import run_child, run_killed, weights_hash

        if self.target.target is None:
            why = ("not run: the factory cannot be found by name in a fresh process (a lambda, a closure, or a "
                   "class defined inside a function); pass a registered name, package.module:Attr or "
                   "path/to/file.py:Attr")
            self._set("save-load", False, why)
            self._set("kill-resume", False, why)
            return
        rows = [o.model_dump(mode="json") for o in self.observations]
        weights, dtype = None, None
        try:
            expected = [learner.context(o) for o in self.observations]
        except Exception as exc:  # noqa: BLE001 - reported
            expected, save_error = [], save_error or f"(not reached) context(obs) after evolve raised {_error(exc)}"
        if self.parametric:
            try:
                weights, dtype = weights_hash(unwrap(agent.model)), getattr(unwrap(agent.model), "dtype", None)
            except TypeError as exc:
                weights = f"unreadable: {exc}"
        evolve_job = {"kind": "evolve", "root": str(self.build.root), "model": self.model, "limit": self.limit,
                      "state_dir": str(self.work / "resume-state"), "agent": {"max_tokens": self.max_tokens},
                      "observations": rows, "parametric": self.parametric}
        request = {"sys_path": [p for p in sys.path if p], "target": self.target.target, "config": self.config}
        killed = run_killed({**request, "jobs": [evolve_job]}, self.work / "killed", self.kill_after)
        jobs = [] if save_error else [{"kind": "load", "saved": str(self.saved), "observations": rows,
                                       "weights": self.parametric, "dtype": dtype}]
        results, log = run_child({**request, "jobs": [*jobs, {**evolve_job, "save": str(self.work / "resume-saved")}]},
                                 self.work / "resume", self.timeout)
        loaded = results[0] if jobs and results else None
        resumed = results[-1] if len(results) == len(jobs) + 1 else None
        self._check_save_load(save_error, loaded, expected, weights, log)
        self._check_kill_resume(killed, resumed, report, log)

    def _check_save_load(self, save_error, loaded, expected, weights, log) -> None:
        if save_error is not None and save_error.startswith("(not reached) "):
            self._set("save-load", False, save_error.removeprefix("(not reached) "))
        elif save_error is not None:
            self._set("save-load", False, f"save(path) raised {save_error}")
        elif loaded is None:
            self._set("save-load", False, f"the fresh process ended before it loaded the state: {log}")
        elif not loaded["ok"]:
            self._set("save-load", False, f"load(path) in a fresh process raised {loaded['error']}")
        elif loaded["contexts"] != expected:
            differ = [i for i, (a, b) in enumerate(zip(expected, loaded["contexts"], strict=True)) if a != b]
            i = differ[0]
            self._set("save-load", False, f"after load in a fresh process, context(obs) differs for {len(differ)} of "
                                          f"{len(expected)} observations (first: {expected[i][:80]!r} in this process,"
                                          f" {loaded['contexts'][i][:80]!r} loaded); save must write all the state "
                                          "context reads")
        elif self.parametric and loaded.get("weights") != weights:
            self._set("save-load", False, f"the weights loaded from {loaded.get('model_dir')} in a fresh process are "
                                          "not the weights of the model the agent holds after evolve; evolve must set "
                                          "agent.model to the trained model and save must record its model_dir")
        else:
            what = "the same weights (state-dict hash) and " if self.parametric else ""
            empty = not self.parametric and not any(expected)
            self._set("save-load", True, f"a fresh process loads {what}the same context for {len(expected)} "
                                         f"observations{' (empty for every observation)' if empty else ''}",
                      warning="the learner's context is empty for every observation after evolve: it shows the "
                              "agent nothing it learned" if empty else "")

    def _check_kill_resume(self, killed: dict, resumed: dict | None, report: Any, log: str) -> None:
        if resumed is None:
            self._set("kill-resume", False, f"the second evolve's process ended without a result: {log}")
            return
        if not resumed["ok"]:
            self._set("kill-resume", False, f"after a SIGKILL {killed['when']}, evolve again in a fresh process "
                                            f"raised {resumed['error']}; evolve must resume from (or redo over) "
                                            "what a killed run left in state_dir")
            return
        if resumed.get("model_dir_ok") is False:
            self._set("kill-resume", False, "the second evolve finished but its model directory has no config.json")
            return
        again = resumed["report"] or {}
        how = self._resumed_or_redone(killed, again, report)
        self.details["kill_resume"] = {**killed, "how": how, "reloaded_context_equal": resumed.get("contexts_equal")}
        first_run = f"killed {killed['when']}" if killed["killed"] else "not killed"
        self._set("kill-resume", True, f"{first_run}; a fresh evolve finished and its saved state loads; {how}")

    @staticmethod
    def _resumed_or_redone(killed: dict, again: dict, report: Any) -> str:
        """What the second evolve did, as far as its EvolveReport tells (episodes, or details' tasks)."""
        if not killed["killed"]:
            return f"nothing to resume: the first evolve {killed['when']}"
        details = again.get("details") or {}
        if details.get("resumed_from"):
            return f"resumed from {details['resumed_from']}"
        first_details = getattr(report, "details", None) or {}
        for what, before, after in (("episodes", getattr(report, "episodes", None), again.get("episodes")),
                                    ("tasks", first_details.get("tasks"), details.get("tasks"))):
            if isinstance(before, int) and isinstance(after, int) and before > 0:
                if after < before:
                    return f"resumed: {after} {what} where an uninterrupted evolve did {before}"
                return f"redid the work ({after} {what}, as an uninterrupted evolve)"
        return "whether it resumed or redid the work cannot be told from its report"
