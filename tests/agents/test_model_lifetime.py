"""Models with a lifetime: whatever loads a model can let it go. ``Agent.close()`` ends its
batcher's thread and gives a model it loaded by name back to the registry, which drops it when
its last user is done; a weak reference proves the model is gone."""

import gc
import threading
import weakref

import pytest

from agents import Agent
from agents.batching import DynamicBatcher
from agents.models import ModelRegistry, load_model

PROMPT = [{"role": "user", "content": "hi"}]


def _batcher_threads() -> int:
    return sum(t.name == "dynamic-batcher" and t.is_alive() for t in threading.enumerate())


def test_a_closed_agent_keeps_nothing_of_its_model_alive(tiny_dir):
    before = _batcher_threads()
    agent = Agent(model=str(tiny_dir), max_tokens=4)
    [[answer]] = agent._generator().generate([PROMPT], max_tokens=4)
    assert answer.tokens >= 1 and _batcher_threads() == before + 1
    gone = weakref.ref(agent.model)
    agent.close()
    gc.collect()
    assert gone() is None, "the model outlived Agent.close()"
    assert _batcher_threads() == before
    [[again]] = agent._generator().generate([PROMPT], max_tokens=4)  # usable after close: loads again
    assert again.tokens >= 1
    agent.close()


def test_with_agent_closes_it(tiny_dir):
    with Agent(model=str(tiny_dir), max_tokens=4) as agent:
        agent._generator().generate([PROMPT], max_tokens=4)
        gone = weakref.ref(agent.model)
    gc.collect()
    assert gone() is None


def test_the_registry_drops_a_named_model_when_its_last_user_releases_it(tiny_dir):
    registry = ModelRegistry()
    registry.register("tiny", lambda **kw: load_model(str(tiny_dir), **kw))
    first, second = registry.load("tiny"), registry.load("tiny")
    assert first is second and registry.cached() == [("tiny", first.dtype)]
    gone = weakref.ref(first)
    assert registry.release(first) is False  # a second user still holds it
    assert registry.cached()
    assert registry.release(second) is True and registry.cached() == []
    del first, second
    gc.collect()
    assert gone() is None
    assert registry.release(load_model(str(tiny_dir))) is False  # not cached: not the registry's to drop


def test_a_closed_batcher_finishes_its_queue_and_refuses_new_work(tiny):
    batcher = DynamicBatcher(tiny, max_batch=4)
    results = []
    workers = [threading.Thread(target=lambda: results.append(batcher.generate([PROMPT], max_tokens=3)))
               for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    batcher.close()
    assert len(results) == 3 and batcher.model is None
    with pytest.raises(RuntimeError, match="closed"):
        batcher.generate([PROMPT], max_tokens=3)
    batcher.close()  # twice is harmless
