"""``sebench check-backend``: targets resolve or are refused with exit 2; a failing check exits 1."""

import json
import re

import typer
from typer.testing import CliRunner

from benchmarks.cli_backends import check_backend_command

app = typer.Typer()
app.command()(check_backend_command)
runner = CliRunner()


def flat(output):
    """The output without rich's box and line breaks (long messages wrap inside the error panel)."""
    return re.sub(r"[\s│╭╮╰╯─]+", " ", output)

BROKEN_STORE = '''
from memory import InMemoryStore


class SearchIgnoresK(InMemoryStore):
    def search(self, query, k=5, where=None):
        super().search(query, k=k, where=where)
        return super().search(query, k=max(1, len(self)), where=where)


def make(path, embedder):
    return SearchIgnoresK(embedder, path=path)
'''


def test_unknown_targets_are_refused_with_the_forms_accepted(tmp_path):
    result = runner.invoke(app, ["memory", "sqlite"])
    assert result.exit_code == 2 and "a registered backend (chroma, inmemory, inmemory-file)" in flat(result.output)
    result = runner.invoke(app, ["model", "no-such-model"])
    assert result.exit_code == 2 and "unknown model" in flat(result.output)
    result = runner.invoke(app, ["memory", f"{tmp_path / 'absent.py'}:make"])
    assert result.exit_code == 2 and "no such file" in flat(result.output)


def test_a_broken_store_in_a_file_fails_its_check(tmp_path):
    (tmp_path / "my_store.py").write_text(BROKEN_STORE)
    result = runner.invoke(app, ["memory", f"{tmp_path / 'my_store.py'}:make", "--workdir", str(tmp_path / "w"),
                                 "--json", str(tmp_path / "report.json")])
    assert result.exit_code == 1, result.output
    assert "FAIL search" in result.output and result.output.count("PASS") == 11
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["passed"] is False and isinstance(report["details"]["fresh_process"], dict)  # found by file
