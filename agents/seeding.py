"""Seeds for every generation, derived from one run seed: reproducible to the sample.

A sampled answer is identified by (run seed, task, sample, turn); its seed is a hash of those,
so it does not depend on which other answers shared its batch, in which order episodes ran, or
how many samples a resumed run still had to draw. Backends that can seed a row of a batch on
its own take these seeds (``supports_seeds``); the others ignore them and say so in the config.
"""

from __future__ import annotations

import hashlib

DEFAULT_SEED = 0


def derive_seed(seed: int, *keys: object) -> int:
    """A 63-bit seed for ``keys`` under the run seed ``seed`` (sha256: stable across processes)."""
    text = "\x1f".join([str(int(seed)), *map(str, keys)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def row_seeds(seeds: list[int] | None, n: int) -> list[int] | None:
    """One seed per returned sample: sample ``j`` of prompt ``i`` draws from ``derive_seed(seeds[i], j)``."""
    if seeds is None:
        return None
    return [derive_seed(s, j) for s in seeds for j in range(n)]


def supports_seeds(model: object) -> bool:
    """Whether ``model.generate`` takes per-prompt ``seeds``."""
    return bool(getattr(model, "supports_seeds", False))
