"""Option types and help texts shared by the ``sebench`` commands (spelled here, not imported
from the library, to keep ``sebench`` fast to start)."""

from __future__ import annotations

from typing import Literal

Usage = Literal["standard", "strict"]  # envs.zwc.env.USAGES, spelled here to keep `sebench` fast to start
USAGE_HELP = ("How a pass must use the library: standard (a catalogued zwc function runs in every test) or strict "
              "(single-function tasks must also run their own function).")
Dtype = Literal["auto", "bfloat16", "float32"]  # agents.models.dtype.DTYPES
Engine = Literal["auto", "transformers", "ct2-int8", "ct2-float32"]  # agents.models.local_model.ENGINES
Preset = Literal["cpu", "paper"]  # agents.presets.PRESETS
PRESET_HELP = ("Evaluation settings: cpu (greedy single samples, 0.8 for more, 512 tokens, n 5) or paper (SE-Bench's "
               "temperature 0.6, one sample, pass@1, 8192 tokens for thinking models); explicit --n, --temperature "
               "and --max-tokens win; the preset is recorded in the results' config.")
ENGINE_HELP = ("What generates for a local model: auto (CTranslate2 float32 for greedy answers of a float32 CPU "
               "model where ctranslate2 is installed, transformers for seeded sampling), transformers, ct2-int8 or "
               "ct2-float32.")
DTYPE_HELP = ("Weights / compute type of local models: auto (bfloat16 where the CPU has AMX or AVX-512-BF16 or the "
              "GPU supports it, else float32), bfloat16 or float32.")
