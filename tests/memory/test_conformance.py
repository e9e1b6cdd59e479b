"""One conformance suite, run against every memory backend."""

import subprocess
import sys

import numpy as np
import pytest

from memory import ChromaStore, Embedder, Hit, InMemoryStore, MemoryStore, MemoryStoreError

TEXTS = ["compute the arithmetic mean of an array", "invert a square matrix",
         "sort the values in ascending order", "count the elements that are not zero"]
METAS = [{"kind": "rule", "score": 2}, {"kind": "rule", "score": 1}, {"kind": "trajectory", "score": 3},
         {"kind": "trajectory", "score": 0}]


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


BACKENDS = {
    "inmemory": lambda tmp, e: InMemoryStore(e),
    "inmemory-file": lambda tmp, e: InMemoryStore(e, path=tmp / "mem"),
    "chroma": lambda tmp, e: ChromaStore(tmp / "chroma", e),
}


@pytest.fixture(params=list(BACKENDS))
def store(request, tmp_path, embedder):
    made = BACKENDS[request.param](tmp_path, embedder)
    yield made
    made.close()


def test_is_a_memory_store(store):
    assert isinstance(store, MemoryStore) and len(store) == 0 and store.search("anything") == []


def test_add_search_get(store):
    ids = store.add(TEXTS, METAS, ids=["m", "i", "s", "c"])
    assert ids == ["m", "i", "s", "c"] and len(store) == 4
    hits = store.search("average of the numbers", k=2)
    assert [h.id for h in hits][0] == "m" and len(hits) == 2
    assert all(isinstance(h, Hit) for h in hits) and hits[0].score >= hits[1].score
    assert store.get("i") == Hit("i", TEXTS[1], METAS[1], 1.0)
    assert store.get("missing") is None
    generated = store.add(["one more"])
    assert len(generated) == 1 and len(generated[0]) >= 8 and len(store) == 5


def test_where_filter_and_vectors(store, embedder):
    store.add(TEXTS, METAS, ids=["m", "i", "s", "c"])
    hits = store.search("average of the numbers", k=4, where={"kind": "trajectory"})
    assert {h.id for h in hits} == {"s", "c"}
    assert [h.id for h in store.search("x", k=3, where={"kind": "rule", "score": 1})] == ["i"]
    vector = embedder.embed(["invert a matrix"])[0]
    assert store.search(vector, k=1)[0].id == "i"


def test_upsert_update_delete(store):
    store.add(TEXTS, METAS, ids=["m", "i", "s", "c"])
    store.add(["the median, not the mean"], [{"kind": "rule", "score": 5}], ids=["m"])
    assert len(store) == 4 and store.get("m").text == "the median, not the mean"
    store.update("m", metadata={"kind": "retired", "score": 0})
    assert store.get("m").metadata == {"kind": "retired", "score": 0}
    assert store.get("m").text == "the median, not the mean"
    store.update("i", text="transpose a matrix")
    assert store.search("swap rows and columns of a matrix", k=1)[0].id == "i"
    store.delete(["m", "nope"])
    assert len(store) == 3 and store.get("m") is None
    with pytest.raises(KeyError):
        store.update("gone", text="x")


def test_bad_input_is_refused(store):
    with pytest.raises(MemoryStoreError, match="must align"):
        store.add(["a", "b"], ids=["only-one"])
    with pytest.raises(MemoryStoreError, match="str/int/float/bool"):
        store.add(["a"], [{"tags": ["x", "y"]}])
    with pytest.raises(MemoryStoreError, match="k must be"):
        store.add(["a"])
        store.search("a", k=0)
    with pytest.raises(MemoryStoreError, match="embeddings for"):
        store.add(["a", "b"], embeddings=np.ones((1, 384)))


def test_persistent_backends_read_back(tmp_path, embedder):
    mem = InMemoryStore(embedder, path=tmp_path / "m")
    mem.add(TEXTS, METAS, ids=["m", "i", "s", "c"])
    mem.persist()
    again = InMemoryStore(embedder, path=tmp_path / "m")
    assert len(again) == 4 and again.search("average", k=1)[0].id == "m"


def test_chroma_memory_is_read_back_in_a_fresh_process(tmp_path, embedder):
    store = ChromaStore(tmp_path / "chroma", embedder)
    store.add(TEXTS, METAS, ids=["m", "i", "s", "c"])
    store.close()
    code = ("import sys; from memory import ChromaStore; s = ChromaStore(sys.argv[1]); "
            "h = s.search('average of the numbers', k=1, where={'kind': 'rule'}); "
            "print(len(s), h[0].id, sorted(h[0].metadata.items()))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "chroma")], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "4 m [('kind', 'rule'), ('score', 2)]"
