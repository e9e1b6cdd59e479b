"""The learner checker (learners/checker/): a broken learner fails the check that names its
mistake and passes the others, a newcomer's learner and every registered learner pass, and a
target that names no learner gets a message that says what to write.

All checks share one build (``check_build``: a few seconds) and its baseline evaluation, so
they run in one xdist group. The newcomer's learner, the broken ones and the registered ones are
checked with the tiny random-initialised model directory (``tiny_dir``; the report names that path
as its model, and the checker's fresh processes load it by path): the checks are of mechanics (what
a learner touches, saves, loads and resumes, the same weights after a fresh load), the mistakes are
in the learners, and the effect, which needs a model that earns rewards, is a report that never
fails a check. The guide's example and the factory test keep the ``reference`` model, which solves
train tasks: the example's evolve must have something to keep."""

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from learners.checker import CHECKS, LearnerTargetError, check_learner, resolve_target
from learners.checker.build import CheckBuild
from learners.checker.effect import HURTS, IMPROVES, NO_EFFECT, bootstrap_difference, verdict
from learners.registry import registry

NEWCOMER = f"{Path(__file__).with_name('newcomer_learner.py')}:NotesLearner"
BROKEN = "tests.learners.checker.broken_learners"


@pytest.fixture(scope="session")
def check_build(tmp_path_factory):
    build = CheckBuild.create(tmp_path_factory.mktemp("check-build"))
    yield build
    build.close()


def check(target, build, tmp_path, **kwargs):
    return check_learner(target, build=build, workdir=tmp_path, max_tokens=32, **kwargs)


# -- the build --------------------------------------------------------------------------------------
def test_the_canary_is_in_every_test_task_and_the_tasks_still_grade(check_build):
    canary = check_build.canary
    lines = [line for s in ("single_test", "multiple_test") for line in
             (check_build.root / f"{s}.jsonl").read_text().splitlines()]
    assert len(lines) == 6
    for line in lines:
        record = json.loads(line)
        for key in ("task_id", "query", "function_name", "kind", "reference", "canary"):
            assert canary in record[key], key
        assert canary in record["example_output"][0]
        assert all(canary in case["input"] and case["canary"] == canary for case in record["test_cases"])
    assert canary not in (check_build.root / "train.jsonl").read_text()
    tasks = check_build.test_tasks()
    assert all(v.passed for v in check_build.env.check_many([(t, t.reference) for t in tasks]))
    wrong = [(t, t.reference.replace("return ", "return 1 + ", 1)) for t in tasks]
    assert not any(v.passed for v in check_build.env.check_many(wrong))


def test_recording_sees_prompts_training_rows_and_test_file_opens(check_build):
    from agents.models import load_model
    from learners.checker.record import Recorder, RecordingModel, find_in_files, find_in_object, recording

    canary = check_build.canary
    watched = str((check_build.root / "single_test.jsonl").resolve())
    recorder = Recorder(canary=canary, split_of={}, watched_files=frozenset({watched}))
    with recording(recorder):
        import datasets

        datasets.Dataset.from_list([{"prompt": f"solve {canary}"}, {"prompt": "fine"}])
        model = load_model("reference", tasks=check_build.env.tasks("train"), mapping=check_build.env.mapping)
        assert isinstance(model, RecordingModel)
        model.generate([[{"role": "user", "content": f"about {canary}"}]])
        (check_build.root / "single_test.jsonl").read_text()
    (check_build.root / "single_test.jsonl").read_text()  # after the block: not recorded
    assert recorder.training_rows == 2 and len(recorder.training_leaks) == 1
    assert [text for _, _, text in recorder.prompts] == [f"about {canary}"]
    [(path, where)] = recorder.file_reads
    assert path == watched and "test_checker.py" in where
    assert not isinstance(load_model("reference", tasks=[], mapping=check_build.env.mapping), RecordingModel)
    assert find_in_object({"a": [1, {"b": ("x", f"-{canary}-")}]}, canary) == ["learner['a'][1]['b'][1]"]
    assert find_in_files(check_build.root, canary) == sorted(str(check_build.root / f"{s}.jsonl")
                                                             for s in ("multiple_test", "single_test"))


# -- learners that pass -----------------------------------------------------------------------------
@pytest.mark.xdist_group("check-learner")
def test_a_newcomers_learner_from_a_file_passes_every_check(check_build, tiny_dir, tmp_path):
    report = check(NEWCOMER, check_build, tmp_path, model=str(tiny_dir))
    assert report.passed, "\n".join(report.lines())
    assert [c.name for c in report.checks] == list(CHECKS) and report.learner == "notes"
    assert report.model == str(tiny_dir) and f"(model {tiny_dir})" in report.check("effect").why
    assert report.check("limit").why.startswith("touched exactly the first 2 train tasks (through docs_for)")
    assert "resumed" in report.check("kill-resume").why and "killed once it had written notes.json" in \
        report.check("kill-resume").why
    [effect] = report.effect
    assert effect.metric == "closed-book pass@1" and effect.n == 6 and effect.low <= effect.difference <= effect.high


