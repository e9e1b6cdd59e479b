"""The ``sebench`` command line (typer). Thin: every command calls the library.

    sebench zwc build --seed 7 --out runs/zwc-seed7
    sebench zwc build --official v1 --out runs/zwc-v1            # SE-Bench v1's names (shipped)
    sebench zwc build --official PATH/api_doc.jsonl --out runs/zwc-v1   # … and its docs
    sebench zwc check --zwc runs/zwc-seed7 --task-file t.jsonl --code solution.py
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from benchmarks import cli_checks as check
from benchmarks import cli_options as opt
from benchmarks.cli_options import DEFAULT_MODEL, PRESET_HELP, Dtype, Engine, Preset, Usage
from benchmarks.cli_shared import console, evaluation_tables, evolve_checked, load_env
from sebench.errors import SettingError


class _OneLineErrors(typer.core.TyperGroup):
    """The command group: a ``SebenchError`` (bad input, a missing prerequisite; its message says
    the fix) from any command prints in one line and exits 2; anything else is a bug and keeps
    its traceback."""

    def invoke(self, ctx):
        from sebench.errors import SebenchError

        try:
            return super().invoke(ctx)
        except SebenchError as exc:
            from rich.markup import escape

            console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from None


app = typer.Typer(help="SE-Bench: can an agent internalise a library it has never seen?", cls=_OneLineErrors,
                  no_args_is_help=True, pretty_exceptions_show_locals=False)
zwc_app = typer.Typer(help="Build and inspect ZWC environments.", no_args_is_help=True)
app.add_typer(zwc_app, name="zwc")


@zwc_app.command("build")
def zwc_build(
    out: Path = typer.Option(..., "--out", help="Directory to write the package, mapping and docs into."),
    seed: int | None = typer.Option(None, "--seed", help="Fresh obfuscation for this seed."),
    official: str | None = typer.Option(None, "--official", help="Reproduce SE-Bench v1's names: 'v1' (the names "
                                        "shipped with sebench, docs written from the installed NumPy) or the path "
                                        "of SE-Bench's api_doc.jsonl (its names and its docs)."),
) -> None:
    """Write an importable zwc package, mapping.json, api_doc.jsonl and docs.md."""
    from envs.zwc.env import build_directory
    from envs.zwc.errors import ZWCEnvError
    from envs.zwc.library.docs import build_api_doc
    from envs.zwc.library.names import Mapping

    if (seed is None) == (official is None):
        raise SettingError("give exactly one of --seed N or --official API_DOC")
    try:
        with console.status("building ZWC…"):
            if official == "v1":
                mapping = Mapping.sebench_v1()
                records = build_api_doc(mapping)
            elif official is not None:
                import json

                mapping = Mapping.from_sebench_v1(official)
                records = [json.loads(line) for line in Path(official).read_text().splitlines() if line.strip()]
            else:
                mapping = Mapping.generate(seed)
                records = build_api_doc(mapping)
            build_directory(mapping, out, records)
    except ZWCEnvError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    table = Table(title=f"ZWC build: {out}")
    table.add_column("functions", justify="right")
    table.add_column("of which zwc.rfx", justify="right")
    table.add_column("origin")
    table.add_row(str(len(mapping)), str(sum(".rfx." in e.zwc for e in mapping)), mapping.origin)
    Console().print(table)


@zwc_app.command("check")
def zwc_check(
    zwc: Path = typer.Option(..., "--zwc", help="A directory written by `sebench zwc build`."),
    task_file: Path = typer.Option(..., "--task-file", help="JSON-lines task file."),
    code: Path = typer.Option(..., "--code", help="A Python file with the candidate solution."),
    index: int = typer.Option(0, "--index", help="Which task of the file (0-based)."),
    mode: str = typer.Option("closed", "--mode", help="closed | numpy"),
) -> None:
    """Grade one candidate file against one task, as the benchmark would."""
    from envs.zwc import ZWCEnv, read_tasks

    tasks = read_tasks(task_file)
    if not 0 <= index < len(tasks):
        raise SettingError(f"--index {index}: {task_file} has {len(tasks)} tasks")
    with ZWCEnv.load(zwc, workers=1) as env:
        verdict = env.check(tasks[index], code.read_text(), mode=mode)  # type: ignore[arg-type]
    colour = "green" if verdict.passed else "red"
    Console().print(f"[{colour}]{verdict.failure.value}[/{colour}] "
                    f"{verdict.n_passed}/{len(verdict.tests)} tests  {verdict.detail}")
    raise typer.Exit(0 if verdict.passed else 1)


tasks_app = typer.Typer(help="Build and inspect task sets.", no_args_is_help=True)
app.add_typer(tasks_app, name="tasks")


@tasks_app.command("build")
def tasks_build(
    zwc: Path = typer.Option(..., "--zwc", help="A directory written by `sebench zwc build`."),
    seed: int = typer.Option(0, "--seed", help="Seed of the task draw (data and wording)."),
    per_function: int | None = typer.Option(None, "--per-function",
                                            help="Train tasks per function; default: 718 in all, as SE-Bench v1."),
    multi: int = typer.Option(440, "--multi", help="Number of multi-function test tasks."),
) -> None:
    """Generate train, single_test and multiple_test, verified in the sandbox, with a build report."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from envs.zwc.errors import ZWCEnvError
    from envs.zwc.tasks import build_tasks
    from envs.zwc.tasks.build import hygiene_table, kinds_table
    from memory import Embedder
    from memory.embed import EmbedderUnavailable

    if per_function is not None and per_function < 1:
        raise SettingError("--per-function must be at least 1")
    if multi < 0:
        raise SettingError("--multi must be >= 0")
    try:  # the near-duplicate check of split hygiene embeds queries with the memory's embedder
        embed = Embedder().embed
    except EmbedderUnavailable as exc:
        console.print(f"[yellow]near-duplicate check not run: {exc}[/yellow]")
        embed = None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console) as bar:
            ids: dict[str, int] = {}

            def progress(split: str, done: int, total: int) -> None:
                if split not in ids:
                    ids[split] = bar.add_task(f"drafting {split}", total=total)
                bar.update(ids[split], completed=done)

            report = build_tasks(zwc, seed=seed, per_function=per_function, multi=multi, progress=progress,
                                 embed=embed)
    except ZWCEnvError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    table = Table(title=f"tasks built in {report.seconds:.1f}s ({report.tasks_per_second:.0f} tasks/s)")
    for col in ("split", "kept", "dropped", "functions covered"):
        table.add_column(col, justify="right")
    for name, split in report.splits.items():
        table.add_row(name, str(split.kept), str(sum(split.dropped.values())), str(split.functions_covered))
    out = Console()
    out.print(table)
    kinds = Table(title="by kind (all splits)")
    for col in ("kind", "kept", "dropped"):
        kinds.add_column(col, justify="right")
    for row in kinds_table(report):
        kinds.add_row(*map(str, row))
    out.print(kinds)
    hygiene = Table(title="split hygiene: test vs train of one function")
    for col in ("split", "verbatim", "near-dup", "shared inputs", "max cosine", "redrawn"):
        hygiene.add_column(col, justify="right")
    for row in hygiene_table(report):
        hygiene.add_row(*map(str, row))
    out.print(hygiene)
    out.print(f"near-duplicates: {report.near_duplicate_check}")
    for split, names in report.uncovered.items():
        if names:
            out.print(f"[yellow]{split}: no task for {', '.join(names)}[/yellow]")
    out.print(f"report: {zwc / 'build_report.json'}")


