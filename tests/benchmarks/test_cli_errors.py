"""The CLI's two kinds of failure: a typed error (``SebenchError``: bad input, a missing
prerequisite) prints one line and exits 2; anything else is a bug and reaches the user with its
traceback (it used to be turned into "bad parameter" or exit 2 when it was a ValueError)."""

import sys

import pytest

from benchmarks.cli import main
from learners import registry
from learners.base import NoLearner
from sebench.errors import SebenchError, SettingError
from tests.packaging import install


class BuggyLearner(NoLearner):
    name = "buggy"

    def evolve(self, agent, env):
        return {}["a bug inside the learner"]  # KeyError: the kind the CLI used to swallow


class RefusingLearner(NoLearner):
    name = "refusing"

    def evolve(self, agent, env):
        raise SettingError("refusing: max_widgets must be >= 1 (got 0); --set max_widgets=4")


@pytest.fixture
def extra_learners(tmp_path, monkeypatch):
    """The two learners above, registered the way any package registers one: an installed
    distribution's entry points (a ``.dist-info`` on ``sys.path``), seen by the next lookup."""
    install(tmp_path / "site", "extra-learners", {},
            f"[sebench.learners]\nbuggy = {__name__}:BuggyLearner\nrefusing = {__name__}:RefusingLearner\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert {"buggy", "refusing"} <= set(registry.registry())


def _run(monkeypatch, *argv):
    monkeypatch.setattr(sys, "argv", ["sebench", *argv])
    main()


def test_a_bug_inside_a_learner_reaches_the_user_with_its_traceback(task_env, tmp_path, monkeypatch, extra_learners):
    with pytest.raises(KeyError, match="a bug inside the learner") as caught:
        _run(monkeypatch, "evolve", "--zwc", str(task_env.root), "--learner", "buggy", "--model", "reference",
             "--out", str(tmp_path / "run"))
    assert any(entry.name == "evolve" for entry in caught.traceback)  # the learner's own frame is in it
    assert not isinstance(caught.value, SebenchError)


def test_a_typed_error_is_one_line_and_exit_2(task_env, tmp_path, monkeypatch, capsys, extra_learners):
    with pytest.raises(SystemExit) as done:
        _run(monkeypatch, "evolve", "--zwc", str(task_env.root), "--learner", "refusing", "--model", "reference",
             "--out", str(tmp_path / "run"))
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "max_widgets must be >= 1" in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) <= 2  # one line (rich may wrap it once)


def test_an_unknown_setting_is_a_typed_error_naming_the_close_one(task_env, tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit) as done:
        _run(monkeypatch, "evolve", "--zwc", str(task_env.root), "--learner", "expel", "--model", "reference",
             "--set", "max_reflection=2", "--out", str(tmp_path / "run"))
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "no setting 'max_reflection'" in err and "max_reflections" in err and "Traceback" not in err


