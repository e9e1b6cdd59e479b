"""Every memory backend we ship passes ``memory.conformance.check_store``; broken stores fail the right check."""

import pytest

from memory import Embedder, InMemoryStore, registry
from memory.conformance import CHECKS, check_store

OURS = [name for name, plugin in registry.backends().items() if plugin.ours]


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


def test_our_backends_are_registered_by_entry_point():
    assert set(OURS) >= {"inmemory", "inmemory-file", "chroma"}


@pytest.mark.parametrize("name", OURS)
def test_every_backend_we_register_passes_every_check(name, tmp_path, embedder):
    factory = registry.factory(name)
    persistent = registry.is_persistent(factory)
    report = check_store(factory, embedder=embedder, workdir=tmp_path, persistent=persistent)
    assert [c.name for c in report.checks] == list(CHECKS)
    assert report.passed, "\n".join(report.lines())
    if persistent:  # read back in a fresh process, not only in this one
        assert isinstance(report.details["fresh_process"], dict)  # it ran, and its reading passed
        assert "fresh process" in report.check("persist").why
    else:
        assert report.check("persist").why.startswith("skipped")


class SearchIgnoresK(InMemoryStore):
    """A plausible bug: k is validated but never passed on, so every match comes back."""

    def search(self, query, k=5, where=None):
        super().search(query, k=k, where=where)  # refuses k < 1 like the real one
        return super().search(query, k=max(1, len(self)), where=where)


def test_a_store_whose_search_ignores_k_fails_the_search_check(tmp_path, embedder):
    report = check_store(lambda path, e: SearchIgnoresK(e), embedder=embedder, workdir=tmp_path)
    assert report.failed() == ["search"], "\n".join(report.lines())
    assert "k=2) on 4 items returned 4 hits" in report.check("search").why
    assert "k=10" not in report.check("search").why  # a k above len(store) is right to return all 4


class ForgetsOnReopen(InMemoryStore):
    """Claims persistence (a path) but never writes it."""

    def persist(self):
        return None


def test_a_store_that_does_not_persist_fails_only_when_persistence_is_required(tmp_path, embedder):
    def factory(path, e):
        return ForgetsOnReopen(e, path=path)

    required = check_store(factory, embedder=embedder, workdir=tmp_path / "a", persistent=True)
    assert required.failed() == ["persist"] and "holds 0 items" in required.check("persist").why
    detected = check_store(factory, embedder=embedder, workdir=tmp_path / "b")
    assert detected.passed and detected.details["persistent"] is False


def test_the_guides_sqlite_example_passes_every_check_as_written(tmp_path, embedder):
    """docs/memory-backends.md's worked example, taken from the page (both code blocks), is a backend
    that passes: a guide whose example fails its own checker teaches the wrong thing."""
    import importlib.util
    import re
    import sys
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "memory-backends.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    store = next(b for b in blocks if b.startswith("# memory/sqlite.py"))
    factory = next(b for b in blocks if b.startswith("# memory/sqlite.py (continued)"))
    (tmp_path / "sqlite_example.py").write_text(f"{store}\n\n{factory}\n")
    spec = importlib.util.spec_from_file_location("sebench_docs_sqlite_example", tmp_path / "sqlite_example.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the persist check finds the factory again, by file, in a fresh process
    try:
        spec.loader.exec_module(module)
        report = check_store(module.sqlite_store, embedder=embedder, workdir=tmp_path / "w", persistent=True)
    finally:
        del sys.modules[spec.name]
    assert report.passed, "\n".join(report.lines())
    assert isinstance(report.details["fresh_process"], dict)
