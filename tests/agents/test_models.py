"""Backend conformance: every backend we ship passes ``agents.models.conformance.check_model``. The
transformers backend runs for real on a tiny random-initialised SmolLM2 (the checks are of
mechanics: shapes, counts, stop strings, greedy and batch invariance, never of skill), and the
OpenAI-compatible client is tested against ``sebench serve`` on loopback; a backend that returns
the wrong count fails exactly the shapes check."""

import pytest

from agents.models import ModelError, UnknownModelError, load_model
from agents.models.conformance import CHECKS, COUNTING, check_model
from agents.models.openai_model import OpenAIModel
from agents.models.serve import serve_in_thread
from tests.agents.fixed_answer import FixedAnswerModel, talking_tiny_directory


@pytest.fixture(scope="module")
def talker(tmp_path_factory):
    """A tiny model whose greedy answers are text, not one repeated newline (see talking_tiny_directory)."""
    return load_model(str(talking_tiny_directory(tmp_path_factory.mktemp("models"))))


@pytest.fixture(scope="module")
def served(talker):
    server, url = serve_in_thread(talker)
    client = OpenAIModel(url, talker.name, retries=1)
    yield client
    client.close()
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("kind", ["transformers", "openai"])
def test_backend_passes_every_check(kind, talker, served):
    report = check_model(talker if kind == "transformers" else served)
    assert [c.name for c in report.checks] == list(CHECKS)
    assert report.passed, "\n".join(report.lines())
    assert report.details["prompt_tokens"] > 10  # both backends know the prompt's length
    assert report.details["stop"]["text"]  # the stop string fell inside the answer, not at its start


class IgnoresN:
    """A plausible bug: one completion per prompt whatever n asks."""

    name = "ignores-n"

    def __init__(self, inner):
        self.inner = inner

    def generate(self, prompts, *, n=1, temperature=0.0, max_tokens=512, stop=None):
        return [per[:1] for per in self.inner.generate(prompts, n=n, temperature=temperature, max_tokens=max_tokens,
                                                        stop=stop)]


def test_a_model_that_ignores_n_fails_exactly_the_shapes_check(talker):
    report = check_model(IgnoresN(talker))
    assert report.failed() == ["shapes"], "\n".join(report.lines())
    assert "returned [1, 1] completions per prompt" in report.check("shapes").why


def test_a_backend_that_ignores_max_tokens_and_stop_fails_those_checks():
    # a deterministic pure-Python backend: the report attributes each fault to its own check
    report = check_model(FixedAnswerModel("total = first + second\n"), sampling=False)
    assert report.failed() == ["max-tokens", "finish-reason", "stop"], "\n".join(report.lines())
    assert report.check("sampling").why.startswith("skipped")


def test_registry_names():
    with pytest.raises(UnknownModelError, match="unknown model"):
        load_model("no-such-model")
    with pytest.raises(UnknownModelError, match="openai:<base_url>#<model>"):
        load_model("openai:http://x")


def test_client_gives_up_with_a_typed_error():
    client = OpenAIModel("http://127.0.0.1:9/v1", "m", retries=1, timeout=2)
    with pytest.raises(ModelError, match="no answer after 2 attempts"):
        client.generate([COUNTING], max_tokens=4)
