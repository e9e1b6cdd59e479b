"""``sebench serve`` latency: five concurrent streamed requests of mixed lengths, three engines.

    python -m benchmarks.perf.serve_latency [--model smollm2-135m] [--max-tokens 256,16,128,32,64]

In one run, on the same model and prompts, all requests sent at once (greedy):
  * ``batched generate``: the server as it was — requests grouped by settings into one
    ``model.generate`` call each, every answer held until its batch's slowest one ends;
  * ``continuous``: the server as it is (``agents.models.continuous``) over HTTP;
  * ``hf continuous``: transformers' own ``ContinuousBatchingManager`` (paged attention), called
    in process with streaming, for comparison (skipped where the installed transformers lacks it).
Prints time to first token and to the last one per request, the makespan, and the ratios of
the old server's means to the new one's (target: a short answer no longer waits for a long one).
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from agents.models import load_model
from agents.models.serve import serve_in_thread

TOPICS = ("a dragon who learns to bake bread", "a lighthouse keeper and a storm", "a robot that collects stamps",
          "two rival chess clubs", "a village that forgets its name", "a cat who runs a library")


def prompts(count: int) -> list[list[dict[str, str]]]:
    """Requests for long answers (so each budget is used), one topic each."""
    return [[{"role": "user", "content": f"Write a long, detailed story about {TOPICS[i % len(TOPICS)]}."}]
            for i in range(count)]


def over_http(model, messages: list, budgets: list[int], continuous: bool) -> list[dict]:
    """Each request's ``ttft``/``total`` seconds and ``tokens``, all sent together, streamed."""
    server, url = serve_in_thread(model, continuous=continuous, max_num_seqs=len(messages))
    results: list[dict] = [{} for _ in messages]
    start = threading.Barrier(len(messages) + 1)

    def one(i: int) -> None:
        body = {"model": model.name, "messages": messages[i], "max_tokens": budgets[i], "temperature": 0,
                "stream": True, "stream_options": {"include_usage": True}}
        start.wait()
        t0 = time.perf_counter()
        with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=3600) as response:
            for line in response.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line[6:])
                if chunk["choices"] and chunk["choices"][0]["delta"].get("content") and "ttft" not in results[i]:
                    results[i]["ttft"] = time.perf_counter() - t0
                if chunk.get("usage"):
                    results[i]["tokens"] = chunk["usage"]["completion_tokens"]
        results[i]["total"] = time.perf_counter() - t0
        results[i].setdefault("ttft", results[i]["total"])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(messages))]
    for t in threads:
        t.start()
    start.wait()
    for t in threads:
        t.join()
    server.shutdown()
    server.server_close()
    return results


def hf_continuous(model, messages: list, budgets: list[int]) -> list[dict] | None:
    """The same requests through transformers' ContinuousBatchingManager, in process."""
    try:
        from transformers import GenerationConfig
        from transformers.generation.configuration_utils import ContinuousBatchingConfig
    except ImportError:
        return None
    tok = model.tokenizer
    ids = [tok(tok.apply_chat_template(m, add_generation_prompt=True, tokenize=False),
               add_special_tokens=False)["input_ids"] for m in messages]
    config = GenerationConfig(max_new_tokens=max(budgets), do_sample=False, eos_token_id=tok.eos_token_id,
                              pad_token_id=tok.pad_token_id)
    # sized by hand: on CPU its defaults size the paged cache from the machine's memory (GBs)
    pages = -(-sum(len(i) + b for i, b in zip(ids, budgets, strict=True)) // 64) + len(ids)
    manager = model.model.init_continuous_batching(
        generation_config=config, continuous_batching_config=ContinuousBatchingConfig(
            page_size=64, num_blocks=pages, max_batch_tokens=1024, max_requests_per_batch=len(ids)))
    manager.start()
    try:
        t0 = time.perf_counter()
        rids = [manager.add_request(i, max_new_tokens=b, streaming=True) for i, b in zip(ids, budgets, strict=True)]
        results = {r: {} for r in rids}
        left = len(rids)
        while left:
            out = manager.get_result(timeout=600)
            if out is None:
                raise RuntimeError("transformers' continuous batching stopped answering")
            seen = results[out.request_id]
            if out.generated_tokens and "ttft" not in seen:
                seen["ttft"] = time.perf_counter() - t0
            if out.is_finished():
                seen["total"] = time.perf_counter() - t0
                seen["tokens"] = len([t for t in out.generated_tokens if t != tok.eos_token_id])
                left -= 1
    finally:
        manager.stop(block=True, timeout=30)
    return [results[r] for r in rids]


def summary(rows: list[dict]) -> dict:
    return {"mean_ttft": statistics.mean(r["ttft"] for r in rows),
            "mean_total": statistics.mean(r["total"] for r in rows), "makespan": max(r["total"] for r in rows),
            "tokens": sum(r.get("tokens", 0) for r in rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--max-tokens", default="256,16,128,32,64", help="one budget per request")
    parser.add_argument("--skip-hf", action="store_true", help="leave out transformers' own engine")
    parser.add_argument("--out", type=Path, default=Path(".bench/serve_latency.json"))
    args = parser.parse_args()
    budgets = [int(b) for b in args.max_tokens.split(",")]
    model = load_model(args.model, dtype=args.dtype)
    messages = prompts(len(budgets))
    model.generate(messages[:2], max_tokens=4)  # warm-up
    runs = {"batched generate": over_http(model, messages, budgets, continuous=False),
            "continuous": over_http(model, messages, budgets, continuous=True)}
    if not args.skip_hf:
        try:
            hf = hf_continuous(model, messages, budgets)
        except Exception as exc:  # noqa: BLE001 - reported, the rest of the benchmark stands
            Console().print(f"transformers' continuous batching failed: {type(exc).__name__}: {exc}")
            hf = None
        if hf is not None:
            runs["hf continuous"] = hf
    table = Table(title=f"serve latency, {args.model} ({model.dtype if hasattr(model, 'dtype') else ''}), "
                        f"{len(budgets)} concurrent greedy requests, max_tokens {args.max_tokens}")
    table.add_column("engine")
    for i, b in enumerate(budgets):
        table.add_column(f"#{i} ({b}): first / last s", justify="right")
    for col in ("makespan s", "tokens", "tokens/s"):
        table.add_column(col, justify="right")
    for name, rows in runs.items():
        s = summary(rows)
        table.add_row(name, *[f"{r['ttft']:.1f} / {r['total']:.1f} ({r.get('tokens', '?')})" for r in rows],
                      f"{s['makespan']:.1f}", str(s["tokens"]), f"{s['tokens'] / s['makespan']:.1f}")
    console = Console(width=200)
    console.print(table)
    old, new = summary(runs["batched generate"]), summary(runs["continuous"])
    console.print(f"continuous vs batched generate: time to first token "
                  f"[bold]{old['mean_ttft'] / new['mean_ttft']:.1f}x[/bold] shorter, time to the whole answer "
                  f"[bold]{old['mean_total'] / new['mean_total']:.1f}x[/bold] shorter"
                  f" (means over requests), makespan {old['makespan'] / new['makespan']:.1f}x")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"model": args.model, "max_tokens": budgets, "runs": runs,
                                    "summary": {k: summary(v) for k, v in runs.items()}}, indent=1))


if __name__ == "__main__":
    main()
