"""check_store: the MemoryStore contract as a function a backend author runs, like Gymnasium's ``check_env``.

    from memory.conformance import check_store
    report = check_store(lambda path, embedder: MyStore(path, embedder))
    print(*report.lines(), sep="\\n")      # one line per check: PASS/FAIL, name, what to fix

``factory(path, embedder)`` makes a fresh store (``path`` does not exist yet, its folder does; a
store that keeps nothing on disk may ignore it). Every check gets its own store and runs the contract of
``docs/memory-backends.md``; an exception is reported as the check's failure, never raised:

protocol, add-get, generated-ids, search (top-k by cosine, best first), vector-query, where
(equality filters), upsert, update (re-embeds only when the text changes), given-embeddings,
delete, bad-input (``MemoryStoreError``, nothing written), persist (``persist`` + ``close``, then
the same path read back here and in a fresh process, then deleted and a new store made there;
skipped for a store that keeps nothing, unless ``persistent=True``). Backends are found by name in
``memory.registry``; ``tests/memory`` runs every one of ours.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from memory.base import Hit, MemoryStore, MemoryStoreError
from memory.embed import Embedder
from memory.fresh_process import REOPEN, locate
from sebench.check_report import ConformanceReport

Factory = Callable[[Path, Any], Any]
CHECKS = ("protocol", "add-get", "generated-ids", "search", "vector-query", "where", "upsert", "update",
          "given-embeddings", "delete", "bad-input", "persist")
TEXTS = ["compute the arithmetic mean of an array", "invert a square matrix",
         "sort the values in ascending order", "count the elements that are not zero"]
METAS = [{"kind": "rule", "score": 2, "weight": 0.5, "active": True}, {"kind": "rule", "score": 1},
         {"kind": "trajectory", "score": 3}, {"kind": "trajectory", "score": 0, "active": False}]
IDS = ["m", "i", "s", "c"]
QUERIES = ["anything", "average of the numbers", "invert a matrix", "x", "the median, not the mean",
           "transpose a matrix", "swap rows and columns of a matrix", "one more", "and another", "a third", "a"]
_SAME = 0.99  # cosine of a text with itself, allowing for float32 and approximate indexes


_MEMOS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class CountingEmbedder:
    """The caller's embedder, counting the texts stores ask it to embed (the update check's witness).

    Vectors are memoised per text (the embedder is deterministic): the checks embed the same few
    texts dozens of times, and each call to a sentence-transformers model costs ~0.1 s on a CPU.
    """

    def __init__(self, inner: Any):
        self.inner, self.texts = inner, 0
        try:  # shared by every check_store call with this embedder
            self._memo = _MEMOS.setdefault(inner, {})
        except TypeError:  # not weakly referenceable
            self._memo = {}

    def embed(self, texts):
        texts = list(texts)
        self.texts += len(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            self._memo.update(zip(missing, np.asarray(self.inner.embed(missing), dtype=np.float32), strict=True))
        if not texts:
            return self.inner.embed(texts)
        return np.stack([self._memo[t] for t in texts])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def check_store(factory: Factory, *, embedder: Any = None, workdir: str | Path | None = None,
                persistent: bool | None = None, fresh_process: bool = True, target: str | None = None,
                timeout: float = 300.0) -> ConformanceReport:
    """Run every check of the MemoryStore contract against stores made by ``factory``.

    Args:
        factory: ``factory(path, embedder) -> store``, a fresh store each call.
        embedder: what stores embed with (default: ``memory.Embedder()``, all-MiniLM-L6-v2).
        workdir: where the stores' paths go (kept); None: a temporary directory, removed.
        persistent: True: items must survive ``persist``/``close`` and a reopen on the same path;
            False: skip that check; None: require it when a reopened store holds anything.
        fresh_process: also reopen in a fresh Python process (needs ``factory`` importable by
            name, i.e. a top-level function or class of a module or file, and a ``memory.Embedder``).
        target: the name the report carries (default: the factory's qualified name).
        timeout: seconds the fresh process may take.
    """
    started = time.perf_counter()
    base = embedder if embedder is not None else Embedder()
    work = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="sebench-check-store-"))
    work.mkdir(parents=True, exist_ok=True)
    name = target or f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', repr(factory))}"
    report = ConformanceReport(name)
    checks = _StoreChecks(factory, base, work, persistent, fresh_process, timeout, report)
    try:
        for check in CHECKS:
            checks.run(check)
    finally:
        checks.close_all()
        if workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    report.seconds = time.perf_counter() - started
    return report


class _StoreChecks:
    """The checks, each a method returning the problems it found (empty: passed) and a pass sentence."""

    def __init__(self, factory: Factory, embedder: Any, work: Path, persistent: bool | None, fresh_process: bool,
                 timeout: float, report: ConformanceReport):
        self.factory, self.base, self.work, self.report = factory, embedder, work, report
        self.embedder = CountingEmbedder(embedder)
        self.embedder.embed(TEXTS + QUERIES)  # one batch for every text the checks use, then count afresh
        self.embedder.texts = 0
        self.persistent, self.fresh_process, self.timeout = persistent, fresh_process, timeout
        self.stores: list[Any] = []
        self.step = ""  # the call in progress, named when it raises

    def run(self, check: str) -> None:
        self.step = f"factory(path, embedder) for the {check} check"
        try:
            result = getattr(self, "check_" + check.replace("-", "_"))()
        except Exception as exc:  # noqa: BLE001 - a backend's error is this check's failure
            self.report.add(check, [f"{self.step} raised {type(exc).__name__}: {exc}"], "")
            return
        problems, why = result if isinstance(result, tuple) else (result, "")
        self.report.add(check, problems, why)

    # -- helpers --------------------------------------------------------------------------------
    def path(self, check: str) -> Path:
        (self.work / check).mkdir(parents=True, exist_ok=True)
        return self.work / check / "store"

    def fresh(self, check: str, filled: bool = False) -> Any:
        self.step = f"factory({self.path(check)}, embedder)"
        store = self.factory(self.path(check), self.embedder)
        self.stores.append(store)
        if filled:
            self.step = "store.add(texts, metadatas, ids=['m', 'i', 's', 'c'])"
            store.add(TEXTS, METAS, ids=IDS)
        return store

    def vector(self, text: str) -> np.ndarray:
        """A unit vector for ``text`` from the caller's embedder, not counted as the store's."""
        counted = self.embedder.texts
        vector = self.embedder.embed([text])[0]
        self.embedder.texts = counted
        return vector

    def search(self, store: Any, query: Any, **kwargs: Any) -> list:
        shown = repr(query) if isinstance(query, str) else "<vector>"
        self.step = f"store.search({shown}, {', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
        return list(store.search(query, **kwargs))

    def close_all(self) -> None:
        for store in self.stores:
            try:
                store.close()
            except Exception:  # noqa: BLE001, S110 - cleanup; the persist check reports close() errors
                pass

    # -- the checks -----------------------------------------------------------------------------
    def check_protocol(self):
        store = self.fresh("protocol")
        problems = []
        if not isinstance(store, MemoryStore):
            missing = [m for m in ("add", "search", "get", "update", "delete", "__len__", "persist", "close")
                       if not callable(getattr(store, m, None))]
            problems.append(f"{type(store).__name__} lacks {', '.join(missing) or 'a method'} of memory.MemoryStore: "
                            "give it add, search, get, update, delete, __len__, persist and close")
            return problems
        self.step = "len(store) of a fresh store"
        if len(store) != 0:
            problems.append(f"a fresh store holds {len(store)} items: factory(path, embedder) must start empty")
        if self.search(store, "anything") != []:
            problems.append("search on an empty store must return [] (not raise, not return None)")
        self.step = "store.get('anything') on an empty store"
        if store.get("anything") is not None:
            problems.append("get of an unknown id must return None")
        return problems, "a memory.MemoryStore; a fresh store is empty, searching it gives [], get gives None"

    def check_add_get(self):
        store = self.fresh("add-get")
        self.step = "store.add(texts, metadatas, ids=['m', 'i', 's', 'c'])"
        ids = store.add(TEXTS, METAS, ids=IDS)
        problems = []
        if list(ids or []) != IDS:
            problems.append(f"add(..., ids=['m', 'i', 's', 'c']) returned {ids!r}: return the ids, in order")
        if len(store) != 4:
            problems.append(f"len(store) is {len(store)} after adding 4 items")
        for item_id, text, meta in zip(IDS, TEXTS, METAS, strict=True):
            self.step = f"store.get({item_id!r})"
            hit = store.get(item_id)
            if not isinstance(hit, Hit) or (hit.id, hit.text) != (item_id, text):
                problems.append(f"get({item_id!r}) returned {hit!r}: return memory.Hit(id, text, metadata, score) "
                                "with the text that was added")
            elif hit.metadata != meta or any(type(hit.metadata[k]) is not type(v) for k, v in meta.items()):
                problems.append(f"get({item_id!r}).metadata is {hit.metadata!r}, added {meta!r}: keep metadata "
                                "values and their types (str, int, float, bool)")
        self.step = "store.get('missing')"
        if store.get("missing") is not None:
            problems.append("get of an unknown id must return None, not raise or return a placeholder")
        return problems, "add returns the ids; get returns each item's text and metadata (types kept); None if unknown"

    def check_generated_ids(self):
        store = self.fresh("generated-ids")
        self.step = "store.add(['one more', 'and another'])"
        first = list(store.add(["one more", "and another"]) or [])
        self.step = "store.add(['a third'])"
        second = list(store.add(["a third"]) or [])
        ids = first + second
        problems = []
        if len(first) != 2 or len(second) != 1:
            problems.append(f"add without ids returned {first!r} then {second!r}: return one generated id per text")
        elif any(not isinstance(i, str) or len(i) < 8 for i in ids) or len(set(ids)) != 3:
            problems.append(f"generated ids {ids!r} are not unique strings of 8+ characters: use uuid.uuid4().hex "
                            "(memory.base.normalise_add does), so that ids never collide across stores")
        else:
            for item_id, text in zip(ids, ["one more", "and another", "a third"], strict=True):
                self.step = f"store.get({item_id!r})"
                hit = store.get(item_id)
                if hit is None or hit.text != text:
                    problems.append(f"get({item_id!r}) of a generated id returned {hit!r}, not the text {text!r}")
        self.step = "len(store)"
        if len(store) != 3:
            problems.append(f"len(store) is {len(store)} after adding 3 items without ids")
        return problems, "add without ids generates unique ids (8+ characters) that get finds"

    def check_search(self):
        store = self.fresh("search", filled=True)
        problems = []
        hits = self.search(store, "average of the numbers", k=2)
        if any(not isinstance(h, Hit) for h in hits):
            problems.append(f"search returned {hits!r}: return a list of memory.Hit")
            return problems
        if len(hits) != 2:
            problems.append(f"search(query, k=2) on 4 items returned {len(hits)} hits: return the k best, no more")
        if hits and hits[0].id != "m":
            problems.append(f"the best hit for 'average of the numbers' is {hits[0].id!r}, not 'm' ({TEXTS[0]!r}): "
                            "rank by cosine similarity of the query's embedding with the items'")
        if any(a.score < b.score - 1e-6 for a, b in zip(hits, hits[1:], strict=False)):
            problems.append(f"scores {[h.score for h in hits]} are not best first: sort hits by score, descending")
        added = dict(zip(IDS, zip(TEXTS, METAS, strict=True), strict=True))
        if any((h.text, h.metadata) != added.get(h.id) for h in hits):
            problems.append("hits carry a text or metadata other than what was added under their id")
        every = self.search(store, "average of the numbers", k=10)
        if len(every) != 4:
            problems.append(f"search(query, k=10) on 4 items returned {len(every)} hits: a k above len(store) "
                            "returns every item (min(k, len(store)))")
        same = self.search(store, TEXTS[1], k=1)
        if not same or same[0].id != "i" or not same[0].score > _SAME:
            problems.append(f"searching an item's own text gave {same[:1]!r}: the item should come first with "
                            "score ~1.0 (Hit.score is the cosine similarity, higher is closer)")
        return problems, "returns the k best as memory.Hit, best first, scored by cosine similarity"

    def check_vector_query(self):
        store = self.fresh("vector-query", filled=True)
        hits = self.search(store, self.vector("invert a matrix"), k=1)
        if not hits or hits[0].id != "i":
            return [f"search(vector of 'invert a matrix') returned {hits[:1]!r}, not 'i': a query may be an "
                    "np.ndarray embedding; search with it as it is (unit length) instead of embedding text"]
        return [], "search takes a vector as well as text"

    def check_where(self):
        store = self.fresh("where", filled=True)
        problems = []
        hits = self.search(store, "average of the numbers", k=4, where={"kind": "trajectory"})
        if {h.id for h in hits} != {"s", "c"}:
            problems.append(f"where={{'kind': 'trajectory'}} gave {sorted(h.id for h in hits)}, not ['c', 's']: "
                            "return only items whose metadata equals every key of where")
        hits = self.search(store, "x", k=3, where={"kind": "rule", "score": 1})
        if [h.id for h in hits] != ["i"]:
            problems.append(f"where={{'kind': 'rule', 'score': 1}} gave {[h.id for h in hits]}, not ['i']: "
                            "several keys mean all of them must match (memory.base.matches)")
        hits = self.search(store, "x", k=3, where={"kind": "nothing has this"})
        if hits:
            problems.append(f"a where that matches nothing gave {[h.id for h in hits]}: return []")
        return problems, "where filters by metadata equality, all keys at once; no match gives []"

    def check_upsert(self):
        store = self.fresh("upsert", filled=True)
        self.step = "store.add(['the median, not the mean'], ids=['m'])  # an existing id"
        store.add(["the median, not the mean"], [{"kind": "rule", "score": 5}], ids=["m"])
        problems = []
        if len(store) != 4:
            problems.append(f"adding an existing id changed len(store) to {len(store)}: add upserts (replaces)")
        self.step = "store.get('m')"
        hit = store.get("m")
        if hit is None or hit.text != "the median, not the mean" or hit.metadata != {"kind": "rule", "score": 5}:
            problems.append(f"after add(..., ids=['m']) again, get('m') is {hit!r}: replace text and metadata")
        hits = self.search(store, self.vector("the median, not the mean"), k=1)
        if not hits or hits[0].id != "m" or not hits[0].score > _SAME:
            problems.append(f"the replaced item's own vector found {hits[:1]!r}: an upsert must replace the "
                            "embedding too")
        return problems, "add with an existing id replaces text, metadata and embedding"

    def check_update(self):
        store = self.fresh("update", filled=True)
        problems = []
        before = self.embedder.texts
        self.step = "store.update('m', metadata={'kind': 'retired', 'score': 0})"
        store.update("m", metadata={"kind": "retired", "score": 0})
        embedded = self.embedder.texts - before
        self.step = "store.get('m')"
        hit = store.get("m")
        if hit is None or hit.metadata != {"kind": "retired", "score": 0} or hit.text != TEXTS[0]:
            problems.append(f"after update('m', metadata=...), get('m') is {hit!r}: "
                            "replace the metadata, keep the text")
        if embedded:
            problems.append(f"update(id, metadata=...) embedded {embedded} text(s): keep the stored vector when "
                            "the text does not change (embedding is the slow part)")
        hits = self.search(store, self.vector(TEXTS[0]), k=1)
        if not hits or hits[0].id != "m" or not hits[0].score > _SAME:
            problems.append(f"after a metadata update, the item's own vector found {hits[:1]!r}: keep its vector")
        before = self.embedder.texts
        self.step = "store.update('i', text='transpose a matrix')"
        store.update("i", text="transpose a matrix")
        embedded = self.embedder.texts - before
        if embedded != 1:
            problems.append(f"update(id, text=...) embedded {embedded} texts: embed the new text (once)")
        self.step = "store.get('i')"
        hit = store.get("i")
        if hit is None or hit.text != "transpose a matrix" or hit.metadata != METAS[1]:
            problems.append(f"after update('i', text=...), get('i') is {hit!r}: replace the text, keep the metadata")
        hits = self.search(store, "swap rows and columns of a matrix", k=1)
        if not hits or hits[0].id != "i":
            problems.append(f"after update('i', text='transpose a matrix') a search for it found {hits[:1]!r}: "
                            "store the new text's embedding")
        self.step = "store.update('gone', text='x')"
        try:
            store.update("gone", text="x")
            problems.append("update of an unknown id was accepted: raise KeyError naming the id")
        except KeyError:
            pass
        return problems, ("update replaces metadata without embedding, re-embeds a new text once, and raises "
                          "KeyError for an unknown id")

    def check_given_embeddings(self):
        store = self.fresh("given-embeddings", filled=True)
        axis = np.zeros((1, self.vector(TEXTS[0]).shape[-1]), dtype=np.float32)
        axis[0, 0] = 3.0  # not unit length: the store normalises it
        before = self.embedder.texts
        self.step = "store.add(['placed by hand'], ids=['v'], embeddings=<1 vector>)"
        store.add(["placed by hand"], [{"kind": "manual"}], ids=["v"], embeddings=axis)
        problems = []
        if self.embedder.texts != before:
            problems.append("add(..., embeddings=vectors) called the embedder: use the given vectors")
        hits = self.search(store, axis[0], k=1)
        if not hits or hits[0].id != "v" or not hits[0].score > _SAME:
            problems.append(f"searching the given vector found {hits[:1]!r}, not 'v' with score ~1.0: store the "
                            "given embeddings at unit length (memory.base.unit)")
        return problems, "add(..., embeddings=) stores the given vectors (normalised) without embedding"

    def check_delete(self):
        store = self.fresh("delete", filled=True)
        self.step = "store.delete(['m', 'nope'])  # 'nope' was never added"
        store.delete(["m", "nope"])
        self.step = "store.delete([])"
        store.delete([])
        problems = []
        if len(store) != 3:
            problems.append(f"len(store) is {len(store)} after deleting 1 of 4 items")
        self.step = "store.get('m')"
        if store.get("m") is not None:
            problems.append("get('m') still finds a deleted item")
        hits = self.search(store, self.vector(TEXTS[0]), k=4)
        if "m" in [h.id for h in hits]:
            problems.append("search still returns a deleted item: drop its vector too")
        return problems, "delete removes items from get, search and len; unknown ids and [] are ignored"

    def check_bad_input(self):
        store = self.fresh("bad-input")
        self.step = "store.add(['a'])"
        store.add(["a"])
        dim = self.vector(TEXTS[0]).shape[-1]
        cases = [
            ("add(['a', 'b'], ids=['only-one'])", lambda: store.add(["a", "b"], ids=["only-one"]),
             "texts, metadatas and ids that do not align"),
            ("add(['a'], [{'tags': ['x', 'y']}])", lambda: store.add(["a"], [{"tags": ["x", "y"]}]),
             "metadata values other than str/int/float/bool"),
            ("add([1])", lambda: store.add([1]), "texts that are not strings"),
            (f"add(['a', 'b'], embeddings=np.ones((1, {dim})))",
             lambda: store.add(["a", "b"], embeddings=np.ones((1, dim))), "a vector count other than the text count"),
            ("search('a', k=0)", lambda: store.search("a", k=0), "k < 1"),
        ]
        problems = []
        for call, run, what in cases:
            self.step = f"store.{call}"
            try:
                run()
                problems.append(f"{call} was accepted: refuse {what} with memory.MemoryStoreError")
            except MemoryStoreError:
                pass
            except Exception as exc:  # noqa: BLE001 - the wrong error type is the finding
                problems.append(f"{call} raised {type(exc).__name__}: {exc}; raise memory.MemoryStoreError "
                                "(memory.base.normalise_add and vectors_for do)")
        self.step = "len(store)"
        if len(store) != 1:
            problems.append(f"len(store) is {len(store)} after refused adds (1 expected): check every input "
                            "before writing anything")
        return problems, "bad input raises memory.MemoryStoreError and writes nothing"

    def check_persist(self):
        if self.persistent is False:
            return [], "skipped: persistent=False (the backend keeps nothing on disk)"
        store = self.fresh("persist", filled=True)
        self.step = "store.persist()"
        store.persist()
        self.step = "store.close()"
        store.close()
        self.step = "factory(same path, embedder) after persist() and close()"
        again = self.factory(self.path("persist"), self.embedder)
        self.stores.append(again)
        self.step = "len(store) of the reopened store"
        count = len(again)
        if count == 0 and self.persistent is None:
            self.report.details["persistent"] = False
            return [], ("skipped: a store made again on the same path after persist() and close() is empty, so "
                        "the backend is taken as not persistent (pass persistent=True to require it)")
        self.report.details["persistent"] = True
        problems = self._read_back(again, count, "in this process")
        if not problems:
            problems += self._fresh_process()
        if not problems:
            problems += self._made_again_after_delete(again)
        where = "here and in a fresh process" if self.report.details.get("fresh_process") else "here"
        return problems, f"persist() + close(), then the same path read back {where}; deleted, then made anew there"

    def _made_again_after_delete(self, store: Any) -> list[str]:
        """A closed store's directory deleted and a new store made on the same path, in this process
        (a rerun into a cleaned results folder): the new store must write, not find the old one's
        handles still open (chromadb keeps one database per path until its client is closed)."""
        self.step = "store.close() of the reopened store"
        store.close()
        shutil.rmtree(self.work / "persist")  # everything the store wrote, whatever it named after its path
        self.step = "factory(same path, embedder) after close() and deleting the path, then add(1 item)"
        anew = self.factory(self.path("persist"), self.embedder)
        self.stores.append(anew)
        anew.add(TEXTS[:1], METAS[:1], ids=IDS[:1])
        if len(anew) != 1:
            return [f"a store made on a deleted store's path holds {len(anew)} items after add(1 item): close() must "
                    "let go of every handle on the path (files, connections, per-path caches)"]
        return []

    def _read_back(self, store: Any, count: int, where: str) -> list[str]:
        if count != 4:
            return [f"after add(4 items), persist() and close(), the same path reopened {where} holds {count} "
                    "items: write every item in persist() (or as added) and load them when opened on the path"]
        self.step = "store.get('m') of the reopened store"
        hit = store.get("m")
        hits = self.search(store, self.vector(TEXTS[0]), k=1, where={"kind": "rule"})
        if hit is None or (hit.text, hit.metadata) != (TEXTS[0], METAS[0]) or not hits or hits[0].id != "m":
            return [f"reopened {where}, get('m') is {hit!r} and a search for its vector found {hits[:1]!r}: "
                    "persist texts, metadata and vectors and read all three back"]
        return []

    def _fresh_process(self) -> list[str]:
        if not self.fresh_process:
            return []
        located = locate(self.factory)
        if located is None or not isinstance(self.base, Embedder):
            why = ("the factory is not importable by name (a lambda, a local or __main__ function)" if located is None
                   else "the embedder is not a memory.Embedder")
            self.report.details["fresh_process"] = f"not run: {why}"
            return []
        module, file, qualname = located
        args = {"module": module, "file": file, "qualname": qualname, "path": str(self.path("persist")),
                "embedder": str(self.base.path), "vector": self.vector(TEXTS[0]).tolist()}
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))}
        self.step = "reopening the store in a fresh process"
        out = subprocess.run([sys.executable, "-c", REOPEN, json.dumps(args)], capture_output=True, text=True,
                             env=env, timeout=self.timeout)
        if out.returncode != 0:
            tail = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
            return [f"reopening the path in a fresh process failed: {tail}"]
        seen = json.loads(out.stdout.strip().splitlines()[-1])
        self.report.details["fresh_process"] = seen
        if seen["len"] != 4 or seen["get"] != [TEXTS[0], METAS[0]] or seen["top"] != "m":
            return [f"reopened in a fresh process, the store held {seen['len']} items, get('m') gave {seen['get']} "
                    f"and a search found {seen['top']!r}: keep everything on disk, not in process memory"]
        return []
