"""SFT learners on a tiny random-initialised model: weights change, the agent answers with the fine-tuned
model, the model loads later by path, and a killed run resumes from its last checkpoint."""

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agents import Agent
from agents.models import load_model
from agents.models.dtype import resolve_dtype
from learners import make

# on the tiny random-initialised model (tests/conftest.py: tiny_dir), at a learning rate that moves every weight
TINY = {"limit": 4, "gather_model": "reference", "docs_chars": 400, "max_steps": 2, "batch_size": 2,
        "max_length": 512, "save_steps": 100, "logging_steps": 1, "learning_rate": 5e-2, "warmup_ratio": 0.0}


def test_closed_sft_changes_the_weights_and_the_agent_answers_with_them(task_env, tiny_dir, tmp_path):
    base_model = load_model(str(tiny_dir), cache=False)  # its own copy: a learner that trained in place would show
    learner = make("closed-sft", state_dir=str(tmp_path / "state"), **TINY)
    agent = Agent(model=base_model, learner=learner, max_tokens=32, temperature=0)  # greedy, asked: compared below
    before = {k: v.detach().clone() for k, v in base_model.model.named_parameters()}
    report = agent.evolve(task_env)

    assert report.details["kept"] == 4 and report.details["steps"] == 2 and report.details["gathered_with"] == "reference"
    assert report.details["tokens_per_second"] > 0 and report.details["peak_memory_mb"] > 100
    assert report.details["dtype"] == resolve_dtype("auto", "cpu")  # the default reaches the trainer
    assert agent.model is not base_model and Path(agent.model.path) == learner.model_dir
    from safetensors.torch import load_file

    # in float32 as trained and saved (the file, not a bfloat16 view that could round a small step away)
    tuned = load_file(learner.model_dir / "model.safetensors")
    assert set(tuned) == set(before)
    for name, value in before.items():  # full fine-tuning moves every parameter
        assert not torch.equal(tuned[name], value), name
    untouched = dict(base_model.model.named_parameters())
    for name, value in before.items():
        assert torch.equal(untouched[name].detach(), value), f"the base model must stay as it was: {name}"

    task = task_env.tasks("single_test")[0]
    trajectory = agent.run_episode(task_env, task, phase="test", mode="closed")
    prompt = trajectory.messages[:2]
    [[direct]] = agent.model.generate([prompt], max_tokens=32)
    [[untrained]] = base_model.generate([prompt], max_tokens=32)
    # the two models differ on this very prompt (by their logits: greedy text of a model trained at lr 5e-2
    # on four examples can collapse to the same run of newlines on some CPUs)
    assert not torch.allclose(_logits(agent.model, prompt), _logits(base_model, prompt))
    assert trajectory.messages[2]["content"] == direct.text  # the episode's answer is the tuned model's
    if direct.text != untrained.text:  # where the greedy texts differ, the answer also is not the base model's
        assert trajectory.messages[2]["content"] != untrained.text

    learner.save(tmp_path / "state")
    again = make("closed-sft")
    again.load(tmp_path / "state")
    reloaded = load_model(str(again.model_dir))  # later, by path, as `--model RUN/model` does
    [[by_path]] = reloaded.generate([prompt], max_tokens=32)
    assert by_path.text == direct.text


def _logits(model, prompt) -> torch.Tensor:
    """The model's next-token logits after ``prompt`` under its chat template, as float32."""
    text = model.tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
    ids = model.tokenizer(text, return_tensors="pt").to(model.model.device)
    with torch.no_grad():
        return model.model(**ids).logits[0, -1].float()


def test_the_dtype_setting_reaches_the_trainer_and_the_trained_model(task_env, tiny_dir, tmp_path):
    from learners.training.sft_train import SFTSettings

    forced = "float32" if resolve_dtype("auto", "cpu") == "bfloat16" else "bfloat16"  # not what auto would pick
    learner = make("closed-sft", state_dir=str(tmp_path / "state"), **(TINY | {"limit": 2, "max_steps": 1}),
                   dtype=forced)
    agent = Agent(model=str(tiny_dir), learner=learner, max_tokens=32, dtype=forced)
    report = agent.evolve(task_env)
    assert report.details["dtype"] == forced
    assert json.loads((tmp_path / "state" / "train" / "train_result.json").read_text())["settings"]["dtype"] == forced
    assert {p.dtype for p in agent.model.model.parameters()} == {getattr(torch, forced)}
    with pytest.raises(ValueError, match="dtype must be one of auto, bfloat16, float32"):
        SFTSettings(dtype="float16")


