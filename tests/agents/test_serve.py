"""``sebench serve`` as the official ``openai`` client sees it, on loopback, with a tiny
random-initialised SmolLM2 (the real architecture, tokenizer and context length; its answers are
noise, and every check here is of the protocol, never of the words): finish reasons, usage,
streaming, OpenAI-shaped errors, continuous batching (a short answer is not held for a long
one), cancellation when the client goes away, and the ``openai:`` backend of ``sebench eval``
against it."""

import json
import threading
import time

import httpx
import openai
import pytest
from typer.testing import CliRunner

from agents.models import load_model
from agents.models.serve import serve_in_thread
from benchmarks.cli import app
from tests.agents.fixed_answer import talking_tiny_directory

NAME = "smollm2-135m"  # the name it is served under (and "smollm2", an alias)
COUNT = [{"role": "user", "content": "Count from one to five in words, separated by commas."}]
STORY = [{"role": "user", "content": "Write a long story about a dragon who learns to bake bread."}]


@pytest.fixture(scope="module")
def talker(tmp_path_factory):
    """A tiny model whose greedy answers are text, not one repeated newline (see talking_tiny_directory)."""
    return load_model(str(talking_tiny_directory(tmp_path_factory.mktemp("serve"))))


@pytest.fixture(scope="module")
def server(talker):
    server, url = serve_in_thread(talker, served_names=[NAME, "smollm2"])
    server.url = url
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=120)


def idle(server, timeout=30.0):
    """Wait until the engine has nothing in flight (so greedy answers see the same batch)."""
    engine = server.service.engine
    deadline = time.monotonic() + timeout
    while (engine._rows or engine._waiting) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not engine._rows and not engine._waiting, "the engine is still busy"


def test_a_cut_answer_says_length_and_usage_is_complete(server, client, talker):
    cut = client.chat.completions.create(model=NAME, messages=STORY, max_tokens=5, temperature=0)
    assert cut.choices[0].finish_reason == "length"
    usage = cut.usage
    prompt = talker.tokenizer.apply_chat_template(STORY, add_generation_prompt=True, tokenize=False)
    assert usage.completion_tokens == 5 and usage.prompt_tokens == len(talker.tokenizer(prompt)["input_ids"])
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    newer = client.chat.completions.create(model=NAME, messages=STORY, max_completion_tokens=3, max_tokens=50,
                                           temperature=0)  # the newer field wins, as in OpenAI's API
    assert newer.choices[0].finish_reason == "length" and newer.usage.completion_tokens == 3
    idle(server)
    whole = client.chat.completions.create(model=NAME, messages=COUNT, max_tokens=40, temperature=0).choices[0]
    text = whole.message.content
    stop = next(text[i:i + 3] for i in range(8, len(text) - 3) if text[i:i + 3].strip())  # inside the answer
    idle(server)
    stopped = client.chat.completions.create(model=NAME, messages=COUNT, max_tokens=40, temperature=0, stop=[stop])
    assert whole.finish_reason == "length" and stopped.choices[0].finish_reason == "stop"
    assert stopped.choices[0].message.content == text[:text.index(stop)], (text, stop)  # cut just before it


def test_streamed_chunks_make_the_same_answer(server, client):
    idle(server)
    whole = client.chat.completions.create(model=NAME, messages=COUNT, max_tokens=30, temperature=0)
    idle(server)
    chunks = list(client.chat.completions.create(model=NAME, messages=COUNT, max_tokens=30, temperature=0,
                                                 stream=True, stream_options={"include_usage": True}))
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert len([p for p in pieces if p]) > 3  # token by token, not one block at the end
    assert "".join(pieces) == whole.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == whole.choices[0].finish_reason
    assert chunks[-1].choices == [] and chunks[-1].usage.model_dump() == whole.usage.model_dump()
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)


