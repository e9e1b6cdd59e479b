"""Names: the NumPy <-> ZWC mapping, generated fresh per seed or read from SE-Bench v1.

Fresh names are pronounceable consonant-vowel strings of 5-7 letters (``kocito``,
``falekef``), like the official ones. They are drawn through a fixed bijection of the
whole name space, and seed ``s`` takes the block of positions ``[s*B, (s+1)*B)``, so two
seeds never share a name and the same seed always gives the same names. A name is never
an English word, a Python keyword or builtin, or a name in NumPy's namespace: a model
must not be able to guess what a function does from its name.
"""

from __future__ import annotations

import builtins
import difflib
import json
import keyword
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from envs.zwc.errors import MappingError, UnknownNameError
from envs.zwc.library.catalogue import BY_PATH, CATALOGUE, LINALG_PREFIX
from envs.zwc.library.shared import SUBMODULE

CONSONANTS = "bcdfghjklmnpqrstvwxyz"
VOWELS = "aeiou"
# Names the package defines besides the functions; a function may not take them.
RESERVED = frozenset({"zwc", SUBMODULE, "ZWCArray", "ZWCError", "pi", "e", "inf", "nan",
                      "newaxis", "euler_gamma"})

_SYLLABLES = [c + v for c in CONSONANTS for v in VOWELS]  # 105
# Patterns (syllables, final consonant): 5, 6 and 7 letters.
_PATTERNS = [(2, True), (3, False), (3, True)]
_PATTERN_SIZES = [len(_SYLLABLES) ** s * (len(CONSONANTS) if f else 1) for s, f in _PATTERNS]
_SPACE = sum(_PATTERN_SIZES)  # 25,699,275 names
_MULTIPLIER = 15_485_863  # prime, coprime with _SPACE: i -> (a*i + b) mod N is a bijection
_OFFSET = 7_919_993
OFFICIAL_NAMES = "sebench_v1_names.json"  # package data: SE-Bench v1's name pairs
_BLOCK = 600  # positions per seed; enough for 278 names after exclusions
assert math.gcd(_MULTIPLIER, _SPACE) == 1


@dataclass(frozen=True)
class MappedName:
    """One function: its NumPy path, its ZWC path, and its signature family."""

    numpy: str
    zwc: str
    kind: str

    @property
    def short(self) -> str:
        return self.zwc.rsplit(".", 1)[1]


def _decode(index: int) -> str:
    """The name at ``index`` of the name space (a mixed-radix number)."""
    for (n_syll, final), size in zip(_PATTERNS, _PATTERN_SIZES, strict=True):
        if index < size:
            letters = ""
            if final:
                index, c = divmod(index, len(CONSONANTS))
                letters = CONSONANTS[c]
            for _ in range(n_syll):
                index, s = divmod(index, len(_SYLLABLES))
                letters = _SYLLABLES[s] + letters
            return letters
        index -= size
    raise IndexError(index)


@lru_cache(maxsize=1)
def forbidden_names() -> frozenset[str]:
    """English words, Python keywords and builtins, and every name NumPy defines."""
    import numpy as np
    from english_words import get_english_words_set

    words = get_english_words_set(["web2", "gcide"], lower=True)
    numpy_names = {n.lower() for mod in (np, np.linalg) for n in dir(mod)}
    py = {n.lower() for n in dir(builtins)} | set(keyword.kwlist) | set(keyword.softkwlist)
    return frozenset(words | numpy_names | py | {n.lower() for n in RESERVED})


def fresh_names(seed: int, count: int) -> list[str]:
    """``count`` distinct names for ``seed``; disjoint from every other seed's names."""
    if seed < 0 or seed * _BLOCK + _BLOCK > _SPACE:
        raise MappingError(f"seed {seed} out of range: use 0 <= seed < {_SPACE // _BLOCK}")
    bad = forbidden_names()
    names: list[str] = []
    for i in range(seed * _BLOCK, (seed + 1) * _BLOCK):
        name = _decode((_MULTIPLIER * i + _OFFSET) % _SPACE)
        if name not in bad:
            names.append(name)
            if len(names) == count:
                return names
    raise MappingError(f"seed {seed}: only {len(names)} usable names in its block, need {count}")


