"""ACE's playbook in a memory store: the de-duplication asks the store for a new bullet's
neighbours, ``retrieve_k`` shows the bullets nearest the task, and save/load go through the
store's own persistence (any registered backend, or an object).

The curator is a ScriptedModel answering ACE's delta format; the store's embedder is the real
MiniLM, whose cosines decide the merges (0.995 for the two LOOP wordings, about 0.5 otherwise)."""

from __future__ import annotations

import pytest

from agents import Agent
from learners import AceLearner
from learners.playbook import Bullet, Delta
from memory import ChromaStore, InMemoryStore
from sebench.errors import SettingError
from tests.agents.fixed_answer import ScriptedModel

REFLECTOR, CURATOR = "You are the Reflector.", "You are the Curator"
LOOP = "Call the zwc function once on the whole list instead of looping."
LOOP_AGAIN = "Call the zwc function once on the whole list instead of using a loop."  # cosine 0.995 to LOOP
PLAIN = "Return plain Python numbers rather than zwc arrays."


def learn_online(learner: AceLearner, task_env, curations: list[str]) -> ScriptedModel:
    """One online update per curation, each on its own test task (the reference answers pass)."""
    model = ScriptedModel({REFLECTOR: ["It passed."], CURATOR: curations})
    learner.bind(model)
    agent = Agent(model="reference", learner=learner)
    for task in task_env.tasks("single_test")[:len(curations)]:
        assert agent.run_episode(task_env, task, phase="test", mode="closed").passed
    return model


def test_a_reworded_bullet_merges_through_the_store_and_the_store_holds_the_playbook(task_env, tmp_path):
    learner = AceLearner(online=True, max_tokens=64, store="chroma", store_path=str(tmp_path / "chroma"))
    learn_online(learner, task_env, [f"ADD [strategies]: {LOOP}",
                                     f"ADD [strategies]: {LOOP_AGAIN}\nADD [formatting]: {PLAIN}"])
    assert learner.playbook.bullets == [Bullet("str-00001", "strategies", LOOP), Bullet("for-00003", "formatting", PLAIN)]
    store = learner.store
    assert isinstance(store, ChromaStore) and len(store) == 2 and store.get("str-00002") is None
    assert store.get("for-00003").text == PLAIN and store.get("str-00001").metadata["section"] == "strategies"
    learner.close()


def test_retrieve_k_shows_the_bullets_nearest_the_task(task_env):
    task = task_env.tasks("single_test")[0]
    learner = AceLearner(retrieve_k=1, store="inmemory")
    learner.playbook.apply([Delta("ADD", "strategies", LOOP), Delta("ADD", "tasks", f"For this: {task.query[:200]}"),
                            Delta("ADD", "formatting", PLAIN)])
    obs = task_env.observe(task, phase="test", mode="closed")
    context = learner.context(obs)
    assert "[tas-00002]" in context and LOOP not in context and PLAIN not in context
    everything = AceLearner(store="inmemory")
    everything.playbook_state = learner.playbook
    assert LOOP in everything.context(obs) and PLAIN in everything.context(obs)  # retrieve_k=0: the paper's


def test_a_named_store_is_reopened_where_it_was_saved_without_embedding_again(task_env, tmp_path):
    learner = AceLearner(online=True, max_tokens=64, store="chroma", store_path=str(tmp_path / "chroma"))
    learn_online(learner, task_env, [f"ADD [strategies]: {LOOP}\nADD [formatting]: {PLAIN}"])
    learner.save(tmp_path / "state")
    learner.close()
    again = AceLearner()  # the default backend until load says otherwise
    writes = []
    original = ChromaStore.add
    ChromaStore.add = lambda self, *a, **k: writes.append(a) or original(self, *a, **k)
    try:
        again.load(tmp_path / "state")
    finally:
        ChromaStore.add = original
    assert again.config.store == "chroma" and isinstance(again.store, ChromaStore) and len(again.store) == 2
    assert writes == [] and again.playbook == learner.playbook  # what the store kept is used as it is
    assert again.store.search("rather than zwc arrays", k=1)[0].id == "for-00002"
    again.close()


def test_a_store_that_keeps_nothing_is_refilled_from_the_saved_playbook(task_env, tmp_path):
    learner = AceLearner(online=True, max_tokens=64, store="inmemory")
    learn_online(learner, task_env, [f"ADD [strategies]: {LOOP}\nADD [formatting]: {PLAIN}"])
    learner.save(tmp_path / "state")
    again = AceLearner()
    again.load(tmp_path / "state")
    assert again.config.store == "inmemory" and len(again.store) == 2 and again.playbook == learner.playbook


def test_a_store_object_is_kept_persisted_and_never_closed(task_env, tmp_path):
    store = InMemoryStore(path=tmp_path / "mine")
    learner = AceLearner(online=True, max_tokens=64, store=store)
    learn_online(learner, task_env, [f"ADD [strategies]: {LOOP}"])
    learner.save(tmp_path / "state")
    learner.load(tmp_path / "state")
    learner.close()
    assert learner.store is store and len(store) == 1


def test_bad_store_settings_are_setting_errors():
    with pytest.raises(SettingError, match=r"AceConfig store='sqlite' is no registered memory backend"):
        AceLearner(store="sqlite")
    with pytest.raises(SettingError, match="retrieve_k"):
        AceLearner(retrieve_k=-1)


def test_a_copied_state_opens_its_own_store_and_drops_bullets_its_playbook_lacks(task_env, tmp_path):
    learner = AceLearner(online=True, max_tokens=64, store="inmemory-file")
    learn_online(learner, task_env, [f"ADD [strategies]: {LOOP}\nADD [formatting]: {PLAIN}"])
    learner.save(tmp_path / "a")
    import shutil

    shutil.copytree(tmp_path / "a", tmp_path / "b")
    copy = AceLearner()
    copy.load(tmp_path / "b")
    copy.store.add(["A bullet a killed run wrote after its last save."], [{"learner": "ace", "section": "x"}],
                   ids=["xxx-00009"])
    copy.store.persist()
    copy.playbook.apply([Delta("REMOVE", "for-00002")])
    with copy._lock:
        copy._refine()
    copy.save(tmp_path / "b")
    original = AceLearner()
    original.load(tmp_path / "a")
    assert len(original.store) == 2 and original.store.get("for-00002") is not None  # the copy never touched it
    again = AceLearner()
    again.load(tmp_path / "b")
    assert len(again.store) == 1 and again.store.get("xxx-00009") is None and again.store.get("for-00002") is None
