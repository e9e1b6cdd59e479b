"""The configuration of an evaluation, recorded beside its results so that a resume cannot mix runs.

Results are keyed on (task, sample) only, so a resume with another model, mode, build, usage
rule or sampling setting would append records that mean something else to the same file and
summarise the mixture as one run. ``evaluate`` therefore writes ``OUT.config.json`` (for
``OUT.jsonl``) before the first record, and a resume compares the recorded configuration with
its own: every key must agree except those in ``MAY_CHANGE_ON_RESUME``; otherwise it raises
``MixedResultsError``, which names each differing key with both values and says what to do.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sebench.errors import SebenchError

if TYPE_CHECKING:
    from agents.learner import AgentLike
    from envs.zwc import ZWCEnv

ROOT = Path(__file__).resolve().parents[1]
# the code that decides what one sample is: the grader (envs/zwc/ and its rooms, task generation
# aside: the dataset hash covers the tasks) and the loop and prompts the model answers in
OUTCOME_CODE = ("envs/zwc/*.py", "envs/zwc/sandbox/*.py", "envs/zwc/library/*.py", "envs/zwc/grading/*.py",
                "agents/agent.py", "agents/prompts.py")

MAY_CHANGE_ON_RESUME = {
    "limit": "tasks are the split's first N in a fixed order and records are per (task, sample): a larger "
             "limit adds tasks, a smaller one summarises a subset; no record changes meaning",
    "n": "the samples of a task are independent draws at one temperature, whatever n (recorded and "
         "compared), so more samples add draws and fewer summarise a subset",
    "code_version": "a commit that does not touch grading or prompts does not change what a sample means; "
                    "code_sha256 (compared) changes with any edit that can",
    "zwc": "where the build was loaded from (a moved directory is the same build); mapping_sha256 and "
           "dataset_sha256 (compared) identify its content",
}


class ResultsExistError(SebenchError, FileExistsError):
    """A results file already holds records and the run was not asked to resume it."""


class MixedResultsError(SebenchError, ValueError):
    """A resume whose configuration differs from the one its results were written with."""

    def __init__(self, results: Path, differences: dict[str, tuple[object, object]], note: str = ""):
        self.results, self.differences = results, differences
        recorded = config_path(results)
        if note:
            head = f"{results}: {note}"
        else:
            lines = "\n".join(f"  {key}: {old!r} in {recorded.name}, {new!r} now"
                              for key, (old, new) in differences.items())
            head = (f"{results} holds results of another configuration; resuming would mix them. "
                    f"Differences (recorded in {recorded}):\n{lines}")
        super().__init__(f"{head}\nWrite to a new --out, or resume with the settings recorded in {recorded.name}.")


def config_path(results: str | Path) -> Path:
    """Where the configuration of ``results`` is recorded (``r.jsonl`` -> ``r.config.json``)."""
    return Path(results).with_suffix(".config.json")


def file_sha256(path: Path) -> str:
    """The head of ``sha256sum path``."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def outcome_code_sha256() -> str:
    """A fingerprint of the code that decides a sample's outcome (see ``OUTCOME_CODE``)."""
    digest = hashlib.sha256()
    for path in sorted(p for pattern in OUTCOME_CODE for p in ROOT.glob(pattern)):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def eval_config(agent: AgentLike, env: ZWCEnv, *, split: str, mode: str, n: int, limit: int | None,
                functions: list[str] | None, temperature: float, code_version: str) -> dict:
    """Everything that decides what a result record means, as JSON values."""
    engine = agent.engine_for(temperature)
    return {"split": split, "mode": mode, "model": agent.name, "dtype": agent.weights_dtype, "engine": engine,
            "preset": agent.preset,
            "n": n, "limit": limit, "temperature": temperature, "seed": getattr(agent, "seed", None),
            "max_tokens": agent.max_tokens,
            "max_turns": agent.max_turns,
            "max_searches": agent.max_searches, "functions": sorted(functions) if functions is not None else None,
            "learner": getattr(agent.learner, "name", "none"), "usage": env.usage, "docs_chars": env.docs_chars,
            "dataset_sha256": file_sha256(env.root / f"{split}.jsonl"),
            "mapping_sha256": file_sha256(env.root / "mapping.json"), "zwc": env.mapping.origin,
            "code_sha256": outcome_code_sha256(), "code_version": code_version}


def record_config(results: Path, config: dict) -> None:
    """Write the configuration beside ``results``, before its first record; a resume keeps the
    recorded one and appends what it may change (``MAY_CHANGE_ON_RESUME``) to ``resumes``."""
    path = config_path(results)
    now = time.strftime("%Y-%m-%d %H:%M:%S")
    record = {"config": config, "written": now, "resumes": []}
    if results.is_file() and results.stat().st_size and path.is_file():
        record = json.loads(path.read_text())
        record.setdefault("resumes", []).append({"date": now, **{k: config.get(k) for k in MAY_CHANGE_ON_RESUME}})
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # atomic: a kill leaves the old file or the new
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(tmp, path)


def check_resume(results: Path, config: dict) -> None:
    """Refuse to resume ``results`` with a configuration other than the recorded one.

    Raises:
        MixedResultsError: a key outside ``MAY_CHANGE_ON_RESUME`` differs, or ``results``
            holds records but no configuration was recorded (an older run: it cannot be checked).
    """
    if not results.is_file() or not results.stat().st_size:
        return
    path = config_path(results)
    if not path.is_file():
        raise MixedResultsError(results, {}, f"holds results but no recorded configuration ({path.name} is "
                                             "missing), so a resume cannot tell whether it would mix runs.")
    try:
        recorded = json.loads(path.read_text())["config"]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise MixedResultsError(results, {}, f"{path} is not a configuration written by `sebench eval` "
                                             "(no JSON object with a 'config' key).") from None
    missing = "(not recorded)"
    differences = {key: (recorded.get(key, missing), config.get(key, missing))
                   for key in sorted(set(recorded) | set(config))
                   if key not in MAY_CHANGE_ON_RESUME and recorded.get(key, missing) != config.get(key, missing)}
    if differences:
        raise MixedResultsError(results, differences)
