"""Hand-written proposal answers, each with exactly one defect, for a build's zwc names.

``answers(z)`` maps a name (the Reason it must produce, or "good") to a model answer: prose,
then one ```python block in the proposal format. ``z`` maps NumPy names (``abs``) to the
build's zwc paths. Every defective answer is the good one with one change.
"""

from __future__ import annotations

FLOATS = [[1.0, -2.0], [-3.5], [0.0, 4.0, -4.5], [-1.25, 2.5], [7.0], [-8.0, 8.5, 0.5], [3.0, -3.25], [-0.5, -0.75]]
INTS = [[1, 2], [3], [4, 5, 6], [7, 8], [9], [10, 11, 12], [13, 14], [15, 16, 17, 18]]
DOC = '    """A sensor logs signed readings; report how far each reading is from zero."""\n'


def inputs_block(values: list) -> str:
    return "INPUTS = [\n" + "".join(f"    dict(readings={v!r}),\n" for v in values) + "]\n"


def answer(body: str, values: list = FLOATS, doc: str = DOC, head: str = "import zwc\n",
           tail: str | None = None) -> str:
    return ("Here is a new task.\n```python\n" + head + "\n\ndef solve(readings):\n" + doc + body + "\n\n"
            + (tail if tail is not None else inputs_block(values)) + "```\n")


def answers(z: dict[str, str]) -> dict[str, str]:
    a, s, neg = z["abs"], z["sum"], z["negative"]
    good = f"    return {a}(readings)\n"
    return {
        "good": answer(good),
        "no_code_block": "A sensor task: take the absolute value of each reading.",
        "syntax_error": answer(f"    return {a}(readings\n"),
        "no_entry": answer(good).replace("def solve(", "def answer("),
        "no_problem": answer(good, doc=""),
        "no_inputs": answer(good, tail="INPUTS = [dict(readings=[i, -i]) for i in range(10)]\n"),
        "too_few_inputs": answer(good, values=FLOATS[:3]),
        "names_function": answer(good, doc=f'    """Apply {a} to the readings of a sensor."""\n'),
        "banned_code": answer(good, head="import zwc\nimport os\n"),
        "unknown_api": answer("    return zwc.qqqqqq(readings)\n"),
        "no_zwc_call": answer("    return [abs(r) for r in readings]\n"),
        # passes the static check (zwc is called somewhere), but no zwc function runs: the grader's rule
        "no_zwc_call_at_run_time": answer(f"    if len(readings) > 100:\n        return {a}(readings)\n"
                                          "    return [abs(r) for r in readings]\n"),
        "timeout": answer(f"    total = {s}(readings)\n    while True:\n        total += 1\n"),
        "resource_limit": answer(f"    many = [{s}(readings)] * (10 ** 10)\n    return many[0]\n"),
        "fails_own_tests": answer(f"    return {s}(readings) / (len(readings) - 2)\n"),  # input 0 has 2 readings
        # the sandbox reseeds `random` before every test, so the module's generator is deterministic;
        # an unseeded instance draws from the OS
        "non_deterministic": answer(f"    return {s}(readings) + random.Random().random()\n",
                                    head="import zwc\nimport random\n"),
        "opaque_output": answer(f"    return set({a}(readings))\n"),
        "constant_answer": answer(f"    return {s}({a}(readings)) * 0\n"),
        # zwc hands back a Python int, NumPy an int64, which is not an int
        "numpy_disagrees": answer(f"    total = {s}(readings)\n    return [total, isinstance(total, int)]\n",
                                  values=INTS),
        "off_target": answer(f"    return {neg}(readings)\n"),  # asked for abs, uses negative
    }


def new_program(rendered: str) -> str:
    """A train task rendered as a proposal (``selfplay.teacher``), made a new program: one module
    constant more, so that it is no copy of the task it came from (``azr_rollout.program_key``)
    and still validates (the same problem, inputs and answers)."""
    if "import zwc\n" not in rendered:
        raise ValueError("not a rendered zwc task")
    return "Here is a new task.\n" + rendered.replace("import zwc\n", "import zwc\n\nSCALE = 1\n", 1)
