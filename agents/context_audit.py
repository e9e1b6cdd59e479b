"""What a learner's context costs and carries, per evaluation: the contexts beside the results.

Every answer's record says how long the learner's context was (``context_chars``, and
``context_tokens`` with the model's own tokenizer where it has one) and which context it was
(``context_sha``); each distinct context is written once to ``<results>.contexts.jsonl`` as it
first appears, so a resumed evaluation keeps them and the file stays small when many answers see
one context. At the end the closed-book contexts are audited against the build's docs
(``envs.zwc.library.docs_audit``): the share of doc entries they carry, counting a zwc name the
learner never met, where "met" is the functions of the first ``limit`` train tasks (the learner
checker's limit check holds every learner to exactly those). The summary keeps the audit and the
mean context tokens: the report's "docs in memory" flag and its cost column read them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from envs.zwc.library.docs import DocIndex
from envs.zwc.library.docs_audit import THRESHOLD, audit, met_functions


def context_path(results: Path) -> Path:
    return results.with_suffix(".contexts.jsonl")


class ContextLog:
    """The distinct contexts of one results file, appended as they first appear (thread-safe)."""

    def __init__(self, results: Path, tokenizer: Any = None):
        self.path, self.tokenizer = context_path(results), tokenizer
        self._lock = threading.Lock()
        self._tokens: dict[str, int | None] = {}
        self.texts: dict[str, str] = {}
        if self.path.is_file():
            for line in self.path.read_text().splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:  # a killed run's half line: that context is written again
                    continue
                self.texts[row["sha"]], self._tokens[row["sha"]] = row["text"], row.get("tokens")

    def fields(self, context: str) -> dict[str, Any]:
        """The record's context fields; the context itself written once to the log."""
        sha = hashlib.sha1(context.encode()).hexdigest()[:16]
        with self._lock:
            if sha not in self.texts:
                tokens = len(self.tokenizer(context, add_special_tokens=False)["input_ids"]) if self.tokenizer else None
                self.texts[sha], self._tokens[sha] = context, tokens
                with self.path.open("a") as handle:
                    handle.write(json.dumps({"sha": sha, "tokens": tokens, "text": context}) + "\n")
            return {"context_sha": sha, "context_chars": len(context), "context_tokens": self._tokens[sha]}


def summarise_contexts(records: list[dict], log: ContextLog, env: Any, learner: Any, mode: str) -> dict[str, Any]:
    """Mean context size per answer and, closed-book with a learner, the docs audit of its contexts."""
    chars = [r.get("context_chars", 0) for r in records]
    tokens = [r["context_tokens"] for r in records if r.get("context_tokens") is not None]
    summary: dict[str, Any] = {"context_chars_mean": sum(chars) / len(chars) if chars else 0.0,
                               "context_tokens_mean": sum(tokens) / len(tokens) if tokens and
                               len(tokens) == len(records) else None}
    if learner is None or mode != "closed":
        return summary
    limit = getattr(getattr(learner, "config", None), "limit", None)
    train = env.tasks("train")
    met = met_functions(train[:limit] if limit else train, env.mapping)
    contexts = [log.texts[s] for s in dict.fromkeys(r.get("context_sha") for r in records) if s in log.texts]
    own = "\n".join(f"{t.query}\n{t.function_name}\n{t.example.input if t.example else ''}"
                    for split in ("train", "single_test", "multiple_test") for t in env.tasks(split))
    index = DocIndex.from_file(Path(env.root) / "api_doc.jsonl", env.mapping)  # after the closed book: ours to read
    found = audit(contexts, {path: entry.text for path, entry in index.entries.items()}, met, own, THRESHOLD)
    summary["docs_in_context"] = {"share": found.share, "text_share": found.text_share, "entries": found.entries,
                                  "carried": len(found.carried), "unmet_names": len(found.unmet_names),
                                  "threshold": found.threshold, "is_docs": found.is_docs,
                                  "met_from": f"the first {limit} train tasks" if limit else "every train task",
                                  "sentence": found.sentence()}
    return summary
