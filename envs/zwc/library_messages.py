"""Error messages the library sends back: they must tell the candidate nothing it did not know.

Three leaks were found in the messages NumPy writes and in their translation:

* **other names**: a message may name another zwc function (an alias) or, through NumPy's
  internals (``_amax_dispatcher``), a NumPy one; every zwc name but the called function's (its
  aliases read as it) becomes ``<zwc function>``;
* **NumPy's own names in quotes**: ``ufunc 'add' did not contain a loop`` says which NumPy
  function a zwc name runs;
* **echoes as oracles**: NumPy quotes what it was given (``data type 'np.sum' not understood``,
  ``Invalid format specifier 'kocito'``); had an echo gone through the scrubbers, a word would
  come back changed exactly when it is a zwc or NumPy name — a membership test for names, and
  an identity test (``'np.mean'`` came back as the called name only when it was ``mean``).

So every quoted text becomes ``'?'`` unless it is one of a fixed set of harmless words (type
and dtype names, dtype codes, casting rules and orders, numbers and shapes) — the same answer
whatever the quoted text was — and only then are unquoted names scrubbed.
"""

from __future__ import annotations

import re

MAX_MESSAGE = 2000
_STEM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r"(?<![\w'\"])('{1,2}|\")([^'\"\n]{0,200})\1(?![\w'\"])")
_CALLABLE = re.compile(r"\bcallable [A-Za-z_]\w* method\b")
_HARMLESS_SHAPES = re.compile(r"[\d\s(),.+\-:\[\]eE]*|[<>|=]?[a-zA-Z]\d*")
HARMLESS = frozenset({
    "str", "int", "float", "complex", "bool", "list", "tuple", "dict", "set", "NoneType", "object", "bytes",
    "range", "slice", "function", "builtin_function_or_method", "ZWCArray", "zwc.ZWCArray", "ellipsis",
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
    "float64", "complex64", "complex128", "str_", "bytes_", "object_", "datetime64", "timedelta64",
    "no", "equiv", "safe", "same_kind", "unsafe", "raise", "wrap", "clip", "left", "right",
    "C", "F", "A", "K", "valid", "same", "full",
})


def _quoted(match: re.Match) -> str:
    quote, text = match.group(1), match.group(2)
    if text in HARMLESS or _HARMLESS_SHAPES.fullmatch(text):
        return match.group(0)
    return f"{quote}?{quote}"


def clean_message(text: str, called: str | None, own: set[str], names: list[frozenset[str]]) -> str:
    """``text`` as the candidate may read it: quoted texts neutral, no zwc name but ``called``'s.

    Args:
        text: the message as the run-time translated it (NumPy names given as zwc names).
        called: the zwc name the candidate called (None for a method or a constructor).
        own: ``called`` and its aliases.
        names: every zwc name, per module.
    """
    text = _QUOTED.sub(_quoted, text)
    text = _CALLABLE.sub(f"callable {called or '<zwc function>'} method", text)

    def scrub(match: re.Match) -> str:
        word = match.group(0)
        if word.startswith("_"):  # NumPy's internals (``_amax_dispatcher``) name NumPy functions
            return called or "<zwc function>"
        if word in own:
            return called
        if any(word in module for module in names):
            return "<zwc function>"
        return word

    return _STEM.sub(scrub, text)[:MAX_MESSAGE]