def test_open_and_closed_train_on_the_same_responses_behind_different_prompts(task_env, tiny, tmp_path):
    from learners.training.sft_data import collect
    from learners.training.sft_train import load_dataset_for

    task_env.docs_chars = 400
    try:
        collect(Agent(model="reference"), task_env, task_env.tasks("train")[:3], tmp_path / "t.jsonl")
    finally:
        task_env.docs_chars = None
    opened, dropped_open = load_dataset_for(tmp_path / "t.jsonl", "open", tiny.tokenizer, 2048)
    closed, dropped_closed = load_dataset_for(tmp_path / "t.jsonl", "closed", tiny.tokenizer, 2048)
    assert dropped_open == dropped_closed == 0 and len(opened) == len(closed) == 3
    assert opened["completion"] == closed["completion"]
    assert all("Documentation:" in row[1]["content"] and "[…]" in row[1]["content"] for row in opened["prompt"])
    assert not any("Documentation:" in row[1]["content"] for row in closed["prompt"])
    tok = tiny.tokenizer  # SmolLM2's own tokenizer and chat template
    lengths = sorted(len(tok(tok.apply_chat_template([*row, *done], tokenize=False), add_special_tokens=False)
                         ["input_ids"]) for row, done in zip(opened["prompt"], opened["completion"], strict=True))
    assert lengths[0] < lengths[-1]
    short, too_long = load_dataset_for(tmp_path / "t.jsonl", "closed", tok, lengths[0])
    assert len(short) >= 1 and too_long == 3 - len(short) >= 1  # judged on the open prompt: both variants alike


# `python -m benchmarks.cli ARGS` that SIGKILLs itself at its first file access under a path holding
# argv[1]: a kill at a chosen point of a run that, on the tiny model, trains faster than a parent can poll.
KILLED_AT = """
import os, runpy, signal, sys

mark = sys.argv.pop(1)


def audit(event, args):
    if event == "open" and args and isinstance(args[0], str | bytes | os.PathLike) and mark in os.fsdecode(args[0]):
        os.kill(os.getpid(), signal.SIGKILL)


sys.addaudithook(audit)
sys.argv[0] = "benchmarks.cli"
runpy.run_module("benchmarks.cli", run_name="__main__", alter_sys=True)
"""