# -- every argument checked before any work: exit 2, one line naming the option and the fix, nothing written --
BEFORE_ANY_WORK = {
    "eval --limit -1": (["eval", "--model", "reference", "--n", "1", "--limit", "-1"], "file",
                        ["--limit -1", "at least 1"]),
    "eval --limit 0": (["eval", "--model", "reference", "--n", "1", "--limit", "0"], "file",
                       ["--limit 0", "at least 1"]),
    "eval --n 0": (["eval", "--model", "reference", "--n", "0"], "file", ["--n 0", "at least 1"]),
    "eval --split": (["eval", "--model", "reference", "--split", "tests"], "file",
                     ["--split 'tests'", "single_test"]),
    "eval unknown --model": (["eval", "--model", "no-such-model", "--n", "1", "--limit", "1"], "file",
                             ["--model 'no-such-model'", "unknown model", "smollm2-135m"]),
    "compare --limit -1": (["compare", "--model", "reference", "--learners", "none", "--limit", "-1"], "dir",
                           ["--limit -1", "at least 1"]),
    "compare unknown learner": (["compare", "--model", "reference", "--learners", "expel,nope", "--limit", "1"], "dir",
                                ["--learners", "unknown learner 'nope'"]),
    "compare unknown --set": (["compare", "--model", "reference", "--learners", "expel", "--limit", "1", "--set",
                               "expel.max_reflection=2"], "dir", ["no setting 'max_reflection'", "max_reflections"]),
    "compare --set text for int": (["compare", "--model", "reference", "--learners", "expel", "--limit", "1",
                                    "--set", "retrieve_k=abc"], "dir", ["retrieve_k", "takes int", "--set retrieve_k=4"]),
    "evolve --set text for int": (["evolve", "--model", "reference", "--learner", "expel", "--set", "retrieve_k=abc"],
                                  "dir", ["retrieve_k", "takes int", "--set retrieve_k=4"]),
    "evolve --set without =": (["evolve", "--model", "reference", "--learner", "expel", "--set", "retrieve_k"], "dir",
                               ["--set 'retrieve_k'", "KEY=VALUE"]),
    "evolve unknown --model": (["evolve", "--model", "no-such-model", "--learner", "none"], "dir",
                               ["--model 'no-such-model'", "unknown model"]),
    "evolve --limit -1": (["evolve", "--model", "reference", "--learner", "none", "--limit", "-1"], "dir",
                          ["--limit -1", "at least 1"]),
    "evolve closed-rl --limit 1": (["evolve", "--model", "smollm2-135m", "--learner", "closed-rl", "--limit", "1"],
                                   "dir", ["limit=1", "rollout batch needs 2", "--limit 2"]),
    "rl-compare unknown preset": (["rl-compare", "--model", "smollm2-135m", "--learners", "closed-rl@nope"], "dir",
                                  ["--learners", "closed-rl@nope"]),
    "selfplay-compare --set text": (["selfplay-compare", "--model", "smollm2-135m", "--learners", "closed-sft-self",
                                     "--set", "proposals=many"], "dir", ["proposals", "takes int"]),
}


@pytest.mark.parametrize("case", sorted(BEFORE_ANY_WORK))
def test_a_wrong_argument_ends_before_any_work_in_one_line(case, task_env, tmp_path, monkeypatch, capsys):
    argv, kind, says = BEFORE_ANY_WORK[case]
    out = tmp_path / ("results.jsonl" if kind == "file" else "run")
    with pytest.raises(SystemExit) as done:
        _run(monkeypatch, *argv, "--zwc", str(task_env.root), "--out", str(out))
    assert done.value.code == 2
    err = " ".join(capsys.readouterr().err.split())  # rich wraps long lines
    assert "Traceback" not in err and err.startswith("error:"), err
    assert all(text in err for text in says), err
    assert not out.exists() and list(tmp_path.iterdir()) == []  # no file or directory written


BUILD_COMMANDS = {  # the build commands' own checks: the same one-line error, before anything is written
    "zwc build without a seed": (["zwc", "build", "--out", "{out}"], ["exactly one of --seed N or --official"]),
    "zwc build with both": (["zwc", "build", "--seed", "1", "--official", "v1", "--out", "{out}"],
                            ["exactly one of --seed N or --official"]),
    "tasks build --per-function 0": (["tasks", "build", "--zwc", "{out}", "--per-function", "0"],
                                     ["--per-function", "at least 1"]),
    "tasks build --multi -1": (["tasks", "build", "--zwc", "{out}", "--multi", "-1"], ["--multi", ">= 0"]),
}


@pytest.mark.parametrize("case", sorted(BUILD_COMMANDS))
def test_a_wrong_build_argument_ends_in_one_line(case, tmp_path, monkeypatch, capsys):
    argv, says = BUILD_COMMANDS[case]
    out = tmp_path / "zwc"
    with pytest.raises(SystemExit) as done:
        _run(monkeypatch, *[a.format(out=out) for a in argv])
    assert done.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "Traceback" not in err and err.startswith("error:") and all(text in err for text in says), err
    assert list(tmp_path.iterdir()) == []
