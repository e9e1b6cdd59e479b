"""Any OpenAI-compatible chat-completions endpoint (vLLM/SGLang servers, hosted APIs,
``sebench serve``). Requests for a batch run concurrently; each retries with exponential
backoff on connection errors, 429 and 5xx, and gives up with a typed error."""

from __future__ import annotations

import os
import random
import time
from concurrent.futures import ThreadPoolExecutor

from agents.models.base import Completion, Messages, check_generate_args, cut_at_stop
from agents.models.errors import ModelError


class OpenAIModel:
    """Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1``.
        model: the model name the server expects.
        api_key: default ``$OPENAI_API_KEY`` or ``EMPTY``.
        timeout: seconds per request; retries: attempts after the first; concurrency: parallel requests.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 120.0,
                 retries: int = 4, concurrency: int = 16):
        import httpx

        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{self.base_url}#{model}"
        self.retries = retries
        self.concurrency = concurrency
        key = api_key or os.environ.get("OPENAI_API_KEY", "EMPTY")
        self._client = httpx.Client(timeout=timeout, headers={"Authorization": f"Bearer {key}"})

    def _post(self, payload: dict) -> dict:
        import httpx

        delay = 0.5
        for attempt in range(self.retries + 1):
            try:
                response = self._client.post(f"{self.base_url}/chat/completions", json=payload)
                if response.status_code == 429 or response.status_code >= 500:
                    raise ModelError(f"HTTP {response.status_code}: {response.text[:200]}")
                if response.status_code >= 400:  # our request is wrong: retrying will not help
                    raise ValueError(f"{self.base_url} rejected the request: HTTP {response.status_code} "
                                     f"{response.text[:300]}")
                return response.json()
            except (httpx.TransportError, ModelError) as exc:
                if attempt == self.retries:
                    raise ModelError(f"{self.base_url}: no answer after {attempt + 1} attempts ({exc})") from None
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 30.0)
        raise AssertionError("unreachable")

    supports_seeds = True  # sent as the request's ``seed`` (sebench serve and vLLM honour it; others may not)

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None,
                 seeds: list[int] | None = None) -> list[list[Completion]]:
        check_generate_args(prompts, n, temperature, max_tokens)
        if seeds is not None and len(seeds) != len(prompts):
            raise ValueError(f"seeds: one per prompt, got {len(seeds)} for {len(prompts)} prompts")

        # greedy copies are one answer: ask for it once (vLLM refuses n > 1 at temperature 0)
        asked = 1 if temperature == 0 else n

        def one(prompt: Messages, seed: int | None) -> list[Completion]:
            payload = {"model": self.model, "messages": prompt, "n": asked, "temperature": temperature,
                       "max_tokens": max_tokens}
            if seed is not None:
                payload["seed"] = seed
            if stop:
                payload["stop"] = stop
            data = self._post(payload)
            choices = sorted(data.get("choices", []), key=lambda c: c.get("index", 0))
            usage = data.get("usage") or {}
            tokens = usage.get("completion_tokens")
            out = []
            for choice in choices[:asked]:
                text = cut_at_stop(choice["message"].get("content") or "", stop)
                per = choice.get("completion_tokens")  # sebench serve's per-choice count; others: the mean
                out.append(Completion(text=text, tokens=per if per is not None else
                                      (tokens // max(1, len(choices)) if tokens is not None else len(text.split())),
                                      finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
                                      prompt_tokens=usage.get("prompt_tokens")))
            if len(out) < asked:
                raise ModelError(f"{self.base_url} returned {len(out)} choices, asked for {asked}")
            return out * (n // asked)

        with ThreadPoolExecutor(max(1, min(self.concurrency, len(prompts)))) as pool:
            return list(pool.map(one, prompts, seeds if seeds is not None else [None] * len(prompts)))

    def close(self) -> None:
        self._client.close()
