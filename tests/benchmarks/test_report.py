"""sebench report on real run directories: numbers equal the results files, intervals, seeds, errors, HTML.

The runs are written by the real commands at tiny sizes: ``compare`` with the reference model,
``eval`` and ``validate`` with a fixed-answer model (right on some tasks, so the rates are not
all 0 or 1), and the sft/rl summaries through their own ``measure`` and ``report_comparison`` with
real evaluations and probes (only the training figures of a row are written by hand: training
is what is too slow here). The HTML page is opened in a real headless Chromium.
"""

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from agents import Agent
from benchmarks import rl_compare, sft_compare
from benchmarks.cli_report import report_command
from benchmarks.exact_stats import clopper_pearson
from benchmarks.report import build_report, load_anchors, report_comparison, to_markdown, write_report
from benchmarks.report_runs import KINDS, RunFormatError, UnknownRunError, read_run, read_runs
from benchmarks.report_stats import bootstrap_mean, estimate
from benchmarks.validate import validate
from sebench.version import code_version
from tests.agents.fixed_answer import FixedAnswerModel
from tests.benchmarks.chromium import render

pytestmark = pytest.mark.xdist_group("report")  # one worker builds the runs once
NOTHING = "def solve(x):\n    return None\n"


def _file_rate(results: Path) -> float:
    """pass@1 straight from a results file: the mean over tasks of each task's share of passes."""
    per_task: dict[str, list[bool]] = {}
    for line in results.read_text().splitlines():
        record = json.loads(line)
        per_task.setdefault(record["task_id"], []).append(record["passed"])
    return float(np.mean([np.mean(v) for v in per_task.values()]))


def _rows(env, out: Path, names_codes: list[tuple[str, str, dict]]) -> tuple[list, list[str]]:
    functions = sorted({f for t in env.tasks("train")[:3] for f in t.selected_functions})
    numpy_paths = {f"numpy.{f}" for f in functions}
    return [sft_compare.measure(name, Agent(model=FixedAnswerModel(code, name="fixed-answer")), env, out, functions,
                                numpy_paths, 1, 3, train, 6) for name, code, train in names_codes], functions


@pytest.fixture(scope="module")
def runs(task_env, tmp_path_factory):
    from benchmarks.cli import app
    from envs.zwc import ZWCEnv
    from envs.zwc.env import build_directory
    from envs.zwc.library.names import Mapping
    from envs.zwc.tasks import build_tasks

    base = tmp_path_factory.mktemp("report-runs")
    result = CliRunner().invoke(app, ["compare", "--zwc", str(task_env.root), "--learners", "none", "--model",
                                      "reference", "--limit", "3", "--out", str(base / "compare")])
    assert result.exit_code == 0, result.output
    right = task_env.tasks("single_test")[0].reference  # right on the first task(s), wrong elsewhere
    Agent(model=FixedAnswerModel(right)).evaluate(task_env, n=2, out=str(base / "eval-a" / "closed.jsonl"), limit=4)
    validate(task_env, Agent(model=FixedAnswerModel(NOTHING, name="nothing")), limit=3, out_dir=base / "validate")
    other = build_directory(Mapping.generate(12), base / "zwc-seed12")
    build_tasks(other, seed=12, per_function=1, multi=2, workers=2)
    with ZWCEnv.load(other, workers=2) as env_b:
        right_b = env_b.tasks("single_test")[0].reference
        Agent(model=FixedAnswerModel(right_b)).evaluate(env_b, n=2, out=str(base / "eval-b" / "closed.jsonl"), limit=2)
    single = task_env.tasks("single_test")
    trained = {f for t in task_env.tasks("train")[:3] for f in t.selected_functions}
    first = next(t for t in single if t.selected_functions and set(t.selected_functions) <= trained)
    rows, functions = _rows(task_env, base / "sft", [("base", NOTHING, {}),
                                                     ("closed-sft", first.reference, {"steps": 4, "seconds": 2.0}),
                                                     ("open-sft", NOTHING, {"steps": 4, "seconds": 2.0})])
    config = {"model": "fixed-answer", "train_limit": 3, "steps": 4, "n": 1, "limit": 3, "probe_limit": 6,
              "trained_functions": functions, "zwc": task_env.mapping.origin, "code_version": code_version()}
    report_comparison(base / "sft", {"config": config, "verdict": sft_compare.verdict(rows),
                                     "rows": [sft_compare.row_summary(r) for r in rows]})
    rl_rows, _ = _rows(task_env, base / "rl", [
        ("base", NOTHING, {}), ("closed-rl", NOTHING, {"steps": 2, "completions": 8, "reward_per_rollout": [0.0, 0.0]}),
        ("closed-rl@sft-like", first.reference, {"steps": 2, "completions": 16, "reward_per_rollout": [0.25, 0.5]})])
    report_comparison(base / "rl", {"config": {**config, "steps": 2, "sft_steps": 2},
                                    "verdict": rl_compare.verdict(rl_rows),
                                    "rows": [sft_compare.row_summary(r) for r in rl_rows]})
    return base


