"""A model directory in CTranslate2's format, made once per weights and kept in the cache.

CTranslate2 reads its own format (``model.bin``, ``vocabulary.json``, ``config.json``), which its
converter writes from a transformers directory in ~20 s for the 0.5B model here. The converted
copy is keyed by a SHA-256 over the source directory's files (weights, config, tokenizer) and the
quantisation, so a model a learner just trained, saved to the same path, converts again on first
use and an unchanged one never does. Hashing 2 GB of float32 weights costs seconds; the digest is
remembered beside the cache entry under the files' (name, size, mtime) so that a second load
reads no weights. Conversion writes a private temporary directory and renames it into place:
two processes converting at once both succeed and one copy is kept.

Learners save a new model per run, and each float32 copy of the 0.5B model is 2 GB, so the
cache is bounded: after a conversion the least recently used copies are removed until the cache
holds at most ``SEBENCH_CT2_CACHE_GB`` (default 12) GB; the copy just made or used is never one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from agents.models.errors import ModelUnavailableError
from sebench.errors import SettingError

QUANTIZATIONS = ("int8", "float32")
CHUNK = 1 << 22
DEFAULT_CACHE_GB = 12.0
_IGNORED = ("source.json", "training_args.bin", "trainer_state.json", "README.md")  # nothing a conversion reads


def ct2_cache_dir() -> Path:
    from agents.models.embedded import cache_dir

    return cache_dir() / "ct2"


def cache_limit_bytes() -> int:
    """The cache's size bound, from ``SEBENCH_CT2_CACHE_GB`` (a number of gigabytes)."""
    raw = os.environ.get("SEBENCH_CT2_CACHE_GB", str(DEFAULT_CACHE_GB))
    try:
        gigabytes = float(raw)
    except ValueError:
        raise ModelUnavailableError(f"SEBENCH_CT2_CACHE_GB={raw!r} is not a number of gigabytes "
                                    f"(default {DEFAULT_CACHE_GB})") from None
    return int(gigabytes * (1 << 30))


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.iterdir() if p.is_file())


def _touch(target: Path) -> None:
    """Mark a converted copy as just used (its ``model.bin`` mtime orders the eviction)."""
    try:
        os.utime(target / "model.bin")
    except OSError:
        pass


def evict_least_recently_used(keep: Path, limit: int | None = None) -> list[Path]:
    """Remove converted copies, least recently used first, until the cache fits ``limit`` bytes.

    ``keep`` (the copy about to be loaded) is never removed, even if it alone is over the limit.
    Returns the removed directories."""
    limit = cache_limit_bytes() if limit is None else limit
    root = ct2_cache_dir()
    entries = [d for d in root.iterdir() if d.is_dir() and (d / "model.bin").is_file()] if root.is_dir() else []
    sizes = {d: _size(d) for d in entries}
    total = sum(sizes.values())
    removed = []
    for directory in sorted(entries, key=lambda d: (d / "model.bin").stat().st_mtime_ns):
        if total <= limit:
            break
        if directory.resolve() == keep.resolve():
            continue
        shutil.rmtree(directory, ignore_errors=True)
        total -= sizes[directory]
        removed.append(directory)
    return removed


def _source_files(model_dir: Path) -> list[Path]:
    return sorted(p for p in model_dir.iterdir() if p.is_file() and p.name not in _IGNORED
                  and not p.name.startswith("."))


def _stamp(files: list[Path]) -> str:
    """What says the files did not change since they were hashed: name, size, mtime."""
    parts = [f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def weights_key(model_dir: Path) -> str:
    """SHA-256 over the contents of ``model_dir``'s files, remembered under their stamp."""
    files = _source_files(model_dir)
    memo = ct2_cache_dir() / "hashes" / f"{hashlib.sha256(str(model_dir.resolve()).encode()).hexdigest()[:24]}.json"
    stamp = _stamp(files)
    try:
        known = json.loads(memo.read_text())
        if known.get("stamp") == stamp:
            return known["sha256"]
    except (OSError, ValueError, KeyError):
        pass
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.name}\0".encode())
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    key = digest.hexdigest()
    memo.parent.mkdir(parents=True, exist_ok=True)
    tmp = memo.with_name(f".{memo.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"stamp": stamp, "sha256": key, "path": str(model_dir.resolve())}))
    os.replace(tmp, memo)
    return key


def converted_directory(model_dir: str | Path, quantization: str) -> Path:
    """The CTranslate2 copy of ``model_dir`` in ``quantization``, converting it if needed.

    Raises:
        ModelUnavailableError: ctranslate2 is not installed, or its converter cannot read this
            model (an architecture it does not support); the message says which.
    """
    if quantization not in QUANTIZATIONS:
        raise SettingError(f"quantization {quantization!r} is not one of {', '.join(QUANTIZATIONS)}")
    model_dir = Path(model_dir)
    if not (model_dir / "config.json").is_file():
        raise ModelUnavailableError(f"{model_dir}: not a model directory (no config.json)")
    try:
        import ctranslate2  # noqa: F401 - the converter needs it
        from ctranslate2.converters import TransformersConverter
    except ImportError as exc:
        raise ModelUnavailableError("the ct2 engine needs ctranslate2: pip install ctranslate2, "
                                    "or use --engine transformers") from exc
    target = ct2_cache_dir() / f"{weights_key(model_dir)[:32]}-{quantization}"
    if (target / "model.bin").is_file():
        _touch(target)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        TransformersConverter(str(model_dir), low_cpu_mem_usage=True).convert(str(tmp), quantization=quantization,
                                                                            force=True)
        (tmp / "source.json").write_text(json.dumps({"model_dir": str(model_dir.resolve()),
                                                     "quantization": quantization}))
        try:
            os.rename(tmp, target)
        except OSError:  # another process put its copy there first: keep that one
            if not (target / "model.bin").is_file():
                raise
    except ModelUnavailableError:
        raise
    except Exception as exc:  # noqa: BLE001 - the converter's own errors, with the model named
        raise ModelUnavailableError(f"{model_dir}: CTranslate2 cannot convert this model "
                                    f"({type(exc).__name__}: {exc}); use --engine transformers") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _touch(target)
    evict_least_recently_used(keep=target)
    return target
