"""Docs: NumPy's docstrings rewritten for ZWC, the official ``api_doc.jsonl``, and search.

``rewrite_doc`` turns a NumPy docstring into a ZWC one: every qualified NumPy name
(``np.mean``, ``numpy.linalg.inv``, ``linalg.inv``) becomes its ZWC path, bare function
names become ZWC names where they are names (the signature line, "See Also" entries,
backticked references), ``ndarray`` becomes ``ZWCArray``, ``import numpy as np``
becomes ``import zwc``, and no ``numpy``/``np.`` is left. Names NumPy has but ZWC does
not (``np.random``) are moved under ``zwc.`` all the same: the doc must not name NumPy,
and the examples that use them are counted by ``doc_examples``.

``DocIndex`` is what agents read in the train phase: ``lookup(name)`` and free-text
``search(query, k)`` ranked by BM25 (the ``bm25s`` library).
"""

from __future__ import annotations

import ast
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from envs.zwc.errors import UnknownNameError
from envs.zwc.library.catalogue import BY_PATH
from envs.zwc.library.names import Mapping
from envs.zwc.library.translate import MethodsToFunctions

_QUALIFIED_REST = re.compile(r"(?<![\w.])(?:numpy|np)\.(?=[A-Za-z_])")
_NUMPY_WORD = re.compile(r"numpy", re.IGNORECASE)
_IMPORT = re.compile(r"import\s+numpy\s+as\s+np|import\s+numpy\b")
_FROM_IMPORT = re.compile(r"from\s+(?:numpy|np)(\.linalg)?\s+import\s+([\w, ]+)")
_LINALG_MODULE = re.compile(r"(?<![\w.])(?:numpy|np)\.linalg\b")
_EXAMPLE_LINE = re.compile(r"^(\s*(?:>>>|\.\.\.) .*)$", re.MULTILINE)
_PROMPT_LINE = re.compile(r"^(\s*>>> )(.*)$", re.MULTILINE)


def _load_numpy_doc(numpy_path: str) -> str:
    """The docstring, dedented, opening with a signature line as ufunc docs do."""
    import inspect

    import numpy

    target = numpy
    for part in numpy_path.split(".")[1:]:
        target = getattr(target, part, None)
        if target is None:
            return ""
    doc = inspect.cleandoc(getattr(target, "__doc__", None) or "")
    name = numpy_path.rsplit(".", 1)[1]
    if not re.match(rf"{re.escape(name)}\(|[\w.]+\(", doc.split("\n", 1)[0]):
        try:
            doc = f"{name}{inspect.signature(target)}\n\n{doc}"
        except (TypeError, ValueError):
            pass
    return doc


def numpy_doc(numpy_path: str) -> str:
    """The installed NumPy's docstring for a catalogued path (``trapz``: ``trapezoid``)."""
    from envs.zwc.library.catalogue import BY_PATH

    entry = BY_PATH.get(numpy_path)
    return _load_numpy_doc(entry.call_target if entry else numpy_path)


