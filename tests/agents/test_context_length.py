"""A prompt longer than the model's context is said to be that (ContextLengthError, naming both
lengths and the fix), before any generation: not an out-of-memory error or garbage past the
model's positions. The tiny random model: its context is its config's, the mechanics are the point."""

import pytest

from agents.models import ContextLengthError, load_model


def test_a_prompt_past_the_context_names_both_lengths(tiny_dir):
    model = load_model(str(tiny_dir), cache=False)
    context = model.model.config.max_position_embeddings
    with pytest.raises(ContextLengthError, match=rf"plus 8 for the answer exceeds the model's context of {context}"):
        model.generate([[{"role": "user", "content": "word " * (context + 10)}]], max_tokens=8)
    [[fits]] = model.generate([[{"role": "user", "content": "word " * 10}]], max_tokens=4)
    assert fits.tokens >= 1
