"""Prompts per mode, the retry feedback per phase, and reading code and search requests out
of model output."""

from __future__ import annotations

import re

from envs.zwc import Observation, Verdict

SYSTEM = ("You are an expert Python programmer. Solve the task by writing one Python function. "
          "Answer with a single ```python code block.")
LIBRARY = {
    "closed": "Use the Python library `zwc` (import it with `import zwc`). Do not use numpy.",
    "open": "Use the Python library `zwc` (import it with `import zwc`). Do not use numpy. "
            "Its documentation for this task follows.",
    "search": "Use the Python library `zwc` (import it with `import zwc`). Do not use numpy. You may search "
              "its documentation first: write a ```search block with a short query and wait for the results.",
    "numpy": "Use NumPy (`import numpy as np`).",
}
_CODE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_SEARCH = re.compile(r"```search[ \t]*\n(.*?)```", re.DOTALL)


def first_prompt(obs: Observation, context: str = "") -> list[dict[str, str]]:
    parts = [LIBRARY[obs.mode]]
    if obs.docs:
        parts.append("Documentation:\n" + obs.docs)
    if context:
        parts.append(context)
    parts.append(f"Task:\n{obs.question}")
    parts.append(f"Complete this function:\n{obs.signature}")
    if obs.example_input:
        parts.append(f"Example: with {obs.example_input} the result is {obs.example_output}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def extract_code(text: str) -> str:
    """The first fenced Python block; a bare ``def`` answer counts too; '' when there is none."""
    for match in _CODE.finditer(text):
        if not text[max(0, match.start() - 1):match.start() + 9].startswith(("```search", "`search")):
            code = match.group(1).strip()
            if code:
                return code + "\n"
    return text.strip() + "\n" if re.search(r"^\s*(?:import|from|def)\s", text, re.MULTILINE) else ""


def extract_search(text: str) -> str:
    match = _SEARCH.search(text)
    return match.group(1).strip() if match else ""


# What each failure class means, in words a model can act on (test-phase feedback names the
# class with this text instead of quoting the grader's free-text detail)
FAILURE_TEXT = {
    "no_code": "no ```python block defining the requested function was found",
    "syntax_error": "the code does not parse",
    "numpy_used": "the code uses NumPy, which is not allowed",
    "bypass_attempt": "the code reached around the zwc library (private names, reflection, patching)",
    "no_zwc_call": "the result did not come from the zwc function(s) the task needs",
    "unknown_api": "the code calls a zwc function that does not exist",
    "wrong_arguments": "a zwc function rejected its arguments",
    "runtime_error": "the code raised an error",
    "timeout": "the code ran past the time limit",
    "resource_limit": "the code used too much memory or output",
    "wrong_answer": "the function returned a wrong result",
    "sandbox_error": "the grader failed (not your code's fault)",
}
RETRY = "Fix it and answer again with a single ```python code block."
QUOTE = 300  # characters of an error or a returned value quoted back
NOT_RUN = "did not run"  # the grader's error for a test the candidate never reached (after a timeout, a crash)


def feedback(verdict: Verdict, obs: Observation, test_inputs: list[str]) -> str:
    """The message after a failed answer, by the rule of the episode's phase.

    Phase ``train`` may teach with expected values: the grader's detail as it is
    ("test 3: expected …, got …"). Phase ``test`` is closed book: the message is built only
    from fields that cannot hold a hidden test's expected value — the failure class, how many
    tests passed, the candidate's own error or own returned value for one failing test (the
    sandboxed child never sees an expected value; the comparison happens in the grader), and
    the task's example, which the prompt already shows. The grader's free-text detail is used
    only when no test ran (a static rejection, an error while loading): nothing was compared.

    Args:
        verdict: the failed answer's verdict.
        obs: the episode's observation (its phase, and the example the prompt shows).
        test_inputs: the task's test inputs in order, to tell which test is the example.
    """
    if obs.phase == "train":
        return f"Your code failed ({verdict.failure.value}): {verdict.detail[:600]}\n{RETRY}"
    lines = closed_book_outcome(verdict)
    if verdict.tests:
        lines += _failing_test(verdict, obs, test_inputs)
    lines.append(RETRY)
    return "\n".join(lines)


def closed_book_outcome(verdict: Verdict) -> list[str]:
    """A failed verdict in words that hold no expected value: its class, what that means, and
    how many tests passed (the grader's detail only when nothing was compared). What phase
    ``test`` may tell an agent or a learner that updates online (ACE's reflector)."""
    failure = verdict.failure.value
    lines = [f"Your code failed ({failure}): {FAILURE_TEXT.get(failure, failure.replace('_', ' '))}."]
    if not verdict.tests:
        if verdict.detail:
            lines.append(verdict.detail[:QUOTE])
    else:
        lines.append(f"{verdict.n_passed} of {len(verdict.tests)} tests returned the expected value.")
    return lines


def _failing_test(verdict: Verdict, obs: Observation, test_inputs: list[str]) -> list[str]:
    """One failing test in closed-book terms: its index, and the candidate's own error or value."""
    example = next((i for i, x in enumerate(test_inputs) if obs.example_input and x == obs.example_input), None)
    failing = [i for i, t in enumerate(verdict.tests) if not t.passed]
    raised = [i for i in failing if verdict.tests[i].error and verdict.tests[i].error != NOT_RUN]
    returned = [i for i in failing if not verdict.tests[i].error] if verdict.failure.value == "wrong_answer" else []
    for candidates in (raised, returned):
        if candidates:
            i = example if example in candidates else candidates[0]
            test = verdict.tests[i]
            where = f"On the task's example ({obs.example_input[:QUOTE]})" if i == example else f"On test {i}"
            if test.error:
                return [f"{where} your code raised {test.error[:QUOTE]}"]
            said = f"{where} your function returned {(test.printed or repr(test.got))[:QUOTE]}"
            if i == example:
                return [f"{said}; the expected result is {obs.example_output[:QUOTE]}."]
            return [f"{said}; hidden tests' expected values are not shown in phase test."]
    return []