class Mapping:
    """The bidirectional NumPy <-> ZWC name mapping (one entry per catalogued function)."""

    def __init__(self, entries: list[MappedName], *, origin: str = ""):
        self.entries = list(entries)
        self.origin = origin
        self._by_numpy = {e.numpy: e for e in self.entries}
        self._by_zwc = {e.zwc: e for e in self.entries}
        if len(self._by_numpy) != len(self.entries) or len(self._by_zwc) != len(self.entries):
            raise MappingError("mapping has duplicate NumPy paths or ZWC names")

    # -- construction -------------------------------------------------------------------
    @classmethod
    def generate(cls, seed: int) -> Mapping:
        """Fresh names for every catalogued function, deterministic per seed."""
        names = fresh_names(seed, len(CATALOGUE))
        entries = [MappedName(e.numpy, _zwc_path(e.numpy, n), e.kind)
                   for e, n in zip(CATALOGUE, names, strict=True)]
        return cls(entries, origin=f"seed:{seed}")

    @classmethod
    def from_sebench_v1(cls, api_doc: str | Path) -> Mapping:
        """The official SE-Bench v1 names, read from its ``api_doc.jsonl``.

        A row is a ``numpy.linalg`` function when its own ``func_mapping`` maps
        ``np.linalg.<original_name>`` to ``zwc.rfx.<curr_name>``.
        """
        path = Path(api_doc)
        if not path.is_file():
            raise MappingError(f"{path}: no such API doc file (pass SE-Bench's api_doc.jsonl)")
        entries = []
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                original, current = row["original_name"], row["curr_name"]
                fmap = json.loads(row.get("func_mapping") or "{}")
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise MappingError(f"{path}:{lineno}: not an api_doc record ({exc}); "
                                   "each line needs original_name, curr_name, func_mapping") from None
            linalg = fmap.get(f"np.linalg.{original}") == f"zwc.{SUBMODULE}.{current}"
            numpy_path = f"{LINALG_PREFIX if linalg else 'numpy.'}{original}"
            if numpy_path not in BY_PATH:
                raise MappingError(f"{path}:{lineno}: {numpy_path} is not in the catalogue")
            entries.append(MappedName(numpy_path, _zwc_path(numpy_path, current),
                                      BY_PATH[numpy_path].kind))
        return cls(entries, origin=f"sebench-v1:{path.name}")

    @classmethod
    def sebench_v1(cls) -> Mapping:
        """The official SE-Bench v1 names without its files: the 278 (NumPy path, ZWC name) pairs
        shipped as package data (``envs/zwc/library/data/sebench_v1_names.json``, read off the official
        ``api_doc.jsonl``, MIT licence), in the official order."""
        from importlib.resources import files

        rows = json.loads(files("envs.zwc.library").joinpath("data", OFFICIAL_NAMES).read_text())
        entries = [MappedName(numpy_path, _zwc_path(numpy_path, short), BY_PATH[numpy_path].kind)
                   for numpy_path, short in rows]
        return cls(entries, origin="sebench-v1")

    # -- persistence --------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps([asdict(e) for e in self.entries], indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Mapping:
        p = Path(path)
        try:
            rows = json.loads(p.read_text())
            entries = [MappedName(r["numpy"], r["zwc"], r["kind"]) for r in rows]
        except FileNotFoundError:
            raise MappingError(f"{p}: no mapping.json (build one with `sebench zwc build`)") from None
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise MappingError(f"{p}: not a mapping file ({exc}); expected a JSON list of "
                               '{"numpy": ..., "zwc": ..., "kind": ...}') from None
        return cls(entries, origin=str(p))

    # -- lookup -------------------------------------------------------------------------
    def to_zwc(self, numpy_path: str) -> str:
        return self._get(self._by_numpy, _normalise_numpy(numpy_path)).zwc

    def to_numpy(self, zwc_path: str) -> str:
        return self._get(self._by_zwc, zwc_path).numpy

    def by_numpy(self, numpy_path: str) -> MappedName:
        return self._get(self._by_numpy, _normalise_numpy(numpy_path))

    def by_zwc(self, zwc_path: str) -> MappedName:
        return self._get(self._by_zwc, zwc_path)

    def __contains__(self, path: str) -> bool:
        return path in self._by_zwc or _normalise_numpy(path) in self._by_numpy

    @staticmethod
    def _get(table: dict[str, MappedName], key: str) -> MappedName:
        try:
            return table[key]
        except KeyError:
            close = difflib.get_close_matches(key, table, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownNameError(f"{key!r} is not in this mapping{hint}") from None

    def __iter__(self) -> Iterator[MappedName]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self.entries == other.entries

    def __repr__(self) -> str:
        return f"Mapping({len(self)} functions, origin={self.origin!r})"


def _zwc_path(numpy_path: str, name: str) -> str:
    return f"zwc.{SUBMODULE}.{name}" if numpy_path.startswith(LINALG_PREFIX) else f"zwc.{name}"


def _normalise_numpy(path: str) -> str:
    """Accept ``np.mean``, ``numpy.mean`` and ``mean``."""
    if path.startswith("np."):
        return "numpy." + path[3:]
    if not path.startswith("numpy."):
        return "numpy." + path
    return path
