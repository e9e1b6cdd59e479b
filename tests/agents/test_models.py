"""Backend conformance: every backend honours the same contract. The embedded model runs for
real, and the OpenAI-compatible client is tested against ``sebench serve`` on loopback."""

import pytest

from agents.models import Completion, ModelError, UnknownModelError, load_model
from agents.models.openai_model import OpenAIModel
from agents.models.serve import serve_in_thread

pytestmark = pytest.mark.xdist_group("smollm2")  # one worker loads the model
PROMPT = [{"role": "user", "content": "Count from one to five in words, separated by commas."}]
OTHER = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour."}]


@pytest.fixture(scope="module")
def served(smollm2):
    server, url = serve_in_thread(smollm2)
    client = OpenAIModel(url, "smollm2-135m", retries=1)
    yield client
    client.close()
    server.shutdown()
    server.server_close()


@pytest.fixture(params=["transformers", "openai"])
def backend(request, smollm2, served):
    return smollm2 if request.param == "transformers" else served


def test_shapes_tokens_and_greedy_determinism(backend):
    out = backend.generate([PROMPT, OTHER], n=2, temperature=0.0, max_tokens=24)
    assert len(out) == 2 and all(len(per) == 2 for per in out)
    assert all(isinstance(c, Completion) and 0 < c.tokens <= 24 and c.text for per in out for c in per)
    again = backend.generate([PROMPT], n=1, temperature=0.0, max_tokens=24)
    assert again[0][0].text == out[0][0].text  # greedy is deterministic, batched or not


def test_stop_strings_are_honoured(backend):
    [[c]] = backend.generate([PROMPT], max_tokens=24, stop=[","])
    assert "," not in c.text and c.text.strip()


def test_finish_reason_and_prompt_tokens(backend):
    [[cut]] = backend.generate([PROMPT], max_tokens=3)
    assert cut.finish_reason == "length" and cut.tokens == 3 and cut.prompt_tokens > 10
    [[full]] = backend.generate([PROMPT], max_tokens=24)
    stop = full.text[6:9]  # a string the greedy answer is known to contain
    [[stopped]] = backend.generate([PROMPT], max_tokens=24, stop=[stop])
    assert stopped.finish_reason == "stop" and stopped.text == full.text[:full.text.find(stop)]
    assert stopped.prompt_tokens == cut.prompt_tokens


def test_sampling_varies(backend):
    [samples] = backend.generate([OTHER], n=4, temperature=1.5, max_tokens=12)
    assert len({s.text for s in samples}) > 1


def test_bad_arguments_are_refused(backend):
    with pytest.raises(ValueError):
        backend.generate([PROMPT], n=0)
    with pytest.raises((ValueError, TypeError)):
        backend.generate([[{"content": "no role"}]])


def test_registry_names():
    with pytest.raises(UnknownModelError, match="unknown model"):
        load_model("no-such-model")
    with pytest.raises(UnknownModelError, match="openai:<base_url>#<model>"):
        load_model("openai:http://x")


def test_client_gives_up_with_a_typed_error():
    client = OpenAIModel("http://127.0.0.1:9/v1", "m", retries=1, timeout=2)
    with pytest.raises(ModelError, match="no answer after 2 attempts"):
        client.generate([PROMPT], max_tokens=4)
