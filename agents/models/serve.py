"""An OpenAI-compatible chat-completions server over any backend (``sebench serve``).

So our models, fine-tuned ones included, can be driven by other harnesses — the official
SE-Bench rollout scripts and the ``openai`` client among them. Standard library HTTP server,
one thread per connection. Endpoints: ``GET /v1/models``, ``GET /v1/models/{id}``,
``POST /v1/chat/completions`` (wire format and checks: ``agents.models.openai_protocol``).

A transformers model is served through ``ContinuousBatcher``: every request decodes in one
shared batch, a short answer returns as soon as it is done whatever else is in flight, and
``stream: true`` sends each step's text as a ``chat.completion.chunk`` over server-sent events,
ending with ``data: [DONE]``. Work whose client has gone (closed the connection, timed out) is
cancelled at the next step. Other backends (``reference``, ``openai:``, ``vllm:``) answer
through the ``DynamicBatcher``: whole answers, streamed as one chunk, not cancellable.

Model names: requests must name one of ``served_names`` (404 ``model_not_found`` otherwise);
``sebench serve`` serves the model's own name and the ``--model`` argument as typed (for a
directory, its path as well as its last component), or only ``--served-model-name``.
"""

from __future__ import annotations

import json
import queue
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agents.batching import DynamicBatcher
from agents.models.base import Messages, Model
from agents.models.openai_protocol import APIError, ChatRequest, Reply, check_context, parse_chat_request

POLL_S = 0.25  # how often a waiting request checks that its client is still there


class _Job:
    """One request's choices in flight: ``events`` gets ``(index, text)`` and ``(index, None)``
    when choice ``index`` ends; then ``results[index]`` is (text, finish_reason, tokens)."""

    def __init__(self, n: int, prompt_tokens: int):
        self.events: queue.Queue = queue.Queue()
        self.results: list[tuple[str, str, int] | None] = [None] * n
        self.prompt_tokens = prompt_tokens
        self.error: BaseException | None = None

    def cancel(self) -> None:  # backends that can stop early override this
        return


class _EngineJob(_Job):
    def __init__(self, engine, request: ChatRequest, prompt_ids: list[int], max_tokens: int):
        super().__init__(request.n, len(prompt_ids))
        self._raw: queue.Queue = queue.Queue()
        # greedy choices are all the same answer: decode it once and hand it to every index
        count = request.n if request.temperature > 0 else 1
        self._copies = request.n // count
        self.seqs = [engine.submit(prompt_ids, max_tokens=max_tokens, temperature=request.temperature,
                                   stop=request.stop, events=self._raw,
                                   seed=None if request.seed is None else request.seed + i) for i in range(count)]
        self._index = {id(s): i for i, s in enumerate(self.seqs)}
        threading.Thread(target=self._relay, daemon=True).start()

    def _relay(self) -> None:
        open_seqs = len(self.seqs)
        while open_seqs:
            seq, text = self._raw.get()
            first = self._index[id(seq)] * self._copies
            for index in range(first, first + self._copies):
                if text is None:
                    if seq.error is not None:
                        self.error = seq.error
                    self.results[index] = (seq.text, seq.finish_reason or "stop", seq.tokens)
                self.events.put((index, text))
            open_seqs -= text is None

    def cancel(self) -> None:
        for seq in self.seqs:
            seq.cancel()


class _BatcherJob(_Job):
    def __init__(self, batcher: DynamicBatcher, request: ChatRequest, max_tokens: int):
        super().__init__(request.n, sum(len(m["content"].split()) for m in request.messages))
        threading.Thread(target=self._run, args=(batcher, request, max_tokens), daemon=True).start()

    def _run(self, batcher: DynamicBatcher, request: ChatRequest, max_tokens: int) -> None:
        try:
            [completions] = batcher.generate([request.messages], n=request.n, temperature=request.temperature,
                                             max_tokens=max_tokens, stop=request.stop or None)
        except Exception as exc:  # noqa: BLE001 - handed to the request's thread
            self.error = exc
            completions = []
        for index in range(len(self.results)):
            if index < len(completions):
                c = completions[index]
                self.prompt_tokens = c.prompt_tokens if c.prompt_tokens is not None else self.prompt_tokens
                self.results[index] = (c.text, c.finish_reason, c.tokens)
                self.events.put((index, c.text))
            else:
                self.results[index] = ("", "stop", 0)
            self.events.put((index, None))


