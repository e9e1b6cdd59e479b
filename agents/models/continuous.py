"""Continuous batching for transformers models: step-wise decoding over one shared KV cache.

``model.generate`` on a padded batch returns when its slowest row ends, and a request that
arrives meanwhile waits for the whole batch. Here one engine thread decodes every sequence in
flight one token per step: a finished (or cancelled) row leaves the batch at once, a new
request is prefilled and joins between two steps, and every step hands each sequence its new
text, so a server can stream it. The cache is transformers' own ``DynamicCache``, kept
left-padded: a joining batch is padded to the running one's length (or the other way round)
and stacked on the batch axis, a leaving row is dropped with an index, and columns that only
padding uses any more are cut off. Sampling is per row (greedy rows take the argmax; sampled
rows draw from their own seeded generator, so a seed reproduces a sample whatever else is in
the batch). Stop strings and EOS end a row with ``finish_reason="stop"``, ``max_tokens`` or the
context's end with ``"length"``.

Why not transformers' own ``ContinuousBatchingManager`` (``init_continuous_batching``,
``generate_batch``, paged attention)? In the installed 5.x it runs on CPU and was as fast as
this engine here (``benchmarks/perf/serve_latency.py`` runs both: 5 and 10 concurrent requests,
makespans within 10%), but greedy versus sampling is one setting per manager (``do_sample``), it
has no stop strings, it sizes its paged cache from device memory (on CPU, with its defaults, it
took 5 GB and stalled), and its configuration changes from one minor release to the next
(several of its options are "deprecated in 5.11/5.13/5.17"), while ``pyproject`` allows 4.57.
"""

from __future__ import annotations

import inspect
import queue
import random
import threading
from collections import Counter
from dataclasses import dataclass, field

from agents.models.base import Completion

CANCELLED = "cancelled"  # a finish reason of ours: the caller went away (never sent to a client)


