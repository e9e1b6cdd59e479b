"""The learner contract: registration by entry point, one config base with help, ``limit`` for
every learner, state files that are atomic and name-checked, and episodes that leave the env alone."""

import json
import subprocess
import sys
from dataclasses import fields

import pytest

from agents import Agent
from agents.learner import LearnerConfig, ParametricConfig, config_help, set_limit
from learners import make
from learners.base import LearnerStateError, load_state, save_state
from learners.registry import config_class, registry

OURS = {"none", "expel", "ace", "open-sft", "closed-sft", "open-rl", "closed-rl", "closed-sft-rl"}
PARAMETRIC = {"open-sft", "closed-sft", "open-rl", "closed-rl", "closed-sft-rl"}


def test_every_learner_of_ours_is_registered_by_entry_point_and_says_if_it_trains_weights():
    assert OURS <= set(registry())
    for name in OURS:
        factory = registry()[name]
        learner = make(name)
        assert learner.name == name
        assert learner.parametric is (name in PARAMETRIC) and factory.parametric is learner.parametric
        config = config_class(factory)
        assert config is not None and issubclass(config, ParametricConfig if name in PARAMETRIC else LearnerConfig)
        assert all(row.help for row in config_help(config)), f"{name}: a setting without help"
    with pytest.raises(KeyError, match=r"unknown learner 'expel-typo'; known: (.*, )?ace, .*none.*; did you mean expel\?"):
        make("expel-typo")


def test_a_third_party_package_registers_a_learner_without_editing_this_one(tmp_path, monkeypatch):
    """An installed distribution's entry point is all it takes: here one written by hand on sys.path."""
    (tmp_path / "my_learner_pkg.py").write_text(
        "from dataclasses import dataclass\n"
        "from agents.learner import EvolveReport, LearnerConfig, setting\n"
        "@dataclass\nclass NotesConfig(LearnerConfig):\n    note: str = setting('hi', 'The note it adds.')\n"
        "class Notes:\n    name = 'notes'\n    parametric = False\n    config_class = NotesConfig\n"
        "    def __init__(self, **config): self.config = NotesConfig(**config)\n"
        "    def context(self, obs): return self.config.note\n"
        "    def observe(self, trajectory): return None\n"
        "    def evolve(self, agent, env): return EvolveReport(learner=self.name)\n"
        "    def save(self, path): pass\n    def load(self, path): pass\n")
    info = tmp_path / "my_learner_pkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-learner-pkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[sebench.learners]\nnotes = my_learner_pkg:Notes\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # the registry caches nothing: the next lookup sees it
    try:
        assert "notes" in registry() and OURS <= set(registry())
        learner = make("notes", note="use zwc", limit=3)
        assert learner.context(None) == "use zwc" and learner.config.limit == 3
        assert [row.name for row in config_help(config_class(registry()["notes"]))][-1] == "note"
    finally:
        monkeypatch.undo()
    assert "notes" not in registry()


@pytest.mark.parametrize("name", sorted(OURS))
def test_agent_evolve_limit_reaches_the_setting_every_learner_reads(name):
    learner = make(name)
    set_limit(learner, 3)  # what Agent.evolve(env, limit=3) does before learner.evolve
    if name == "closed-sft-rl":
        assert learner.sft.config.limit == learner.rl.config.limit == 3
    else:
        assert learner.config.limit == 3
    with pytest.raises(ValueError, match="limit must be an integer >= 1"):
        set_limit(learner, 0)


def test_a_learner_without_a_limit_is_told_how_to_get_one(official_env):
    class Bare:
        name = "bare"

        def evolve(self, agent, env):
            raise AssertionError("evolve must not start with a limit it cannot honour")

    with pytest.raises(TypeError, match="extending agents.learner.LearnerConfig"):
        Agent(model="reference", learner=Bare()).evolve(official_env, limit=2)


def test_config_fields_are_shared_not_redeclared():
    """limit, gather_model and state_dir mean one thing everywhere (a subclass may change a default)."""
    from learners.ace import AceConfig
    from learners.expel import ExpelConfig
    from learners.rl import RLLearnerConfig
    from learners.sft import SFTLearnerConfig

    for config in (ExpelConfig, AceConfig, SFTLearnerConfig, RLLearnerConfig):
        names = [f.name for f in fields(config)]
        assert names[:3] == ["limit", "gather_model", "state_dir"], config
    assert SFTLearnerConfig().limit == 48 and SFTLearnerConfig().gather_model is None  # its own rollouts
    with pytest.raises(ValueError, match="limit must be an integer >= 1"):
        make("expel", limit=0)
    with pytest.raises(ValueError, match="RL rolls out with the policy it trains"):
        make("closed-rl", gather_model="reference")


