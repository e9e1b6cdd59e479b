"""Red team of the library's error messages (``library_messages.py``): no message a program can
provoke tells a word that is a zwc name from one that is not.

The attack: make the library echo the candidate's own text (a format spec, a value whose
conversion fails, a dtype string, a keyword name ...) and see which words come back changed.
Had any rewriting of the echo treated zwc names (or NumPy's) differently from other words, one
program would list every name of the build with no unknown name asked for, so the guessing
threshold would never fire; and ``'np.<name>'`` coming back as the called name would say which
NumPy function a zwc name runs. Each probe here runs once per word of a group of words of one
length and shape: zwc names of the build, a NumPy function name, and a word that is neither;
the messages must be byte-identical once the word is replaced by ``W``.
"""

from __future__ import annotations

import ast
import re

import numpy
import pytest

from envs.zwc.grading.checks import check_code
from envs.zwc.library.catalogue import BY_PATH, CATALOGUE, KINDS
from envs.zwc.library.names import Mapping
from envs.zwc.library.package import public_names
from envs.zwc.sandbox.library_messages import DTYPES, TEMPLATES, TYPES, WORDS, clean_message, template_text
from envs.zwc.sandbox.pool import Limits

# words that are no name in any build of ours (CV syllables, like the names, checked below)
NON_NAMES = {5: "qoxab", 6: "qoxabe", 7: "qoxabel"}
NUMPY_NAMES = {5: "ravel", 6: "cumsum", 7: "argsort"}  # catalogued NumPy functions, no option value anywhere
HELPER_CALLS = {"mean": "numpy.mean", "sum": "numpy.sum", "cumsum": "numpy.cumsum", "amax": "numpy.amax",
                "array": "numpy.array", "vectorize": "numpy.vectorize", "norm": "numpy.linalg.norm"}
LIMITS = Limits(cpu_s=30, wall_s=120.0)

# provocations: each a statement that raises (or not); W is the word, A a 1-d array handle, Z a
# 0-d one, X the test's input list; $name a zwc name (HELPER_CALLS)
PROBES = [
    "format(A, W)", "format(A, W * 40)", "format(A, W + '\\n' + W + ' ' + W)", "format(A, \"'\" + W + \"'\")",
    "format(A, '\"' + W + '\" ' + W + \"'\")", "format(Z, W)", "f'{Z:{W}}'", "f'{A:>{W}}'", "format(Z, 'np.' + W)",
    "zwc.$array([W], dtype=float)", "zwc.$array([W, 'np.' + W], dtype=int)", "zwc.$array(W, dtype=complex)",
    "zwc.$array(X, dtype=W)", "zwc.$array(X, dtype='np.' + W)", "zwc.$array(X, dtype='numpy.' + W)",
    "zwc.$array(X, dtype=W + '64')", "zwc.$array(X, dtype=W + '()')", "zwc.$array(X, dtype=[(W, 'f8')])",
    "zwc.$array(X, W)", "zwc.$mean(X, dtype=W)", "zwc.$sum(X, dtype='np.' + W)", "zwc.$sum(X, axis=W)",
    "zwc.$cumsum(X, axis=W)", "zwc.$amax(X, axis=(W,))", "zwc.$sum(X, W)", "zwc.$mean(X, **{W: W})",
    "zwc.$sum(X, **{W: 1, 'np.' + W: W})", "zwc.$sum(X, out=W)", "zwc.$sum(X, casting=W)",
    "zwc.$array(X, order=W)", "zwc.$norm(X, ord=W)", "zwc.$vectorize(lambda v: W, otypes=[float])(X)",
    "zwc.$vectorize(lambda v: v, otypes=W)(X)", "zwc.$vectorize(lambda v: 'np.' + W, otypes=[int])(X)",
    "A[W]", "A[W] = 1.0", "A[0] = W", "A + W", "W + A", "A - W", "A * ('np.' + W)", "A < W", "A @ W", "A ** W",
    "A & W", "A << W", "divmod(A, W)", "W in A", "round(A, W)", "zwc.ZWCArray(W) + 1", "zwc.ZWCArray([W]) - A",
    "zwc.ZWCArray([[1.0], [W, W]])", "int(zwc.ZWCArray(W))", "float(zwc.ZWCArray([W]))",
]


def _sample_args(entry) -> list[str]:
    tree = ast.parse(entry.call_sample, mode="eval").body
    elements = tree.elts if isinstance(tree, ast.Tuple) else [tree]
    return [ast.get_source_segment(entry.call_sample, e).replace("arr(", "zwc.ZWCArray(") for e in elements]