@pytest.mark.xdist_group("sft-cli")
def test_a_killed_evolve_resumes_from_its_last_checkpoint_and_probe_reads_the_model(task_env, tiny_dir, tmp_path):
    from safetensors.torch import load_file

    run = tmp_path / "run"
    args = ["evolve", "--zwc", str(task_env.root), "--learner", "closed-sft", "--model", str(tiny_dir),
            "--gather-model", "reference", "--limit", "4", "--out", str(run), "--set", "max_steps=3",
            "--set", "save_steps=1", "--set", "batch_size=1", "--set", "lora=true", "--set", "max_length=512",
            "--set", "docs_chars=400", "--set", "learning_rate=5e-2", "--set", "warmup_ratio=0.0"]
    train = run / "learner" / "train"
    # killed as it starts writing checkpoint 2: checkpoint 1 complete, a partial checkpoint 2 beside it
    log = tmp_path / "killed.log"
    with log.open("w") as out:
        killed = subprocess.Popen([sys.executable, "-c", KILLED_AT, f"{os.sep}checkpoint-2{os.sep}", *args],
                                  stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            killed.wait(timeout=300)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(killed.pid, signal.SIGKILL)  # its sandbox workers, which outlive it otherwise
    assert killed.returncode == -signal.SIGKILL, log.read_text()[-2000:]
    assert (train / "checkpoint-1" / "trainer_state.json").is_file(), "step 1 should have been checkpointed"
    assert (train / "checkpoint-2").is_dir() and not (train / "checkpoint-2" / "trainer_state.json").exists()
    assert not (run / "model" / "config.json").is_file()

    subprocess.run([sys.executable, "-m", "benchmarks.cli", *args], check=True, capture_output=True, timeout=300)
    details = json.loads((run / "report.json").read_text())["details"]
    assert details["resumed_from"] == "checkpoint-1" and details["steps"] == 3  # the partial checkpoint 2 skipped
    assert (run / "model" / "config.json").is_file() and not (run / "model" / "adapter_config.json").exists()
    learner_state = json.loads((run / "learner" / "learner.json").read_text())
    assert learner_state["train"]["resumed_from"] == details["resumed_from"]
    tuned, base = load_file(run / "model" / "model.safetensors"), load_file(tiny_dir / "model.safetensors")
    assert set(tuned) == set(base) and not torch.equal(tuned["model.layers.0.self_attn.q_proj.weight"],
                                                       base["model.layers.0.self_attn.q_proj.weight"])

    probe_out = tmp_path / "p.json"
    subprocess.run([sys.executable, "-m", "benchmarks.cli", "probe", "--zwc", str(task_env.root), "--model",
                    str(run / "model"), "--limit", "3", "--out", str(probe_out)], check=True, capture_output=True,
                   timeout=300)
    probe = json.loads(probe_out.read_text())
    assert probe["n"] == 3 and 0 <= probe["recall"] <= 1 and len(probe["answers"]) == 3
    assert {"numpy", "zwc", "description", "answer", "named", "correct"} <= set(probe["answers"][0])

    # the run evaluates as a run: its trained model, no --model needed
    done = subprocess.run([sys.executable, "-m", "benchmarks.cli", "eval", "--zwc", str(task_env.root), "--run", str(run),
                           "--limit", "2", "--n", "1", "--max-tokens", "48"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((run / "results-single_test-closed.summary.json").read_text())
    assert Path(summary["config"]["model"]).resolve() == (run / "model").resolve()


@pytest.mark.xdist_group("sft-cli")
def test_training_under_torch_distributed_saves_one_merged_model(task_env, tiny_dir, tmp_path):
    """The scale-out path (what accelerate launch / torchrun run on GPUs), on 2 CPU processes (gloo)."""
    from safetensors.torch import load_file

    from learners.training.sft_data import collect
    from learners.training.train_settings import LORA_TARGETS

    task_env.docs_chars = 400
    try:
        collect(Agent(model="reference"), task_env, task_env.tasks("train")[:4], tmp_path / "t.jsonl")
    finally:
        task_env.docs_chars = None
    (tmp_path / "s.json").write_text(json.dumps({"max_steps": 2, "batch_size": 1, "lora": True, "save_steps": 1,
                                                 "max_length": 512, "warmup_ratio": 0.0, "learning_rate": 5e-2,
                                                 "lora_dropout": 0.0}))
    torchrun = Path(sys.executable).with_name("torchrun")
    done = subprocess.run([str(torchrun), "--nproc_per_node", "2", "-m", "learners.training.sft_train", "--data",
                           str(tmp_path / "t.jsonl"), "--base", str(tiny_dir), "--variant", "closed",
                           "--out", str(tmp_path / "ck"), "--model-dir", str(tmp_path / "model"), "--settings",
                           str(tmp_path / "s.json")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    [line] = [x for x in done.stdout.splitlines() if x.startswith("{\"")]  # the main process reports once
    assert json.loads(line)["steps"] == 2
    assert (tmp_path / "model" / "config.json").is_file() and not (tmp_path / "model" / "adapter_config.json").exists()
    tuned = load_file(tmp_path / "model" / "model.safetensors")
    base = load_file(tiny_dir / "model.safetensors")
    assert set(tuned) == set(base)  # merged: the base's names, no lora_A / lora_B left
    adapted = [k for k in base if k.endswith(".weight") and k.split(".")[-2] in LORA_TARGETS]
    assert len(adapted) == 2 * len(LORA_TARGETS)  # every projection of both layers
    for key in base:  # the adapters' update merged into exactly the weights they adapt
        assert torch.equal(tuned[key], base[key]) == (key not in adapted), key