@tasks_app.command("propose")
def tasks_propose(
    zwc: Path = typer.Option(..., "--zwc", help="A directory written by `sebench zwc build`."),
    model: str = opt.model_option("The proposer model."),
    solvers: str = typer.Option(DEFAULT_MODEL, "--solvers", help="Comma-separated solver models (consensus); "
                                f"default {DEFAULT_MODEL}, as --model."),
    attempts: int = typer.Option(20, "--attempts", help="Tasks to propose."),
    seed: int = typer.Option(0, "--seed"),
    max_tokens: int = opt.max_tokens_option(512),
    out: Path = typer.Option(..., "--out", help="Kept tasks (JSON lines); a review sample and report beside it."),
) -> None:
    """SE-Bench's LLM pipeline: propose, execute, consensus-filter and verify tasks."""
    import json

    from agents.models import load_model
    from envs.zwc import write_tasks
    from selfplay.llm_tasks import generate_llm_tasks

    check.counts(attempts=attempts, max_tokens=max_tokens)
    check.model(model)
    check.models(solvers, "--solvers")
    env = load_env(zwc)
    try:
        with console.status("proposing and filtering tasks…"):
            kept, report = generate_llm_tasks(env, load_model(model), [load_model(s) for s in solvers.split(",")],
                                              attempts, seed=seed, max_tokens=max_tokens)
    finally:
        env.close()
    write_tasks(kept, out)
    write_tasks([t for t in kept if t.task_id in report.review], out.with_suffix(".review.jsonl"))
    out.with_suffix(".report.json").write_text(json.dumps(
        {"attempts": report.attempts, "kept": report.kept, "acceptance_rate": report.acceptance_rate,
         "dropped": report.dropped, "review": report.review, "proposer": model, "solvers": solvers}, indent=1))
    table = Table(title=f"LLM task generation: {report.kept}/{report.attempts} kept "
                        f"({100 * report.acceptance_rate:.1f}%)")
    table.add_column("dropped because")
    table.add_column("count", justify="right")
    for reason, count in sorted(report.dropped.items(), key=lambda kv: -kv[1]):
        table.add_row(reason, str(count))
    Console().print(table)