@dataclass
class Sequence:
    """One generation in flight. The engine feeds it; the caller reads ``deltas()`` or ``result()``.

    ``finish_reason`` is ``"stop"`` (EOS or a stop string), ``"length"`` (``max_tokens`` or the
    context's end) or ``"cancelled"``; ``tokens`` counts generated tokens (EOS excluded).
    """

    prompt_ids: list[int]
    max_tokens: int
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    ids: list[int] = field(default_factory=list)
    text: str = ""
    sent: int = 0  # characters of ``text`` handed out so far
    finish_reason: str | None = None
    error: BaseException | None = None
    _events: queue.Queue = field(default_factory=queue.Queue, repr=False)
    _cancelled: threading.Event = field(default_factory=threading.Event, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def tokens(self) -> int:
        return len(self.ids)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def cancel(self) -> None:
        """Stop generating for this sequence (the engine drops it before its next step)."""
        self._cancelled.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def deltas(self, timeout: float | None = None):
        """New text as it is produced; ends when the sequence is finished. ``timeout`` (seconds
        without news) raises ``queue.Empty``, so a caller can check its client in between. (With
        an ``events`` queue shared by several sequences, read that queue instead: it gets
        ``(sequence, text)`` items and ``(sequence, None)`` when one ends.)"""
        while True:
            _, item = self._events.get(timeout=timeout)
            if item is None:
                return
            yield item

    def result(self) -> Completion:
        self._done.wait()
        if self.error is not None:
            raise self.error
        return Completion(text=self.text, tokens=self.tokens, finish_reason=self.finish_reason or "stop",
                          prompt_tokens=len(self.prompt_ids))

    # engine side
    def _emit(self, upto: int) -> None:
        if upto > self.sent:
            self._events.put((self, self.text[self.sent:upto]))
            self.sent = upto

    def _finish(self, reason: str) -> None:
        self.finish_reason = reason
        if reason != CANCELLED:
            self._emit(len(self.text))
        self._done.set()
        self._events.put((self, None))


class _Row:
    """A sequence's place in the running batch: its decoding state beside the shared cache."""

    def __init__(self, seq: Sequence, device):
        import torch

        self.seq = seq
        self.position = len(seq.prompt_ids)  # tokens so far; the last one sits at position - 1
        self.generator = None
        if seq.temperature > 0:
            self.generator = torch.Generator(device=device)
            self.generator.manual_seed(seq.seed % 2**63 if seq.seed is not None else random.getrandbits(63))


class ContinuousBatcher:
    """The engine over a transformers causal LM.

    Args:
        model, tokenizer: the loaded model (eval mode) and its tokenizer.
        context: the longest sequence (prompt + answer) a row may reach.
        max_batch: rows decoded together; more requests wait in line.
        lock: held for each forward pass, so direct ``generate`` calls on the same model interleave.
    """

    def __init__(self, model, tokenizer, *, context: int, max_batch: int = 16, lock: threading.Lock | None = None):
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        self.model, self.tokenizer = model, tokenizer
        self.context, self.max_batch = context, max_batch
        self.device = model.device
        self._lock = lock or threading.Lock()
        probe = DynamicCache(config=model.config)
        if any(type(layer) is not DynamicLayer for layer in probe.layers):
            raise NotImplementedError(f"{type(model).__name__}: sliding-window or hybrid cache layers cannot be "
                                      "left-padded and merged; serve it without continuous batching")
        eos = {tokenizer.eos_token_id}
        configured = getattr(model.generation_config, "eos_token_id", None)
        eos.update(configured if isinstance(configured, list) else [configured])
        self.eos = {e for e in eos if e is not None}
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(self.eos)
        self._waiting: list[Sequence] = []
        self._closed = False
        self._wake = threading.Condition()
        self._rows: list[_Row] = []
        self._cache = None
        self._mask = None  # [rows, columns]: 1 where the cache holds a real token
        self.steps = 0  # decode steps run, for reporting
        self.finished: Counter[str] = Counter()  # finish reasons so far (cancelled ones included)
        self._cache_kw = cache_keyword(model)
        threading.Thread(target=self._loop, daemon=True, name="continuous-batcher").start()

    @classmethod
    def for_model(cls, backend, **kwargs) -> ContinuousBatcher:
        """The engine for a ``TransformersModel`` (its model, tokenizer, lock and context length)."""
        return cls(backend.model, backend.tokenizer, context=context_length(backend.model), lock=backend._lock,
                   **kwargs)

    def submit(self, prompt_ids: list[int], *, max_tokens: int, temperature: float = 0.0,
               stop: list[str] | None = None, seed: int | None = None,
               events: queue.Queue | None = None) -> Sequence:
        """Queue one sequence; it joins the running batch before the next step that has room."""
        if not 0 < len(prompt_ids) < self.context:
            raise ValueError(f"the prompt has {len(prompt_ids)} tokens; this model's context is {self.context}")
        if max_tokens < 1 or temperature < 0:
            raise ValueError(f"max_tokens must be >= 1 and temperature >= 0, got {max_tokens}, {temperature}")
        seq = Sequence(list(prompt_ids), max_tokens, temperature, tuple(s for s in stop or () if s), seed)
        if events is not None:
            seq._events = events
        with self._wake:
            if self._closed:
                raise RuntimeError("the engine is closed")
            self._waiting.append(seq)
            self._wake.notify()
        return seq

    def close(self) -> None:
        """Cancel everything in flight or in line and end the engine thread."""
        with self._wake:
            self._closed = True
            self._wake.notify()

    # the engine thread
    def _loop(self) -> None:
        import torch

        while True:
            with self._wake:
                while not self._waiting and not self._rows and not self._closed:
                    self._wake.wait()
                if self._closed:
                    for seq in self._waiting + [r.seq for r in self._rows]:
                        seq.cancel()
                        self._cancel_early(seq)
                    self._waiting, self._rows, self._cache, self._mask = [], [], None, None
                    return
                self._waiting = [s for s in self._waiting if not self._cancel_early(s)]  # gone while in line
                joining = self._waiting[: self.max_batch - len(self._rows)]
                del self._waiting[: len(joining)]
            try:
                with torch.inference_mode():
                    self._drop([r for r in self._rows if r.seq._cancelled.is_set()], CANCELLED)
                    joining = [s for s in joining if not self._cancel_early(s)]
                    if joining:
                        self._prefill(joining)
                    if self._rows:
                        self._step()
            except Exception as exc:  # noqa: BLE001 - every caller gets the error, the engine lives on
                failed = [r.seq for r in self._rows] + joining
                self._rows, self._cache, self._mask = [], None, None
                for seq in failed:
                    if not seq.done:
                        seq.error = exc
                        seq._finish("error")

    def _cancel_early(self, seq: Sequence) -> bool:
        if seq._cancelled.is_set():
            seq._finish(CANCELLED)
            self.finished[CANCELLED] += 1
            return True
        return False

    def _prefill(self, seqs: list[Sequence]) -> None:
        import torch
        from transformers import DynamicCache

        width = max(len(s.prompt_ids) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, width - len(s.prompt_ids):] = torch.tensor(s.prompt_ids)
            mask[i, width - len(s.prompt_ids):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = DynamicCache(config=self.model.config)
        with self._lock:
            logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                                position_ids=positions.to(self.device), use_cache=True, logits_to_keep=1,
                                **{self._cache_kw: cache}).logits[:, -1, :]
        rows = [_Row(s, self.device) for s in seqs]
        self._merge(rows, cache, mask.to(self.device))
        self._advance(rows, logits)

    def _merge(self, rows: list[_Row], cache, mask) -> None:
        import torch
        import torch.nn.functional as F

        if not self._rows:
            self._rows, self._cache, self._mask = rows, cache, mask
            return
        old, new = self._mask.shape[1], mask.shape[1]
        width = max(old, new)
        def stack(a, b):  # left-pad both to ``width`` columns, then one batch
            return torch.cat([F.pad(a, (0, 0, width - old, 0)), F.pad(b, (0, 0, width - new, 0))])

        for mine, theirs in zip(self._cache.layers, cache.layers, strict=True):
            mine.keys, mine.values = stack(mine.keys, theirs.keys), stack(mine.values, theirs.values)
        self._mask = torch.cat([F.pad(self._mask, (width - old, 0)), F.pad(mask, (width - new, 0))])
        self._rows += rows

    def _step(self) -> None:
        import torch

        last = torch.tensor([[r.seq.ids[-1]] for r in self._rows], device=self.device)
        positions = torch.tensor([[r.position - 1] for r in self._rows], device=self.device)
        self._mask = torch.cat([self._mask, self._mask.new_ones((len(self._rows), 1))], dim=1)
        with self._lock:
            logits = self.model(input_ids=last, attention_mask=self._mask, position_ids=positions, use_cache=True,
                                **{self._cache_kw: self._cache}).logits[:, -1, :]
        self.steps += 1
        self._advance(self._rows, logits)

    def _advance(self, rows: list[_Row], logits) -> None:
        """Pick each row's next token, update its text, and retire the rows that are done."""
        import torch

        logits = logits.float()
        chosen = logits.argmax(-1).tolist()
        for i, row in enumerate(rows):
            if row.generator is not None:
                probs = torch.softmax(logits[i] / row.seq.temperature, dim=-1)
                chosen[i] = int(torch.multinomial(probs, 1, generator=row.generator))
        finished: dict[int, str] = {}
        for i, (row, token) in enumerate(zip(rows, chosen, strict=True)):
            seq = row.seq
            if token in self.eos:
                finished[i] = "stop"
                continue
            seq.ids.append(token)
            row.position += 1
            reason = self._update_text(seq)
            if reason is None and (seq.tokens >= seq.max_tokens or row.position >= self.context):
                reason = "length"
            if reason is not None:
                finished[i] = reason
        if finished:
            self._drop([rows[i] for i in finished], None, reasons=[finished[i] for i in finished])

    def _update_text(self, seq: Sequence) -> str | None:
        """Decode, cut at a stop string (-> ``"stop"``), hand out what can no longer change: a
        half-decoded character waits for its next byte, a possible stop string's start for the rest."""
        # no clean-up of spaces: it can change text already sent (" ." after "a " -> "a."), breaking the stream
        text = self.tokenizer.decode(seq.ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        ready = len(text.rstrip("\ufffd"))
        if seq.stop:
            longest = max(len(s) for s in seq.stop)
            start = max(0, len(seq.text) - longest)
            cuts = [i for i in (text.find(s, start) for s in seq.stop) if i >= 0]
            if cuts:
                seq.text = text[: min(cuts)]
                return "stop"
            ready = min(ready, len(text) - longest + 1)
        seq.text = text
        seq._emit(ready)
        return None

    def _drop(self, rows: list[_Row], reason: str | None, reasons: list[str] | None = None) -> None:
        if not rows:
            return
        import torch

        for row, why in zip(rows, reasons or [reason] * len(rows), strict=True):
            row.seq._finish(why)
            self.finished[why] += 1
        leaving = {id(r) for r in rows}
        keep = [i for i, r in enumerate(self._rows) if id(r) not in leaving]
        if not keep:
            self._rows, self._cache, self._mask = [], None, None
            return
        self._mask = select_rows(self._cache, self._mask, torch.tensor(keep, device=self.device))
        self._rows = [self._rows[i] for i in keep]


def context_length(model) -> int:
    """The longest sequence the model was built for (``max_position_embeddings``)."""
    config = model.config.get_text_config()
    return int(getattr(config, "max_position_embeddings", None) or 2048)


def cache_keyword(model) -> str:
    """The name of ``forward``'s cache argument: transformers 5.x renames ``past_key_values`` to
    ``cache``; older releases know only the former."""
    target = model.get_base_model() if hasattr(model, "get_base_model") else model  # a peft model passes it on
    return "cache" if "cache" in inspect.signature(target.forward).parameters else "past_key_values"


def select_rows(cache, mask, index):
    """Keep (or repeat) the batch rows ``index`` of a left-padded ``DynamicCache`` and its attention
    ``mask`` [rows, columns], in place for the cache; returns the new mask. Leading columns that only
    padding uses any more are cut from both."""
    mask = mask[index]
    used = int(mask.any(0).nonzero()[0])
    for layer in cache.layers:
        layer.keys = layer.keys[index][:, :, used:]
        layer.values = layer.values[index][:, :, used:]
    return mask[:, used:]
