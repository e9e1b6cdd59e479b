"""Result records and summaries: runtime library use (target_use_rate), and a recorded
configuration that keeps a resume from mixing runs."""

import json
import math

import pytest

from agents import Agent, MixedResultsError, Trajectory
from agents.eval_config import MAY_CHANGE_ON_RESUME, config_path
from agents.evaluate import result_record, target_use
from envs.zwc import Failure, Verdict
from tests.agents.fixed_answer import FixedAnswerModel


def _record(passed: bool, target_used: bool | None) -> dict:
    return {"task_id": "t", "sample": 0, "passed": passed, "target_used": target_used}


def test_target_use_rate_is_the_share_of_known_passing_samples_that_ran_their_functions():
    records = [_record(True, True), _record(True, True), _record(True, False), _record(True, None),
               _record(False, True), _record(False, False), {"task_id": "old", "sample": 0, "passed": True}]
    rate, counts = target_use(records)
    assert counts == {"passed": 5, "known": 3, "used": 2} and math.isclose(rate, 2 / 3)
    assert target_use([_record(False, True)]) == (None, {"passed": 0, "known": 0, "used": 0})  # nothing passed
    assert target_use([_record(True, None)])[0] is None  # nothing known (the NumPy control)


def test_a_record_carries_the_functions_that_ran_and_whether_the_targets_did():
    verdict = Verdict(passed=True, failure=Failure.PASSED, zwc_calls=["zwc.kocito", "zwc.rfx.quvohe"],
                      target_used=False)
    record = result_record(Trajectory(task_id="t", phase="test", mode="closed", verdict=verdict))
    assert record["zwc_calls"] == ["zwc.kocito", "zwc.rfx.quvohe"] and record["target_used"] is False
    unanswered = result_record(Trajectory(task_id="t", phase="test", mode="closed"))
    assert unanswered["zwc_calls"] == [] and unanswered["target_used"] is None


def test_the_reference_agent_runs_every_function_its_tasks_name(task_env, tmp_path):
    report = Agent(model="reference").evaluate(task_env, split="single_test", n=1, limit=4,
                                               out=str(tmp_path / "r.jsonl"))
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert report.pass_at[1] == 1.0 and all(r["zwc_calls"] for r in records)
    assert report.target_use == {"passed": 4, "known": 4, "used": 4} and report.target_use_rate == 1.0
    summary = json.loads((tmp_path / "r.summary.json").read_text())
    assert summary["target_use_rate"] == 1.0


def test_a_resume_with_another_model_is_refused_and_with_the_same_config_it_continues(task_env, tmp_path):
    out = tmp_path / "r.jsonl"
    Agent(model="reference").evaluate(task_env, split="single_test", n=1, limit=2, out=str(out))
    written = out.read_text()
    recorded = json.loads(config_path(out).read_text())["config"]
    assert recorded["model"] == "reference" and recorded["usage"] == "standard" and recorded["code_sha256"]
    other = Agent(model=FixedAnswerModel("import zwc\ndef solve(x):\n    return zwc.x(x)\n"), max_turns=2)
    with pytest.raises(MixedResultsError) as refused:
        other.evaluate(task_env, split="single_test", n=1, limit=2, out=str(out), resume=True)
    message = str(refused.value)
    assert "model: 'reference' in r.config.json, 'fixed-answer' now" in message
    assert "max_turns: 1 in r.config.json, 2 now" in message and "new --out" in message
    assert set(refused.value.differences) == {"model", "max_turns"}
    assert out.read_text() == written  # nothing was appended
    more = Agent(model="reference").evaluate(task_env, split="single_test", n=1, limit=3, out=str(out), resume=True)
    keys = [(r["task_id"], r["sample"]) for r in map(json.loads, out.read_text().splitlines())]
    assert more.n_samples == 3 == len(keys) == len(set(keys)) and out.read_text().startswith(written)
    resumes = json.loads(config_path(out).read_text())["resumes"]
    assert [r["limit"] for r in resumes] == [3] and set(resumes[0]) == {"date", *MAY_CHANGE_ON_RESUME}


def test_results_without_a_recorded_config_are_not_resumed(task_env, tmp_path):
    out = tmp_path / "old.jsonl"
    out.write_text(json.dumps({"task_id": "x", "sample": 0, "passed": True, "failure": "passed"}) + "\n")
    with pytest.raises(MixedResultsError, match="no recorded configuration"):
        Agent(model="reference").evaluate(task_env, split="single_test", n=1, limit=1, out=str(out), resume=True)


def test_a_resume_in_another_dtype_is_refused(task_env, tmp_path):
    from agents.eval_config import check_resume, eval_config, record_config

    out = tmp_path / "r.jsonl"
    settings = dict(split="single_test", mode="closed", n=1, limit=1, functions=None, temperature=0.0,
                    code_version="x")
    bf16 = eval_config(Agent(model="smollm2-135m", dtype="bfloat16"), task_env, **settings)
    record_config(out, bf16)
    out.write_text('{"task_id": "t", "sample": 0}\n')
    fp32 = eval_config(Agent(model="smollm2-135m", dtype="float32"), task_env, **settings)
    with pytest.raises(MixedResultsError, match="dtype: 'bfloat16' in r.config.json, 'float32' now"):
        check_resume(out, fp32)
    check_resume(out, bf16)  # the same settings continue
    assert eval_config(Agent(model="reference"), task_env, **settings)["dtype"] is None


def test_a_resume_after_a_kill_mid_record_loses_no_record(task_env, tmp_path):
    """A kill inside a write leaves half a line; the resumed run used to append its first record onto
    it, and that record was then skipped as unreadable: a sample silently lost."""
    out = tmp_path / "r.jsonl"
    Agent(model="reference").evaluate(task_env, split="single_test", n=1, limit=2, out=str(out))
    lines = out.read_text().splitlines(keepends=True)
    out.write_text(lines[0] + lines[1][: len(lines[1]) // 2])  # the second record was being written
    more = Agent(model="reference").evaluate(task_env, split="single_test", n=1, limit=3, out=str(out), resume=True)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert more.n_samples == 3 and len(records) == 3 and more.pass_at[1] == 1.0
