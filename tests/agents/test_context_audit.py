"""Every answer's record says what context it had and what it cost; the closed-book summary audits the
contexts against the docs (agents.context_audit): a cheat sheet of names is the docs, notes on the
functions the learner met are not."""

import json
from types import SimpleNamespace

from agents import Agent
from agents.context_audit import context_path


class FixedContext:
    """A learner whose context is one text for every observation; it met the first ``limit`` train tasks."""

    name = "fixed-context"

    def __init__(self, text: str, limit: int = 2):
        self.text, self.config = text, SimpleNamespace(limit=limit)

    def context(self, obs):
        return self.text

    def observe(self, trajectory):
        return None


def _evaluate(env, learner, out):
    agent = Agent(model="reference", learner=learner, max_tokens=64)
    return agent.evaluate(env, split="single_test", n=2, mode="closed", out=str(out), limit=3)


def test_a_cheat_sheet_of_every_name_is_flagged_and_each_context_is_kept_once(task_env, tmp_path):
    sheet = "\n".join(f"- {entry.zwc}" for entry in task_env.mapping)
    report = _evaluate(task_env, FixedContext(sheet), tmp_path / "sheet.jsonl")
    audit = report.context["docs_in_context"]
    assert audit["is_docs"] and audit["share"] > 0.9 and audit["met_from"] == "the first 2 train tasks"
    assert "doc entries carried" in audit["sentence"] and report.context["context_chars_mean"] == len(sheet)
    records = [json.loads(line) for line in (tmp_path / "sheet.jsonl").read_text().splitlines()]
    assert len(records) == 6 and {r["context_chars"] for r in records} == {len(sheet)}
    logged = context_path(tmp_path / "sheet.jsonl").read_text().splitlines()
    assert len(logged) == 1 and json.loads(logged[0])["text"] == sheet  # one context, six answers
    summary = json.loads((tmp_path / "sheet.summary.json").read_text())
    assert summary["context"]["docs_in_context"]["is_docs"] is True


def test_notes_on_the_functions_met_are_not_the_docs_and_no_learner_has_no_audit(task_env, tmp_path):
    met = [task_env.function_paths(t)[0] for t in task_env.tasks("train")[:2]]
    report = _evaluate(task_env, FixedContext("\n".join(f"{p}(x) solved a task" for p in met)), tmp_path / "n.jsonl")
    assert not report.context["docs_in_context"]["is_docs"] and report.context["docs_in_context"]["carried"] == 0
    none = Agent(model="reference", max_tokens=64).evaluate(task_env, split="single_test", n=1, mode="closed",
                                                            out=str(tmp_path / "none.jsonl"), limit=2)
    assert "docs_in_context" not in none.context and none.context["context_chars_mean"] == 0


def test_the_report_flags_a_row_whose_contexts_are_the_docs_and_shows_the_context_cost():
    from benchmarks.report_costs import context_cell, docs_cell

    def row(share, is_docs, tokens):
        context = {"context_chars_mean": 4000.0, "context_tokens_mean": tokens,
                   "docs_in_context": {"share": share, "is_docs": is_docs}}
        return SimpleNamespace(summary={"context": context})

    assert docs_cell([row(0.02, False, 900), row(0.95, True, 950)]) == "DOCS IN MEMORY: not internalisation (95% of entries)"
    assert docs_cell([row(0.02, False, 900)]) == "2% of entries" and context_cell([row(0.0, False, 900)]) == "900 tokens"
    assert context_cell([row(0.0, False, None)]) == "4000 chars" and context_cell([SimpleNamespace(summary={})]) == "—"


def test_a_torn_context_line_is_cut_on_resume_and_a_fresh_run_starts_the_file_anew(task_env, tmp_path):
    out = tmp_path / "r.jsonl"
    _evaluate(task_env, FixedContext("notes"), out)
    sidecar = context_path(out)
    sidecar.write_text(sidecar.read_text() + '{"sha": "abc", "te')  # killed mid-line
    again = Agent(model="reference", learner=FixedContext("notes"), max_tokens=64).evaluate(
        task_env, split="single_test", n=2, mode="closed", out=str(out), limit=3, resume=True)
    assert again.context["records_without_context"] == 0 and again.context["context_chars_mean"] == len("notes")
    out.unlink()  # what compare does before a row's evaluation: the old contexts must not linger
    sidecar.write_text('{"sha": "old", "text": "an earlier run"}\n')
    _evaluate(task_env, FixedContext("new notes"), out)
    assert [json.loads(line)["text"] for line in sidecar.read_text().splitlines()] == ["new notes"]