def test_errors_are_openai_shaped(server, client):
    with pytest.raises(openai.NotFoundError) as unknown:
        client.chat.completions.create(model="gpt-4o", messages=COUNT, max_tokens=2)
    assert unknown.value.body["code"] == "model_not_found" and unknown.value.body["param"] == "model"
    alias = client.chat.completions.create(model="smollm2", messages=COUNT, max_tokens=2)  # a served alias
    assert alias.model == "smollm2"
    with pytest.raises(openai.BadRequestError) as too_long:
        client.chat.completions.create(model=NAME, messages=[{"role": "user", "content": "word " * 9000}],
                                       max_tokens=2)
    assert too_long.value.body["code"] == "context_length_exceeded" and "8192" in too_long.value.body["message"]
    with pytest.raises(openai.BadRequestError) as budget:
        client.chat.completions.create(model=NAME, messages=COUNT, max_tokens=9000)
    assert budget.value.body["param"] == "max_tokens"
    for bad, param in ((dict(temperature=5), "temperature"), (dict(n=0), "n"), (dict(top_p=0.5), "top_p"),
                       (dict(max_completion_tokens=0), "max_completion_tokens")):
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model=NAME, messages=COUNT, **bad)
        assert refused.value.body["param"] == param and refused.value.body["type"] == "invalid_request_error"
    raw = httpx.post(f"{server.url}/chat/completions", content=b"{not json", timeout=10)
    assert raw.status_code == 400 and set(raw.json()["error"]) == {"message", "type", "param", "code"}
    assert httpx.get(f"{server.url}/nowhere", timeout=10).status_code == 404
    assert [m.id for m in client.models.list()] == [NAME, "smollm2"]


def test_a_short_answer_is_not_held_for_a_long_one(server, client):
    long_tokens = 256  # the tiny model decodes fast: a long answer long enough to be under way for a while
    idle(server)
    arrivals: list[float] = []
    reasons: list[str | None] = []
    started = threading.Event()

    def long_request():
        for chunk in client.chat.completions.create(model=NAME, messages=STORY, max_tokens=long_tokens,
                                                    temperature=0, stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                arrivals.append(time.monotonic())
                started.set()
            if chunk.choices and chunk.choices[0].finish_reason:
                reasons.append(chunk.choices[0].finish_reason)

    reader = threading.Thread(target=long_request)
    reader.start()
    assert started.wait(60)
    short = client.chat.completions.create(model=NAME, messages=COUNT, max_tokens=2, temperature=0)
    short_done = time.monotonic()
    reader.join(120)
    assert short.choices[0].finish_reason == "length" and reasons == ["length"]
    # the short answer came back while the long one was under way, which went on for most of its length
    # (a server that batches whole answers sends the long one at its end: nothing would arrive after)
    later = sum(t > short_done for t in arrivals)
    assert later >= long_tokens // 2, (len(arrivals), later)


def test_work_for_a_client_that_left_is_cancelled(server):
    idle(server)
    engine = server.service.engine
    before = engine.finished["cancelled"]
    body = {"model": NAME, "messages": STORY, "max_tokens": 2000, "temperature": 0, "stream": True}
    with httpx.stream("POST", f"{server.url}/chat/completions", json=body, timeout=60) as response:
        lines = response.iter_lines()
        while not next(lines).startswith('data: {"id"'):
            pass
        next(lines)
    # the stream's connection is closed here, mid-answer
    with pytest.raises(httpx.ReadTimeout):  # a non-streamed request whose client gives up waiting
        httpx.post(f"{server.url}/chat/completions", json={**body, "stream": False}, timeout=1.0)
    deadline = time.monotonic() + 20
    while engine.finished["cancelled"] < before + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert engine.finished["cancelled"] == before + 2
    idle(server, timeout=5)


def test_sampling_with_n_and_seed(server, client):
    first = client.chat.completions.create(model=NAME, messages=COUNT, max_tokens=12, temperature=1.2, n=3, seed=7)
    again = client.chat.completions.create(model=NAME, messages=COUNT, max_tokens=12, temperature=1.2, n=3, seed=7)
    texts = [c.message.content for c in first.choices]
    assert [c.index for c in first.choices] == [0, 1, 2] and len(set(texts)) > 1
    assert texts == [c.message.content for c in again.choices]  # a seed reproduces, whatever else is in flight
    assert first.usage.completion_tokens == sum(json.loads(c.model_dump_json())["completion_tokens"]
                                                for c in first.choices)


def test_sebench_eval_drives_the_server_through_the_openai_backend(server, task_env, tmp_path):
    out = tmp_path / "served.jsonl"
    result = CliRunner().invoke(app, ["eval", "--zwc", str(task_env.root), "--split", "single_test", "--model",
                                      f"openai:{server.url}#{NAME}", "--n", "1", "--limit", "2",
                                      "--max-tokens", "24", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(r["tokens"] > 0 for r in rows)
