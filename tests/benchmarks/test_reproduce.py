"""sebench reproduce: the smoke budget end to end (its report opened in headless Chromium), a
rerun that skips every finished row, every command of the gpu budget parsed (and its settings
built into learners) without running it, and typed errors for bad budgets and parts.

The smoke run is real: the commands run in their own processes on the tiny random-initialised
SmolLM2 and a fresh ZWC build, as a user's `sebench reproduce --budget smoke` does."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.cli_shared import parse_overrides
from benchmarks.reproduce_budget import (
    PARTS,
    BudgetError,
    UnknownPartError,
    build_plan,
    load_budget,
    parse_parts,
    rl_learners,
)
from benchmarks.reproduce_estimate import estimate
from tests.benchmarks.chromium import render
from tests.test_readme import check_sebench

pytestmark = pytest.mark.xdist_group("reproduce")  # one worker runs the smoke budget once
ROOT = Path(__file__).resolve().parents[2]
COMMANDS = typer.main.get_command(app)  # the sebench click group the budgets' tables name


def _reproduce(out: Path, *more: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "benchmarks.cli", "reproduce", "--budget", "smoke", "--out",
                           str(out), *more], capture_output=True, text=True, cwd=ROOT, check=False,
                          timeout=1800)
    return done, time.perf_counter() - started


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce") / "smoke"
    first, seconds = _reproduce(out)
    (out / "test-wall-seconds.txt").write_text(f"{seconds:.1f}\n")
    return out, first, seconds


@pytest.mark.slow
def test_the_smoke_budget_runs_every_row_and_reports_the_findings(smoke):
    out, done, seconds = smoke
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    status = json.loads((out / "plan.json").read_text())
    rows = status["rows"]
    assert {r["part"] for r in rows} == {"zwc", *PARTS} and all(r["state"] == "done" for r in rows), rows
    assert all(r["rc"] in (0, 1) and r["seconds"] > 0 for r in rows)
    assert status["report"]["rc"] == 0 and status["speed"]["tokens_per_second"] > 0
    rl = json.loads((out / "rl" / "zwc0-train0" / "summary.json").read_text())
    assert [r["name"] for r in rl["rows"]] == ["base", *rl_learners()]  # every Table 3 preset ran
    assert rl["config"]["settings"]["seed"] == 0
    report = (out / "report" / "report.md").read_text()
    assert "Open-Book Paradox" in report and "RL Gap" in report and "SFT self-play above RL self-play" in report
    assert "sebench reproduce: budget smoke" in done.stdout and "finished in" in done.stdout
    print(f"smoke budget: {seconds:.0f} s wall")


@pytest.mark.slow
def test_the_smoke_report_renders_in_headless_chromium(smoke, tmp_path):
    out, done, _ = smoke
    assert done.returncode == 0, done.stdout[-2000:]

    def check(page) -> None:
        for key in ("findings", "validation", "main", "sft", "rl", "selfplay"):
            assert page.locator(f"table#table-{key} tbody tr").count() >= 1, key

    problems, requests = render(out / "report" / "report.html", check, tmp_path / "page.png")
    assert not problems, problems
    assert requests == [(out / "report" / "report.html").as_uri()]


@pytest.mark.slow
def test_a_rerun_skips_every_finished_row(smoke):
    out, first, _ = smoke
    assert first.returncode == 0
    logs = {p: p.stat().st_mtime_ns for p in (out / "logs").glob("*.log") if p.name != "report.log"}
    again, seconds = _reproduce(out)
    assert again.returncode == 0, again.stdout[-3000:]
    rows = json.loads((out / "plan.json").read_text())["rows"]
    assert again.stdout.count("already finished, skipped") == len(rows)
    assert {p: p.stat().st_mtime_ns for p in logs} == logs  # no row's command ran again
    assert seconds < 120


@pytest.mark.slow
def test_a_row_whose_directory_was_removed_runs_again_and_the_others_do_not(smoke):
    out, first, _ = smoke
    assert first.returncode == 0
    import shutil

    shutil.rmtree(out / "validate")
    again, _ = _reproduce(out, "--only", "validate", "--no-estimate")
    assert again.returncode == 0, again.stdout[-3000:]
    assert "validate-zwc0 finished" in again.stdout and "zwc-0: already finished, skipped" in again.stdout
    assert (out / "validate" / "zwc0").is_dir()


def test_every_command_of_the_gpu_budget_parses_and_its_settings_build_learners(tmp_path):
    from benchmarks.rl_compare import parse_learner
    from benchmarks.runs import learner_overrides
    from benchmarks.selfplay_compare import learner_settings
    from learners import make

    budget = load_budget("gpu", COMMANDS)
    rows = build_plan(budget, tmp_path, list(PARTS), [0, 1], [0, 1])
    assert {r.part for r in rows} == {"zwc", *PARTS}
    assert sorted(r.learners[0] for r in rows if r.part == "rl" and r.out.parent.name == "zwc0-train0") == \
        sorted(rl_learners())  # one row per learner, every preset
    assert len({r.out for r in rows}) == len(rows) - 2  # a build's two rows share its directory; no other
    for row in rows:
        check_sebench(["sebench", *row.args])
        pairs = [row.args[i + 1] for i, a in enumerate(row.args) if a == "--set"]
        settings = parse_overrides(pairs)
        for spec in row.learners:
            state = str(tmp_path / "state" / spec)
            if row.part == "rl":
                name, preset = parse_learner(spec)
                own = {"limit": 718, "max_steps": 200, **learner_overrides(settings, name),
                       **({"preset": preset} if preset else {})}
                if name == "closed-sft-rl":
                    own |= {"gather_model": "vllm:/models/Qwen3-8B", "sft_max_steps": 0}
                learner = make(name, state_dir=state, **own)
                assert (learner.rl if name == "closed-sft-rl" else learner).config.train.use_vllm is True
            elif row.part == "selfplay":
                make(spec, state_dir=state, **learner_settings(spec, 718, 20, 10, 64, None, settings))
            elif row.part == "sft":
                learner = make(spec, state_dir=state, limit=718, gather_model="vllm:/models/Qwen3-8B", max_steps=0,
                               **settings)
                assert learner.config.docs_chars is None and learner.config.train.learning_rate == 1e-5
            elif row.part == "memory" and spec != "none":
                make(spec, state_dir=state, **learner_overrides(settings, spec))
    assert {a for r in rows if r.part == "sft" for a in r.args if a.startswith("seed=")} == {"seed=0", "seed=1"}


def test_training_seeds_reach_every_trained_row_and_untrained_parts_run_once_per_build(tmp_path):
    rows = build_plan(load_budget("smoke", COMMANDS), tmp_path, list(PARTS), [3], [0, 5])
    by_part = {part: [r for r in rows if r.part == part] for part in PARTS}
    assert [r.out.name for r in by_part["validate"]] == ["zwc3"] and len(by_part["memory"]) == 1
    for part in ("sft", "rl", "selfplay"):
        assert [r.out.name for r in by_part[part]] == ["zwc3-train0", "zwc3-train5"]
        assert "seed=5" in by_part[part][1].args
    assert "closed-sft-rl.sft_seed=5" in by_part["rl"][1].args and "proposal_seed=5" in by_part["selfplay"][1].args
    assert all(r.args[r.args.index("--zwc") + 1] == str(tmp_path / "zwc-seed3") for r in rows if "--zwc" in r.args)


def test_the_estimate_grows_with_the_work_and_is_none_without_a_speed(tmp_path):
    from benchmarks.reproduce_budget import command_options

    budget = load_budget("cpu", COMMANDS)
    [small] = [r for r in build_plan(budget, tmp_path, ["rl"]) if r.learners == ["closed-rl"]]
    big = build_plan(budget, tmp_path, ["rl"])[-1]
    big.options = {**small.options, "steps": 40}
    big.learners = small.learners
    defaults = command_options(COMMANDS, "rl-compare")
    speed = {"tokens_per_second": 20.0, "process_seconds": 10.0}
    assert estimate(big, speed, defaults) > estimate(small, speed, defaults) > 0
    assert estimate(small, {"error": "no model"}, defaults) is None


def test_bad_budgets_and_unknown_parts_are_named_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('model = "smollm2-135m"\n[rl]\ntrain_limt = 8\n')
    with pytest.raises(BudgetError, match=r"\[rl\] train_limt: not options of `sebench rl-compare`; known: .*"
                                          r"train_limit"):
        load_budget(bad, COMMANDS)
    bad.write_text('model = "smollm2-135m"\nseeds = 0\n[sft]\n')
    with pytest.raises(BudgetError, match="seeds must be a non-empty list of integers"):
        load_budget(bad, COMMANDS)
    bad.write_text("model = \n")
    with pytest.raises(BudgetError, match="not valid TOML"):
        load_budget(bad, COMMANDS)
    bad.write_text('[sft]\nsteps = 2\n')
    with pytest.raises(BudgetError, match="model is missing"):
        load_budget(bad, COMMANDS)
    with pytest.raises(BudgetError, match="no such budget; give one of cpu, gpu, smoke"):
        load_budget("laptop", COMMANDS)
    with pytest.raises(UnknownPartError, match="known parts: validate, memory, sft, rl, selfplay"):
        parse_parts("sft,ppo")
    assert parse_parts("rl,sft") == ["sft", "rl"]

    for args, words in ((["--budget", str(bad)], "model is missing"), (["--budget", "smoke", "--only", "ppo"],
                                                                        "unknown part")):
        result = CliRunner().invoke(app, ["reproduce", *args, "--out", str(tmp_path / "out"), "--dry-run"])
        assert result.exit_code == 2 and words in " ".join(result.output.split()), result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()  # nothing was written before the error


def test_the_dry_run_prints_the_plan_with_each_command(tmp_path):
    result = CliRunner().invoke(app, ["reproduce", "--budget", "gpu", "--out", str(tmp_path / "gpu"), "--dry-run",
                                      "--no-estimate"], terminal_width=400)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "sebench rl-compare" in text and "closed-rl@sft-like+clip" in text and "unknown" in text
    assert "sebench zwc build" in text and not (tmp_path / "gpu" / "plan.json").exists()


def test_a_learner_row_takes_its_own_options_and_bad_ones_are_named(tmp_path):
    rows = {r.learners[0]: r for r in build_plan(load_budget("cpu", COMMANDS), tmp_path, ["rl"]) if r.part == "rl"}
    steps = {name: row.args[row.args.index("--steps") + 1] for name, row in rows.items()}
    assert steps == {"closed-rl": "10", "closed-rl@sft-like": "6", "closed-rl@sft-like+clip": "6"}
    assert rows["closed-rl@sft-like"].options["steps"] == 6 and "by_learner" not in rows["closed-rl"].options
    assert rows["closed-rl@sft-like"].args.count("--steps") == 1

    bad = tmp_path / "bad.toml"
    head = 'model = "smollm2-135m"\n[rl]\nlearners = ["closed-rl"]\n'
    for body, words in (('[rl.by_learner."closed-rl"]\nsteps = 2\n', "needs per_learner = true"),
                        ('per_learner = true\n[rl.by_learner."open-rl"]\nsteps = 2\n', "not a learner of this part"),
                        ('per_learner = true\n[rl.by_learner."closed-rl"]\nstepz = 2\n', "stepz: not options"),
                        ('per_learner = true\n[rl.by_learner."closed-rl"]\nlearners = "x"\n', "learners: not options")):
        bad.write_text(head + body)
        with pytest.raises(BudgetError, match=words):
            load_budget(bad, COMMANDS)