@pytest.mark.xdist_group("check-learner")
def test_the_guides_worked_example_passes(check_build, tmp_path):
    example = Path(__file__).parents[3] / "docs" / "examples" / "solved_examples.py"
    report = check(f"{example}:SolvedExamples", check_build, tmp_path, model="reference")
    assert report.passed, "\n".join(report.lines())
    assert report.details["evolve_report"]["details"]["solved"] == 2  # the reference answers: something to keep
    assert "the same context for 4 observations" in report.check("save-load").why


def _ours() -> list[str]:
    """The learners this repository registers (its own entry points): a third-party package's
    learner installed beside sebench is its author's to check (``sebench check-learner``), and
    never breaks this suite."""
    from sebench import plugins

    return sorted(name for name, ep in plugins.group(plugins.LEARNERS).items() if plugins.describe(ep).ours)


def _registered():
    """Every learner of ours through the checker (15-35 s each on the tiny model here); those
    that train weights in a group of their own (the longest checks), so that xdist can run them
    beside the rest."""
    for name in _ours():
        group = "check-learner-weights" if getattr(registry()[name], "parametric", False) else "check-learner"
        yield pytest.param(name, marks=pytest.mark.xdist_group(group))


def test_every_learner_of_ours_has_tiny_settings_and_make_bench_checks_them_all():
    ours = _ours()
    assert len(ours) >= 11 and set(ours) <= set(registry())
    untiny = [name for name in ours if not isinstance(getattr(registry()[name], "checker_settings", None), dict)]
    assert untiny == [], "give each of our learners tiny settings: a checker_settings dict on its class"
    makefile = (Path(__file__).parents[3] / "Makefile").read_text()
    assert "check-learners" in makefile.partition("\nbench:")[2].partition("\n\n")[0], "make bench runs them all"


@pytest.mark.parametrize("name", _registered())
def test_every_registered_learner_passes_at_tiny_sizes(check_build, tiny_dir, tmp_path, name):
    report = check(name, check_build, tmp_path, model=str(tiny_dir))
    assert report.passed, "\n".join(report.lines())
    assert report.learner == name and report.model == str(tiny_dir)
    recorded = report.details["recorded"]
    if report.details["parametric"]:
        assert [f.metric for f in report.effect] == ["closed-book pass@1", "API recall"]
        assert "same weights" in report.check("save-load").why
        assert recorded["training_rows"] >= 1  # the training set was seen: a canary in it could not pass unseen
    if name in ("expel", "ace"):
        # they gather with the reference teacher, which binds the train split only while they evolve
        assert recorded["prompts"] >= 2 and recorded["test_split_requests"] == 0


# -- learners with one mistake ----------------------------------------------------------------------
MISTAKES = {
    "ReadsTestFile": ("no-test-data", ["an open of", "single_test.jsonl from", "the learner's memory at learner.notes",
                                       "the saved file"]),
    "ReadsTestSplit": ("no-test-data", ["a request for the single_test split from", "broken_learners.py",
                                        "given to env.docs_for"]),
    "IgnoresLimit": ("limit", ["touched 4 train tasks with limit=2", "env.tasks('train')[:config.limit]"]),
    "LosesStateOnSave": ("save-load", ["context(obs) differs for 4 of 4 observations", "save must write all"]),
    # whole doc entries, each test task shown its own function's: the verbatim text and the targeted docs both
    "DocsInContext": (("closed-book", "docs-in-context"), ["a closed-book test prompt holds doc text verbatim"]),
    "CheatSheet": ("docs-in-context", ["the closed-book contexts carry the docs", "doc entries carried",
                                       "zwc names it never met in a train task", "not internalisation"]),
    "CrashesAfterKill": ("kill-resume", ["raised RuntimeError", "BUSY exists", "evolve must resume"]),
    "NoName": ("protocol", ["name is None", "context(obs) returned NoneType, not str"]),
}


@pytest.mark.xdist_group("check-learner")
@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_a_broken_learner_fails_the_check_of_its_mistake_and_passes_the_others(check_build, tiny_dir, tmp_path, name):
    failing, phrases = MISTAKES[name]
    failing = [failing] if isinstance(failing, str) else list(failing)
    report = check(f"{BROKEN}:{name}", check_build, tmp_path, model=str(tiny_dir))
    assert report.failed() == failing, report.lines()
    why = report.check(failing[0]).why
    assert all(p in why for p in phrases), why


