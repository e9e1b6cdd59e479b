"""ExpeL (and, for the shared part, ACE) over any memory backend: chosen by name or passed as an object, opened once however many
episodes ask at once, saved through the store's own persistence and reopened by ``load``."""

from __future__ import annotations

import threading

import pytest

from learners import AceLearner, ExpelLearner
from learners.expel import TaskRecord
from memory import ChromaStore, InMemoryStore
from sebench.errors import SettingError


def solved(learner: ExpelLearner, n: int = 3) -> None:
    for i in range(n):
        learner.records[f"t{i}"] = TaskRecord(f"t{i}", f"compute the mean of list number {i}",
                                              success=f"def f(x):\n    return {i}\n")
    learner._remember_successes()


@pytest.mark.parametrize("learner_class", [ExpelLearner, AceLearner])
def test_many_threads_asking_for_the_store_of_a_fresh_learner_get_one_store(tmp_path, learner_class):
    learner = learner_class(store="chroma", store_path=str(tmp_path / "chroma"))
    barrier, seen = threading.Barrier(16), []

    def ask():
        barrier.wait()
        seen.append(learner.store)

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 16 and all(store is seen[0] for store in seen) and isinstance(seen[0], ChromaStore)
    learner.close()


def test_a_named_store_is_reopened_where_it_was_saved_in_a_new_learner(tmp_path):
    learner = ExpelLearner(store="chroma", store_path=str(tmp_path / "chroma"), state_dir=str(tmp_path / "state"))
    solved(learner)
    learner.save(tmp_path / "state")
    learner.close()
    again = ExpelLearner(state_dir=str(tmp_path / "state"))  # the default backend until load says otherwise
    again.load(tmp_path / "state")
    assert again.config.store == "chroma" and isinstance(again.store, ChromaStore) and len(again.store) == 3
    assert [h.metadata["task_id"] for h in again.store.search("the mean of list number 2", k=1)] == ["t2"]
    again.close()


def test_a_store_that_keeps_nothing_is_refilled_from_the_saved_records(tmp_path):
    learner = ExpelLearner(store="inmemory")
    solved(learner)
    learner.save(tmp_path / "state")
    again = ExpelLearner()
    again.load(tmp_path / "state")
    assert again.config.store == "inmemory" and len(again.store) == 3


def test_a_store_object_is_kept_and_persisted_not_replaced(tmp_path):
    store = InMemoryStore(path=tmp_path / "mine")
    learner = ExpelLearner(store=store)
    solved(learner)
    learner.save(tmp_path / "state")
    learner.load(tmp_path / "state")
    assert learner.store is store and (tmp_path / "state" / "trajectories.json").is_file()


def test_an_unknown_backend_is_a_setting_error_naming_the_installed_ones():
    with pytest.raises(SettingError, match=r"store='sqlite' is no registered memory backend; installed: chroma"):
        ExpelLearner(store="sqlite")


def test_a_copied_state_directory_opens_its_own_copy_of_the_store(tmp_path):
    import shutil

    learner = ExpelLearner(store="chroma", state_dir=str(tmp_path / "a"))  # the store inside the state directory
    solved(learner)
    learner.save(tmp_path / "a")
    learner.close()
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    shutil.rmtree(tmp_path / "a")  # the original is gone: the copy must not need it, nor bring it back
    copy = ExpelLearner()
    copy.load(tmp_path / "b")
    assert len(copy.store) == 3 and not (tmp_path / "a").exists()
    copy.close()
