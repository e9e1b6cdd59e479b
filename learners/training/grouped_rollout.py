"""GRPO's rollouts on the live policy: each distinct prompt prefilled once, finished rows leave the batch.

trl's transformers path (``GRPOTrainer._generate_single_turn``) left-pads every row of the rollout
batch and calls ``model.generate``: a prompt that is sampled ``num_generations`` times is prefilled
``num_generations`` times (on CPU, a 550-token doc prompt costs as much compute as ~550 decode steps
of one row), and the batch decodes until its longest row ends, every finished row still paying for
its matmuls and its share of the attention over a growing cache. Here:

* the distinct prompts of the batch are prefilled once each (one left-padded forward), and their
  KV cache rows are copied to every completion that shares the prompt;
* each decode step feeds only the rows still running: a row that produced an end token (or reached
  ``max_new_tokens``) leaves the batch and the cache at once, and cache columns only padding uses
  any more are cut off (the same bookkeeping as the serving engine, ``agents.models.continuous``);
* each row samples from its own ``torch.Generator`` seeded from ``(seed, row)``, so a completion
  depends on the seed, its prompt and its place in the batch, not on which other rows are still
  running or on the global RNG; greedy rows (``temperature`` 0) take the argmax.

The model is whatever the trainer generates with (the float32 policy itself, or its bfloat16 copy
on a CPU with bf16 units): the current weights, no conversion to another engine. Sampling is plain
``softmax(logits / temperature)``: trl's defaults (``top_k`` 0, ``top_p`` 1, no ``min_p``,
``repetition_penalty`` 1); ``supported`` says when a trainer's settings ask for more, and the
trainer falls back to trl's path then.
"""

from __future__ import annotations

from collections.abc import Iterable


def supported(generation_config) -> bool:
    """Whether this engine samples what ``generation_config`` asks for (else use ``model.generate``)."""
    top_k = getattr(generation_config, "top_k", None)
    top_p = getattr(generation_config, "top_p", None)
    return ((top_k is None or top_k == 0) and (top_p is None or top_p >= 1.0)
            and getattr(generation_config, "min_p", None) is None
            and getattr(generation_config, "repetition_penalty", None) in (None, 1.0)
            and not getattr(generation_config, "suppress_tokens", None)
            and getattr(generation_config, "num_beams", 1) in (None, 1))


def row_seed(seed: int, row: int) -> int:
    """A row's sampling seed: a fixed mix of the call's seed and the row's index (SplitMix64)."""
    z = (seed * 0x9E3779B97F4A7C15 + row + 1) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFF


def sample_grouped(model, prompt_ids: list[list[int]], *, max_new_tokens: int, temperature: float,
                   eos_ids: Iterable[int], pad_id: int, seed: int) -> list[list[int]]:
    """One completion per row of ``prompt_ids`` (token ids, rows that repeat a prompt share its
    prefill), each ending with its end token when it produced one, as trl's path returns them."""
    import torch

    from agents.models.continuous import cache_keyword, select_rows

    if not prompt_ids or any(not ids for ids in prompt_ids):
        raise ValueError("every rollout row needs a non-empty prompt")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    eos = {int(e) for e in eos_ids}
    distinct: dict[tuple[int, ...], int] = {}
    owner = [distinct.setdefault(tuple(ids), len(distinct)) for ids in prompt_ids]
    prompts = list(distinct)
    device = model.device
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - len(p):] = torch.tensor(p)
        mask[i, width - len(p):] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    generators = []
    for row in range(len(prompt_ids)):
        generator = torch.Generator(device=device)
        generator.manual_seed(row_seed(seed, row))
        generators.append(generator)
    completions: list[list[int]] = [[] for _ in prompt_ids]
    keyword = cache_keyword(model)
    with torch.no_grad():
        from transformers import DynamicCache

        cache = DynamicCache(config=model.config)
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
                       use_cache=True, logits_to_keep=1, **{keyword: cache}).logits[:, -1, :]
        index = torch.tensor(owner, device=device)
        mask, logits = select_rows(cache, mask.to(device), index), logits[index]
        running = list(range(len(prompt_ids)))  # the original row of each batch row
        lengths = [len(prompt_ids[r]) for r in running]  # tokens so far, per batch row
        for _ in range(max_new_tokens):
            chosen = _choose(logits, [generators[r] for r in running], temperature)
            keep = []
            for i, (row, token) in enumerate(zip(running, chosen, strict=True)):
                completions[row].append(token)
                if token not in eos and len(completions[row]) < max_new_tokens:
                    keep.append(i)
            if not keep:
                break
            if len(keep) < len(running):
                mask = select_rows(cache, mask, torch.tensor(keep, device=device))
                running, lengths = [running[i] for i in keep], [lengths[i] for i in keep]
                chosen = [chosen[i] for i in keep]
            mask = torch.cat([mask, mask.new_ones((len(running), 1))], dim=1)
            last = torch.tensor([[t] for t in chosen], device=device)
            position = torch.tensor([[n] for n in lengths], device=device)
            lengths = [n + 1 for n in lengths]
            logits = model(input_ids=last, attention_mask=mask, position_ids=position, use_cache=True,
                           **{keyword: cache}).logits[:, -1, :]
    return completions


def _choose(logits, generators, temperature: float) -> list[int]:
    """Each row's next token: the argmax (``temperature`` 0), or a draw from its own generator."""
    import torch

    logits = logits.float()
    if temperature <= 0:
        return logits.argmax(-1).tolist()
    probs = torch.softmax(logits / temperature, dim=-1)
    return [int(torch.multinomial(probs[i], 1, generator=g)) for i, g in enumerate(generators)]