class ChatService:
    """What the HTTP handler calls: checks a request against the model and starts its job."""

    def __init__(self, model: Model, served_names: list[str], max_num_seqs: int = 16,
                 max_model_len: int | None = None, continuous: bool = True):
        self.model = model
        if getattr(model, "engine", None) == "auto" and callable(getattr(model, "transformers", None)):
            model = model.transformers()  # a LocalModel: streaming needs the torch engine's steps
        elif str(getattr(model, "engine", "")).startswith("ct2"):
            continuous = False  # CTranslate2 answers whole (the dynamic batcher)
        self.served = list(dict.fromkeys(served_names)) or [model.name]
        self.engine = None
        self.batcher = None
        self.tokenizer = getattr(model, "tokenizer", None)
        self.context = None
        if continuous and hasattr(model, "model") and self.tokenizer is not None:
            from agents.models.continuous import ContinuousBatcher, context_length

            self.context = min(context_length(model.model), max_model_len or 2**31)
            try:
                self.engine = ContinuousBatcher(model.model, self.tokenizer, context=self.context,
                                                max_batch=max_num_seqs, lock=getattr(model, "_lock", None))
            except NotImplementedError:
                self.engine = None
        if self.engine is None:
            self.batcher = DynamicBatcher(model, max_batch=max_num_seqs)

    def prompt_ids(self, messages: Messages) -> list[int]:
        # the developer role is the system role under another name; chat templates know the latter
        messages = [{**m, "role": "system" if m["role"] == "developer" else m["role"]} for m in messages]
        try:
            text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        except Exception as exc:  # noqa: BLE001 - a template refusing these messages (roles, order)
            raise APIError(400, f"the model's chat template refused the messages: {exc}", param="messages",
                           code="invalid_value") from None
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()

    def start(self, request: ChatRequest) -> _Job:
        if self.engine is not None:
            ids = self.prompt_ids(request.messages)
            return _EngineJob(self.engine, request, ids, check_context(request, len(ids), self.context))
        return _BatcherJob(self.batcher, request, request.max_tokens or 512)


def _model_card(name: str) -> dict:
    return {"id": name, "object": "model", "created": 0, "owned_by": "sebench"}


def _route(path: str) -> str:
    """A request's path without its query and trailing slash (``/v1/models/``: ``/v1/models``)."""
    return path.split("?")[0].rstrip("/")


def _server_error(exc: BaseException) -> APIError:
    return APIError(500, f"{type(exc).__name__}: {exc}", kind="server_error")


