"""Read the run directories that sebench's commands write, into one shape the report tables use.

Every command writes its own layout (``compare``: ``summary.json`` with ``results``;
``sft-compare`` / ``rl-compare`` / ``selfplay-compare``: ``summary.json`` with ``rows``; ``validate``: four
``I-MODEL-MODE.jsonl`` results with summaries; ``evolve``: ``run.json``, ``report.json`` and
``learner/``; ``eval``: results JSON lines with ``.summary.json`` beside them, alone or inside
an evolve run, where ``sebench eval --run RUN`` writes them). ``read_run`` tries the kinds
of ``KINDS`` in order and returns a ``Run`` whose ``evaluations`` each carry the per-sample
records, because the report's intervals resample tasks and a summary holds only the means.
A new kind of run is one ``RunKind`` entry here: a ``detect`` that
looks at files only, and a ``read`` that returns ``Evaluation``s with a ``role`` the tables know.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agents.learner import teacher_label, teacher_of
from sebench.errors import SebenchError

SPLIT_NAMES = {"single_test": "single", "multiple_test": "multi"}
VALIDATION_SLOTS = ("closed", "open", "numpy", "reference")  # validate's run order, by file index
_VALIDATE_FILE = re.compile(r"^([0-3])-(.+)-(closed|open|numpy)\.summary\.json$")


class ReportError(SebenchError, ValueError):
    """Input the report cannot use; the message names the path and what was expected."""


class UnknownRunError(ReportError):
    def __init__(self, path: Path, expected: list[str], problem: str = "not a run directory sebench report knows"):
        self.path, self.expected = path, expected
        lines = "\n".join(f"  - {e}" for e in expected)
        super().__init__(f"{path}: {problem}. Expected one of:\n{lines}")


class RunFormatError(ReportError):
    def __init__(self, path: Path, problem: str):
        self.path = path
        super().__init__(f"{path}: {problem}")


def build_key(config: dict) -> str:
    """Which ZWC build an evaluation's tasks came from: the mapping's hash where its config records
    it, else the build's origin."""
    return config.get("mapping_sha256") or config.get("zwc") or "unknown"


@dataclass
class Evaluation:
    """One evaluation of a run: its summary (an ``EvalReport`` as JSON) and its per-sample records.

    ``role`` says which table it belongs to: ``learner`` (closed-book, the main table),
    ``validation`` (``slot`` is closed / open / numpy / reference), ``sft`` or ``rl``.
    """

    name: str
    role: str
    summary: dict
    records: list[dict]
    results_path: Path | None
    run: Path
    slot: str = ""
    extra: dict = field(default_factory=dict)  # recall, trained_recall, train, per_task, teacher (trained rows)

    @property
    def label(self) -> str:
        """The row's name in the tables: a row trained on a teacher's answers says so
        (``closed-sft (teacher: reference)``); ``name`` stays the key findings and files use."""
        return teacher_label(self.name, self.extra.get("teacher"))

    @property
    def config(self) -> dict:
        return self.summary.get("config") or {}

    @property
    def split(self) -> str:
        return self.summary.get("split", "")

    @property
    def mode(self) -> str:
        return self.summary.get("mode", "")

    @property
    def model(self) -> str:
        return self.summary.get("model", "")

    @property
    def build(self) -> str:
        return build_key(self.config)

    @property
    def build_label(self) -> str:
        """A short name for the build: ``seed:7`` or the build directory's name."""
        origin = self.config.get("zwc") or ""
        if origin.startswith(("seed:", "sebench-v1:")) or not origin:
            return origin or self.build
        path = Path(origin)
        return path.parent.name if path.name == "mapping.json" else path.name


@dataclass
class Run:
    kind: str
    path: Path
    config: dict
    evaluations: list[Evaluation]
    details: dict = field(default_factory=dict)  # verdict, evolve reports: what the kind adds


@dataclass(frozen=True)
class RunKind:
    name: str
    expects: str                      # the files that make a directory this kind (for the error)
    detect: Callable[[Path], bool]
    read: Callable[[Path], Run]


def _load_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise RunFormatError(path, "missing") from None
    except json.JSONDecodeError as exc:
        raise RunFormatError(path, f"not JSON ({exc}); rerun the command that wrote it") from None
    if not isinstance(data, dict):
        raise RunFormatError(path, f"expected a JSON object, found {type(data).__name__}")
    return data


def _field(data: dict, key: str, path: Path, where: str = ""):
    if key not in data:
        raise RunFormatError(path, f"no field {key!r}{where}; was it written by another version of sebench?")
    return data[key]


def read_records(path: Path | None, n: int | None) -> list[dict]:
    """Per-sample records, one per (task, sample) and only samples < n; a line cut short by a kill
    is skipped, as ``agents.evaluate.read_results`` does."""
    if path is None or not path.is_file():
        return []
    seen: dict[tuple[str, int], dict] = {}
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        try:
            record = json.loads(line)
            key = (str(record["task_id"]), int(record["sample"]))
            if "passed" not in record:  # a record without a verdict is not a result
                raise KeyError("passed")
        except json.JSONDecodeError:
            continue
        except (KeyError, TypeError, ValueError):
            raise RunFormatError(path, f"line {lineno}: a result needs task_id, sample and passed") from None
        if n is None or key[1] < n:
            seen.setdefault(key, record)
    return list(seen.values())


