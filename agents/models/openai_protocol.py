"""OpenAI chat-completions wire format for ``sebench serve``: requests in, bodies and chunks out.

Requests are checked as OpenAI and vLLM check them: a bad field is a 400 whose error names
it (``error.param``), an unknown model a 404 ``model_not_found``, a prompt that does not fit
the context a 400 ``context_length_exceeded``. ``max_completion_tokens`` wins over the older
``max_tokens``; without either, an answer may use the rest of the context (vLLM's default).
Sampling options this server does not implement (``top_p`` below 1, penalties, logprobs,
tools, JSON mode) are refused by name rather than silently ignored; fields that change
nothing here (``user``, ``metadata``, ``store`` ...) are accepted and ignored, as vLLM does.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

ROLES = ("system", "developer", "user", "assistant", "tool")
# field -> the values that mean "not used"; anything else asks for something not implemented here
UNSUPPORTED = {"top_p": (1, 1.0, None), "frequency_penalty": (0, 0.0, None), "presence_penalty": (0, 0.0, None),
               "logprobs": (False, None), "top_logprobs": (None, 0), "logit_bias": (None,), "tools": (None,),
               "functions": (None,), "response_format": (None,)}


class APIError(Exception):
    """An error answered in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None,
                 kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.kind = status, message, param, code, kind

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, str]]
    n: int = 1
    temperature: float = 1.0
    max_tokens: int | None = None  # None: the rest of the context
    max_tokens_param: str = "max_tokens"  # which field set it, for error messages
    stop: list[str] = field(default_factory=list)
    stream: bool = False
    include_usage: bool = False
    seed: int | None = None


def _number(body: dict, name: str, default, low: float, high: float, *, integer: bool = False):
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        kind = "an integer" if integer else "a number"
        raise APIError(400, f"{name} must be {kind}, got {value!r}", param=name, code="invalid_type")
    if not low <= value <= high:
        raise APIError(400, f"{name} must be between {low} and {high}, got {value!r}", param=name,
                       code="invalid_value")
    return value


def _content(message: dict, i: int) -> str:
    content = message.get("content")
    if content is None and message.get("role") == "assistant":
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]: the newer shape
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise APIError(400, f"messages[{i}].content: only text parts are supported here, got {part!r}",
                               param=f"messages[{i}].content", code="invalid_value")
            parts.append(part["text"])
        return "".join(parts)
    raise APIError(400, f"messages[{i}].content must be a string or a list of text parts, got {content!r}",
                   param=f"messages[{i}].content", code="invalid_type")


def parse_chat_request(body, served: list[str]) -> ChatRequest:
    """A checked request; ``APIError`` (400/404) names the first field that is wrong."""
    if not isinstance(body, dict):
        raise APIError(400, "the request body must be a JSON object")
    model = body.get("model")
    if model is None:
        model = served[0]  # vLLM's leniency: one model is served, so an omitted name means it
    if not isinstance(model, str) or model not in served:
        raise APIError(404, f"The model `{model}` does not exist; this server serves {', '.join(served)}.",
                       param="model", code="model_not_found")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise APIError(400, "messages must be a non-empty list of {role, content} objects", param="messages",
                       code="invalid_value" if isinstance(messages, list) else "missing_required_parameter")
    checked = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise APIError(400, f"messages[{i}] needs a role among {', '.join(ROLES)}, got {message!r}",
                           param=f"messages[{i}].role", code="invalid_value")
        checked.append({"role": message["role"], "content": _content(message, i)})
    for name, unused in UNSUPPORTED.items():
        if name in body and body[name] not in unused and body[name] != {} and body[name] != []:
            raise APIError(400, f"{name}={body[name]!r} is not supported by this server; omit it", param=name,
                           code="unsupported_parameter")
    stop = body.get("stop")
    stop = [stop] if isinstance(stop, str) else stop if stop is not None else []
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise APIError(400, f"stop must be a string or a list of strings, got {body.get('stop')!r}", param="stop",
                       code="invalid_type")
    param = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
    stream = body.get("stream", False)
    if not isinstance(stream, bool | None):
        raise APIError(400, f"stream must be true or false, got {stream!r}", param="stream", code="invalid_type")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise APIError(400, "stream_options must be an object", param="stream_options", code="invalid_type")
    return ChatRequest(
        model=model, messages=checked, n=_number(body, "n", 1, 1, 128, integer=True),
        temperature=float(_number(body, "temperature", 1.0, 0, 2)),
        max_tokens=_number(body, param, None, 1, 2**31, integer=True), max_tokens_param=param,
        stop=[s for s in stop if s], stream=bool(stream), include_usage=bool(options.get("include_usage")),
        seed=_number(body, "seed", None, -(2**63), 2**63 - 1, integer=True))


def check_context(request: ChatRequest, prompt_tokens: int, context: int) -> int:
    """The answer's token budget; a 400 when the prompt (with the asked budget) does not fit."""
    if prompt_tokens >= context:
        raise APIError(400, f"This model's maximum context length is {context} tokens. However, your messages "
                            f"resulted in {prompt_tokens} tokens. Please reduce the length of the messages.",
                       param="messages", code="context_length_exceeded")
    room = context - prompt_tokens
    if request.max_tokens is None:
        return room
    if request.max_tokens > room:
        raise APIError(400, f"{request.max_tokens_param}={request.max_tokens} is too large: this model's maximum "
                            f"context length is {context} tokens and the messages use {prompt_tokens}, so at "
                            f"most {room} remain. Ask for {room} or fewer.",
                       param=request.max_tokens_param, code="context_length_exceeded")
    return request.max_tokens


@dataclass
class Reply:
    """Ids and names shared by a response's body or chunks."""

    model: str
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex[:24]}")
    created: int = field(default_factory=lambda: int(time.time()))

    def completion(self, choices: list[tuple[str, str, int]], prompt_tokens: int) -> dict:
        """``choices``: (text, finish_reason, completion tokens) per choice, in order."""
        completion_tokens = sum(tokens for _, _, tokens in choices)
        return {"id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
                "system_fingerprint": None,
                "choices": [{"index": i, "message": {"role": "assistant", "content": text}, "logprobs": None,
                             "finish_reason": reason, "completion_tokens": tokens}
                            for i, (text, reason, tokens) in enumerate(choices)],
                "usage": usage(prompt_tokens, completion_tokens)}

    def chunk(self, index: int, *, role: bool = False, content: str | None = None,
              finish_reason: str | None = None) -> dict:
        delta: dict = {}
        if role:
            delta = {"role": "assistant", "content": ""}
        if content is not None:
            delta["content"] = content
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "system_fingerprint": None,
                "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}

    def usage_chunk(self, prompt_tokens: int, completion_tokens: int) -> dict:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "system_fingerprint": None, "choices": [], "usage": usage(prompt_tokens, completion_tokens)}


def usage(prompt_tokens: int, completion_tokens: int) -> dict:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}