def test_each_kind_is_detected_by_its_files(runs):
    kinds = {name: read_run(runs / name).kind for name in ("compare", "eval-a", "validate", "sft", "rl")}
    assert kinds == {"compare": "compare", "eval-a": "eval", "validate": "validate", "sft": "sft-compare",
                     "rl": "rl-compare"}
    evolve = read_run(runs / "compare" / "none")  # compare's learner folder is an evolve run with its results
    assert evolve.kind == "evolve" and [(e.name, e.mode) for e in evolve.evaluations] == [("none", "closed"),
                                                                                          ("none", "numpy")]
    assert [e.slot for e in read_run(runs / "validate").evaluations] == ["closed", "open", "numpy", "reference"]


def test_main_table_pass_at_1_is_what_the_results_files_say(runs):
    compare_rate = _file_rate(runs / "compare" / "none" / "closed.jsonl")
    mixed_rate = _file_rate(runs / "eval-a" / "closed.jsonl")
    assert compare_rate == 1.0 and 0 < mixed_rate < 1  # the fixed answer passes some tasks, not all
    report = build_report(read_runs([runs / "compare", runs / "eval-a"]))
    main = next(s for s in report.sections if s.key == "main")
    rows = {(r[0], r[1]): r for r in main.table.rows}
    # all 3 samples pass: the bootstrap over tasks is [1, 1], the exact lower bound 0.025 ** (1 / 3)
    assert rows[("none", "reference")][2] == "100.0 [29.2, 100.0] · tasks [100.0, 100.0]"
    cell = rows[("none", "fixed-answer")][2]
    assert cell.startswith(f"{100 * mixed_rate:.1f} [") and rows[("none", "fixed-answer")][3].startswith("@2 ")
    paper = main.table.header.index("paper single")
    assert rows[("none", "reference")][paper] == "0.0 (pass@64)"  # the paper's closed-book figure as anchor
    assert rows[("none", "reference")][main.table.header.index("context / answer")] == "0 chars"  # no learner
    markdown = to_markdown(report)
    assert cell in markdown and "code_version" in markdown and "| none | fixed-answer |" in markdown


def test_bootstrap_interval_is_over_tasks_and_contains_the_estimate(runs):
    [evaluation] = read_run(runs / "eval-a").evaluations
    est = estimate([evaluation], 1)
    assert est.n_tasks == 4 and est.low <= est.point <= est.high and est.low < est.high
    assert bootstrap_mean([np.ones(7)]) == (1.0, 1.0)
    values = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    low, high = bootstrap_mean([values])
    assert low <= values.mean() <= high and bootstrap_mean([values]) == (low, high)  # seeded: reproducible
    # a results file lists answers as they finished: the interval must not depend on that order
    records = [{"task_id": f"t{i:02d}", "passed": i in (4, 6, 8, 9, 10)} for i in range(12)]
    intervals = {(e.low, e.high) for e in (estimate([dataclasses.replace(evaluation, records=order)], 1)
                                           for order in (records, records[::-1], records[5:] + records[:5]))}
    assert len(intervals) == 1