def _kind_probes(env) -> tuple[list[str], set[str]]:
    """A string argument to one function of every kind: alone, and in place of each of the
    sample's first two arguments. Also the NumPy paths it calls."""
    probes, called = [], set(HELPER_CALLS.values())
    for kind in KINDS:
        entry = next(e for e in CATALOGUE if e.kind == kind)
        called.add(entry.numpy)
        name = env.mapping.to_zwc(entry.numpy)
        args = _sample_args(entry)
        probes.append(f"{name}(W)")
        for i in range(min(2, len(args))):
            probes.append(f"{name}({', '.join(args[:i] + ['W'] + args[i + 1:])})")
        probes.append(f"{name}({', '.join(args)}, W)")
    return probes, called


def _program(env, probes: list[str]) -> str:
    names = {k: env.mapping.to_zwc(p)[4:] for k, p in HELPER_CALLS.items()}
    filled = [re.sub(r"[$](\w+)", lambda m: names[m.group(1)], p) for p in probes]
    body = "".join(f"    try:\n        {p}\n        out.append('ok')\n"
                   "    except Exception as exc:\n        out.append(type(exc).__name__ + ': ' + str(exc))\n"
                   for p in filled)
    return ("import zwc\ndef solve(w, x):\n    W, X = w, x\n    A = zwc.ZWCArray([1.0, 2.0])\n"
            f"    Z = zwc.ZWCArray(1.5)\n    out = []\n{body}    return out")


def _groups(env, called: set[str]) -> dict[int, list[str]]:
    """Length -> words: zwc names (one top-level, one of zwc.rfx where there is one) that the
    probes do not call, a NumPy name, a non-name."""
    groups = {}
    for length in sorted(NON_NAMES):
        spare = [e for e in env.mapping if len(e.short) == length and e.numpy not in called]
        top = [e.short for e in spare if not e.zwc.startswith("zwc.rfx.")][:1]
        sub = [e.short for e in spare if e.zwc.startswith("zwc.rfx.")][:1]
        if top or sub:
            groups[length] = [*top, *sub, NUMPY_NAMES[length], NON_NAMES[length]]
    return groups


def _said(env, words: list[str], probes: list[str]) -> dict[str, list[str]]:
    answer = env.pool.run(_program(env, probes), "solve", [f"w={w!r}, x=[1.0, 2.0]" for w in words],
                          printed=False, limits=LIMITS)
    values = [r.get("value", r.get("error")) for r in answer["records"] if r.get("event") == "test"]
    assert len(values) == len(words) and all(type(v) is list for v in values), answer["records"][-1:]
    assert answer["library"]["records"][-1]["unknown"] == []  # no name was asked for
    return {w: [m.replace(w, "W") for m in said] for w, said in zip(words, values)}


@pytest.mark.parametrize("which", ["official", "seed 7"])
def test_no_message_tells_a_zwc_name_from_another_word(which, official_env, env7):
    env = official_env if which == "official" else env7
    kind_probes, called = _kind_probes(env)
    probes = list(dict.fromkeys(PROBES + kind_probes))
    groups = _groups(env, called)
    assert set(groups) >= ({5, 6} if which == "official" else {7}), groups  # the build's name lengths
    names = {e.short for e in env.mapping}
    called_names = {e.short for e in env.mapping if e.numpy in called}
    for length, words in groups.items():
        assert len(words) >= 3 and words[-1] not in names and words[-2] not in names and words[0] in names
        said = _said(env, words, probes)
        first = said[words[0]]
        for word in words[1:]:
            diff = [(p, a, b) for p, a, b in zip(probes, first, said[word]) if a != b]
            assert not diff, (which, length, words[0], word, diff[:3])
        told = [m for m in first if m != "ok"]
        assert len(told) > len(probes) * 3 // 4  # the probes did provoke errors
        assert not any(re.search(r"\bnumpy\b|\bnp\.|ndarray|ufunc", m) for m in first), first
        # no zwc name but those the probes called
        assert not {t for m in first for t in re.findall(r"[A-Za-z_]\w*", m)} & (names - called_names), first