@app.command("eval")
def eval_command(
    zwc: Path = opt.zwc_option(),
    split: str = typer.Option("single_test", "--split", help="train | single_test | multiple_test"),
    model: str | None = opt.model_option("Model to evaluate.", None, f"Default {DEFAULT_MODEL} (every command's); "
                                         "with --run, the run's."),
    run: Path | None = typer.Option(None, "--run", help="A run written by `sebench evolve` (or compare): "
                                    "evaluates its learner, memory or weights."),
    dtype: Dtype = opt.dtype_option(),
    engine: Engine = opt.engine_option(),
    mode: str = typer.Option("closed", "--mode", help="closed | open | search | numpy"),
    preset: Preset = typer.Option("cpu", "--preset", help=PRESET_HELP),
    n: int | None = opt.n_option(None, "Samples per task (pass@k for every k <= n); default: the preset's (cpu 5, "
                                       "paper 1)."),
    temperature: float | None = opt.temperature_option(),
    out: Path | None = typer.Option(None, "--out", help="Results JSON lines (summary beside it)."),
    limit: int | None = opt.limit_option(None, "Only the first N tasks of the split."),
    resume: bool = typer.Option(False, "--resume", help="Continue the results file of a killed run."),
    max_tokens: int | None = opt.max_tokens_option(None, "Tokens per answer; default: the preset's (cpu 512, paper "
                                                         "8192)."),
    max_turns: int = typer.Option(1, "--max-turns", help="Answers per episode (retries with feedback); at least 1."),
    usage: Usage = opt.usage_option(),
    seed: int = typer.Option(0, "--seed", help="Run seed: every sampled answer's seed derives from it (task, "
                                               "sample, turn), so the same command gives the same samples."),
) -> None:
    """Evaluate a model, or a saved learner (--run), on a split; results and a summary are written as they
    finish."""
    from agents import Agent
    from agents.presets import preset as get_preset
    from benchmarks.runs import load_run
    from envs.zwc.env import MODES, SPLITS

    check.choice(split, "--split", SPLITS)
    check.choice(mode, "--mode", MODES)
    check.limit(limit, "the first N tasks of the split")
    check.counts(n=n, max_tokens=max_tokens, max_turns=max_turns)
    check.model(model)
    chosen = get_preset(preset)
    settings = chosen.agent_settings()
    if max_tokens is not None:
        settings["max_tokens"] = max_tokens
    if temperature is not None:
        settings["temperature"] = temperature
    n = chosen.n if n is None else n
    if run is not None:
        agent = load_run(run, model=model, max_turns=max_turns, dtype=None if dtype == "auto" else dtype,
                         engine=engine, **settings)
        out = out or run / f"results-{split}-{mode}.jsonl"
        agent.seed = seed
        if engine == "ct2-int8" and getattr(agent.learner, "parametric", False):
            Console(stderr=True).print("[yellow]warning:[/yellow] ct2-int8 rounds each weight to 1/127 of its row's "
                                       "largest: on a Closed-SFT model it erased every pass fine-tuning gave "
                                       "(docs/results/engines.md); trained weights are evaluated faithfully with "
                                       "--engine auto (float32)", highlight=False)
    else:
        agent = Agent(model=model or DEFAULT_MODEL, max_turns=max_turns, dtype=dtype, seed=seed, engine=engine,
                      **settings)
    env = load_env(zwc, usage)
    try:
        report = agent.evaluate(env, split=split, n=n, mode=mode, out=str(out) if out else None, limit=limit,
                                resume=resume)
    finally:  # ResultsExistError, MixedResultsError (a resume of another config): one line, from main
        env.close()
    for table in evaluation_tables([report]):
        Console().print(table)
    Console().print(f"results: {report.results_path}\nsummary: {report.summary_path}")


