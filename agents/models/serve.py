"""An OpenAI-compatible chat-completions server over any backend (``sebench serve``).

So our models, fine-tuned ones included, can be driven by other harnesses — the official
SE-Bench rollout scripts among them. Standard library HTTP server, one thread per request;
concurrent requests share one dynamic batcher. Endpoints: ``GET /v1/models``,
``POST /v1/chat/completions`` (``messages``, ``n``, ``temperature``, ``max_tokens``, ``stop``).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agents.batching import DynamicBatcher
from agents.models.base import Model


def make_server(model: Model, host: str = "127.0.0.1", port: int = 8000, max_batch: int = 32) -> ThreadingHTTPServer:
    batcher = DynamicBatcher(model, max_batch=max_batch)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet: the CLI reports
            return

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": model.name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                messages = request["messages"]
                n = int(request.get("n", 1))
                stop = request.get("stop")
                stop = [stop] if isinstance(stop, str) else stop
                [completions] = batcher.generate([messages], n=n, temperature=float(request.get("temperature", 0.0)),
                                                 max_tokens=int(request.get("max_tokens") or 512), stop=stop)
            except (KeyError, ValueError, TypeError) as exc:
                self._send(400, {"error": {"message": f"bad request: {exc}", "type": "invalid_request_error"}})
                return
            except Exception as exc:  # noqa: BLE001 - the server must answer, not die
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})
                return
            choices = [{"index": i, "message": {"role": "assistant", "content": c.text}, "finish_reason": "stop",
                        "completion_tokens": c.tokens} for i, c in enumerate(completions)]
            self._send(200, {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion",
                             "created": int(time.time()), "model": model.name, "choices": choices,
                             "usage": {"completion_tokens": sum(c.tokens for c in completions)}})

    return ThreadingHTTPServer((host, port), Handler)


def serve_in_thread(model: Model, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Start a server in a daemon thread; returns it and its base URL (port 0: a free port)."""
    server = make_server(model, host, port)
    threading.Thread(target=server.serve_forever, daemon=True, name="sebench-serve").start()
    return server, f"http://{host}:{server.server_address[1]}/v1"