def test_messages_keep_what_an_honest_caller_needs(env7):
    """Shapes, axes, indices, types and the call survive; the candidate's own text does not."""
    names = {k: env7.mapping.to_zwc(p)[4:] for k, p in HELPER_CALLS.items()}
    probes = ["A + zwc.ZWCArray([1.0, 2.0, 3.0])", "zwc.$sum(X, axis=3)", "A[5]", "zwc.$sum(X, kepdims=True)",
              "zwc.$array(['kocito'], dtype=float)", "format(A, 'kocito')", "zwc.$norm(X, ord='fro')"]
    said = _said(env7, ["qoxabel"], probes)["qoxabel"]
    s, a = names["sum"], names["array"]
    assert said == [
        "ZWCValueError: ZWCArray.__add__(ZWCArray): operands could not be broadcast together with shapes (2,) (3,)",
        f"ZWCIndexError: zwc.{s}(list, axis=int): axis 3 is out of bounds for array of dimension 1",
        "ZWCIndexError: ZWCArray.__getitem__(int): index 5 is out of bounds for axis 0 with size 2",
        f"ZWCTypeError: zwc.{s}(list, kepdims=bool): got an unexpected keyword argument '?'",
        f"ZWCValueError: zwc.{a}(list, dtype=type): could not convert string to float",
        "ZWCTypeError: ZWCArray.__format__(str): invalid format specifier for object of type 'str'",
        f"ZWCValueError: zwc.rfx.{names['norm'].split('.')[-1]}(list, ord=str): invalid norm order for vectors",
    ], said


def test_templates_fill_holes_only_with_numbers_shapes_and_fixed_words():
    assert template_text("operands could not be broadcast together with shapes (2,3) (4,) ") == \
        "operands could not be broadcast together with shapes (2,3) (4,)"
    assert template_text("data type 'kocito' not understood") == "data type not understood"
    assert template_text("mean() got an unexpected keyword argument 'axis'") == "got an unexpected keyword argument 'axis'"
    assert template_text("mean() got an unexpected keyword argument 'kocito'") == "got an unexpected keyword argument '?'"
    assert template_text("'kocito' object is not iterable") is None  # not a type name: no template
    assert clean_message("anything 'kocito' at all", "ZWCValueError", "zwc.f(str)") == \
        "zwc.f(str): an argument has a value this function does not accept"
    for regex, output, _ in TEMPLATES:
        assert not re.search(r"numpy|ndarray|ufunc|zwc\.", output, re.IGNORECASE), output


def test_the_fixed_words_hold_no_name():
    """What a hole may hold verbatim is no zwc name (official, seed 7) nor any part of one, and
    no NumPy function name: so a word in a hole says nothing about names."""
    fixed = WORDS | set(TYPES) | set(DTYPES)
    functions = {e.short for e in CATALOGUE} | {n for m in (numpy, numpy.linalg) for n in dir(m)
                                                 if callable(getattr(m, n)) and not isinstance(getattr(m, n), type)}
    assert not fixed & functions, sorted(fixed & functions)
    for mapping in (Mapping.sebench_v1(), Mapping.generate(7)):
        names = {e.short for e in mapping}
        assert not [(w, n) for w in fixed for n in names if n in w]
        assert not (set(NON_NAMES.values()) | set(NUMPY_NAMES.values())) & (names | fixed)
    assert all(BY_PATH[f"numpy.{n}"] for n in NUMPY_NAMES.values())


def test_the_static_checker_says_nothing_of_where_a_name_lives():
    """``zwc.<linalg name>``, ``zwc.rfx.<top-level name>`` and a word that is no name read the
    same: 'does not exist', no hint of zwc.rfx."""
    for mapping in (Mapping.sebench_v1(), Mapping.generate(7)):
        paths = public_names(mapping)
        linalg = next(e.short for e in mapping if e.zwc.startswith("zwc.rfx."))
        top = next(e.short for e in mapping if not e.zwc.startswith("zwc.rfx."))
        for shape, words in (("zwc.{}", [linalg, "qoxabel"]), ("zwc.rfx.{}", [top, "qoxabel"])):
            for usage in ("    return {}(x)", "    return {}.real", "    from_ = {}\n    return zwc.pi"):
                said = set()
                for word in words:
                    path = shape.format(word)
                    for code in (f"import zwc\ndef solve(x):\n{usage.format(path)}",
                                 f"from {path.rsplit('.', 1)[0]} import {word}\nimport zwc\ndef solve(x):\n"
                                 "    return zwc.pi(x)"):
                        rejection = check_code(code, "solve", paths)
                        said.add((rejection.reason, str(rejection).replace(word, "W")))
                assert len(said) == 2 and all("does not exist" in s and "rfx" not in s.replace(shape[:-2], "")
                                              for _, s in said), said
