"""Trajectory collection for SFT: rejection sampling, both prompts, resumption, datasets loading."""


import pytest

from agents import Agent
from learners.parametric import SFTLearnerError, base_model_path
from learners.sft import ClosedSFTLearner, SFTLearnerConfig
from learners.training.sft_data import collect, read_samples, to_dataset
from learners.training.sft_train import SFTSettings
from tests.agents.fixed_answer import FixedAnswerModel


def ConstantModel():  # noqa: N802 - reads as the backend it builds
    """A backend that always gives the same (wrong) answer: what rejection must drop."""
    return FixedAnswerModel("import zwc\n\ndef solve(*args):\n    return 0\n", name="constant")


def test_collect_keeps_passing_answers_with_and_without_docs(task_env, tmp_path):
    tasks = task_env.tasks("train")[:4]
    out = tmp_path / "trajectories.jsonl"
    report = collect(Agent(model="reference"), task_env, tasks, out, samples=2)
    assert report.attempts == 8 and report.duplicates == 4  # greedy reference: both samples identical
    samples = read_samples(out)
    assert report.kept == len(samples) == 4 and {s.task_id for s in samples} == {t.task_id for t in tasks}
    by_id = {t.task_id: t for t in tasks}
    for sample in samples:  # written as tasks finish, in any order
        task = by_id[sample.task_id]
        opened, closed = sample.prompt_open[1]["content"], sample.prompt_closed[1]["content"]
        assert "Documentation:" in opened and "Documentation:" not in closed
        assert task.query in opened and task.query in closed
        assert sample.completion.startswith("```python") and sample.source == "reference"
    rows = to_dataset(out, "closed")
    assert rows[0]["completion"] == [{"role": "assistant", "content": samples[0].completion}]
    from datasets import load_dataset

    assert len(load_dataset("json", data_files=str(out), split="train")) == 4


def test_collect_rejects_failures_and_resumes_finished_tasks(task_env, tmp_path):
    tasks = task_env.tasks("train")[:3]
    out = tmp_path / "t.jsonl"
    report = collect(Agent(model=ConstantModel()), task_env, tasks, out)
    assert report.kept == 0 and report.attempts == 3 and report.failures.get("passed", 0) == 0
    again = collect(Agent(model="reference"), task_env, tasks, out)
    assert again.resumed == 3 and again.attempts == 0 and again.in_file == 0  # every task was already finished
    other = tmp_path / "u.jsonl"
    collect(Agent(model="reference"), task_env, tasks[:2], other)
    more = collect(Agent(model="reference"), task_env, tasks, other)  # one task left to do
    assert (more.resumed, more.attempts, more.kept, more.in_file) == (2, 1, 1, 3)


def test_a_learner_with_nothing_collected_says_how_to_fix_it(task_env, tiny, tmp_path):
    learner = ClosedSFTLearner(limit=2, state_dir=str(tmp_path / "s"), gather_model="self")
    with pytest.raises(SFTLearnerError, match="local weights"):
        Agent(model=ConstantModel(), learner=learner).evolve(task_env)
    # a collection that finished both tasks and kept nothing (as the constant model's would)
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "trajectories.done").write_text("".join(t.task_id + "\n" for t in task_env.tasks("train")[:2]))
    with pytest.raises(SFTLearnerError, match="gather_model='reference'"):
        Agent(model=tiny, learner=learner).evolve(task_env)  # local weights: the error is the data's


def test_settings_are_validated_and_unknown_keys_named():
    with pytest.raises(ValueError, match="batch_size"):
        SFTSettings(batch_size=0)
    with pytest.raises(ValueError, match="warmup_ratio"):
        SFTSettings(warmup_ratio=1.5)
    with pytest.raises(ValueError, match="max_stepz"):
        SFTLearnerConfig.from_overrides({"max_stepz": 3})
    config = SFTLearnerConfig.from_overrides({"limit": 5, "max_steps": 3, "lora": True})
    assert config.limit == 5 and config.train.max_steps == 3 and config.train.lora


def test_base_model_path_needs_local_weights(tiny, tiny_dir):
    from agents.models.embedded import embedded_directory

    assert base_model_path(tiny) == tiny_dir  # a loaded backend: its path
    with pytest.raises(SFTLearnerError, match="local weights"):
        base_model_path(ConstantModel())
    assert base_model_path(str(tiny_dir)) == base_model_path(f"vllm:{tiny_dir}") == tiny_dir
    directory = embedded_directory("smollm2-135m")  # an embedded name resolves without loading the model
    assert (directory / "config.json").is_file() and base_model_path("smollm2-135m") == directory
    with pytest.raises(SFTLearnerError, match="'openai:http://x#m'"):
        base_model_path("openai:http://x#m")


def test_accelerate_configs_parse():
    from pathlib import Path

    from accelerate.commands.config.config_args import ClusterConfig

    import learners

    configs = sorted((Path(learners.__file__).parent / "accelerate").glob("*.yaml"))
    assert [c.stem for c in configs] == ["ddp", "deepspeed_zero3", "fsdp"]
    kinds = {c.stem: ClusterConfig.from_yaml_file(c).distributed_type.value for c in configs}
    assert kinds == {"ddp": "MULTI_GPU", "deepspeed_zero3": "DEEPSPEED", "fsdp": "FSDP"}
    for config in configs:
        text, cluster = config.read_text(), ClusterConfig.from_yaml_file(config)
        assert f"--config_file learners/accelerate/{config.name} " in text, f"{config.name}'s usage line names another file"
        assert (cluster.num_machines, cluster.num_processes, cluster.use_cpu) == (1, 8, False), config.name  # "8 GPUs"
    # training_run.save_model writes one plain model directory from what trainer.save_model gathers: the
    # sharded configs must gather full weights on save (a sharded or ZeRO-partitioned save is no model)
    assert ClusterConfig.from_yaml_file(configs[2]).fsdp_config["fsdp_state_dict_type"] == "FULL_STATE_DICT"
    assert ClusterConfig.from_yaml_file(configs[1]).deepspeed_config["zero3_save_16bit_model"] is True
