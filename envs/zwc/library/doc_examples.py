"""Do the rewritten docs' examples still work? Run each doc's examples under NumPy and
under zwc and compare what every expression evaluates to.

    python -m envs.zwc.library.doc_examples DIR [--json OUT]

Runs in its own process (examples print, plot and seed generators), in a temporary
working directory, importing the ``zwc`` package from DIR. An example "runs under NumPy"
when the NumPy version raises nothing; it then "matches" when the zwc version raises
nothing either and every expression has an equal value. Mismatches are counted by
reason: a name zwc does not have (``zwc.random``), a NumPy method called on a ZWCArray
(``x.reshape``), a value that differs (random numbers, object identity), another error.
"""

from __future__ import annotations

import argparse
import contextlib
import doctest
import io
import json
import os
import tempfile
import warnings
from collections import Counter

from envs.zwc.grading.equality import values_equal


def _plain(value, runtime):
    """A comparable plain form of an example's value under either library."""
    import numpy as np

    if isinstance(value, runtime.ZWCArray):
        value = value._zwc_nd
    if isinstance(value, np.ndarray):
        return ("array", value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v, runtime) for v in value]
    if isinstance(value, (int, float, complex, str, bool)) or value is None:
        return value
    return ("object", type(value).__name__)


def _run(examples: list[doctest.Example], namespace: dict, runtime) -> tuple[list, str]:
    """Values of each example (None for statements) and the first error, if any."""
    values = []
    for example in examples:
        source = example.source
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    code = compile(source, "<example>", "eval")
                except SyntaxError:
                    exec(compile(source, "<example>", "exec"), namespace)  # noqa: S102 - trusted docs
                    values.append(None)
                    continue
                values.append(_plain(eval(code, namespace), runtime))  # noqa: S307 - trusted docs
        except Exception as exc:  # noqa: BLE001 - an example's failure is data here
            return values, f"{type(exc).__name__}: {exc}"
    return values, ""


def _reason(error: str) -> str:
    if "module 'zwc" in error or "has no attribute" in error and "zwc" in error.split(":")[0]:
        return "name zwc does not have"
    if "'ZWCArray' object has no attribute" in error:
        return "NumPy method on a ZWCArray"
    if error.startswith(("ModuleNotFoundError", "ImportError")):
        return "imports a module zwc does not replace"
    return "other error"


def check_examples(directory: str) -> dict:
    """Run every doc's examples both ways; counts, reasons and per-function details."""
    import numpy as np

    from envs.zwc.library.package import import_zwc

    zwc, runtime = import_zwc(os.path.abspath(directory))

    parser = doctest.DocTestParser()
    rows = [json.loads(line) for line in open(os.path.join(directory, "api_doc.jsonl"))]
    summary: Counter = Counter()
    details = []
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for row in rows:
                original = parser.get_examples(row["docstring"])
                rewritten = parser.get_examples(row["rewritten_doc"])
                if not original:
                    summary["no examples"] += 1
                    continue
                np.random.seed(0)
                np_values, np_error = _run(original, {"np": np, "numpy": np}, runtime)
                if np_error:
                    summary["fails under NumPy"] += 1
                    continue
                np.random.seed(0)
                zwc_values, zwc_error = _run(rewritten, {"zwc": zwc}, runtime)
                if zwc_error:
                    reason = _reason(zwc_error)
                elif len(zwc_values) != len(np_values) or not all(
                        values_equal(z, n, rel_tol=1e-7, abs_tol=1e-12)
                        for z, n in zip(zwc_values, np_values, strict=True)):
                    reason = "value differs"
                else:
                    summary["matches"] += 1
                    continue
                summary[f"differs: {reason}"] += 1
                details.append({"function": row["original_name"], "zwc": row["curr_name"],
                                "reason": reason, "error": zwc_error[:300]})
        finally:
            os.chdir(cwd)
    runs_under_numpy = summary["matches"] + sum(v for k, v in summary.items() if k.startswith("differs"))
    return {"functions": len(rows), "runs_under_numpy": runs_under_numpy,
            "matches": summary["matches"], "summary": dict(summary), "details": details}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--json", default=None, help="write the report here")
    args = parser.parse_args()
    report = check_examples(args.directory)
    text = json.dumps(report, indent=1)
    if args.json:
        with open(args.json, "w") as handle:
            handle.write(text)
    print(json.dumps({k: v for k, v in report.items() if k != "details"}, indent=1))


if __name__ == "__main__":
    main()
