"""`--dtype` on every command that loads a model, offering exactly what the model layer knows."""

import json
import typing

import pytest
from typer.testing import CliRunner

from agents.models import DTYPES
from benchmarks import cli

runner = CliRunner()


def test_the_cli_offers_the_dtypes_the_model_layer_knows():
    assert typing.get_args(cli.Dtype) == DTYPES


@pytest.mark.parametrize("command", ["eval", "validate", "serve", "probe", "evolve", "compare", "sft-compare"])
def test_every_model_loading_command_takes_dtype(command):
    result = runner.invoke(cli.app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "--dtype" in result.output and "auto|bfloat16|float32" in result.output


def test_compare_records_the_dtype_it_ran_in(task_env, tmp_path):
    out = tmp_path / "report"
    result = runner.invoke(cli.app, ["compare", "--zwc", str(task_env.root), "--learners", "none", "--model",
                                     "reference", "--limit", "1", "--dtype", "float32", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "summary.json").read_text())["config"]["dtype"] == "float32"