def test_two_seeds_give_the_mean_over_builds_and_their_spread(runs):
    a, b = (_file_rate(runs / name / "closed.jsonl") for name in ("eval-a", "eval-b"))
    assert a != b  # the two builds disagree, so the spread is not zero
    evaluations = [e for run in read_runs([runs / "eval-a", runs / "eval-b"]) for e in run.evaluations]
    assert len({e.build for e in evaluations}) == 2
    est = estimate(evaluations, 1)
    assert est.point == pytest.approx((a + b) / 2) and est.spread == pytest.approx(np.std([a, b], ddof=1))
    assert est.low <= est.point <= est.high
    report = build_report(read_runs([runs / "eval-a", runs / "eval-b"]))
    [row] = next(s for s in report.sections if s.key == "main").table.rows
    assert row[2].endswith(f"sd {100 * est.spread:.1f} over 2 seeds")


def test_validation_sft_and_rl_tables_carry_their_figures_and_anchors(runs):
    report = build_report(read_runs([runs / "validate", runs / "sft", runs / "rl"]))
    sections = {s.key: s for s in report.sections}
    validation = {r[0]: r for r in sections["validation"].table.rows}
    samples = {e.slot: len(e.records) for e in read_run(runs / "validate").evaluations}
    closed_high = 100 * clopper_pearson(0, samples["closed"])[1]  # no pass: the exact upper bound, never [0, 0]
    assert validation["closed"][3] == f"0.0 [0.0, {closed_high:.1f}] · tasks [0.0, 0.0]" and closed_high > 50
    assert validation["closed"][6] == "ok"
    reference_low = 100 * clopper_pearson(samples["reference"], samples["reference"])[0]
    assert validation["reference"][3] == f"100.0 [{reference_low:.1f}, 100.0] · tasks [100.0, 100.0]"
    assert validation["reference"][6] == "ok"
    assert validation["open"][7] == "85.3" and validation["reference"][7] == "—"  # no source: a dash
    summary = json.loads((runs / "sft" / "summary.json").read_text())
    sft = {r[0]: r for r in sections["sft"].table.rows}
    for row in summary["rows"]:
        assert sft[row["name"]][3] == f"{100 * row['trained_recall']:.1f}"
        rate = _file_rate(runs / "sft" / row["name"] / "closed.jsonl")
        assert sft[row["name"]][4].startswith(f"{100 * rate:.1f}")
    column = sections["sft"].table.header.index
    assert sft["closed-sft"][column("paper single")] == "39.6" and sft["open-sft"][column("paper single")] == "0.0"
    assert sft["base"][column("steps")] == "0" and sft["closed-sft"][column("train s")] == "2.0"
    rl = {r[0]: r for r in sections["rl"].table.rows}
    column = sections["rl"].table.header.index
    assert rl["closed-rl@sft-like"][column("paper single")] == "51.0"
    assert rl["closed-rl@sft-like"][column("paper multi")] == "—" and rl["closed-rl"][column("rollouts")] == "8"
    assert rl["closed-rl@sft-like"][column("rollout reward (first → last)")] == "25.0 → 50.0"
    assert any(v for v in sections["rl"].findings if "RL Gap" in v)  # rl-compare's verdict comes along
    assert [c.label for c in sections["rl"].curves] == ["closed-rl", "closed-rl@sft-like"]  # the reward curves
    assert {p["name"] for p in report.budget} >= {"base", "closed-sft", "closed-rl@sft-like"}


