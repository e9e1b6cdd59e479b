"""The options every ``sebench`` command shares, defined once: their types, help texts and
defaults (one default model for all), so a command spells ``model: str = model_option()`` and
``--model`` means the same thing, with the same default, everywhere.

Spelled here, not imported from the library, to keep ``sebench`` fast to start; tests check
that the spelled values are the library's (``DTYPES``, ``USAGES``, ``DEFAULT_MODEL``).
"""

from __future__ import annotations

from typing import Any, Literal

import typer

Usage = Literal["standard", "strict"]  # envs.zwc.env.USAGES, spelled here to keep `sebench` fast to start
USAGE_HELP = ("How a pass must use the library: standard (a catalogued zwc function runs in every test) or strict "
              "(single-function tasks must also run their own function).")
Dtype = Literal["auto", "bfloat16", "float32"]  # agents.models.dtype.DTYPES
Engine = Literal["auto", "transformers", "ct2-int8", "ct2-float32"]  # agents.models.local_model.ENGINES
Preset = Literal["cpu", "paper"]  # agents.presets.PRESETS
PRESET_HELP = ("Evaluation settings: cpu (every sample at temperature 0.8, 512 tokens, n 5) or paper (SE-Bench's "
               "temperature 0.6, one sample, pass@1, 8192 tokens for thinking models); explicit --n, --temperature "
               "and --max-tokens win; the preset is recorded in the results' config.")
ENGINE_HELP = ("What generates for a local model: auto (CTranslate2 float32 for greedy answers of a float32 CPU "
               "model where ctranslate2 is installed, transformers for seeded sampling), transformers, ct2-int8 or "
               "ct2-float32.")
DTYPE_HELP = ("Weights / compute type of local models: auto (bfloat16 where the CPU has AMX or AVX-512-BF16 or the "
              "GPU supports it, else float32), bfloat16 or float32.")

# agents.models.registry.DEFAULT_MODEL: the capable embedded model, the default of every command (the
# README's and `make demo`'s); smollm2-135m is the fast one, asked for by name
DEFAULT_MODEL = "qwen2.5-coder-0.5b"
MODEL_DEFAULT_HELP = "The same default in every command (since issue 36); --model smollm2-135m is the fast one."
MODEL_KINDS = "a registered name (sebench backends), a model directory, vllm:<model> or openai:<url>#<model>"
LEARNER_SETTINGS_HELP = "`sebench learners NAME` lists a learner's settings."


def zwc_option(help: str = "A ZWC build with tasks.") -> Any:
    return typer.Option(..., "--zwc", help=help)


def out_option(help: str, required: bool = True) -> Any:
    return typer.Option(... if required else None, "--out", help=help)


def model_option(what: str = "The agent's model.", default: str | None = DEFAULT_MODEL,
                 default_help: str = MODEL_DEFAULT_HELP) -> Any:
    """``--model``: checked before any work (``cli_checks.model``)."""
    return typer.Option(default, "--model", help=f"{what} Any of {MODEL_KINDS}. {default_help}")


def dtype_option(extra: str = "") -> Any:
    return typer.Option("auto", "--dtype", help=DTYPE_HELP + extra)


def engine_option(extra: str = "") -> Any:
    return typer.Option("auto", "--engine", help=ENGINE_HELP + extra)


def usage_option() -> Any:
    return typer.Option("standard", "--usage", help=USAGE_HELP)


def limit_option(default: int | None, what: str) -> Any:
    """``--limit``: the first N of something, N >= 1 (``cli_checks.count``); None: all of them."""
    every = " Leave it out for all of them." if default is None else ""
    return typer.Option(default, "--limit", help=f"{what} N >= 1.{every}")


def count_option(name: str, default: int | None, what: str) -> Any:
    """A count that must be >= 1 (``--n``, ``--train-limit``, ``--steps``, ``--rounds`` ...)."""
    return typer.Option(default, name, help=f"{what} At least 1.")


def n_option(default: int | None = 4, what: str = "Samples per test task (pass@k for k <= n).") -> Any:
    return count_option("--n", default, what)


def max_tokens_option(default: int | None, what: str = "Tokens per answer.") -> Any:
    return count_option("--max-tokens", default, what)


def temperature_option() -> Any:
    return typer.Option(None, "--temperature", min=0.0, help="Sampling temperature of every answer, whatever --n; "
                        "default: the preset's (cpu 0.8, paper 0.6); 0 decodes greedily.")


def settings_option(what: str = "Learner setting KEY=VALUE (repeatable), e.g. --set max_steps=20 --set lora=true.") \
        -> Any:
    """``--set``: keys and value types are checked against the named learners' settings before any work."""
    return typer.Option([], "--set", help=f"{what} {LEARNER_SETTINGS_HELP}")


def learners_option(default: str, what: str = "Comma-separated learner names (sebench learners lists them).") -> Any:
    return typer.Option(default, "--learners", help=what)


def gather_model_option(default: str | None, what: str) -> Any:
    return typer.Option(default, "--gather-model", help=what)


def probe_limit_option() -> Any:
    return count_option("--probe-limit", None, "Probe only the first N functions.")


def report_out_option() -> Any:
    return out_option("Report directory (summary.json, report.md, report.html, plots); not written when an "
                      "argument is wrong.")
