"""Reference solutions in NumPy, and running them to get the expected outputs.

The reference is the whole truth of a generated task: expected outputs come only from
executing it (in this process: it is code we generated, not a candidate's), and its ZWC
translation must then pass in the sandbox.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np

from envs.zwc.library.catalogue import Entry
from envs.zwc.tasks.inputs import CallSpec

# functions whose argument is a Python function: their tasks fix one rule in the reference
CUSTOM = {
    "numpy.vectorize": (
        ("x",),
        "    rule = np.vectorize(lambda v: v * 2 if v > 0 else -v)\n    return rule(x)",
        "Build the element-wise version of the rule 'double a positive value, negate any other' "
        "and apply it to `x`.",
    ),
    "numpy.piecewise": (
        ("x",),
        "    a = np.array(x)\n    return np.piecewise(a, [a < 0, a >= 0], [lambda v: -v, lambda v: v * v])",
        "Where an entry of `x` is negative the result is its negation, elsewhere its square.",
    ),
}


# uninitialised contents cannot be graded: these tasks ask for the new array's size
SHAPE_ONLY = {"numpy.empty", "numpy.empty_like"}
SHAPE_ONLY_NOTE = "Its contents are not initialised, so return the number of elements of the new array."


def numpy_reference(entry: Entry, spec: CallSpec) -> tuple[tuple[str, ...], str]:
    """(parameter names, reference source) for a single-function task."""
    fn = "np." + entry.call_target[len("numpy."):]
    if entry.numpy in CUSTOM:
        params, body, _ = CUSTOM[entry.numpy]
        return params, f"import numpy as np\n\n\ndef solve({', '.join(params)}):\n{body}\n"
    params = spec.params
    args = [f"np.array({p})" if i in spec.array_params else p for i, p in enumerate(params)]
    signature = ", ".join(params)
    if entry.kind == "inplace":
        body = (f"    out = np.array({params[0]}, dtype=float)\n"
                f"    {fn}(out, {', '.join(args[1:])})\n    return out")
    elif entry.numpy in SHAPE_ONLY:
        body = f"    return {fn}({', '.join(args)}).size"
    else:
        body = f"    return {fn}({', '.join(args)})"
    return params, f"import numpy as np\n\n\ndef solve({signature}):\n{body}\n"


def plain(value: Any) -> Any:
    """A NumPy result as plain Python: what the grader compares."""
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def compile_reference(source: str):
    namespace: dict[str, Any] = {}
    exec(compile(source, "<reference>", "exec"), namespace)  # noqa: S102 - our own generated code
    return namespace["solve"]


def run_reference(solve, args: tuple) -> tuple[bool, Any]:
    """(ok, plain result) of the reference on ``args`` (copied: references may mutate)."""
    from envs.zwc.tasks.inputs import as_numpy

    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return True, plain(solve(*as_numpy(copy.deepcopy(args))))
    except Exception:  # noqa: BLE001 - an input the function rejects is simply not a test case
        return False, None


def output_text(value: Any) -> str:
    """The expected output as the task file stores it (``repr``: nan and inf print bare)."""
    return repr(value)
