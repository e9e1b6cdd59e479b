"""The validator: which proposals become tasks, and why the others do not.

A parsed proposal (``proposal.py``) is kept only if, in this order (the first failed stage
names the rejection, a ``Reason``):

1. *screen* (no code runs): the problem text names no zwc or NumPy function; the solution
   passes the grader's static checks (``envs.zwc.check_code``: allowed modules only,
   no NumPy, no reflection, zwc imported and called, names that exist);
2. *run twice* in the sandbox on its inputs, with the validator's limits (a timeout is a
   rejection): no error on any input, the same values both times (deterministic: the
   sandbox reseeds ``random`` per test, so only unseeded generators such as
   ``random.Random()`` or ``id``/``hash`` differ), values that can be compared (not an
   opaque object), and not one value for every input (a constant would pass);
3. *graded as a Task* by ``env.check`` against the outputs of step 2: it must pass under
   the grading-integrity rules, i.e. a catalogued zwc function (not only an array
   constructor) really ran in every test;
4. *NumPy twin*: ``translate_zwc`` of the solution, run in the NumPy control, must pass the
   same tests (SE-Bench's tasks are NumPy tasks behind new names).

Expected outputs come only from executing the solution in the sandbox; nothing of a
proposal ever runs in this process. Each stage is batched over the round's proposals
(``env.run_many``, ``env.check_many``). ``ValidationReport`` counts a round's
results by reason, with the acceptance rate.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from envs.zwc import (
    CATALOGUE,
    CONSTRUCTORS,
    MIN_TESTS,
    CheckReason,
    Failure,
    Limits,
    RunResult,
    Task,
    TestCase,
    TestRun,
    ZWCEnv,
    check_code,
    public_names,
    translate_zwc,
    values_equal,
)
from sebench.errors import SettingError
from selfplay.proposal import Proposal
from selfplay.reasons import Reason, Rejected

# a static-check reason -> ours (every other static rejection is a wall: BANNED_CODE)
_CHECK_REASON = {CheckReason.SYNTAX: Reason.SYNTAX_ERROR, CheckReason.EMPTY: Reason.NO_ENTRY,
                 CheckReason.NO_ENTRY: Reason.NO_ENTRY, CheckReason.UNKNOWN_ZWC_NAME: Reason.UNKNOWN_API,
                 CheckReason.NO_ZWC_IMPORT: Reason.NO_ZWC_CALL, CheckReason.NO_ZWC_CALL: Reason.NO_ZWC_CALL}
# a sandbox error category -> ours (every other category: the solution fails on its own input)
_CATEGORY_REASON = {"violation": Reason.BANNED_CODE, "unknown_api": Reason.UNKNOWN_API,
                    "memory": Reason.RESOURCE_LIMIT, "output": Reason.RESOURCE_LIMIT, "syntax": Reason.SYNTAX_ERROR}
# a grading failure -> ours (every other failure: FAILS_OWN_TESTS)
_FAILURE_REASON = {Failure.NO_ZWC_CALL: Reason.NO_ZWC_CALL, Failure.TIMEOUT: Reason.TIMEOUT,
                   Failure.BYPASS_ATTEMPT: Reason.BANNED_CODE, Failure.UNKNOWN_API: Reason.UNKNOWN_API,
                   Failure.RESOURCE_LIMIT: Reason.RESOURCE_LIMIT, Failure.SANDBOX_ERROR: Reason.SANDBOX_ERROR}


@dataclass(frozen=True)
class ValidatorConfig:
    """What a kept proposal must satisfy.

    Attributes:
        limits: sandbox limits of the two runs (grading then uses the env's own, wider
            ones): proposals are small programs, and a tight limit keeps an endless loop
            from stalling a round.
        max_output_chars: the longest expected output a task may hold (SE-Bench's are a
            few hundred characters; a huge one bloats buffers and prompts).
        min_tests: test cases a task needs (SE-Bench's single-function tasks: 8).
        allow_named_functions: keep a problem text that names a zwc or NumPy function
            (SE-Bench's pipeline drops those: the solver would be told the answer).
        require_target: a sampled function (``Proposal.functions``) must have run; off by
            default: a task that uses another zwc function still teaches the library.
        check_numpy: run the NumPy twin (step 4).
        split: the ``split`` of kept tasks.
        id_prefix: kept tasks' ids are ``{id_prefix}-{hash of solution and inputs}``: the same
            task proposed in two rounds has one id (buffers keep it once; they record the round).
    """

    limits: Limits = field(default_factory=lambda: Limits(cpu_s=2, wall_s=5.0))
    min_tests: int = MIN_TESTS
    max_output_chars: int = 4000
    allow_named_functions: bool = False
    require_target: bool = False
    check_numpy: bool = True
    split: str = "selfplay"
    id_prefix: str = "sp"

    def __post_init__(self) -> None:
        if self.min_tests < 2:
            raise SettingError(f"min_tests ({self.min_tests}) must be >= 2: one test cannot tell a constant apart")


@dataclass(frozen=True)
class Accepted:
    """A proposal that became a task (its tests executed, its ZWC and NumPy solutions verified)."""

    task: Task
    proposal: Proposal


Result = Accepted | Rejected


class Validator:
    """Validates proposals against ``env``'s build, through its sandbox pool."""

    def __init__(self, env: ZWCEnv, config: ValidatorConfig | None = None):
        self.env = env
        self.config = config or ValidatorConfig()
        self._public = frozenset(public_names(env.mapping))
        zwc_short = sorted({e.short for e in env.mapping}, key=len, reverse=True)
        numpy_short = sorted({e.numpy.rsplit(".", 1)[1] for e in CATALOGUE} |
                             {e.numpy.rsplit(".", 1)[1] for e in env.mapping}, key=len, reverse=True)
        self._named = [re.compile(r"\b(?:np|numpy|zwc)\.[\w.]+"),
                       re.compile(r"\b(?:" + "|".join(map(re.escape, zwc_short)) + r")\b"),
                       re.compile(r"\b(?:" + "|".join(map(re.escape, numpy_short)) + r")\(")]

    def validate(self, proposal: Proposal | Rejected) -> Result:
        return self.validate_many([proposal])[0]

    def validate_many(self, items: Sequence[Proposal | Rejected]) -> list[Result]:
        """One result per item, in order (parse rejections pass through unchanged)."""
        results: list[Result | None] = [item if isinstance(item, Rejected) else None for item in items]
        pending = [i for i, r in enumerate(results) if r is None]
        for i in pending:
            results[i] = self._screen(items[i])
        pending = [i for i in pending if results[i] is None]
        tasks = self._run_twice({i: items[i] for i in pending}, results)
        self._grade(tasks, items, results)
        if self.config.check_numpy:
            self._numpy_twin({i: t for i, t in tasks.items() if results[i] is None}, items, results)
        for i, task in tasks.items():
            if results[i] is None:
                results[i] = Accepted(task, items[i])
        assert all(r is not None for r in results)
        return results  # type: ignore[return-value]

    # -- 1. screen -------------------------------------------------------------------------
    def _screen(self, proposal: Proposal) -> Rejected | None:
        if not self.config.allow_named_functions:
            for pattern in self._named:
                match = pattern.search(proposal.problem)
                if match:
                    return _reject(proposal, Reason.NAMES_FUNCTION,
                                   f"the problem text names a function ({match.group(0)!r}); "
                                   "state the task in plain words")
        if len(proposal.inputs) < self.config.min_tests:
            return _reject(proposal, Reason.TOO_FEW_INPUTS, f"only {len(proposal.inputs)} inputs, a task needs >= "
                                                            f"{self.config.min_tests}")
        rejection = check_code(proposal.solution, proposal.entry_point, self._public)
        if rejection is not None:
            return _reject(proposal, _CHECK_REASON.get(rejection.reason, Reason.BANNED_CODE), str(rejection))
        return None

    # -- 2. run twice ----------------------------------------------------------------------
    def _run_twice(self, todo: dict[int, Proposal], results: list) -> dict[int, Task]:
        """Tasks built from the outputs of two agreeing runs, by item index."""
        jobs = [(p.solution, p.entry_point, list(p.inputs)) for p in todo.values() for _ in range(2)]
        answers = self.env.run_many(jobs, limits=self.config.limits)
        tasks = {}
        for n, (i, proposal) in enumerate(todo.items()):
            outcome = self._outputs(proposal, answers[2 * n:2 * n + 2])
            if isinstance(outcome, Rejected):
                results[i] = outcome
            else:
                tasks[i] = self._task(proposal, outcome)
        return tasks

    def _outputs(self, proposal: Proposal, answers: list[RunResult]) -> list[str] | Rejected:
        """The expected output text per input, or why there is none."""
        runs = []
        for answer in answers:
            values = self._run_values(proposal, answer)
            if isinstance(values, Rejected):
                return values
            runs.append(values)
        first, second = runs
        for i, (a, b) in enumerate(zip(first, second, strict=True)):
            if not values_equal(a.value, b.value, rel_tol=0.0, abs_tol=0.0):
                return _reject(proposal, Reason.NON_DETERMINISTIC,
                               f"two runs disagree on input {i} ({_short(repr(a.value))} vs "
                               f"{_short(repr(b.value))}); the answer must depend on the input only")
        opaque = next((i for i, v in enumerate(first) if v.opaque), None)
        if opaque is not None:
            return _reject(proposal, Reason.OPAQUE_OUTPUT,
                           f"input {opaque} returns {_short(repr(first[opaque].value))}, which has no value "
                           "to compare; return numbers, strings, lists, tuples or dicts")
        outputs = [repr(v.value) for v in first]
        longest = max(range(len(outputs)), key=lambda i: len(outputs[i]))
        if len(outputs[longest]) > self.config.max_output_chars:
            return _reject(proposal, Reason.RESOURCE_LIMIT,
                           f"input {longest} gives an output of {len(outputs[longest])} characters, "
                           f"more than a task keeps ({self.config.max_output_chars})")
        if len(set(outputs)) == 1:
            return _reject(proposal, Reason.CONSTANT_ANSWER,
                           f"every input gives {_short(outputs[0])}: a constant answer would pass")
        return outputs

    def _run_values(self, proposal: Proposal, run: RunResult) -> list[TestRun] | Rejected:
        """Each test's outcome from one sandbox run, or the first problem of that run."""
        def reject(reason: Reason, detail: str) -> Rejected:
            return _reject(proposal, reason, detail)

        if run.server_error:
            return reject(Reason.SANDBOX_ERROR, run.server_error)
        limits = self.config.limits
        if run.killed == "timeout":
            return reject(Reason.TIMEOUT, f"did not finish within the limits ({limits.cpu_s}s CPU, "
                          f"{limits.wall_s}s wall clock) after {run.ran} of {len(proposal.inputs)} inputs")
        if run.killed == "syscall" or run.violations:
            what = ", ".join(run.violations[:3]) or "a system call the sandbox forbids"
            return reject(Reason.BANNED_CODE, f"blocked at run time: {what}")
        if run.killed == "output" or run.output_exceeded:
            return reject(Reason.RESOURCE_LIMIT, "printed more output than the sandbox accepts")
        if run.load is not None and not run.load.ok:
            return reject(_CATEGORY_REASON.get(run.load.category, Reason.FAILS_OWN_TESTS),
                          f"fails while loading: {_short(run.load.error)}")
        for i, test in enumerate(run.tests):
            if test is not None and not test.ok:
                return reject(_CATEGORY_REASON.get(test.category, Reason.FAILS_OWN_TESTS),
                              f"fails on its own input {i} ({_short(proposal.inputs[i])}): {_short(test.error)}")
        if run.load is None or not run.finished or run.ran < len(proposal.inputs):
            return reject(Reason.FAILS_OWN_TESTS, f"crashed after {run.ran} of {len(proposal.inputs)} inputs "
                          f"(signal {run.signal})")
        if run.state_changes:
            return reject(Reason.BANNED_CODE, f"changed state shared between tests: {run.state_changes[0]}")
        return run.tests  # type: ignore[return-value] - every input ran

    def _task(self, proposal: Proposal, outputs: list[str]) -> Task:
        digest = hashlib.sha1("\n".join([proposal.solution, *proposal.inputs]).encode()).hexdigest()[:10]
        tests = [TestCase(input=i, output=o) for i, o in zip(proposal.inputs, outputs, strict=True)]
        return Task(task_id=f"{self.config.id_prefix}-{digest}", split=self.config.split,
                    query=proposal.problem, function_name=proposal.signature, test_cases=tests,
                    example=tests[0], reference=proposal.solution)

    # -- 3. graded as a task ---------------------------------------------------------------
    def _grade(self, tasks: dict[int, Task], items: Sequence, results: list) -> None:
        verdicts = self.env.check_many([(task, task.reference) for task in tasks.values()]) if tasks else []
        for (i, task), verdict in zip(tasks.items(), verdicts, strict=True):
            proposal = items[i]
            if not verdict.passed or not verdict.zwc_calls:
                reason = _FAILURE_REASON.get(verdict.failure, Reason.FAILS_OWN_TESTS)
                if verdict.passed:  # a pass with no catalogued call cannot happen; refuse it all the same
                    reason = Reason.NO_ZWC_CALL
                results[i] = _reject(proposal, reason, f"graded as a task: {verdict.failure.value}: "
                                     f"{_short(verdict.detail, 300)}")
                continue
            used = [p for p in verdict.zwc_calls if self.env.mapping.to_numpy(p) not in CONSTRUCTORS]
            if self.config.require_target and proposal.functions and not set(proposal.functions) & set(used):
                results[i] = _reject(proposal, Reason.OFF_TARGET,
                                     f"none of {', '.join(proposal.functions)} ran (it ran {', '.join(used)})")
                continue
            used.sort(key=lambda p: (p not in proposal.functions, p))
            task.selected_functions = [self.env.mapping.to_numpy(p).removeprefix("numpy.") for p in used]
            task.kind = self.env.mapping.by_zwc(used[0]).kind

    # -- 4. the NumPy twin -----------------------------------------------------------------
    def _numpy_twin(self, tasks: dict[int, Task], items: Sequence, results: list) -> None:
        pairs = []
        for i, task in tasks.items():
            try:
                pairs.append((i, task, translate_zwc(task.reference, self.env.mapping)))
            except (SyntaxError, KeyError, ValueError) as exc:
                results[i] = _reject(items[i], Reason.NUMPY_DISAGREES, f"no NumPy translation: {exc}")
        verdicts = self.env.check_many([(task, code) for _, task, code in pairs], mode="numpy") if pairs else []
        for (i, task, code), verdict in zip(pairs, verdicts, strict=True):
            if verdict.passed:
                task.example_output = [code]
            else:
                results[i] = _reject(items[i], Reason.NUMPY_DISAGREES,
                                     f"its NumPy translation {verdict.failure.value}: {_short(verdict.detail, 300)}")


@dataclass
class ValidationReport:
    """A round's results counted: proposals, accepted, and rejections by reason."""

    proposals: int = 0
    accepted: int = 0
    rejections: Counter = field(default_factory=Counter)  # reason value -> count

    @classmethod
    def of(cls, results: Sequence[Result]) -> ValidationReport:
        rejected = Counter(r.reason.value for r in results if isinstance(r, Rejected))
        return cls(proposals=len(results), accepted=sum(isinstance(r, Accepted) for r in results),
                   rejections=rejected)

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.proposals if self.proposals else 0.0

    def rates(self) -> dict[str, float]:
        """Each rejection reason's share of the proposals, most frequent first."""
        return {reason: count / self.proposals for reason, count in self.rejections.most_common()}

    def to_dict(self) -> dict:
        return {"proposals": self.proposals, "accepted": self.accepted, "acceptance_rate": self.acceptance_rate,
                "rejections": dict(self.rejections.most_common())}

    def __str__(self) -> str:
        reasons = ", ".join(f"{reason} {count}" for reason, count in self.rejections.most_common())
        return (f"{self.accepted}/{self.proposals} accepted ({100 * self.acceptance_rate:.0f}%)"
                + (f"; rejected: {reasons}" if reasons else ""))


def _reject(proposal: Proposal, reason: Reason, detail: str) -> Rejected:
    return Rejected(reason, detail, text=proposal.text, functions=proposal.functions)


def _short(text: str, chars: int = 120) -> str:
    return text if len(text) <= chars else text[:chars] + "…"