@app.command("validate")
def validate_command(
    zwc: Path = opt.zwc_option(),
    model: str = opt.model_option("The model under test."),
    dtype: Dtype = opt.dtype_option(),
    engine: Engine = opt.engine_option(),
    split: str = typer.Option("single_test", "--split", help="train | single_test | multiple_test"),
    limit: int = opt.limit_option(20, "Tasks per run: the first N of the split."),
    max_tokens: int = opt.max_tokens_option(256),
    temperature: float | None = opt.temperature_option(),
    out: Path | None = typer.Option(None, "--out", help="Directory for the four runs' results."),
    usage: Usage = opt.usage_option(),
) -> None:
    """SE-Bench's design validation: closed-book (must be 0), open-book, NumPy control, reference."""
    from agents import Agent
    from benchmarks.validate import validate
    from envs.zwc.env import SPLITS

    check.choice(split, "--split", SPLITS)
    check.limit(limit, "tasks per run")
    check.counts(max_tokens=max_tokens)
    check.model(model)
    env = load_env(zwc, usage)
    try:
        result = validate(env, Agent(model=model, max_tokens=max_tokens, dtype=dtype, engine=engine,
                                     temperature=temperature), split=split, limit=limit,
                          out_dir=out or zwc / "validate")
    finally:
        env.close()
    for table in evaluation_tables(result.reports):
        Console().print(table)
    Console().print(result.verdict_text())
    raise typer.Exit(0 if result.ok else 1)


@app.command("evolve")
def evolve_command(
    zwc: Path = opt.zwc_option(),
    learner: str = typer.Option(..., "--learner", help="none | expel | ace | open-sft | closed-sft | open-rl | "
                                "closed-rl | closed-sft-rl | open-sft-self | closed-sft-self (Closed-RL's "
                                "ablations: --set preset=sft-like ...)"),
    model: str = opt.model_option(),
    dtype: Dtype = opt.dtype_option(" Also the trainer's (--set dtype=… wins)."),
    out: Path = typer.Option(..., "--out", help="Run directory: learner/, model/ (parametric) and report.json."),
    limit: int | None = opt.limit_option(None, "Train tasks used by the learner: the first N."),
    gather_model: str | None = typer.Option(None, "--gather-model",
                                            help="Model that gathers trajectories: self (the agent's model, "
                                                 "every learner's default), reference (a teacher: verified "
                                                 "solutions), or a backend."),
    max_tokens: int = opt.max_tokens_option(256),
    settings: list[str] = opt.settings_option(),
    usage: Usage = opt.usage_option(),
) -> None:
    """The learner's training phase; its state lands in OUT/learner, its report in OUT/report.json."""
    check.limit(limit, "the first N train tasks")
    check.counts(max_tokens=max_tokens)
    check.model(model)
    check.helper_model(gather_model, "--gather-model")
    check.learners([learner], "--learner")
    config = {k: v for k, v in (("limit", limit), ("gather_model", gather_model)) if v is not None}
    agent, report = evolve_checked(zwc, learner, out, config, settings, model=model, max_tokens=max_tokens,
                                   dtype=dtype, usage=usage)
    table = Table(title=f"evolve: {learner} with {model}")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("episodes", str(report.episodes))
    table.add_row("seconds", f"{report.seconds:.1f}")
    for key, value in report.details.items():
        table.add_row(key, str(value))
    Console().print(table)
    if getattr(agent.learner, "parametric", False):
        Console().print(f"fine-tuned model: {out / 'model'}  (use it with --model {out / 'model'})")
    Console().print(f"evaluate it: sebench eval --zwc {zwc} --run {out}")


