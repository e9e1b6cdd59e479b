"""How much of the docs a learner's closed-book contexts carry: the docs-in-memory loophole, measured.

SE-Bench trains with the docs and tests without them, so that what a learner shows at test time is
what it internalised. A memory learner can defeat that by storing the docs (or a cheat sheet of
them) as its "experience" and reading it back closed-book; SE-Bench's maintainers agreed the
loophole exists. Two measures, over every context a learner gives for a closed-book observation:

- **entries carried**: a doc entry (one function) counts as carried when a context shows its zwc
  name and the learner never met that function in a train task it touched (a name known only from
  the docs is the docs, however short the description; a name of ``SPELLED_OUT`` letters or more
  counts spelled with separators inside it too, after Unicode NFKC folding), or when a context
  holds at least ``MIN_SHARED`` and ``CONTAINMENT`` of the entry's own word ``NGRAM``-grams (those
  no other entry has: NumPy's docstrings share boilerplate such as the ``out`` parameter's
  paragraph, which must not make one copied entry look like twenty). ``share`` is carried entries
  over all entries.
- **targeted**: of the test tasks, the share whose own context carries the entry of one of the
  task's own functions (a learner that keeps the whole docs and shows each question only the one
  entry it needs carries few entries in all, every one where it matters).

Either share above ``THRESHOLD`` makes the contexts the docs.
- **text share**: the share of the docs' distinct word n-grams that the contexts hold, for the record.

N-grams that occur in the task texts (queries, signatures, examples) are not the docs: a context
may repeat a task. A learner that remembers the functions it practised on (ExpeL's trajectories,
ACE's bullets) carries few entries; one that stores every function's name carries all of them.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

NGRAM = 5  # words in a shingle (only those unique to one entry count, so short ones stay specific)
MIN_SHARED = 3  # an entry's own shingles a context must hold to carry its text ...
CONTAINMENT = 0.10  # ... and at least this share of them
THRESHOLD = 0.10  # share of entries (or of test tasks) above which closed-book contexts are the docs
SPELLED_OUT = 6  # names this long are also found with separators inside them (random syllables: rare by chance)
_WORD = re.compile(r"[A-Za-z0-9_]+")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def shingles(text: str, n: int = NGRAM) -> set[tuple[str, ...]]:
    """The text's word n-grams, lower-cased (punctuation and layout do not count)."""
    words = [w.lower() for w in _WORD.findall(_fold(text))]
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@dataclass
class DocsAudit:
    """What the closed-book contexts carry of the docs (module docstring)."""

    share: float
    text_share: float
    entries: int
    contexts: int
    carried: list[str] = field(default_factory=list)  # zwc paths of the entries carried
    unmet_names: list[str] = field(default_factory=list)  # zwc paths shown but never met in a touched train task
    threshold: float = THRESHOLD
    targeted: int = 0  # test tasks whose context carries one of their own functions' entries
    tasks: int = 0  # test tasks looked at for that

    @property
    def targeted_share(self) -> float:
        return self.targeted / self.tasks if self.tasks else 0.0

    @property
    def is_docs(self) -> bool:
        return self.share > self.threshold or self.targeted_share > self.threshold

    def sentence(self) -> str:
        names = f"; {len(self.unmet_names)} zwc names it never met in a train task" if self.unmet_names else ""
        aimed = (f"; {self.targeted} of {self.tasks} test tasks shown their own function's entry "
                 f"({self.targeted_share:.0%})" if self.tasks else "")
        return (f"{len(self.carried)} of {self.entries} doc entries carried (share {self.share:.1%}, threshold "
                f"{self.threshold:.0%}), {self.text_share:.1%} of the docs' text{names}{aimed}, over "
                f"{self.contexts} closed-book contexts")


class _Docs:
    """The docs as the audit reads them: each entry's own shingles (the tasks' words left out)."""

    def __init__(self, docs: dict[str, str], task_text: str):
        own = shingles(task_text)
        per_entry = {path: shingles(text) - own for path, text in docs.items()}
        owners = Counter(g for grams in per_entry.values() for g in grams)
        self.everything = set(owners)
        self.unique = {path: {g for g in grams if owners[g] == 1} for path, grams in per_entry.items()}

    def carries(self, path: str, context: _Context, met: set[str]) -> tuple[bool, bool]:
        """(whether ``context`` carries ``path``'s entry, whether by a name never met)."""
        short = path.rsplit(".", 1)[1]
        by_name = path not in met and (short in context.words or (len(short) >= SPELLED_OUT
                                                                   and short in context.squashed))
        entry = self.unique[path]
        shared = len(entry & context.grams)
        by_text = bool(entry) and shared >= min(MIN_SHARED, len(entry)) and shared >= CONTAINMENT * len(entry)
        return by_name or by_text, by_name


class _Context:
    def __init__(self, texts: Iterable[str]):
        texts = [_fold(t) for t in texts if t]
        self.grams = set().union(*(shingles(t) for t in texts)) if texts else set()
        self.words = set().union(*(_WORD.findall(t) for t in texts)) if texts else set()
        self.squashed = "\n".join(re.sub(r"[^a-z0-9]", "", t.lower()) for t in texts)


def audit(contexts: Iterable[str], docs: dict[str, str], met: set[str], task_text: str = "",
          threshold: float = THRESHOLD, targets: Iterable[tuple[str, Iterable[str]]] = ()) -> DocsAudit:
    """Audit ``contexts`` against ``docs`` (zwc path -> entry text); ``met`` are the zwc paths of the
    functions of the train tasks the learner touched; ``task_text`` the tasks' own words;
    ``targets``: (context, the task's own zwc paths) per test task, for the targeted share."""
    contexts = [c for c in contexts if c]
    index, together = _Docs(docs, task_text), _Context(contexts)
    carried, unmet = [], []
    for path in docs:
        carries, by_name = index.carries(path, together, met)
        carried += [path] if carries else []
        unmet += [path] if by_name else []
    targets = list(targets)
    targeted = sum(any(index.carries(p, _Context([c]), met)[0] for p in paths if p in docs) for c, paths in targets)
    return DocsAudit(share=len(carried) / len(docs) if docs else 0.0,
                     text_share=len(index.everything & together.grams) / len(index.everything) if index.everything
                     else 0.0, entries=len(docs), contexts=len(contexts), carried=sorted(carried),
                     unmet_names=sorted(unmet), threshold=threshold, targeted=targeted, tasks=len(targets))


def met_functions(tasks: Iterable, mapping, paths_of: Callable[[object], list[str]] | None = None) -> set[str]:
    """The zwc paths a learner met in ``tasks`` (train tasks it touched): each task's functions
    (``paths_of(task)``: the env's ``function_paths``, else looked up in ``mapping``) and every
    catalogued zwc path its reference solution calls."""
    met: set[str] = set()
    for task in tasks:
        if paths_of is not None:
            met.update(paths_of(task))
        else:
            for function in getattr(task, "selected_functions", None) or []:
                try:
                    met.add(mapping.to_zwc(function))
                except KeyError:
                    continue
        met.update(path for path in re.findall(r"\bzwc(?:\.\w+)+", task.reference or "") if path in mapping)
    return met
