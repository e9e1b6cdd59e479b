"""What a learner's context costs and carries, per evaluation: the contexts beside the results.

Every answer's record says how long the learner's context was (``context_chars``) and which
context it was (``context_sha``); each distinct context is written once to
``<results>.contexts.jsonl`` as it first appears (before the record that points to it), so a
resumed evaluation keeps them and the file stays small when many answers see one context. At the
end, in the evaluating thread (a fast tokenizer must not be shared with the batcher's thread),
the contexts are counted in the model's tokens and, closed-book, audited against the build's docs
(``envs.zwc.library.docs_audit``): the share of doc entries they carry and the share of test
tasks shown their own function's entry, counting a zwc name the learner never met, where "met"
is the functions of its first ``limit`` train tasks (the learner checker's limit check holds
every learner to exactly those; ``sebench eval --run`` restores the run's limit). The summary keeps
the audit and the mean context tokens: the report's "docs in memory" flag and its cost column.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from envs.zwc.library.docs import DocIndex
from envs.zwc.library.docs_audit import THRESHOLD, DocsAudit, audit, met_functions
from sebench.errors import SebenchError
from sebench.jsonl import cut_torn_tail

SPLITS = ("train", "single_test", "multiple_test")


def context_path(results: Path) -> Path:
    return results.with_suffix(".contexts.jsonl")


class ContextLog:
    """The distinct contexts of one results file, appended as they first appear (thread-safe).
    ``fresh``: a new evaluation (not a resume) starts the file anew."""

    def __init__(self, results: Path, fresh: bool):
        self.path = context_path(results)
        self._lock = threading.Lock()
        self.texts: dict[str, str] = {}
        if fresh:
            self.path.unlink(missing_ok=True)
        elif self.path.is_file():
            cut_torn_tail(self.path)  # a killed run's half line: the next context must not be glued onto it
            for line in self.path.read_text().splitlines():
                row = json.loads(line)
                self.texts[row["sha"]] = row["text"]

    def fields(self, context: str) -> dict[str, Any]:
        """The record's context fields; the context itself written once to the log."""
        sha = hashlib.sha1(context.encode()).hexdigest()[:16]
        with self._lock:
            if sha not in self.texts:
                self.texts[sha] = context
                with self.path.open("a") as handle:
                    handle.write(json.dumps({"sha": sha, "text": context}) + "\n")
            return {"context_sha": sha, "context_chars": len(context)}


def learner_limit(learner: Any) -> int | None:
    """The learner's ``limit`` where ``agents.learner.set_limit`` puts it (its own, else its config's)."""
    limit = getattr(learner, "limit", None)
    if limit is None:
        limit = getattr(getattr(learner, "config", None), "limit", None)
    return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1 else None


def summarise_contexts(records: list[dict], log: ContextLog, env: Any, learner: Any, mode: str,
                       tokenizer: Any = None) -> dict[str, Any]:
    """Mean context size per answer (tokens where ``tokenizer`` counts them) and, closed-book with a
    learner, the docs audit of its contexts. An audit that cannot read what it needs says why in
    ``docs_in_context_error``; the evaluation's summary is never lost to it."""
    chars = [r.get("context_chars", 0) for r in records]
    missing = sum(1 for r in records if r.get("context_sha") not in log.texts)
    tokens = ({s: len(tokenizer(t, add_special_tokens=False)["input_ids"]) for s, t in log.texts.items()}
              if tokenizer is not None else {})
    counted = [tokens[r["context_sha"]] for r in records if r.get("context_sha") in tokens]
    summary: dict[str, Any] = {"context_chars_mean": sum(chars) / len(chars) if chars else 0.0,
                               "context_tokens_mean": sum(counted) / len(counted) if counted and
                               len(counted) == len(records) else None, "contexts": len(log.texts),
                               "records_without_context": missing}
    if learner is None or mode != "closed":
        return summary
    try:
        summary["docs_in_context"] = _audit(records, log, env, learner)
    except (SebenchError, OSError, KeyError) as exc:
        summary["docs_in_context_error"] = f"{type(exc).__name__}: {exc}"
    return summary


def _audit(records: list[dict], log: ContextLog, env: Any, learner: Any) -> dict[str, Any]:
    limit = learner_limit(learner)
    train = env.tasks("train") if (Path(env.root) / "train.jsonl").is_file() else []
    found = audit_records(records, log.texts, env, met_functions(train[:limit] if limit else train, env.mapping,
                                                                 env.function_paths))
    return {"share": found.share, "text_share": found.text_share, "entries": found.entries,
            "carried": len(found.carried), "unmet_names": len(found.unmet_names), "targeted": found.targeted,
            "tasks": found.tasks, "threshold": found.threshold, "is_docs": found.is_docs,
            "met_from": f"the first {limit} train tasks" if limit else "every train task",
            "sentence": found.sentence()}


def audit_records(records: list[dict], texts: dict[str, str], env: Any, met: set[str],
                  threshold: float = THRESHOLD) -> DocsAudit:
    """The docs audit of the contexts ``records`` point to (``texts``: sha -> context), each test
    task's own context checked against its own functions; ``met``: the functions the learner met.
    The evaluation's summary and the learner checker both judge by it."""
    present = [s for s in SPLITS if (Path(env.root) / f"{s}.jsonl").is_file()]
    by_id = {t.task_id: t for s in present for t in env.tasks(s)}
    own = "\n".join(f"{t.query}\n{t.function_name}\n{t.example.input if t.example else ''}" for t in by_id.values())
    index = DocIndex.from_file(Path(env.root) / "api_doc.jsonl", env.mapping)  # after the closed book: ours to read
    shas = list(dict.fromkeys(r.get("context_sha") for r in records if r.get("context_sha") in texts))
    per_task = {r["task_id"]: texts[r["context_sha"]] for r in records if r.get("context_sha") in texts}
    targets = [(text, env.function_paths(by_id[task])) for task, text in per_task.items() if task in by_id]
    return audit([texts[s] for s in shas], {p: e.text for p, e in index.entries.items()}, met, own, threshold,
                 targets)
