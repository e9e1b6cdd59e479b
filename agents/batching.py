"""Dynamic batching: concurrent callers of ``generate`` share one batched model call.

Each episode runs in its own thread and asks for one completion at a time; this wrapper
collects the requests that arrive within ``wait_s`` (up to ``max_batch`` prompts with the
same sampling settings) and sends them to the backend as one batch.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field

from agents.models.base import Completion, Messages, Model
from agents.seeding import supports_seeds


@dataclass
class _Request:
    prompts: list[Messages]
    key: tuple
    seeds: list[int] | None = None
    done: threading.Event = field(default_factory=threading.Event)
    result: list[list[Completion]] | None = None
    error: BaseException | None = None


_STOP = object()  # put on the queue by close(): the thread ends and lets go of the model


class DynamicBatcher:
    """Owns one thread, which holds the model while it runs: ``close()`` (or ``with``) ends it,
    so a closed batcher keeps nothing alive."""

    def __init__(self, model: Model, max_batch: int = 32, wait_s: float = 0.02):
        self.model: Model | None = model
        self.name = model.name
        self.max_batch = max_batch
        self.wait_s = wait_s
        self._queue: queue.Queue = queue.Queue()
        self._closed = False
        self.batches: list[int] = []  # sizes, for reporting
        self._thread = threading.Thread(target=self._loop, daemon=True, name="dynamic-batcher")
        self._thread.start()

    def close(self, timeout: float | None = 60.0) -> None:
        """Finish what is queued, end the thread and drop the model; later calls to ``generate``
        raise. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join(timeout)
        self.model = None

    def __enter__(self) -> DynamicBatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def supports_seeds(self) -> bool:
        return supports_seeds(self.model)

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None,
                 seeds: list[int] | None = None) -> list[list[Completion]]:
        """``seeds`` (one per prompt) reach a backend that ``supports_seeds``; others ignore them.
        Seeded and unseeded requests never share a batch."""
        if seeds is not None and len(seeds) != len(prompts):
            raise ValueError(f"seeds: one per prompt, got {len(seeds)} for {len(prompts)} prompts")
        if self._closed:
            raise RuntimeError(f"the batcher of {self.name} is closed")
        seeds = seeds if seeds is not None and self.supports_seeds else None
        request = _Request(prompts, (n, temperature, max_tokens, tuple(stop or ()), seeds is not None), seeds)
        self._queue.put(request)
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def _loop(self) -> None:
        pending: list = []
        while True:
            first = pending.pop(0) if pending else self._queue.get()
            if first is _STOP:
                return
            group, size = [first], len(first.prompts)
            while size < self.max_batch:
                try:
                    nxt = self._queue.get(timeout=self.wait_s)
                except queue.Empty:
                    break
                if nxt is _STOP:
                    pending.append(nxt)  # after this group and whatever was queued before it
                    break
                if nxt.key == first.key and size + len(nxt.prompts) <= self.max_batch:
                    group.append(nxt)
                    size += len(nxt.prompts)
                else:
                    pending.append(nxt)
            self._run(group)

    def _run(self, group: list[_Request]) -> None:
        n, temperature, max_tokens, stop, seeded = group[0].key
        prompts = [p for r in group for p in r.prompts]
        self.batches.append(len(prompts))
        extra = {"seeds": [s for r in group for s in r.seeds]} if seeded else {}
        try:
            results = self.model.generate(prompts, n=n, temperature=temperature, max_tokens=max_tokens,
                                          stop=list(stop) or None, **extra)
        except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
            for r in group:
                r.error = exc
                r.done.set()
            return
        start = 0
        for r in group:
            r.result = results[start:start + len(r.prompts)]
            start += len(r.prompts)
            r.done.set()
