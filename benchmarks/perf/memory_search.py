"""Memory search latency: top-10 queries at 1k, 10k and 100k items, for each backend.

    python -m benchmarks.perf.memory_search [--sizes 1000,10000,100000] [--queries 200]

Items are random unit vectors of the embedder's size (384): search cost is the index's, not
the embedder's, which is timed once separately. Prints p50/p95 per query, the process's
resident memory growth and the store's size on disk.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from memory import ChromaStore, Embedder, InMemoryStore

DIM = 384


def _rss_mb() -> float:
    """Current resident memory (Linux), else the peak."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _disk_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20 if path.exists() else 0.0


def run(sizes: list[int], queries: int) -> list[dict]:
    rng = np.random.default_rng(0)
    embedder = Embedder()
    started = time.perf_counter()
    embedder.embed(["warm up"] * 8)
    rows = [{"backend": "embedder", "items": 0, "note": f"{(time.perf_counter() - started) * 1000:.0f} ms first call"}]
    for size in sizes:
        vectors = rng.normal(size=(size, DIM)).astype(np.float32)
        probes = rng.normal(size=(queries, DIM)).astype(np.float32)
        for name in ("inmemory", "chroma"):
            tmp = Path(tempfile.mkdtemp(prefix=f"membench-{name}-"))
            before = _rss_mb()
            if name == "inmemory":
                store = InMemoryStore(embedder, path=tmp / "mem")
            else:
                store = ChromaStore(tmp / "db", embedder)
            started = time.perf_counter()
            ids = [f"i{i}" for i in range(size)]
            texts = [f"item {i}" for i in range(size)]
            metas = [{"kind": "rule" if i % 2 else "trajectory"} for i in range(size)]
            store.add(texts, metas, ids, embeddings=vectors)
            store.persist()
            insert_s = time.perf_counter() - started
            latencies = []
            for probe in probes:
                t = time.perf_counter()
                store.search(probe, k=10)
                latencies.append((time.perf_counter() - t) * 1000)
            rows.append({"backend": name, "items": size, "p50_ms": float(np.percentile(latencies, 50)),
                         "p95_ms": float(np.percentile(latencies, 95)), "insert_s": insert_s,
                         "rss_growth_mb": _rss_mb() - before, "disk_mb": _disk_mb(tmp)})
            store.close()
            shutil.rmtree(tmp, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path(".bench/memory_search.json"))
    args = parser.parse_args()
    rows = run([int(s) for s in args.sizes.split(",")], args.queries)
    table = Table(title=f"memory search, top-10, {args.queries} queries per cell")
    for col in ("backend", "items", "p50 ms", "p95 ms", "insert s", "RSS growth MB", "disk MB"):
        table.add_column(col, justify="right")
    for r in rows[1:]:
        table.add_row(r["backend"], f"{r['items']:,}", f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}",
                      f"{r['insert_s']:.1f}", f"{r['rss_growth_mb']:.0f}", f"{r['disk_mb']:.1f}")
    console = Console()
    console.print(table)
    console.print(f"embedder: {rows[0]['note']}; RSS growth: resident memory after the cell's inserts and "
                  "queries minus before (the store is still open)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
