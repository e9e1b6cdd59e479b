"""The newcomer's path of docs/extending.md ("Where does my change go"): a learner, a memory
backend and a model backend, each one file plus one entry-point line of an installed package (a
``.dist-info`` on ``sys.path``, what pip writes), are found by their registries in this process
at once (the registries cache nothing) and pass their checkers.

The learner is tests/learners/checker/newcomer_learner.py as its author would ship it; the learner
checker's run on that same file (``sebench check-learner``, minutes) is
tests/learners/test_checker.py::test_a_newcomers_learner_from_a_file_passes_every_check, not
repeated here. The memory backend is a store of a few lines over ours; the model backend the
prefix of tests/benchmarks/test_extension_points.py under another name, over the tiny test model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.test_extension_points import MODEL as ACME_MODEL
from tests.packaging import install

LEARNER = Path(__file__).parent / "learners" / "checker" / "newcomer_learner.py"
STORE = '''
from memory.inmemory import InMemoryStore


def make_store(path, embedder=None, **options):
    """A newcomer's backend: ours under another name, as the smallest thing that plugs in."""
    return InMemoryStore(embedder)
'''
MODEL = ACME_MODEL.replace("acme:", "newcomer:")  # test_extension_points' prefix backend, renamed
ENTRY_POINTS = """[sebench.learners]
newcomer-notes = newcomer_pkg.learner:NotesLearner

[sebench.memory]
newcomer-store = newcomer_pkg.store:make_store

[sebench.models]
newcomer: = newcomer_pkg.model:make
"""


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory):
    """The package ``newcomer-pkg``, installed once for the module (its modules stay imported)."""
    site = install(tmp_path_factory.mktemp("site"), "newcomer-pkg",
                   {"newcomer_pkg.learner": LEARNER.read_text(), "newcomer_pkg.store": STORE,
                    "newcomer_pkg.model": MODEL}, ENTRY_POINTS)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(site))
        yield site


def test_a_newcomers_learner_is_found_by_the_learner_registry(newcomer):
    from learners.registry import make, registry

    assert "newcomer-notes" in registry() and registry().target("newcomer-notes") == "newcomer_pkg.learner:NotesLearner"
    learner = make("newcomer-notes", limit=2)
    assert learner.name == "notes" and learner.config.limit == 2


def test_a_newcomers_memory_backend_is_found_and_passes_check_store(newcomer, tmp_path):
    from memory import registry
    from memory.conformance import check_store

    assert registry.backends()["newcomer-store"].origin == "newcomer_pkg.store:make_store (newcomer-pkg)"
    report = check_store(registry.factory("newcomer-store"), workdir=tmp_path / "stores", persistent=False)
    assert report.passed, "\n".join(report.lines())


def test_a_newcomers_model_backend_is_found_and_passes_check_model(newcomer, tiny_qwen_dir):
    from agents.models.conformance import check_model
    from agents.models.registry import default_registry

    assert any(e.name == "newcomer:" and "newcomer-pkg" in e.origin for e in default_registry().entries())
    report = check_model(f"newcomer:{tiny_qwen_dir}")
    assert report.passed, "\n".join(report.lines())
