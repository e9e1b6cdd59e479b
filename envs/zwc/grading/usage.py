"""Did the candidate use zwc? Judged from the library process's call log, test by test.

The library (``library_child.py``) logs, per test, each catalogued function that completed
and a fingerprint of its arguments. The rules:

* **Required where the reference needed it.** A test demands a counting call (any catalogued
  function but an array constructor, unless the task names the constructor) only where the
  task's reference solution made one on that test's input (the reference's own library log,
  ``ReferenceUsage``): honest code that returns early on an empty input passes, plain Python
  on the real inputs does not; a counting call somewhere in the run is always needed (a
  reference that made none does not test the library). Official tasks (whose accepted ``right_code`` is often plain
  Python, so no reference for usage) take the official rule at run time: a counting call
  somewhere in the run. Any other task without a reference: a counting call in every test.
* **Strict: the task's own functions, on the test's data.** Every function the task names
  (aliases, which run the same NumPy function, count as one) must run where the reference
  ran it (without a reference: in every test for a single-function task of ours, somewhere
  in the run for an official or multi-function one), and at least one such call must be on
  the test's data: its arguments came from this test's input (the library's provenance mark,
  ``provenance.py``: a counter, a clock or a handle number is not the input) and differ from
  every call of that function in the other tests whose inputs differ (a call on dummy data
  does not count). Where the reference's own calls coincide across two tests, so may the
  candidate's; where none of the reference's calls of the function in a test came from the
  input, the provenance mark is not asked for there.
* **The answer comes from the call** (``dependence.py``): a call is not enough, its result must
  be what the test returns. Standard: where the reference's own answer came from a counting
  call on the test's data, the candidate's must too (a task without a reference: in every
  test; official records keep the official run-level rule). Strict: for each function the task
  names, where the reference's answer came from it (without a reference: in every test, official
  records included), the candidate's must come from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from envs.zwc.grading.dependence import HandedValues, comes_from
from envs.zwc.grading.equality import DEFAULT_ABS_TOL, DEFAULT_REL_TOL
from envs.zwc.sandbox.provenance import OFF_DATA


def _digest(print_: str) -> str:
    return print_[1:] if print_.startswith(OFF_DATA) else print_


@dataclass(frozen=True)
class ReferenceUsage:
    """What a task's reference solution ran, per test (from its library log).

    ``counted[i]``: the counted names it ran in test i (None where its test i failed, so
    nothing is known); ``prints[i]``: name -> fingerprints of those calls' arguments;
    ``answers[i]``: what it returned (None where unknown); ``handed[i]``: the values the
    library handed it, with their lineage (``dependence.py``)."""

    counted: tuple[frozenset[str] | None, ...]
    prints: tuple[Mapping[str, frozenset[str]], ...]
    answers: tuple = ()
    handed: tuple = ()

    @classmethod
    def from_tests(cls, n_tests: int, library_tests: dict[int, dict], ok: set[int],
                   answers: Mapping[int, object] | None = None) -> ReferenceUsage:
        counted, prints, returned, handed = [], [], [], []
        for i in range(n_tests):
            entry = library_tests.get(i)
            if entry is None or i not in ok:
                counted.append(None)
                prints.append({})
                returned.append(None)
                handed.append([])
                continue
            counted.append(frozenset(n for n, c in entry.get("calls", {}).items() if c))
            prints.append({n: frozenset(p) for n, p in entry.get("prints", {}).items()})
            returned.append((answers or {}).get(i))
            handed.append(entry.get("handed") or [])
        return cls(tuple(counted), tuple(prints), tuple(returned), tuple(handed))


@dataclass(frozen=True)
class UsageRule:
    """How one task's zwc calls are judged.

    Args:
        names: the name each catalogued function is counted under -> its zwc path.
        constructors: counted names that do not show use of the library on their own.
        targets: counted names of the functions the task names.
        groups: counted name -> its alias group (names that run the same NumPy function).
        strict: the task's own functions must run, on the test's data.
        required: False in the NumPy control (nothing of zwc is expected to run).
        reference: the reference solution's usage, when known.
        official: an official task (the run-level rule where no reference is known).
        inputs: the tests' input texts (which tests' inputs differ).
        rel_tol, abs_tol: the task's tolerance (an answer equal to a handed-out value within it
            came from that value).
        moved: label of an answer check -> the tests whose answers moved when the counterfactual
            run changed those calls' results (``ZWCEnv.check_many``).
    """

    names: Mapping[str, str]
    constructors: frozenset[str] = frozenset()
    targets: frozenset[str] = frozenset()
    groups: Mapping[str, str] = field(default_factory=dict)
    strict: bool = False
    required: bool = True
    reference: ReferenceUsage | None = None
    official: bool = False
    inputs: tuple[str, ...] = ()
    rel_tol: float = DEFAULT_REL_TOL
    abs_tol: float = DEFAULT_ABS_TOL
    moved: Mapping[str, frozenset[int]] = field(default_factory=dict)

    def ran(self, record: dict) -> set[str]:
        calls = record.get("calls") or {}
        return {name for name, count in calls.items() if name in self.names and count}

    def _counting(self, ran: set[str]) -> bool:
        return any(name not in self.constructors or name in self.targets for name in ran)

    def _group(self, name: str) -> str:
        return self.groups.get(name, name)

    def problem(self, tests: dict[int, dict], n_tests: int, answers: Mapping[int, object] | None = None) -> str:
        """Why the tests' calls do not count as using zwc ('' when they do); ``answers``: what
        each test returned (None: the answers are not judged)."""
        if not self.required:
            return ""
        ran = {i: self.ran(tests.get(i, {})) for i in range(n_tests)}
        reference = self.reference
        for i in range(n_tests):
            if reference is not None:
                needed = reference.counted[i] is not None and self._counting(set(reference.counted[i]))
            else:
                needed = not self.official
            if needed and not self._counting(ran[i]):
                if ran[i]:
                    return f"test {i}: only array constructors ran ({', '.join(sorted(self.names[n] for n in ran[i]))})"
                return f"test {i}: no zwc function ran where the reference solution ran one"
        if not any(self._counting(r) for r in ran.values()):  # even where the reference ran none:
            return "no zwc function ran in any test"  # such a task does not test the library
        problem = self._strict_problem(tests, ran, n_tests) if self.strict else ""
        if not problem and answers is not None:
            problem = self._answer_problem(tests, answers, n_tests)
        return problem

    # -- the answer comes from the call (``dependence.py``) --------------------------------------
    def _from(self, answer, handouts: list, accept) -> bool:
        return comes_from(answer, HandedValues(handouts, accept), self.rel_tol, self.abs_tol)

    def _demanded(self, accept, n_tests: int) -> list[int]:
        """The tests where an answer must come from calls that ``accept`` passes."""
        reference = self.reference
        if reference is not None and reference.answers:
            return [i for i in range(n_tests) if reference.counted[i] is not None
                    and self._from(reference.answers[i], reference.handed[i], accept)]
        if reference is not None or (self.official and not self.strict):
            return []  # a reference logged before answers were kept; official records: the official rule
        return list(range(n_tests))

    def answer_gaps(self, tests: dict[int, dict], answers: Mapping[int, object],
                    n_tests: int) -> list[tuple[str, frozenset[str], list[int]]]:
        """(label, names, tests): where an answer must come from calls of ``names`` and the values
        the library handed out do not show it (the counterfactual run may still: ``moved``)."""
        counting = frozenset(n for n in self.names if self._counting({n}))
        checks = [("a zwc call", counting)]
        if self.strict:
            for group in sorted({self._group(t) for t in self.targets}):
                members = frozenset(n for n in self.names if self._group(n) == group)
                checks.append((self.names.get(group, group), members))
        gaps = []
        for label, names in checks:
            def accept(lineage: frozenset, names=names) -> bool:
                return bool(lineage & names)

            missing = [i for i in self._demanded(accept, n_tests) if i in answers
                       and not self._from(answers[i], tests.get(i, {}).get("handed") or [], accept)]
            if missing:
                ran = set().union(*(set(tests.get(i, {}).get("calls") or {}) for i in missing))
                gaps.append((label, frozenset(ran & names), missing))
        return gaps

    def _answer_problem(self, tests: dict[int, dict], answers: Mapping[int, object], n_tests: int) -> str:
        for label, _names, missing in self.answer_gaps(tests, answers, n_tests):
            unmoved = [i for i in missing if i not in self.moved.get(label, frozenset())]
            if unmoved:
                rule = "" if label == "a zwc call" else " (--usage strict)"
                return (f"test {unmoved[0]}: the answer does not come from what {label} returned on the "
                        f"test's data{rule}")
        return ""

    def _strict_problem(self, tests: dict[int, dict], ran: dict[int, set[str]], n_tests: int) -> str:
        groups = sorted({self._group(t) for t in self.targets})
        for group in groups:
            label = self.names.get(group, group)
            members = {n for n in self.names if self._group(n) == group}
            required = self._required_tests(group, members, n_tests, single=len(groups) == 1)
            if required is None:  # somewhere in the run
                if not any(self._on_data(group, members, i, tests, n_tests) for i in range(n_tests)):
                    return f"the task's function {label} did not run on the test's data (--usage strict)"
                continue
            for i in required:
                if not members & ran[i]:
                    return f"test {i}: the task's function {label} did not run (--usage strict)"
                if not self._on_data(group, members, i, tests, n_tests):
                    return (f"test {i}: the task's function {label} ran only on arguments that do not depend "
                            "on the test's input (--usage strict)")
        return ""

    def _required_tests(self, group: str, members: set[str], n_tests: int, single: bool) -> list[int] | None:
        reference = self.reference
        if reference is not None:
            return [i for i in range(n_tests) if reference.counted[i] and members & reference.counted[i]]
        return list(range(n_tests)) if single and not self.official else None

    def _prints(self, usage_prints: Mapping, members: set[str]) -> set[str]:
        """The argument digests of these functions' calls (provenance marks dropped)."""
        return {_digest(p) for name in members for p in usage_prints.get(name, ())}

    def _from_input(self, usage_prints: Mapping, members: set[str]) -> set[str]:
        """The digests of the calls whose arguments came from the test's input."""
        return {p for name in members for p in usage_prints.get(name, ()) if not p.startswith(OFF_DATA)}

    def _on_data(self, group: str, members: set[str], i: int, tests: dict[int, dict], n_tests: int) -> bool:
        prints_i = tests.get(i, {}).get("prints") or {}
        mine = self._from_input(prints_i, members)
        if self.reference is not None and self._prints(self.reference.prints[i], members) and \
                not self._from_input(self.reference.prints[i], members):
            mine = self._prints(prints_i, members)  # the reference's own calls did not come from the input
        if not mine:
            return False
        others: set[str] = set()
        for j in range(n_tests):
            if j == i or (self.inputs and self.inputs[j] == self.inputs[i]):
                continue
            if self.reference is not None:
                ours_i = self._prints(self.reference.prints[i], members)
                ours_j = self._prints(self.reference.prints[j], members)
                if ours_i & ours_j:  # the reference's own calls coincide here: so may the candidate's
                    continue
            others |= self._prints(tests.get(j, {}).get("prints") or {}, members)
        return bool(mine - others)

    def used(self, tests: dict[int, dict], n_tests: int) -> dict[str, bool]:
        """Each named function (by zwc path) -> whether it (or an alias) ran in some test."""
        ran = set().union(*(self.ran(tests.get(i, {})) for i in range(n_tests))) if n_tests else set()
        out = {}
        for target in sorted(self.targets):
            members = {n for n in self.names if self._group(n) == self._group(target)}
            out[self.names.get(target, target)] = bool(members & ran)
        return out
