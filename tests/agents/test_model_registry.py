"""The model registry: names and prefixes from the ``sebench.models`` entry-point group (ours
included), a fresh registry for tests, and the ``vllm:`` backend's code path where vLLM is absent."""

from __future__ import annotations

import importlib.util

import pytest

from agents.models import ModelRegistry, UnknownModelError, load_model
from agents.models.errors import ModelUnavailableError
from agents.models.registry import default_registry
from sebench import plugins


def test_our_backends_are_entry_points_like_anyone_elses():
    ours = {e.name for e in default_registry().entries() if "(sebench)" in e.origin}
    assert ours >= {"qwen2.5-coder-0.5b", "smollm2-135m", "reference", "vllm:", "openai:"}
    assert {name for name, ep in plugins.group(plugins.MODELS).items() if plugins.describe(ep).ours} == ours


def test_a_fresh_registry_resolves_names_and_the_longest_prefix(tiny):
    registry = ModelRegistry()
    assert registry.entries() == []  # no entry points unless asked for
    seen = []
    registry.register("a:", lambda rest, **kw: seen.append(("a:", rest)) or tiny)
    registry.register("a:b:", lambda rest, **kw: seen.append(("a:b:", rest)) or tiny)
    registry.register("plain", lambda **kw: tiny)
    assert registry.load("a:b:c") is tiny and registry.load("a:x") is tiny
    assert seen == [("a:b:", "c"), ("a:", "x")]
    assert registry.load("plain") is registry.load("plain")  # a name's model is shared until released
    with pytest.raises(UnknownModelError, match=r"unknown model 'other'; use one of a:<…>, a:b:<…>, plain"):
        registry.load("other")
    with pytest.raises(UnknownModelError, match="non-empty"):
        registry.register(" spaced", lambda **kw: tiny)


def test_weights_are_located_without_loading_a_model(tiny_dir):
    assert default_registry().weights_directory(f"vllm:{tiny_dir}") == tiny_dir
    assert default_registry().weights_directory(str(tiny_dir)) == tiny_dir
    assert default_registry().weights_directory("openai:http://127.0.0.1:1/v1#m") is None
    assert default_registry().has_local_weights("smollm2-135m") and default_registry().has_local_weights(str(tiny_dir))
    assert not default_registry().has_local_weights("reference") and not default_registry().has_local_weights("vllm:org/hub-name")


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed: the GPU path applies")
def test_vllm_without_vllm_is_a_typed_error_naming_the_extra(tiny_dir):
    """What runs of the ``vllm:`` backend on a machine without vLLM: its factory, its import, its error."""
    with pytest.raises(ModelUnavailableError, match=r"vllm:.* needs vLLM and a GPU: pip install 'sebench\[gpu\]'"):
        load_model(f"vllm:{tiny_dir}", dtype="float32")
