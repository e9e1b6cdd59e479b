"""The documented GPU commands for the RL learners (the one bash block of the README or a docs/
page that runs ``learners.training.rl_train``: docs/gpu.md) are the ones the code runs: every flag exists,
every --set parses into valid settings, the accelerate config is there and parses."""

import re
import shlex
from pathlib import Path

import yaml

from benchmarks.cli_shared import parse_overrides
from learners import make
from learners.training.rl_train import build_parser

ROOT = Path(__file__).resolve().parents[3]


def _commands() -> list[list[str]]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    [block] = [b for page in pages for b in re.findall(r"```bash\n(.*?)```", page.read_text(), re.DOTALL)
               if "learners.training.rl_train" in b]
    joined = re.sub(r"\\\n\s*", " ", block)
    return [shlex.split(line, comments=True) for line in joined.splitlines() if line.strip()]


def test_the_documented_gpu_commands_parse(tmp_path):
    commands = _commands()
    evolve = next(c for c in commands if c[:2] == ["sebench", "evolve"])
    pairs = [evolve[i + 1] for i, arg in enumerate(evolve) if arg == "--set"]
    learner = evolve[evolve.index("--learner") + 1]
    config = parse_overrides(pairs)
    built = make(learner, state_dir=str(tmp_path), **config)
    assert built.config.train.use_vllm is True and built.config.limit is None

    launch = next(c for c in commands if c[:2] == ["accelerate", "launch"])
    config_file = ROOT / launch[launch.index("--config_file") + 1]
    assert isinstance(yaml.safe_load(config_file.read_text()), dict)
    module_args = launch[launch.index("learners.training.rl_train") + 1:]
    args = build_parser().parse_args(module_args)
    assert args.variant == "closed" and args.prompts.endswith("prompts.jsonl")