class DocRewriter:
    """Rewrites NumPy text for one mapping (regexes built once)."""

    def __init__(self, mapping: Mapping):
        self.mapping = mapping
        qualified: dict[str, str] = {}
        bare: dict[str, str] = {}
        self.linalg_bare: dict[str, str] = {}
        self.renamed: dict[str, str] = {}
        for e in mapping:
            short = e.numpy.rsplit(".", 1)[1]
            if e.numpy.startswith("numpy.linalg."):
                for form in (f"numpy.linalg.{short}", f"np.linalg.{short}", f"linalg.{short}"):
                    qualified[form] = e.zwc
                bare.setdefault(short, e.short)
                self.linalg_bare[short] = e.short
            else:
                qualified[f"numpy.{short}"] = qualified[f"np.{short}"] = e.zwc
                bare[short] = e.short
                renamed = BY_PATH[e.numpy].target if e.numpy in BY_PATH else ""
                if renamed:  # NumPy's new name for it (trapz -> trapezoid) means the same function
                    new = renamed.rsplit(".", 1)[1]
                    qualified[f"numpy.{new}"] = qualified[f"np.{new}"] = e.zwc
                    self.renamed[f"np.{new}"] = f"np.{short}"
                    bare.setdefault(new, e.short)
        for form in ("numpy.ndarray", "np.ndarray"):
            qualified[form] = "zwc.ZWCArray"
        self.qualified = qualified
        self.bare = bare
        alternation = "|".join(re.escape(k) for k in sorted(qualified, key=len, reverse=True))
        self._qualified_re = re.compile(rf"(?<![\w.])(?:{alternation})(?!\w)")
        names = "|".join(re.escape(k) for k in sorted(bare, key=len, reverse=True))
        self._backtick_re = re.compile(rf"(`+|:\w+:`)(~?)(?:linalg\.)?({names})(`+)")
        self._see_also_re = re.compile(rf"^(\s*)(?:linalg\.)?({names})(?=\s*(?:,|:|$))", re.MULTILINE)

    def rewrite(self, doc: str, own_numpy_path: str | None = None) -> str:
        text = self._rewrite_from_imports(doc)
        text = _IMPORT.sub("import zwc", text)
        text = self._qualified_re.sub(lambda m: self.qualified[m.group(0)], text)
        text = _LINALG_MODULE.sub("zwc.rfx", text)
        text = _QUALIFIED_REST.sub("zwc.", text)
        text = re.sub(r"\bndarrays?\b", lambda m: "ZWCArray" + ("s" if m.group(0).endswith("s") else ""), text)
        text = self._backtick_re.sub(lambda m: f"{m.group(1)}{m.group(2)}{self.bare[m.group(3)]}{m.group(4)}", text)
        text = self._rewrite_see_also(text)
        text = _PROMPT_LINE.sub(lambda m: m.group(1) + self._methods_to_functions(m.group(2)), text)
        if own_numpy_path:
            own = self.mapping.by_numpy(own_numpy_path).short
            text = re.sub(r"^\s*(?:[\w.]+\.)?\w+(?=\()", own, text, count=1)
        return _NUMPY_WORD.sub("zwc", text)

    def _methods_to_functions(self, line: str) -> str:
        """``a.reshape(2, 3).sum()`` -> ``zwc.<sum>(zwc.<reshape>(a, (2, 3)))`` in one example line,
        since a ZWCArray has no NumPy methods. Lines that do not parse alone stay as they are."""
        try:
            tree = ast.parse(line)
        except SyntaxError:
            return line
        transformer = MethodsToFunctions(self.bare)
        tree = transformer.visit(tree)
        return ast.unparse(ast.fix_missing_locations(tree)) if transformer.changed else line

    def _rewrite_from_imports(self, text: str) -> str:
        """``from numpy.linalg import inv`` -> ``from zwc.rfx import <name>``, and the
        examples' bare ``inv(`` calls after it."""
        imported: dict[str, str] = {}

        def replace(match: re.Match) -> str:
            table = dict(self.linalg_bare if match.group(1) else self.bare, linalg="rfx")
            parts = []
            for item in (n.strip() for n in match.group(2).split(",") if n.strip()):
                name, _, alias = (p.strip() for p in item.partition(" as "))
                if name in table and not alias:
                    imported[name] = table[name]
                parts.append(table.get(name, name) + (f" as {alias}" if alias else ""))
            module = "zwc.rfx" if match.group(1) else "zwc"
            return f"from {module} import {', '.join(parts)}"

        text = _FROM_IMPORT.sub(replace, text)
        if imported:
            calls = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, imported)) + r")(?=\()")
            text = _EXAMPLE_LINE.sub(lambda m: calls.sub(lambda c: imported[c.group(1)], m.group(1)), text)
        return text

    def _rewrite_see_also(self, text: str) -> str:
        head, sep, rest = text.partition("See Also\n--------\n")
        if not sep:
            return text
        section, nl, tail = rest.partition("\n\n")
        section = self._see_also_re.sub(lambda m: m.group(1) + self.bare[m.group(2)], section)
        return head + sep + section + nl + tail

    def mentioned(self, doc: str) -> dict[str, str]:
        """Every mapped NumPy name the doc mentions (``np.`` form) -> its ZWC path."""
        found = {}
        for m in self._qualified_re.finditer(doc):
            form = m.group(0)
            if form.endswith("ndarray"):
                continue
            key = "np." + form.split(".", 1)[1] if form.startswith("numpy.") else form
            if key.startswith("linalg."):
                key = "np." + key
            found[self.renamed.get(key, key)] = self.qualified[form]
        return found


