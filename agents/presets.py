"""Evaluation presets: the settings that decide what a pass rate means, named once and recorded.

* ``cpu`` (the default): what a laptop CPU runs in minutes: every answer sampled at temperature
  0.8, 512 new tokens, 5 samples from the command line (pass@1..5).
* ``paper``: SE-Bench's own evaluation (thunlp/SE-Bench, README, ``query_only.py`` and
  ``query_doc.py`` with ``--sample_count 1 --temperature 0.6 --max_length 8192``): one sample per
  task at temperature 0.6, scored as pass@1, with 8192 new tokens, so that a thinking model (the
  paper's Qwen3-8B) finishes its reasoning. Reasoning blocks are handled in every preset
  (``agents.thinking``: the code is taken from the answer after ``</think>``, and an answer cut off
  inside its reasoning is reported as ``truncated_thinking``). On this project's 2-core CPU an
  8192-token budget is hours per row for the 0.5B model: the preset is for a GPU
  (``vllm:``/``openai:``) or for patience, and the CPU tables say ``cpu``.

A preset has one temperature, whatever ``n``: a pass@1 of a run with one sample per task and of a
run with five then estimate the same quantity, so rows with different ``n`` in one table compare
(once ``n`` = 1 decoded greedily and ``n`` > 1 sampled, and the two measured different things).
Greedy decoding is had only by asking for it (``--temperature 0``, ``Agent(temperature=0)``).

A preset fills what the command line leaves unset; an explicit ``--n``, ``--max-tokens`` or
``--temperature`` wins, and the config beside the results records the preset and every value.
"""

from __future__ import annotations

from dataclasses import dataclass

from sebench.errors import SebenchError


class PresetError(SebenchError, ValueError):
    """A preset name that is not one of ``PRESETS``."""


@dataclass(frozen=True)
class EvalPreset:
    name: str
    n: int  # samples per task from the command line
    temperature: float  # of every answer, whatever n (0: greedy)
    max_tokens: int  # new tokens per answer

    def agent_settings(self) -> dict:
        """The ``Agent`` keyword arguments this preset sets."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "preset": self.name}


CPU = EvalPreset("cpu", n=5, temperature=0.8, max_tokens=512)
PAPER = EvalPreset("paper", n=1, temperature=0.6, max_tokens=8192)
PRESETS = {p.name: p for p in (CPU, PAPER)}


def preset(name: str) -> EvalPreset:
    try:
        return PRESETS[name]
    except KeyError:
        raise PresetError(f"preset {name!r} is not one of {', '.join(PRESETS)} (cpu: the CPU defaults; paper: "
                          "SE-Bench's temperature 0.6, one sample, pass@1, 8192 tokens)") from None