@app.command("probe")
def probe_command(
    zwc: Path = opt.zwc_option("A ZWC build (its mapping is what is asked)."),
    model: str = opt.model_option("The model asked (e.g. RUN/model)."),
    dtype: Dtype = opt.dtype_option(),
    engine: Engine = opt.engine_option(),
    out: Path | None = typer.Option(None, "--out", help="JSON with recall and every answer."),
    limit: int | None = opt.limit_option(None, "Only the first N catalogued functions."),
    max_tokens: int = opt.max_tokens_option(40),
) -> None:
    """Closed-book API recall: name the zwc function for each description, scored exactly."""
    from agents.models import load_model
    from agents.probe import probe
    from envs.zwc.library.names import Mapping

    check.limit(limit, "the first N catalogued functions")
    check.counts(max_tokens=max_tokens)
    check.model(model)
    if not (zwc / "mapping.json").is_file():
        console.print(f"[red]error:[/red] {zwc}: not a ZWC build (no mapping.json)")
        raise typer.Exit(2)
    with console.status(f"asking {model}…"):
        report = probe(load_model(model, dtype=dtype, engine=engine), Mapping.load(zwc / "mapping.json"), limit=limit,
                       max_tokens=max_tokens)
    if out is not None:
        report.write(out)
    table = Table(title=f"API recall, closed-book: {model}")
    for col in ("functions", "recall", "with aliases", "real zwc names", "numpy used", "seconds"):
        table.add_column(col, justify="right")
    table.add_row(str(report.n), f"{100 * report.recall:.1f}%", f"{100 * report.recall_with_aliases:.1f}%",
                  f"{100 * report.valid_name_rate:.1f}%", f"{100 * report.numpy_rate:.1f}%", f"{report.seconds:.0f}")
    Console().print(table)
    if out is not None:
        Console().print(f"answers: {out}")


def _register_commands() -> None:
    """Commands that live in their own modules (the command functions import their work lazily)."""
    from benchmarks.cli_backends import backends_command, check_backend_command
    from benchmarks.cli_check import check_learner_command
    from benchmarks.cli_compare import compare_command, rl_compare_command, sft_compare_command
    from benchmarks.cli_learners import learners_command
    from benchmarks.cli_report import report_command
    from benchmarks.cli_reproduce import reproduce_command
    from benchmarks.cli_selfplay import selfplay_command, selfplay_compare_command
    from benchmarks.cli_serve import serve_command

    app.command("learners")(learners_command)
    app.command("check-learner")(check_learner_command)
    app.command("check-backend")(check_backend_command)
    app.command("backends")(backends_command)
    app.command("report")(report_command)
    app.command("compare")(compare_command)
    app.command("sft-compare")(sft_compare_command)
    app.command("rl-compare")(rl_compare_command)
    app.command("selfplay")(selfplay_command)
    app.command("serve")(serve_command)
    app.command("selfplay-compare")(selfplay_compare_command)
    app.command("reproduce")(reproduce_command)


_register_commands()


def main() -> None:
    import sys

    from benchmarks.cli_learners import print_settings_after_help
    try:
        app()  # a SebenchError prints in one line (``_OneLineErrors``); anything else keeps its traceback
    except SystemExit as done:
        if done.code == 0:
            print_settings_after_help(sys.argv[1:])
        raise


if __name__ == "__main__":
    main()
