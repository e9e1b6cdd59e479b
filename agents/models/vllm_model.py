"""vLLM in process, for GPU users (``pip install 'sebench[gpu]'``). Imported lazily: vLLM is
GPU-only and absent from CPU machines, where this backend raises a typed error instead.
Not exercised by CI (no GPU there)."""

from __future__ import annotations

from agents.models.base import Completion, Messages, check_generate_args, cut_at_stop
from agents.models.errors import ModelUnavailableError


class VLLMModel:
    def __init__(self, model: str, **engine_kwargs):
        try:
            from vllm import LLM
        except ImportError as exc:
            raise ModelUnavailableError(f"vllm:{model} needs vLLM and a GPU: pip install 'sebench[gpu]' ({exc})") \
                from None
        self.name = f"vllm:{model}"
        self.llm = LLM(model=model, **engine_kwargs)

    supports_seeds = True  # one SamplingParams per prompt, with its seed

    def generate(self, prompts: list[Messages], *, n: int = 1, temperature: float = 0.0,
                 max_tokens: int = 512, stop: list[str] | None = None,
                 seeds: list[int] | None = None) -> list[list[Completion]]:
        check_generate_args(prompts, n, temperature, max_tokens)
        from vllm import SamplingParams

        if seeds is None:
            params = SamplingParams(n=n, temperature=temperature, max_tokens=max_tokens, stop=stop or None)
        else:
            params = [SamplingParams(n=n, temperature=temperature, max_tokens=max_tokens, stop=stop or None, seed=s)
                      for s in seeds]
        outputs = self.llm.chat(prompts, params, use_tqdm=False)
        return [[Completion(text=cut_at_stop(o.text, stop), tokens=len(o.token_ids),
                            finish_reason="length" if o.finish_reason == "length" else "stop",
                            prompt_tokens=None if out.prompt_token_ids is None else len(out.prompt_token_ids))
                 for o in out.outputs] for out in outputs]
