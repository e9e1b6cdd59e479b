"""Equality of returned values with expected ones, and the official printed-output parser.

Two graders share one structural comparison:

* ours compares the returned value (made plain: lists, tuples, numbers, strings) with
  the expected value parsed from the test case, with relative + absolute tolerance;
* the official SE-Bench grader printed the return value and compared it with
  ``right_exe_result`` after parsing both, with an absolute tolerance of 1e-2
  (``OFFICIAL_ABS_TOL``). Outputs look like ``[1. 2.]``, ``array([1, 2])``,
  ``ZWCArray(...)``, multi-line matrices, ``nan``, ``(array([0]), array([1]))``.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

OFFICIAL_ABS_TOL = 1e-2  # the official grader's setting, kept for compatibility
DEFAULT_REL_TOL = 1e-6
DEFAULT_ABS_TOL = 1e-8

_NUMBER = (int, float)


def values_equal(actual: Any, expected: Any, *, rel_tol: float = DEFAULT_REL_TOL,
                 abs_tol: float = DEFAULT_ABS_TOL) -> bool:
    """Structural equality: lists and tuples alike, numbers with tolerance, nan == nan."""
    if isinstance(expected, (list, tuple)):
        return (isinstance(actual, (list, tuple)) and len(actual) == len(expected)
                and all(values_equal(a, e, rel_tol=rel_tol, abs_tol=abs_tol)
                        for a, e in zip(actual, expected, strict=True)))
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and actual.keys() == expected.keys()
                and all(values_equal(actual[k], expected[k], rel_tol=rel_tol, abs_tol=abs_tol)
                        for k in expected))
    if isinstance(expected, complex) or isinstance(actual, complex):
        if not isinstance(actual, (*_NUMBER, complex)) or not isinstance(expected, (*_NUMBER, complex)):
            return False
        a, e = complex(actual), complex(expected)
        return (_close(a.real, e.real, rel_tol, abs_tol) and _close(a.imag, e.imag, rel_tol, abs_tol))
    if isinstance(expected, _NUMBER):
        return isinstance(actual, _NUMBER) and _close(float(actual), float(expected), rel_tol, abs_tol)
    if expected is None:
        return actual is None
    if isinstance(expected, str):
        return isinstance(actual, str) and actual == expected
    return actual == expected


def _close(a: float, e: float, rel_tol: float, abs_tol: float) -> bool:
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a)
    if math.isinf(e) or math.isinf(a):
        return a == e
    return math.isclose(a, e, rel_tol=rel_tol, abs_tol=abs_tol)


# -- the printed-output parser -----------------------------------------------------------
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<num>[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf|nan)
            (?:[-+](?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)?j|j)?)
  | (?P<name>[A-Za-z_][\w.]*)
  | (?P<punct>[\[\](),=:{}])
  | (?P<ellipsis>\.\.\.)
""", re.VERBOSE)

_CONSTANTS = {"True": True, "False": False, "None": None, "nan": math.nan, "inf": math.inf}


class _Parser:
    def __init__(self, text: str):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                raise ValueError(f"cannot parse output at {text[pos:pos + 20]!r}")
            if m.lastgroup == "ellipsis":
                raise ValueError("summarised output ('...') cannot be compared")
            if m.lastgroup != "space":
                self.tokens.append((m.lastgroup, m.group()))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise ValueError(f"expected {value!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def value(self) -> Any:
        kind, text = self.take()
        if kind == "num":
            return _number(text)
        if kind == "str":
            try:
                return ast.literal_eval(text)
            except (SyntaxError, ValueError) as exc:  # a bad escape ('\\x'): unreadable, not a crash
                raise ValueError(f"unreadable string {text[:40]!r}: {exc}") from None
        if text in ("[", "("):
            items, trailing_comma = self.sequence("]" if text == "[" else ")")
            if text == "[":
                return items
            return items[0] if len(items) == 1 and not trailing_comma else tuple(items)
        if kind == "name":
            if text in _CONSTANTS:
                return _CONSTANTS[text]
            if self.peek()[1] == "(":  # array(...), ZWCArray(...), np.float64(...)
                self.take("(")
                inner = self.value()
                self.skip_keywords()
                self.take(")")
                return inner
            if text.endswith(("inf", "nan")) and text.rsplit(".", 1)[-1] in _CONSTANTS:
                return _CONSTANTS[text.rsplit(".", 1)[-1]]
        raise ValueError(f"unexpected {text!r}")

    def sequence(self, close: str) -> tuple[list, bool]:
        """Items up to ``close``; commas optional (NumPy prints ``[1 2]``)."""
        items, trailing_comma = [], False
        while self.peek()[1] != close:
            if self.peek()[0] == "end":
                raise ValueError(f"missing {close!r}")
            items.append(self.value())
            trailing_comma = self.peek()[1] == ","
            if trailing_comma:
                self.take(",")
        self.take(close)
        return items, trailing_comma

    def skip_keywords(self) -> None:
        while self.peek()[1] == ",":
            self.take(",")
            if self.peek()[0] == "name":
                self.take()
                self.take("=")
                self.take()


def _number(text: str) -> int | float | complex:
    if text.endswith("j"):
        return complex(text.replace("inf", "infinity") if "inf" in text else text)
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    return float(text)


def parse_printed(text: str) -> Any:
    """Parse one printed output into a plain value; raises ValueError when it cannot."""
    text = text.strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    else:
        if "..." in text and _has_ellipsis(value):
            raise ValueError("summarised output ('...') cannot be compared")
        return value
    parser = _Parser(text)
    if not parser.tokens:
        raise ValueError("empty output")
    value = parser.value()
    if parser.peek()[1] == ",":  # a bare tuple: "1, 2"
        items = [value]
        while parser.peek()[1] == ",":
            parser.take(",")
            if parser.peek()[0] != "end":
                items.append(parser.value())
        value = tuple(items)
    if parser.peek()[0] != "end":
        raise ValueError(f"trailing text {parser.peek()[1]!r}")
    return value


def _has_ellipsis(value: Any) -> bool:
    if value is Ellipsis:
        return True
    return isinstance(value, (list, tuple)) and any(_has_ellipsis(v) for v in value)


def printed_equal(printed: str, expected: str, *, abs_tol: float = OFFICIAL_ABS_TOL) -> bool:
    """The official rule: parse both printed forms and compare with an absolute tolerance.

    Text that does not parse (a plain string return, say) is compared as stripped text.
    """
    try:
        got, want = parse_printed(printed), parse_printed(expected)
    except (ValueError, RecursionError):
        return printed.strip() == expected.strip()
    return values_equal(got, want, rel_tol=0.0, abs_tol=abs_tol)
