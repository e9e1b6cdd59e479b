"""The model protocol every backend implements: batched chat generation.

``generate`` takes a batch of chat prompts (each a list of ``{"role", "content"}``) and
returns, per prompt, ``n`` Completions. Stop strings are honoured by every backend (the
returned text ends before the first stop string). ``tokens`` counts generated tokens;
``finish_reason`` is OpenAI's: ``"stop"`` (the model ended, or a stop string did) or
``"length"`` (``max_tokens`` or the context cut it); ``prompt_tokens`` is the prompt's length
in tokens where the backend knows it (``None`` otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sebench.errors import SettingError

Messages = list[dict[str, str]]


FINISH_REASONS = ("stop", "length")


@dataclass(frozen=True)
class Completion:
    text: str
    tokens: int
    finish_reason: str = "stop"
    prompt_tokens: int | None = None


@runtime_checkable
class Model(Protocol):
    name: str

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None) -> list[list[Completion]]: ...
    # A backend that can seed each prompt's samples on their own sets ``supports_seeds = True`` and
    # takes ``seeds=[one int per prompt]`` too (``agents.seeding``: sample j of prompt i draws from
    # derive_seed(seeds[i], j)); the agent passes seeds only to such a backend.


def check_generate_args(prompts: list[Messages], n: int, temperature: float, max_tokens: int) -> None:
    """Typed errors for bad arguments, shared by the backends."""
    if not isinstance(prompts, list) or any(not isinstance(p, list) for p in prompts):
        raise TypeError("prompts must be a list of chat prompts, each a list of {'role', 'content'} dicts")
    for prompt in prompts:
        for message in prompt:
            if not isinstance(message, dict) or "role" not in message or "content" not in message:
                raise ValueError(f"each message needs 'role' and 'content', got {message!r}")
    if n < 1:
        raise SettingError(f"n must be >= 1, got {n}")
    if temperature < 0:
        raise SettingError(f"temperature must be >= 0, got {temperature}")
    if max_tokens < 1:
        raise SettingError(f"max_tokens must be >= 1, got {max_tokens}")


def cut_at_stop(text: str, stop: list[str] | None) -> str:
    """``text`` up to (not including) the first stop string."""
    if not stop:
        return text
    cuts = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return text[: min(cuts)] if cuts else text