class ChatHandler(BaseHTTPRequestHandler):
    """One connection's requests: the routes (``GET /v1/models[/{id}]``, ``POST /v1/chat/completions``),
    the body's validation, then a whole answer or a stream; the model and its engine are the
    server's ``ChatService`` (``self.server.service``)."""

    protocol_version = "HTTP/1.1"

    @property
    def service(self) -> ChatService:
        return self.server.service  # type: ignore[attr-defined]

    def log_message(self, *args) -> None:  # quiet: the CLI reports
        return

    # -- replies ------------------------------------------------------------------------------
    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, error: APIError) -> None:
        self._send(error.status, error.body())

    def _client_gone(self) -> bool:
        """True when the client closed or reset its connection (it is not reading any more)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    # -- routes -------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = _route(self.path)
        cards = {name: _model_card(name) for name in self.service.served}
        if path == "/v1/models":
            self._send(200, {"object": "list", "data": list(cards.values())})
        elif path.startswith("/v1/models/") and path[len("/v1/models/"):] in cards:
            self._send(200, cards[path[len("/v1/models/"):]])
        elif path.startswith("/v1/models/"):
            self._error(APIError(404, f"The model `{path[len('/v1/models/'):]}` does not exist.",
                                 param="model", code="model_not_found"))
        else:
            self._error(APIError(404, f"Invalid URL (GET {self.path})", code="unknown_url"))

    def do_POST(self) -> None:  # noqa: N802
        if _route(self.path) != "/v1/chat/completions":
            self._error(APIError(404, f"Invalid URL (POST {self.path})", code="unknown_url"))
            return
        try:
            request = parse_chat_request(self._read_json(), self.service.served)
            job = self.service.start(request)
        except APIError as error:
            self._error(error)
            return
        except Exception as exc:  # noqa: BLE001 - the server must answer, not die
            self._error(_server_error(exc))
            return
        reply = Reply(request.model)
        if request.stream:
            self._stream(job, request, reply)
        else:
            self._answer(job, reply)

    # -- validation ---------------------------------------------------------------------------
    def _read_json(self):
        """The request's body as JSON (``null`` when empty); 400 when it is not JSON."""
        length = int(self.headers.get("Content-Length", "0"))
        try:
            return json.loads(self.rfile.read(length) or b"null")
        except (ValueError, UnicodeDecodeError) as exc:
            raise APIError(400, f"the request body is not valid JSON: {exc}") from None

    # -- answers ------------------------------------------------------------------------------
    def _wait_events(self, job: _Job):
        """``job``'s events; cancels the job and stops when the client goes away."""
        open_choices = len(job.results)
        checked = time.monotonic()
        while open_choices:
            try:
                index, text = job.events.get(timeout=POLL_S)
            except queue.Empty:
                index, text = None, None
            if time.monotonic() - checked >= POLL_S:  # on a timer: events may never pause
                checked = time.monotonic()
                if self._client_gone():
                    job.cancel()
                    return
            if index is None:
                continue
            open_choices -= text is None
            yield index, text

    def _answer(self, job: _Job, reply: Reply) -> None:
        for _ in self._wait_events(job):
            pass
        if any(r is None for r in job.results):  # the client went away
            self.close_connection = True
            return
        if job.error is not None:
            self._error(_server_error(job.error))
            return
        self._send(200, reply.completion(job.results, job.prompt_tokens))

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")  # no length: the end of the body is the end of the stream
        self.end_headers()
        self.close_connection = True

    def _send_event(self, payload) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        self.wfile.write(f"data: {data}\n\n".encode())
        self.wfile.flush()

    def _stream(self, job: _Job, request: ChatRequest, reply: Reply) -> None:
        self._start_stream()
        send = self._send_event
        try:
            for index in range(request.n):
                send(reply.chunk(index, role=True))
            for index, text in self._wait_events(job):
                if text is not None:
                    send(reply.chunk(index, content=text))
                elif job.error is None:
                    send(reply.chunk(index, finish_reason=job.results[index][1]))
            if any(r is None for r in job.results):
                return
            if job.error is not None:
                send(_server_error(job.error).body())
            elif request.include_usage:
                send(reply.usage_chunk(job.prompt_tokens, sum(r[2] for r in job.results)))
            send("[DONE]")
        except OSError:  # the client hung up mid-stream (broken pipe, reset)
            job.cancel()


def make_server(model: Model, host: str = "127.0.0.1", port: int = 8000, *, served_names: list[str] | None = None,
                max_num_seqs: int = 16, max_model_len: int | None = None,
                continuous: bool = True) -> ThreadingHTTPServer:
    """The server (not yet serving); ``server.service`` holds the model, engine and names."""
    service = ChatService(model, served_names or [model.name], max_num_seqs, max_model_len, continuous)
    server = _ChatServer((host, port), ChatHandler)
    server.service = service
    return server


class _ChatServer(ThreadingHTTPServer):
    daemon_threads = True  # a connection left open never holds the process
    service: ChatService

    def server_close(self) -> None:
        super().server_close()
        self.service.close()


def serve_in_thread(model: Model, host: str = "127.0.0.1", port: int = 0,
                    **kwargs) -> tuple[ThreadingHTTPServer, str]:
    """Start a server in a daemon thread; returns it and its base URL (port 0: a free port).
    Stop it with ``server.shutdown()`` then ``server.server_close()`` (which ends its engine)."""
    server = make_server(model, host, port, **kwargs)
    threading.Thread(target=server.serve_forever, daemon=True, name="sebench-serve").start()
    return server, f"http://{host}:{server.server_address[1]}/v1"
