"""GRPO's rollout engines on the same rollout batch: trl's padded ``generate`` against grouped rollouts.

    python -m benchmarks.perf.rollout_engine [--zwc .bench/zwc-seed0] [--model qwen2.5-coder-0.5b]
        [--prompts 2] [--generations 4] [--tokens 64] [--reps 2]

``benchmarks/perf/rl_step.py`` times whole GRPO steps, where the two engines draw different samples
(different lengths, different rewards), so its rollout tokens/s mixes the engine with what was
sampled. Here both engines generate the same rollout batch (``--prompts`` Closed-RL doc prompts of
the build's first train tasks, ``--generations`` copies of each, as trl's sampler repeats them) with
the same model object, in two settings:

* ``fixed``: no end token, so every row generates exactly ``--tokens`` tokens: the same work on both
  sides (prefill + decode), the engine's speed alone;
* ``eos``: the model's own end tokens, rows stop where they stop (the sampled lengths differ
  between the engines; tokens/s is reported over what each generated).

The engines alternate (generate, grouped, generate, grouped, ...) so that other load on the machine
falls on both; the ratio is grouped over generate, seconds per rollout batch and tokens/s.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table


def _plain(model, rows, tokens, eos, pad, seed):
    """trl's transformers path: left-pad every row, ``generate`` with trl's sampling settings."""
    import torch

    torch.manual_seed(seed)
    width = max(len(r) for r in rows)
    ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=tokens, min_new_tokens=0,
                             do_sample=True, temperature=1.0, top_k=0, top_p=1.0, eos_token_id=eos or None,
                             pad_token_id=pad)[:, width:].tolist()
    completions = []
    for row in out:
        end = next((i for i, t in enumerate(row) if t in eos), None)
        completions.append(row if end is None else row[:end + 1])
    return completions


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--zwc", default=".bench/zwc-seed0")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--prompts", type=int, default=2)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--out", default=None, help="also write the timings as JSON here")
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agents.models.embedded import SPECS, embedded_directory
    from envs.zwc import ZWCEnv
    from learners.rl import rollout_prompts
    from learners.training.grouped_rollout import sample_grouped

    base = embedded_directory(args.model) if args.model in SPECS else Path(args.model)
    tokenizer = AutoTokenizer.from_pretrained(base)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32).eval()
    with ZWCEnv(args.zwc) as env:
        prompts = rollout_prompts(env, env.tasks("train")[:args.prompts], 1200)
    ids = [tokenizer.apply_chat_template(p["prompt_open"], add_generation_prompt=True, tokenize=True,
                                         return_dict=True)["input_ids"] for p in prompts]
    rows = [list(p) for p in ids for _ in range(args.generations)]
    declared = model.generation_config.eos_token_id
    eos = sorted({*([declared] if isinstance(declared, int) else declared or []), tokenizer.eos_token_id, pad})
    engines = {"generate": lambda ends, seed: _plain(model, rows, args.tokens, ends, pad, seed),
               "grouped": lambda ends, seed: sample_grouped(model, rows, max_new_tokens=args.tokens, temperature=1.0,
                                                            eos_ids=ends, pad_id=pad, seed=seed)}
    timings: dict[str, dict[str, list]] = {}
    for setting, ends in (("fixed", []), ("eos", eos)):
        for rep in range(args.reps):
            for name, run in engines.items():
                started = time.perf_counter()
                out = run(ends, rep)
                seconds = time.perf_counter() - started
                timings.setdefault(f"{setting}/{name}", {"seconds": [], "tokens": []})
                timings[f"{setting}/{name}"]["seconds"].append(round(seconds, 2))
                timings[f"{setting}/{name}"]["tokens"].append(sum(len(c) for c in out))
    lengths = ", ".join(str(len(i)) for i in ids)
    table = Table(title=f"{args.model}, float32: {args.prompts} prompts ({lengths} tokens) x {args.generations} "
                        f"completions, up to {args.tokens} tokens, {torch.get_num_threads()} threads, {args.reps} reps "
                        "alternating")
    for col in ("setting", "engine", "s per rollout batch", "tokens", "tokens/s"):
        table.add_column(col, justify="right")
    summary = {}
    for key, t in timings.items():
        seconds, tokens = sum(t["seconds"]) / len(t["seconds"]), sum(t["tokens"]) / len(t["tokens"])
        summary[key] = {"seconds": round(seconds, 2), "tokens": tokens, "tokens_per_second": round(tokens / seconds, 2)}
        table.add_row(*key.split("/"), f"{seconds:.1f}", f"{tokens:.0f}", f"{tokens / seconds:.2f}")
    console = Console()
    console.print(table)
    for setting in ("fixed", "eos"):
        a, b = summary[f"{setting}/generate"], summary[f"{setting}/grouped"]
        console.print(f"{setting}: grouped / generate: x{a['seconds'] / b['seconds']:.2f} shorter per rollout batch, "
                      f"tokens/s x{b['tokens_per_second'] / a['tokens_per_second']:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"timings": timings, "summary": summary}, indent=1) + "\n")


if __name__ == "__main__":
    main()