@pytest.mark.xdist_group("check-learner")
def test_a_factory_that_a_fresh_process_cannot_find_is_told_how_to_name_it(check_build, tmp_path):
    from tests.learners.checker.newcomer_learner import NotesLearner

    report = check(lambda **config: NotesLearner(**config), check_build, tmp_path, model="reference")
    assert report.failed() == ["save-load", "kill-resume"]
    assert "cannot be found by name in a fresh process" in report.check("save-load").why


# -- targets ----------------------------------------------------------------------------------------
def test_targets_resolve_by_name_module_and_file():
    assert resolve_target("none").kind == "registered"
    assert resolve_target(f"{BROKEN}:IgnoresLimit").factory.__name__ == "IgnoresLimit"
    by_file = resolve_target(NEWCOMER)
    assert by_file.kind == "file" and by_file.factory(limit=1).name == "notes"
    assert resolve_target(NEWCOMER).factory is by_file.factory  # the file is loaded once


@pytest.mark.parametrize("target, phrases", [
    ("exple", ["no learner registered by that name", "did you mean expel?"]),
    ("no_such_package.mod:Learner", ["no module named 'no_such_package'", "path/to/file.py:Attr"]),
    (f"{BROKEN}:Missing", ["has no attribute 'Missing'", "learners found there:", "IgnoresLimit"]),
    ("/nonexistent/learner.py:L", ["no such file /nonexistent/learner.py"]),
    (f"{BROKEN}:json", ["json is a module, not a learner class or factory"]),
    (":Attr", ["an empty module or attribute around ':'"]),
])
def test_a_bad_target_names_what_is_wrong_and_the_fix(target, phrases):
    with pytest.raises(LearnerTargetError) as caught:
        resolve_target(target)
    assert all(p in str(caught.value) for p in phrases), str(caught.value)


def test_a_file_that_raises_on_import_is_reported_as_such(tmp_path):
    bad = tmp_path / "bad_learner.py"
    bad.write_text("import zwc_nothing_here\n")
    with pytest.raises(LearnerTargetError, match="running .*bad_learner.py raised ModuleNotFoundError"):
        resolve_target(f"{bad}:Learner")


# -- the effect's arithmetic ------------------------------------------------------------------------
def test_the_bootstrap_interval_and_the_verdict():
    assert bootstrap_difference([0.0] * 6, [0.0] * 6) == (0.0, 0.0, 0.0)
    difference, low, high = bootstrap_difference([0.0] * 20, [1.0] * 15 + [0.0] * 5)
    assert difference == 0.75 and 0.5 < low <= 0.75 <= high <= 0.95
    _, low, high = bootstrap_difference([1.0, 0.0] * 5, [0.0, 1.0] * 5)
    assert low < 0 < high
    assert (verdict(0.1, 0.3), verdict(-0.2, 0.1), verdict(-0.3, -0.1)) == (IMPROVES, NO_EFFECT, HURTS)
    with pytest.raises(ValueError, match="paired, non-empty"):
        bootstrap_difference([1.0], [])


# -- the command ------------------------------------------------------------------------------------
@pytest.mark.xdist_group("check-learner")
def test_the_command_prints_a_line_per_check_and_exits_by_the_result(tmp_path):
    from benchmarks.cli_check import check_learner_command

    app = typer.Typer()
    app.command()(check_learner_command)
    runner = CliRunner()
    passed = runner.invoke(app, [NEWCOMER, "--model", "reference", "--json", str(tmp_path / "r.json")])
    assert passed.exit_code == 0, passed.output
    lines = passed.output.splitlines()
    assert lines[0].startswith("check-learner ") and "model reference" in lines[0]
    marks = {line.split()[1].rstrip(":"): line.split()[0] for line in lines[1:-1]}  # as each check is decided
    assert set(marks) == set(CHECKS) and all(re.search(r" \(\d+ s\): ", line) for line in lines[1:-1])
    assert {mark for name, mark in marks.items() if name != "effect"} == {"PASS"}
    assert marks["effect"] == "WARN"  # the reference model passes with and without the learner: no effect to see
    assert f"{len(CHECKS)} of {len(CHECKS)} passed, 1 with a warning" in lines[-1]
    assert json.loads((tmp_path / "r.json").read_text())["passed"] is True
    failed = runner.invoke(app, [f"{BROKEN}:IgnoresLimit", "--model", "reference", "--set", "max_notes=4"])
    assert failed.exit_code == 1 and re.search(r"FAIL limit \(\d+ s\): touched 4 train tasks", failed.output)
    unknown = runner.invoke(app, ["exple"])
    assert unknown.exit_code == 2 and "did you mean expel?" in " ".join(unknown.output.replace("│", " ").split())
