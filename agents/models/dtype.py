"""The numeric type models run and train in: ``auto`` | ``bfloat16`` | ``float32``.

``auto`` is bfloat16 where the hardware has bf16 units and float32 elsewhere: on a CPU with
AMX or AVX-512-BF16 (bf16 matmuls ran ~6x faster than float32 on this project's machine), or
on a CUDA GPU that supports bf16. bf16 changes greedy answers, so its quality cost is measured
(``benchmarks/perf/dtype_speed.py``), and ``float32`` stays one flag away (``--dtype float32``).
Used by the transformers backend (the weights' dtype) and by the trainers (bf16 autocast over
float32 master weights).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from agents.models.errors import ModelError

DTYPES = ("auto", "bfloat16", "float32")
BF16_CPU_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})  # /proc/cpuinfo names of the CPU's bf16 units


class DtypeError(ModelError, ValueError):
    """A dtype setting that is not one of ``DTYPES``."""


def check_dtype(value: str) -> str:
    """``value`` if it is a known setting; a typed error listing the choices otherwise."""
    if value not in DTYPES:
        raise DtypeError(f"dtype {value!r} is not one of {', '.join(DTYPES)} "
                         "(auto: bfloat16 where the CPU or GPU has bf16 units, float32 otherwise)")
    return value


def default_device() -> str:
    """Where a model runs unless told: CUDA when present, else the CPU."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def cpu_has_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """True when the CPU has AMX-BF16 or AVX-512-BF16: read from the kernel's CPU flags, or from
    torch's own probe where there is no /proc/cpuinfo (other operating systems). Only the
    machine's own answer is cached: a file passed in is read every time (its contents may change)."""
    if cpuinfo == "/proc/cpuinfo":
        return _this_cpu_has_bf16()
    return _flags_have_bf16(cpuinfo)


@cache
def _this_cpu_has_bf16() -> bool:
    return _flags_have_bf16("/proc/cpuinfo")


def _flags_have_bf16(cpuinfo: str) -> bool:
    path = Path(cpuinfo)
    if path.is_file():
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("flags"):
                return bool(BF16_CPU_FLAGS & set(line.partition(":")[2].split()))
        return False
    import torch

    probes = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return any(probe() for probe in probes if probe is not None)


def resolve_dtype(setting: str = "auto", device: str | None = None) -> str:
    """``bfloat16`` or ``float32``: the setting itself, or for ``auto`` what ``device`` runs fast."""
    if check_dtype(setting) != "auto":
        return setting
    device = device or default_device()
    if device.startswith("cuda"):
        import torch

        return "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float32"
    if device == "cpu":
        return "bfloat16" if cpu_has_bf16() else "float32"
    return "float32"  # other accelerators (mps, xpu …): float32 until measured there


def torch_dtype(name: str):
    """The torch dtype of a resolved name (``bfloat16`` or ``float32``)."""
    import torch

    return {"bfloat16": torch.bfloat16, "float32": torch.float32}[resolve_dtype(name)]
