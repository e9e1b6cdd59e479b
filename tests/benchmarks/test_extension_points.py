"""A third party's memory backend and model backend, installed as a package is installed (a
``.dist-info`` with ``entry_points.txt`` on the path, what pip writes), used from the shell.

The memory backend is docs/memory-backends.md's SQLite example, taken from the page as it stands
(a guide whose example does not plug in teaches the wrong thing); the model backend is a prefix
``acme:<directory>`` of a few lines. Nothing of ours is edited or registered by hand: the only
registration is the package's own entry points.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.packaging import ROOT, install, sebench

MODEL = '''
from agents.models.transformers_model import TransformersModel


def make(rest, *, dtype="auto", engine="transformers", **options):
    """acme:<model directory>: served by the package's own code, in float32."""
    return TransformersModel(rest, name=f"acme:{rest}", dtype="float32")
'''
ENTRY_POINTS = """[sebench.memory]
acme-sqlite = acme_plugins.store:sqlite_store

[sebench.models]
acme: = acme_plugins.model:make
"""
CONTEXTS = """
import json, sys
from benchmarks.runs import load_run
from envs.zwc import ZWCEnv
env = ZWCEnv.load(sys.argv[1])
agent = load_run(sys.argv[2])
out = []
for task in env.tasks("single_test")[:4]:
    obs = env.observe(task, phase="test", mode="closed")
    out.append(agent.learner.context(obs))
print(json.dumps({"contexts": out, "store": type(agent.learner.store).__name__}))
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The package ``acme-plugins`` 0.1, installed into a directory put on PYTHONPATH."""
    page = (ROOT / "docs" / "memory-backends.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    store = next(b for b in blocks if b.startswith("# memory/sqlite.py\n"))
    factory = next(b for b in blocks if b.startswith("# memory/sqlite.py (continued)"))
    return install(tmp_path_factory.mktemp("site"), "acme-plugins",
                   {"acme_plugins.store": f"{store}\n\n{factory}\n", "acme_plugins.model": MODEL}, ENTRY_POINTS)


def test_the_packages_backends_are_listed_with_where_they_come_from(site):
    out = sebench(site, "backends")
    assert out.returncode == 0, out.stderr
    assert re.search(r"memory\s+│\s+acme-sqlite\s+│\s+acme_plugins\.store:sqlite_store \(acme-plugins\)", out.stdout)
    assert re.search(r"model\s+│\s+acme:<…>\s+│\s+acme_plugins\.model:make \(acme-plugins\)", out.stdout)
    assert "memory.backends:chroma (sebench)" in out.stdout  # ours, registered the same way


def test_the_packaged_memory_backend_passes_check_backend(site):
    out = sebench(site, "check-backend", "memory", "acme-sqlite")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("PASS") == 12 and "FAIL" not in out.stdout


def test_the_packaged_model_prefix_passes_check_backend_and_evaluates(site, task_env, tiny_qwen_dir, tmp_path):
    model = f"acme:{tiny_qwen_dir}"
    checked = sebench(site, "check-backend", "model", model)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    results = tmp_path / "eval.jsonl"
    out = sebench(site, "eval", "--zwc", str(task_env.root), "--model", model, "--limit", "2", "--n", "1",
                  "--max-tokens", "8", "--out", str(results))
    assert out.returncode == 0, out.stdout + out.stderr
    assert len(results.read_text().splitlines()) == 2  # both tasks answered by the package's backend
    [config] = tmp_path.glob("eval*config.json")
    assert json.loads(config.read_text())["config"]["model"] == model


def test_expel_over_the_packaged_store_gives_the_in_memory_stores_closed_book_prompts(site, task_env, tiny_dir,
                                                                                      tmp_path):
    """Evolved from the shell on each store, read back in another process by ``load_run``: the same
    closed-book context, and the SQLite file holds every stored success."""
    contexts = {}
    for store in ("acme-sqlite", "inmemory"):
        run = tmp_path / store
        out = sebench(site, "evolve", "--zwc", str(task_env.root), "--learner", "expel", "--model", f"acme:{tiny_dir}",
                      "--gather-model", "reference", "--limit", "6", "--max-tokens", "8", "--out", str(run),
                      "--set", f"store={store}", "--set", "insight_max_tokens=8", "--set", "max_reflections=0")
        assert out.returncode == 0, out.stdout + out.stderr
        read = sebench(site, str(task_env.root), str(run), code=CONTEXTS)
        assert read.returncode == 0, read.stderr
        contexts[store] = json.loads(read.stdout.strip().splitlines()[-1])
    assert contexts["acme-sqlite"]["store"] == "SQLiteStore" and contexts["inmemory"]["store"] == "InMemoryStore"
    assert contexts["acme-sqlite"]["contexts"] == contexts["inmemory"]["contexts"]
    assert all("Solved tasks similar to this one" in c for c in contexts["inmemory"]["contexts"])
    state = json.loads((tmp_path / "acme-sqlite" / "learner" / "expel.json").read_text())
    assert state["store"]["backend"] == "acme-sqlite"
    where = tmp_path / "acme-sqlite" / "learner" / state["store"]["path"]  # inside the state: recorded relative to it
    with sqlite3.connect(f"{where}.sqlite") as db:
        stored = db.execute("select count(*) from items").fetchone()[0]
    assert stored == sum(bool(r["success"]) for r in state["records"]) == 6


def test_compare_takes_a_store_for_expel_and_the_chroma_directory_holds_its_successes(site, task_env, tiny_dir,
                                                                                      tmp_path):
    out = sebench(site, "compare", "--zwc", str(task_env.root), "--learners", "none,expel", "--model", str(tiny_dir),
                  "--limit", "2", "--train-limit", "4", "--max-tokens", "8", "--out", str(tmp_path / "cmp"),
                  "--set", "expel.store=chroma", "--set", "expel.insight_max_tokens=8",
                  "--set", "expel.max_reflections=0")
    assert out.returncode == 0, out.stdout + out.stderr
    state = json.loads((tmp_path / "cmp" / "expel" / "learner" / "expel.json").read_text())
    assert state["store"] == {"backend": "chroma", "path": "trajectories"}  # inside the state dir: relative to it
    from memory import ChromaStore

    store = ChromaStore(tmp_path / "cmp" / "expel" / "learner" / "trajectories")
    try:
        solved = {r["task_id"] for r in state["records"] if r["success"]}
        assert len(solved) == 4 and len(store) == 4
        assert {store.get(task_id).metadata["task_id"] for task_id in solved} == solved
    finally:
        store.close()
    summary = json.loads((tmp_path / "cmp" / "summary.json").read_text())
    assert summary["config"]["settings"] == {"expel.store": "chroma", "expel.insight_max_tokens": 8,
                                             "expel.max_reflections": 0}
