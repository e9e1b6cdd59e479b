"""Reasoning blocks in answers: what a thinking model (Qwen3, DeepSeek-R1) writes before its answer.

A thinking model opens ``<think>``, reasons (often drafting code), closes ``</think>`` and then
answers. Two things follow for grading. The code is the answer's, not a draft inside the
reasoning: the answer is what comes after the last ``</think>`` (DeepSeek-R1's template opens
the block in the prompt, so its output may hold only the closing tag). And an answer cut off by
``max_tokens`` before ``</think>`` holds no answer at all: that is a token budget too small for
the model, which a record must say (``Reason``: ``truncated_thinking``) rather than count it as a
model that wrote no code. The paper's budget (8192 tokens, ``presets.PAPER``) is set for exactly
this; the CPU budgets are not, which is why the reason is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

OPEN, CLOSE = "<think>", "</think>"
TRUNCATED_THINKING = "truncated_thinking"  # the verdict reason of an answer cut off inside its reasoning


@dataclass(frozen=True)
class Split:
    thinking: str  # the reasoning, without its tags ("" for a model that does not think)
    answer: str  # what the code is taken from
    cut_in_thinking: bool  # the text ended inside an open reasoning block


def split_thinking(text: str) -> Split:
    """The reasoning and the answer of ``text``."""
    close = text.rfind(CLOSE)
    if close >= 0:
        head = text[:close]
        start = head.find(OPEN)
        thinking = head[start + len(OPEN):] if start >= 0 else head
        return Split(thinking.strip(), text[close + len(CLOSE):], False)
    start = text.find(OPEN)
    if start >= 0:  # opened and never closed: max_tokens ended it while the model was reasoning
        return Split(text[start + len(OPEN):].strip(), text[:start], True)
    return Split("", text, False)