def _evaluation(summary: dict, source: Path, run: Path, name: str, role: str, candidates: list[Path],
                **extra) -> Evaluation:
    """An evaluation from its summary, with records from the first results file that exists:
    the command's own layout first, then the path the summary recorded (absolute or run-relative)."""
    for key in ("split", "mode", "pass_at", "failures"):
        _field(summary, key, source, " in an evaluation summary")
    recorded = summary.get("results_path")
    paths = [*candidates, *([Path(recorded)] if recorded else [])]
    path = next((p for p in paths if p.is_file()), None)
    n = (summary.get("config") or {}).get("n")
    return Evaluation(name=name, role=role, summary=summary, records=read_records(path, n), results_path=path,
                      run=run, **extra)


# -- compare -------------------------------------------------------------------------------
def _is_summary_with(path: Path, key: str) -> bool:
    summary = path / "summary.json"
    if not summary.is_file():
        return False
    try:
        return key in json.loads(summary.read_text())
    except (json.JSONDecodeError, OSError):
        return False


def _read_compare(path: Path) -> Run:
    source = path / "summary.json"
    data = _load_json(source)
    evaluations = []
    for i, result in enumerate(_field(data, "results", source)):
        learner = _field(result, "learner", source, f" in results[{i}]")
        summary = _field(result, "evaluation", source, f" in results[{i}]")
        evaluations.append(_evaluation(summary, source, path, learner, "learner", [path / learner / "closed.jsonl"],
                                       extra={"teacher": result.get("teacher")}))
    evolve = {r["learner"]: r.get("evolve", {}) for r in data["results"]}
    numpy = {r["learner"]: {"after": (r.get("numpy") or {}).get("pass_at", {}).get("1"),
                            "retained": r.get("numpy_retained")} for r in data["results"] if r.get("numpy")}
    return Run("compare", path, data.get("config", {}), evaluations, {"evolve": evolve, "numpy": numpy})


# -- sft-compare and rl-compare ---------------------------------------------------------------
def _is_rl(path: Path) -> bool:
    return _is_summary_with(path, "rows") and "sft_steps" in _load_json(path / "summary.json").get("config", {})


def _is_selfplay(path: Path) -> bool:
    return _is_summary_with(path, "rows") and "rounds" in _load_json(path / "summary.json")


def _read_rows(path: Path, role: str) -> Run:
    """sft-compare, rl-compare and selfplay-compare: a row per model (the base model first), and
    for self-play each run's rounds and the learners that ended without a model."""
    source = path / "summary.json"
    data = _load_json(source)
    rounds = data.get("rounds") or {}
    evaluations = []
    for i, row in enumerate(_field(data, "rows", source)):
        name = _field(row, "name", source, f" in rows[{i}]")
        summary = _field(row, "evaluation", source, f" in rows[{i}]")
        extra = {k: row.get(k) for k in ("recall", "trained_recall", "recall_with_aliases", "train", "per_task",
                                         "teacher")}
        extra["rounds"] = rounds.get(name) or []
        folders = [path / name / "closed.jsonl", path / name.replace("@", "_") / "closed.jsonl"]
        evaluations.append(_evaluation(summary, source, path, name, role, folders, extra=extra))
    details = {"verdict": data.get("verdict", ""), "rounds": rounds,
               "failed": (data.get("config") or {}).get("failed") or {}}
    return Run(f"{role}-compare", path, data.get("config", {}), evaluations, details)


# -- validate ------------------------------------------------------------------------------
def _validate_summaries(path: Path) -> list[tuple[int, Path]]:
    return sorted((int(m.group(1)), p) for p in path.glob("*.summary.json") if (m := _VALIDATE_FILE.match(p.name)))


def _read_validate(path: Path) -> Run:
    evaluations, configs = [], []
    for index, summary_path in _validate_summaries(path):
        summary = _load_json(summary_path)
        slot = VALIDATION_SLOTS[index]
        results = summary_path.with_name(summary_path.name.removesuffix(".summary.json") + ".jsonl")
        evaluations.append(_evaluation(summary, summary_path, path, slot, "validation", [results], slot=slot))
        configs.append(summary.get("config", {}))
    config = {"model": next((c.get("model") for c in configs if c.get("model") != "reference"), ""),
              **{k: configs[0].get(k) for k in ("split", "limit", "usage", "zwc", "code_version") if configs}}
    return Run("validate", path, config, evaluations)