def test_report_opens_with_the_findings_its_rows_decide(runs):
    report = build_report(read_runs([runs / "sft", runs / "rl", runs / "compare"]))
    findings = report.sections[0]
    assert findings.key == "findings"
    rows = {r[0]: dict(zip(findings.table.header, r, strict=True)) for r in findings.table.rows}
    assert {"Open-Book Paradox", "RL Gap (1/2)", "RL Gap (2/2)"} <= set(rows)
    n_tasks = len({r["task_id"] for r in read_run(runs / "sft").evaluations[1].records})
    paradox = rows["Open-Book Paradox"]
    assert paradox["paired tasks"] == str(n_tasks) and paradox["paper (points)"] == "+39.6 (39.6 − 0.0)"
    assert paradox["verdict"] == "inconclusive"  # a handful of tasks decides nothing, whatever the points say
    assert rows["RL Gap (2/2)"]["claim"] == "closed-rl minus base within ±10 points"
    assert any(text.startswith("RL Gap: inconclusive") for text in findings.findings)
    markdown = to_markdown(report)
    assert markdown.index("## Findings") < markdown.index("## SFT") < markdown.index("## RL ablations")
    assert "Open-Book Paradox (pre-specified: closed-sft minus open-sft > 0" in markdown
    assert all(s.key != "findings" for s in build_report(read_runs([runs / "validate"])).sections)  # none to decide


def test_every_anchor_figure_names_a_source():
    anchors = load_anchors()
    for table in ("learners", "validation"):
        for name, entry in anchors[table].items():
            figures = [entry[s] for s in ("single", "multi") if entry[s] is not None]
            assert not figures or entry["source"] in anchors["sources"], name


def test_unknown_or_damaged_directories_get_named_errors(tmp_path, runs):
    (tmp_path / "notes.txt").write_text("not a run")
    with pytest.raises(UnknownRunError) as info:
        read_run(tmp_path)
    assert str(tmp_path) in str(info.value) and all(f"{k}:" in str(info.value) for k in KINDS)
    with pytest.raises(UnknownRunError, match="no such file"):
        read_run(tmp_path / "missing")
    damaged = tmp_path / "damaged"
    shutil.copytree(runs / "compare", damaged)
    (damaged / "summary.json").write_text("{ cut short")
    with pytest.raises(RunFormatError, match="summary.json: not JSON"):
        read_run(damaged)
    (damaged / "summary.json").write_text(json.dumps({"results": [{"learner": "none"}]}))
    with pytest.raises(RunFormatError, match="no field 'evaluation' in results\\[0\\]"):
        read_run(damaged)


def test_cli_writes_the_report_and_exits_2_on_a_bad_run(runs, tmp_path):
    app = typer.Typer()
    app.command("report")(report_command)
    app.command("other")(lambda: None)  # two commands: `report` is a subcommand, as in sebench
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["report", "--runs", str(runs / "compare"), str(runs / "validate"), "--out",
                                      str(out)])
    assert result.exit_code == 0, result.output
    assert "Main table" in (out / "report.md").read_text() and "Design validation" in (out / "report.md").read_text()
    bad = tmp_path / "empty"
    bad.mkdir()
    result = CliRunner().invoke(app, ["report", "--runs", str(runs / "compare"), str(bad), "--out", str(out)])
    assert result.exit_code == 2 and "error" in result.output and "empty" in result.output


def test_html_page_renders_in_headless_chromium(runs, tmp_path):
    from PIL import Image

    out = tmp_path / "report"
    write_report([runs / n for n in ("compare", "eval-a", "eval-b", "validate", "sft", "rl")], out)
    page_html = (out / "report.html").read_text()
    assert "http://" not in page_html and "https://" not in page_html and page_html.count("data:image/png;base64,") >= 5

    def check(page) -> None:
        for key in ("findings", "main", "validation", "sft", "rl", "taxonomy", "runs"):
            assert page.locator(f"table#table-{key} tbody tr").count() >= 1, key
        assert page.locator("table#table-main th").first.inner_text() == "learner"
        widths = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")
        assert len(widths) >= 5 and all(w > 100 for w in widths)

    problems, requests = render(out / "report.html", check, tmp_path / "page.png")
    assert not problems, problems
    assert requests == [(out / "report.html").as_uri()]  # self-contained: nothing else was fetched
    shot = Image.open(tmp_path / "page.png").convert("RGB")
    assert shot.height > 1500 and len(shot.getcolors(1 << 24)) > 50  # a page with tables and plots, not blank
