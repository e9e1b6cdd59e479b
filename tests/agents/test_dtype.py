"""The dtype setting: auto follows the CPU's bf16 units, explicit values are honoured, and the
choice reaches the weights (one cached model per name and resolved dtype)."""

import pytest
import torch

from agents import Agent
from agents.models import DtypeError
from agents.models.dtype import cpu_has_bf16, resolve_dtype


@pytest.mark.parametrize(("flags", "expected"), [("fpu sse avx2 avx512f amx_bf16 amx_tile", True),
                                                  ("fpu sse avx2 avx512f avx512_bf16", True),
                                                  ("fpu sse avx2 avx512f avx512_vnni", False)])
def test_bf16_units_are_read_from_the_cpu_flags(tmp_path, flags, expected):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nmodel name\t: x\nflags\t\t: {flags}\n\nprocessor\t: 1\n")
    assert cpu_has_bf16(str(cpuinfo)) is expected


def test_auto_resolves_by_device_and_explicit_values_pass_through():
    assert resolve_dtype("auto", "cpu") == ("bfloat16" if cpu_has_bf16() else "float32")
    assert resolve_dtype("auto", "mps") == "float32"
    assert resolve_dtype("float32", "cpu") == "float32" and resolve_dtype("bfloat16", "cpu") == "bfloat16"
    with pytest.raises(DtypeError, match="'fp16' is not one of auto, bfloat16, float32"):
        resolve_dtype("fp16")
    with pytest.raises(DtypeError):
        Agent(model="smollm2-135m", dtype="half")


def test_the_dtype_reaches_the_weights_and_keys_the_cache(tiny_dir, monkeypatch):
    """``smollm2-135m`` by name through the registry's own factory and cache, its weights' directory
    swapped for the tiny model's: the cache key and the dtype's way to the weights are the point."""
    from agents.models import ModelRegistry, embedded

    monkeypatch.setattr(embedded, "embedded_directory", lambda name, **_: tiny_dir)
    registry = ModelRegistry(entry_points=True)  # a pool of its own: the process's cache is left untouched
    auto = resolve_dtype("auto", "cpu")
    other = "float32" if auto == "bfloat16" else "bfloat16"
    model = registry.load("smollm2-135m")
    assert model.path == tiny_dir and model.name == "smollm2-135m"  # the swap took: no pretrained weights here
    assert model.dtype == auto and {p.dtype for p in model.model.parameters()} == {getattr(torch, auto)}
    assert registry.load("smollm2-135m", dtype=auto) is model  # auto and what it resolves to are one model
    forced = Agent(model="smollm2-135m", dtype=other, registry=registry).model
    assert forced is not model and forced.dtype == other
    assert {p.dtype for p in forced.model.parameters()} == {getattr(torch, other)}
    assert registry.load("smollm2-135m", dtype=other) is forced
    [[a]] = forced.generate([[{"role": "user", "content": "Name a colour."}]], max_tokens=6)
    assert a.tokens >= 1


def test_a_cpuinfo_file_is_read_again_each_time(tmp_path):
    """Only the machine's own answer is cached: the same path with new contents gives the new answer."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("flags\t\t: fpu avx512_bf16\n")
    assert cpu_has_bf16(str(cpuinfo)) is True
    cpuinfo.write_text("flags\t\t: fpu avx2\n")
    assert cpu_has_bf16(str(cpuinfo)) is False