def build_api_doc(mapping: Mapping) -> list[dict]:
    """Records in the official ``api_doc.jsonl`` shape, from the installed NumPy's docs."""
    rewriter = DocRewriter(mapping)
    records = []
    for e in mapping:
        original = numpy_doc(e.numpy)
        records.append({
            "original_name": e.numpy.rsplit(".", 1)[1],
            "curr_name": e.short,
            "docstring": original,
            # as in every official row, the function's own name first, then every name its doc mentions
            "func_mapping": json.dumps({"np." + e.numpy.removeprefix("numpy."): e.zwc} | rewriter.mentioned(original)),
            "rewritten_doc": rewriter.rewrite(original, e.numpy),
        })
    return records


def write_docs(records: list[dict], mapping: Mapping, out_dir: str | Path) -> None:
    """Write ``api_doc.jsonl`` and a markdown reference ``docs.md``."""
    out = Path(out_dir)
    with (out / "api_doc.jsonl").open("w") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    lines = ["# zwc reference", ""]
    for e, record in zip(mapping, records, strict=True):
        lines += [f"## {e.zwc}", "", "```text", record["rewritten_doc"].strip(), "```", ""]
    (out / "docs.md").write_text("\n".join(lines))


@dataclass(frozen=True)
class DocEntry:
    """One function's documentation."""

    name: str  # zwc path
    text: str

    @property
    def summary(self) -> str:
        """The first sentence after the signature line."""
        for para in self.text.strip().split("\n\n"):
            para = " ".join(para.split())
            if para and not re.match(r"^[\w.]+\(.*\)$", para):
                return para.split(". ")[0].rstrip(".") + "."
        return ""


@dataclass(frozen=True)
class DocHit:
    name: str
    score: float
    summary: str


class DocIndex:
    """Lookup by name and BM25 search over the rewritten docs of one mapping."""

    def __init__(self, records: list[dict], mapping: Mapping):
        by_short = {e.short: e.zwc for e in mapping}
        self.entries: dict[str, DocEntry] = {}
        for record in records:
            zwc_path = by_short.get(record["curr_name"])
            if zwc_path is not None:
                self.entries[zwc_path] = DocEntry(zwc_path, record["rewritten_doc"])
        self._names = list(self.entries)
        self._bm25 = None
        # concurrent episodes search at once: the index is built once, and published only whole
        # (a half-built BM25 has no ``scores`` yet); retrieval runs under the same lock (microseconds)
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, api_doc: str | Path, mapping: Mapping) -> DocIndex:
        with Path(api_doc).open() as handle:
            return cls([json.loads(line) for line in handle if line.strip()], mapping)

    def lookup(self, name: str) -> DocEntry:
        """Docs for ``zwc.kocito``, ``kocito``, ``zwc.rfx.quvohe`` or ``rfx.quvohe``."""
        for key in (name, f"zwc.{name}", f"zwc.rfx.{name}"):
            if key in self.entries:
                return self.entries[key]
        import difflib

        close = difflib.get_close_matches(name if name.startswith("zwc.") else f"zwc.{name}", self._names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownNameError(f"no documentation for {name!r}{hint}")

    def search(self, query: str, k: int = 5) -> list[DocHit]:
        """The ``k`` functions whose docs best match ``query`` (BM25)."""
        import bm25s

        k = max(1, min(k, len(self._names)))
        with self._lock:
            if self._bm25 is None:
                corpus = [self.entries[n].text for n in self._names]
                index = bm25s.BM25()
                index.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
                self._bm25 = index
            tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
            if not tokens.vocab:
                return []
            docs, scores = self._bm25.retrieve(tokens, k=k, show_progress=False)
        return [DocHit(self._names[int(i)], float(s), self.entries[self._names[int(i)]].summary)
                for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def __len__(self) -> int:
        return len(self.entries)