# -- eval results (alone, or inside an evolve run) ---------------------------------------------
def _eval_summaries(path: Path, depth: int = 1) -> list[Path]:
    """``*.summary.json`` files of ``sebench eval`` under ``path`` (a file, or a folder searched
    ``depth`` levels down); validate's own files and a learner's state are not results."""
    if path.is_file():
        name = path.name
        summary = path if name.endswith(".summary.json") else path.with_suffix(".summary.json")
        return [summary] if summary.is_file() else []
    found = []
    for level in range(depth + 1):
        pattern = "/".join(["*"] * level + ["*.summary.json"])
        found += [p for p in path.glob(pattern) if not _VALIDATE_FILE.match(p.name)
                  and not {"learner", "model"} & set(p.relative_to(path).parts[:-1])]
    return sorted(found)


def _eval_evaluations(path: Path, learner: str | None = None, depth: int = 1,
                      teacher: str | None = None) -> list[Evaluation]:
    """Evaluations of ``sebench eval``. Inside an evolve run (``learner`` given) they are that
    learner's; alone, the reference model and the open / NumPy modes are design-validation runs."""
    evaluations = []
    for summary_path in _eval_summaries(path, depth):
        summary = _load_json(summary_path)
        results = summary_path.with_name(summary_path.name.removesuffix(".summary.json") + ".jsonl")
        name = learner or summary.get("config", {}).get("learner") or "none"
        if learner is None and (summary.get("model") == "reference" or summary.get("mode") in ("open", "numpy")):
            slot = "reference" if summary.get("model") == "reference" else summary.get("mode", "")
            evaluations.append(_evaluation(summary, summary_path, path, slot, "validation", [results], slot=slot))
        else:
            evaluations.append(_evaluation(summary, summary_path, path, name, "learner", [results],
                                           extra={"teacher": teacher}))
    return evaluations


def _read_eval(path: Path) -> Run:
    evaluations = _eval_evaluations(path)
    config = dict(evaluations[0].config) if len(evaluations) == 1 else {}
    return Run("eval", path, config, evaluations)


def _read_evolve(path: Path) -> Run:
    """``benchmarks/runs.py``'s layout: run.json (what made it), report.json, learner/, model/."""
    report = _load_json(path / "report.json")
    learner = _field(report, "learner", path / "report.json")
    config = _load_json(path / "run.json") if (path / "run.json").is_file() else {"learner": learner}
    details = report.get("details") or {}
    # who gathered its data: recorded since issue 39; before, the settings, or a reference gatherer's name
    gathered = (config.get("settings") or {}).get("gather_model")
    teacher = (details.get("teacher") or teacher_of(gathered, config.get("model"))
               or ("reference" if details.get("gathered_with") == "reference" else None))
    return Run("evolve", path, config, _eval_evaluations(path, learner=learner, teacher=teacher),
               {"evolve": {learner: report}})


KINDS: dict[str, RunKind] = {kind.name: kind for kind in (
    RunKind("compare", "summary.json with 'results' (sebench compare --out DIR)",
            lambda p: _is_summary_with(p, "results"), _read_compare),
    RunKind("selfplay-compare", "summary.json with 'rows' and 'rounds' (sebench selfplay-compare --out DIR)",
            _is_selfplay, lambda p: _read_rows(p, "selfplay")),
    RunKind("rl-compare", "summary.json with 'rows' and config.sft_steps (sebench rl-compare --out DIR)",
            _is_rl, lambda p: _read_rows(p, "rl")),
    RunKind("sft-compare", "summary.json with 'rows' (sebench sft-compare --out DIR)",
            lambda p: _is_summary_with(p, "rows"), lambda p: _read_rows(p, "sft")),
    RunKind("validate", "0-MODEL-closed.summary.json ... 3-reference-closed.summary.json (sebench validate --out DIR)",
            lambda p: p.is_dir() and bool(_validate_summaries(p)), _read_validate),
    RunKind("evolve", "report.json (and run.json) beside learner/ (sebench evolve --out RUN; sebench eval --run RUN "
            "adds results)",
            lambda p: (p / "report.json").is_file() and (p / "learner").is_dir(), _read_evolve),
    RunKind("eval", "RESULTS.jsonl with RESULTS.summary.json beside it, or a folder holding them (sebench eval --out)",
            lambda p: bool(_eval_summaries(p, depth=0)), _read_eval),
)}


def read_run(path: str | Path) -> Run:
    """The run at ``path``, read by the first kind whose files it has; ``UnknownRunError`` otherwise."""
    path = Path(path)
    expected = [f"{k.name}: {k.expects}" for k in KINDS.values()]
    if not path.exists():
        raise UnknownRunError(path, expected, "no such file or directory")
    if (path / "summary.json").is_file():
        _load_json(path / "summary.json")  # a damaged summary is named as such, not as an unknown run
    for kind in KINDS.values():
        if kind.detect(path):
            run = kind.read(path)
            if not run.evaluations and kind.name != "evolve":
                raise RunFormatError(path, f"a {kind.name} run without any evaluation")
            return run
    raise UnknownRunError(path, expected)


def read_runs(paths: list[str | Path]) -> list[Run]:
    if not paths:
        raise ReportError("no runs given: pass --runs DIR [DIR ...]")
    return [read_run(p) for p in paths]
