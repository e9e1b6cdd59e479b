import json
import subprocess
import sys

from typer.testing import CliRunner

from benchmarks.cli import app

runner = CliRunner()


def test_zwc_build_seed_gives_an_importable_package(tmp_path):
    for seed in (7, 8):
        result = runner.invoke(app, ["zwc", "build", "--seed", str(seed), "--out", str(tmp_path / f"s{seed}")])
        assert result.exit_code == 0, result.output
    names = [{e["zwc"] for e in json.loads((tmp_path / f"s{s}" / "mapping.json").read_text())} for s in (7, 8)]
    assert not names[0] & names[1]
    probe = "import sys; sys.path.insert(0, sys.argv[1]); import zwc; print(len(zwc.__all__), zwc.ZWCArray([1, 2]))"
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "s7")], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split("\n")[0].startswith(("2", "3"))  # >= 200 public names


def test_zwc_build_official_reproduces_names(tmp_path, api_doc):
    result = runner.invoke(app, ["zwc", "build", "--official", str(api_doc), "--out", str(tmp_path / "v1")])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in api_doc.read_text().splitlines()]
    mapping = json.loads((tmp_path / "v1" / "mapping.json").read_text())
    assert [m["zwc"].rsplit(".", 1)[1] for m in mapping] == [r["curr_name"] for r in rows]
    written = [json.loads(line) for line in (tmp_path / "v1" / "api_doc.jsonl").read_text().splitlines()]
    assert written == rows  # the official docs, as published


def test_zwc_build_needs_exactly_one_source(tmp_path):
    result = runner.invoke(app, ["zwc", "build", "--out", str(tmp_path)])
    assert result.exit_code != 0 and "exactly one" in result.output


def test_zwc_check_grades_a_file(tmp_path, api_doc, sample_tasks_path):
    runner.invoke(app, ["zwc", "build", "--official", str(api_doc), "--out", str(tmp_path / "v1")])
    code = tmp_path / "solution.py"
    code.write_text("import zwc\ndef solve(x1, x2):\n    return zwc.lenelo(x1, x2)\n")
    args = ["zwc", "check", "--zwc", str(tmp_path / "v1"), "--task-file", str(sample_tasks_path), "--code", str(code)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and "passed" in result.output
    code.write_text("import numpy\ndef solve(x1, x2):\n    return 1\n")
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and "numpy_used" in result.output


def test_tasks_build_from_the_shell(tmp_path):
    runner.invoke(app, ["zwc", "build", "--seed", "4", "--out", str(tmp_path / "z")])
    result = runner.invoke(app, ["tasks", "build", "--zwc", str(tmp_path / "z"), "--per-function", "1",
                                 "--multi", "5"])
    assert result.exit_code == 0, result.output
    for split in ("train", "single_test", "multiple_test"):
        assert (tmp_path / "z" / f"{split}.jsonl").read_text().count("\n") >= 5
    report = json.loads((tmp_path / "z" / "build_report.json").read_text())
    assert report["splits"]["train"]["kept"] == 278
    for split in ("single_test", "multiple_test"):  # split hygiene, near-duplicates by the CLI's embedder
        hygiene = report["hygiene"][split]
        assert (hygiene["verbatim_pairs"], hygiene["near_duplicate_pairs"], hygiene["shared_inputs"]) == (0, 0, 0)
    assert report["near_duplicate_check"].startswith("cosine >= 0.90")


def test_official_files_grade_the_official_way_from_the_shell(tmp_path, api_doc, sample_tasks_path):
    runner.invoke(app, ["zwc", "build", "--official", str(api_doc), "--out", str(tmp_path / "v1")])
    (tmp_path / "v1" / "single_test.jsonl").write_bytes(sample_tasks_path.read_bytes())
    out = tmp_path / "ref.jsonl"
    result = runner.invoke(app, ["eval", "--zwc", str(tmp_path / "v1"), "--split", "single_test",
                                 "--model", "reference", "--n", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.with_suffix(".summary.json").read_text())
    assert summary["pass_at"]["1"] == 1.0 and summary["n_tasks"] == 3


def test_evolve_from_the_shell_writes_learner_state_and_report(tmp_path, task_env):
    out = tmp_path / "run"
    result = runner.invoke(app, ["evolve", "--zwc", str(task_env.root), "--learner", "none", "--model", "reference",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "report.json").read_text())["learner"] == "none"
    assert (out / "learner" / "learner.json").is_file()
    result = runner.invoke(app, ["evolve", "--zwc", str(task_env.root), "--learner", "nope", "--out", str(out)])
    assert result.exit_code != 0 and "unknown learner" in result.output


def test_compare_writes_a_report_with_plots(tmp_path, task_env):
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", "--zwc", str(task_env.root), "--learners", "none", "--model", "reference",
                                 "--limit", "3", "--temperature", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    # sebench report's table: 3 of 3 pass, exact bounds [29.2, 100] (0.025 ** (1 / 3)), the bootstrap [1, 1]
    assert "| none | reference | 100.0 [29.2, 100.0] · tasks [100.0, 100.0] |" in report and "code_version" in report
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["usage"] == "standard" and summary["results"][0]["evaluation"]["target_use_rate"] == 1.0
    assert summary["config"]["temperature"] == 0 and summary["results"][0]["evaluation"]["config"]["temperature"] == 0
    assert (out / "pass_at_k_main.png").stat().st_size > 1000 and (out / "failures.png").stat().st_size > 1000
    assert "Main table: learners, closed-book" in result.output  # the report's table, printed


def test_validate_decodes_at_the_temperature_asked(tmp_path, task_env):
    """make demo asks for greedy answers (--temperature 0): every run's config says so."""
    out = tmp_path / "validate"
    result = runner.invoke(app, ["validate", "--zwc", str(task_env.root), "--model", "reference", "--limit", "2",
                                 "--temperature", "0", "--out", str(out)])
    assert "closed-book pass@1" in result.output, result.output
    configs = [json.loads(path.read_text()) for path in sorted(out.glob("*.summary.json"))]
    assert len(configs) == 4 and {c["config"]["temperature"] for c in configs} == {0.0}


def test_every_command_has_the_one_default_model():
    import typer.main

    from agents.models.registry import DEFAULT_MODEL
    from benchmarks import cli_options

    assert cli_options.DEFAULT_MODEL == DEFAULT_MODEL

    def commands(group, prefix=""):
        for name, command in group.commands.items():
            yield from commands(command, f"{prefix}{name} ") if hasattr(command, "commands") else [(prefix + name,
                                                                                                   command)]

    defaults = {name: param.default for name, command in commands(typer.main.get_command(app))
                for param in command.params if param.name in ("model", "solvers")}
    assert {"eval", "validate", "evolve", "probe", "compare", "sft-compare", "rl-compare", "selfplay",
            "selfplay-compare", "serve", "check-learner", "tasks propose"} <= set(defaults)
    assert {name: value for name, value in defaults.items() if value != DEFAULT_MODEL} == {"eval": None}  # the run's
