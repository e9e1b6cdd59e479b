"""How much of the docs a learner's closed-book contexts carry: the docs-in-memory loophole, measured.

SE-Bench trains with the docs and tests without them, so that what a learner shows at test time is
what it internalised. A memory learner can defeat that by storing the docs (or a cheat sheet of
them) as its "experience" and reading it back closed-book; SE-Bench's maintainers agreed the
loophole exists. Two measures, over every context a learner gives for a closed-book observation:

- **entries carried**: a doc entry (one function) counts as carried when a context shows its zwc
  name and the learner never met that function in a train task it touched (a name known only from
  the docs is the docs, however short the description; a name of ``SPELLED_OUT`` letters or more
  counts spelled with separators inside it too), or when a context holds ``MIN_SHARED``
  of the entry's own word ``NGRAM``-grams (those no other entry has: NumPy's docstrings share
  boilerplate such as the ``out`` parameter's paragraph, which must not make one copied entry
  look like twenty). ``share`` is carried entries over all entries: the figure the check and the
  report judge by.
- **text share**: the share of the docs' distinct word n-grams that the contexts hold, for the record.

N-grams that occur in the task texts (queries, signatures, examples) are not the docs: a context
may repeat a task. A learner that remembers the functions it practised on (ExpeL's trajectories,
ACE's bullets) carries few entries; one that stores every function's name carries all of them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

NGRAM = 8  # words in a shingle: long enough that two unrelated texts rarely share one
MIN_SHARED = 2  # shingles of one entry that mark it as copied
THRESHOLD = 0.10  # share of entries carried above which closed-book contexts are the docs
SPELLED_OUT = 6  # names this long are also found with separators inside them (random syllables: rare by chance)
_WORD = re.compile(r"[A-Za-z0-9_]+")


def shingles(text: str, n: int = NGRAM) -> set[tuple[str, ...]]:
    """The text's word n-grams, lower-cased (punctuation and layout do not count)."""
    words = [w.lower() for w in _WORD.findall(text)]
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

    @property
    def is_docs(self) -> bool:
        return self.share > self.threshold

    def sentence(self) -> str:
        names = f"; {len(self.unmet_names)} zwc names it never met in a train task" if self.unmet_names else ""
        return (f"{len(self.carried)} of {self.entries} doc entries carried (share {self.share:.1%}, threshold "
                f"{self.threshold:.0%}), {self.text_share:.1%} of the docs' text{names}, over {self.contexts} "
                "closed-book contexts")


def audit(contexts: Iterable[str], docs: dict[str, str], met: set[str], task_text: str = "",
          threshold: float = THRESHOLD) -> DocsAudit:
    """Audit ``contexts`` against ``docs`` (zwc path -> entry text); ``met`` are the zwc paths of the
    functions of the train tasks the learner touched; ``task_text`` the tasks' own words."""
    contexts = [c for c in contexts if c]
    seen = set().union(*(shingles(c) for c in contexts)) if contexts else set()
    shown = set().union(*(_WORD.findall(c) for c in contexts)) if contexts else set()
    squashed = "\n".join(re.sub(r"[^a-z0-9]", "", c.lower()) for c in contexts)  # "k-o-c i.t_o" is kocito
    own = shingles(task_text)
    per_entry = {path: shingles(text) - own for path, text in docs.items()}
    owners = Counter(g for grams in per_entry.values() for g in grams)
    everything = set(owners)
    carried, unmet = [], []
    for path, grams in per_entry.items():
        entry = {g for g in grams if owners[g] == 1}
        shared = len(entry & seen)
        short = path.rsplit(".", 1)[1]
        name_shown = path not in met and (short in shown or (len(short) >= SPELLED_OUT and short in squashed))
        if name_shown:
            unmet.append(path)
        if name_shown or shared >= min(MIN_SHARED, len(entry) or MIN_SHARED):
            carried.append(path)
    return DocsAudit(share=len(carried) / len(docs) if docs else 0.0,
                     text_share=len(everything & seen) / len(everything) if everything else 0.0,
                     entries=len(docs), contexts=len(contexts), carried=sorted(carried), unmet_names=sorted(unmet),
                     threshold=threshold)


def met_functions(tasks: Iterable, mapping) -> set[str]:
    """The zwc paths a learner met in ``tasks`` (train tasks it touched): each task's selected
    functions and every catalogued zwc path its reference solution calls."""
    met: set[str] = set()
    for task in tasks:
        for function in getattr(task, "selected_functions", None) or []:
            try:
                met.add(mapping.to_zwc(function))
            except KeyError:
                continue
        met.update(path for path in re.findall(r"\bzwc(?:\.\w+)+", task.reference or "") if path in mapping)
    return met