def test_state_files_are_atomic_and_name_checked(tmp_path):
    path = save_state(tmp_path / "s", "expel", {"rules": [1]}, "expel.json")
    assert json.loads(path.read_text()) == {"rules": [1], "learner": "expel"}
    assert not list((tmp_path / "s").glob("*.tmp"))
    assert load_state(tmp_path / "s", "expel", "expel.json")["rules"] == [1]
    with pytest.raises(LearnerStateError, match="holds a 'expel' learner, not 'ace'"):
        load_state(tmp_path / "s", "ace", "expel.json")
    with pytest.raises(LearnerStateError, match="no saved 'ace' learner here; evolve one"):
        load_state(tmp_path / "empty", "ace", "ace.json")
    path.write_text('{"rules": [')  # cut short
    with pytest.raises(LearnerStateError, match="not a learner state"):
        load_state(tmp_path / "s", "expel", "expel.json")
    make("none").save(tmp_path / "n")
    with pytest.raises(LearnerStateError, match="holds a 'none' learner, not 'closed-sft'"):
        make("closed-sft").load(tmp_path / "n")


KILLED_SAVE = """
import os, signal, sys
from learners.base import save_state

path, when = sys.argv[1], sys.argv[2]
real = os.replace, os.fsync
def kill(*args):
    os.kill(os.getpid(), signal.SIGKILL)
if when == "rename":
    os.replace = kill  # the new state is written in full, the rename never happens
else:
    os.fsync = kill  # the new state is written (maybe not yet on disk), nothing renamed
save_state(path, "expel", {"rules": ["new"] * 10_000}, "expel.json")
"""


@pytest.mark.parametrize("when", ["rename", "fsync"])
def test_a_save_killed_midway_leaves_the_previous_state(tmp_path, when):
    save_state(tmp_path, "expel", {"rules": ["old"]}, "expel.json")
    killed = subprocess.run([sys.executable, "-c", KILLED_SAVE, str(tmp_path), when], capture_output=True)
    assert killed.returncode == -9, killed.stderr.decode()[-500:]
    assert (tmp_path / "expel.json.tmp").exists()  # the killed save's leftovers
    assert load_state(tmp_path, "expel", "expel.json")["rules"] == ["old"]
    save_state(tmp_path, "expel", {"rules": ["next"]}, "expel.json")  # the next save replaces them
    assert load_state(tmp_path, "expel", "expel.json")["rules"] == ["next"]
    assert not (tmp_path / "expel.json.tmp").exists()


def test_episodes_take_their_doc_budget_and_phase_without_changing_the_env(task_env):
    task = task_env.tasks("single_test")[0]
    before = (task_env.docs_chars, task_env.phase)
    short = task_env.observe(task, phase="train", mode="open", docs_chars=120)
    whole = task_env.observe(task, phase="train", mode="open")
    assert len(short.docs) < len(whole.docs) and "[…]" in short.docs
    assert (task_env.docs_chars, task_env.phase) == before
    from envs.zwc.errors import ProtocolError

    with pytest.raises(ProtocolError):
        task_env.search("mean", phase="test")
    assert task_env.search("mean", k=2, phase="train")


def test_learners_command_lists_learners_and_each_ones_settings():
    def sebench(*args):
        done = subprocess.run([sys.executable, "-m", "benchmarks.cli", *args], capture_output=True, text=True,
                              timeout=120, env={**__import__("os").environ, "COLUMNS": "200"})
        return done.returncode, done.stdout + done.stderr

    code, text = sebench("learners")
    assert code == 0 and all(name in text for name in OURS) and "learners.rl:ClosedRLLearner" in text
    code, text = sebench("learners", "closed-rl")
    assert code == 0 and "preset" in text and "num_generations" in text and "Completions per task" in text
    code, text = sebench("evolve", "--learner", "expel", "--help")
    assert code == 0 and "--zwc" in text and "max_reflections" in text and "Reflections per task" in text
    code, text = sebench("learners", "nope")
    assert code == 2 and "unknown learner 'nope'" in text
