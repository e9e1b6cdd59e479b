"""`--usage` on the grading commands, and a resume of another configuration refused from the shell."""

import json
import typing

from typer.testing import CliRunner

from benchmarks import cli
from envs.zwc.env import USAGES

runner = CliRunner()


def test_the_cli_offers_the_usage_rules_the_env_knows():
    assert typing.get_args(cli.Usage) == USAGES


def _eval(root, out, *extra):
    return runner.invoke(cli.app, ["eval", "--zwc", str(root), "--split", "single_test", "--model", "reference",
                                   "--n", "1", "--limit", "2", "--out", str(out), *extra])


def test_eval_records_the_usage_rule_and_refuses_to_resume_under_another(task_env, tmp_path):
    out = tmp_path / "strict.jsonl"
    result = _eval(task_env.root, out, "--usage", "strict")
    assert result.exit_code == 0, result.output
    assert "target use" in result.output
    summary = json.loads(out.with_suffix(".summary.json").read_text())
    assert summary["config"]["usage"] == "strict" and "target_use_rate" in summary
    refused = _eval(task_env.root, out, "--usage", "standard", "--resume")
    text = " ".join(refused.output.split())  # rich wraps long lines
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "usage: 'strict' in strict.config.json, 'standard' now" in text and "new --out" in text
    again = _eval(task_env.root, out, "--usage", "strict", "--resume")
    assert again.exit_code == 0, again.output
    assert len(out.read_text().splitlines()) == 2  # nothing left to do, nothing doubled


def test_evolve_records_the_usage_rule_it_trained_under(task_env, tmp_path):
    result = runner.invoke(cli.app, ["evolve", "--zwc", str(task_env.root), "--learner", "none", "--model",
                                     "reference", "--usage", "strict", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "run" / "report.json").read_text())["usage"] == "strict"
