"""Tiny random-initialised models: the real architecture and tokenizer, two layers, no hub.

Tests of mechanics (weights moved, a resume redid nothing, a model saved and loaded by path, a
trainer's loss reached) need a model that behaves like the embedded ones in every way but
skill, and costs milliseconds a step. As TRL tests its trainers, this builds one from the
embedded model's own config and tokenizer (SmolLM2's Llama or Qwen2.5's Qwen2 architecture, the
chat template, special tokens and vocabulary unchanged) with 2 layers and a hidden size of 64,
random weights drawn from ``seed``. The result is a plain model directory: ``load_model(path)``,
the trainers and ``sebench --model PATH`` take it as they take any trained model.

It answers with noise: a test that needs a passing answer scripts it (the model's words are not
the point there); a test where skill is the point uses the pretrained model and says why.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from agents.models.embedded import SPECS, embedded_directory
from sebench.errors import SettingError

# Two layers and a hidden size of 64: the architecture's every part, at ~3M parameters (most of
# them the 49k-151k token embedding, which the real tokenizer needs).
TINY_SHAPE = {"num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 16}


def tiny_model_directory(out: str | Path, *, base: str = "smollm2-135m", seed: int = 0, **shape: int) -> Path:
    """Write a random-initialised ``base``-architecture model with ``base``'s tokenizer to ``out``.

    Args:
        out: the directory to write (made atomically: present with ``config.json`` means complete;
            an existing complete one is returned as it is).
        base: an embedded model whose config and tokenizer to take (``SPECS``).
        seed: the weights' seed: the same seed writes the same weights.
        shape: config fields to override on top of ``TINY_SHAPE``.
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    if base not in SPECS:
        raise SettingError(f"base must be an embedded model ({', '.join(SPECS)}), not {base!r}")
    target = Path(out)
    if (target / "config.json").is_file():
        return target
    source = embedded_directory(base)
    config = AutoConfig.from_pretrained(source)
    for key, value in (TINY_SHAPE | shape).items():
        setattr(config, key, value)
    if getattr(config, "layer_types", None) is not None:  # Qwen2 lists one attention type per layer
        config.layer_types = config.layer_types[:config.num_hidden_layers]
    config.max_window_layers = min(getattr(config, "max_window_layers", 0) or 0, config.num_hidden_layers)
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    finally:
        torch.random.set_rng_state(generator_state)  # the caller's stream is left as it was
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    AutoTokenizer.from_pretrained(source).save_pretrained(partial)
    (partial / "source.json").write_text(json.dumps({"model": f"tiny-{base}", "random_init_seed": seed,
                                                     "shape": TINY_SHAPE | shape}, indent=1) + "\n")
    try:
        partial.rename(target)
    except OSError:  # a concurrent writer won: its directory is as good as ours
        shutil.rmtree(partial, ignore_errors=True)
    return target
