"""What the report shows of training: the SFT, RL and self-play tables' own columns (read from
each row's ``train`` record), the RL reward curves and self-play's rounds.

The comparison commands (``sft-compare``, ``rl-compare``, ``selfplay-compare``) write their data
(``summary.json``) and then their report with ``sebench report``'s code, so these columns are the
only place their tables are defined; ``benchmarks/report.py`` puts them between the rates and
the paper's figures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.report_runs import Evaluation, Run

Column = tuple[str, Callable[[Evaluation], str]]


@dataclass
class Curve:
    """One line of a section's line plot (percent against ``x``)."""

    label: str
    xs: list[float]
    ys: list[float]
    dashed: bool = False


def _train(e: Evaluation) -> dict:
    return e.extra.get("train") or {}


def _value(*keys: str, base: str = "—") -> Callable[[Evaluation], str]:
    """The first of ``keys`` the row's train record holds (``base`` for the untrained base model)."""
    def cell(e: Evaluation) -> str:
        train = _train(e)
        found = next((train[k] for k in keys if train.get(k) is not None), None)
        return str(found) if found is not None else (base if e.name == "base" else "—")
    return cell


def _percent(value) -> str:
    return "—" if not isinstance(value, int | float) else f"{100 * value:.1f}"


def _loss(e: Evaluation) -> str:
    train = _train(e)
    return f"{train['first_loss']} → {train['last_loss']}" if train.get("first_loss") is not None else "—"


def _reward(e: Evaluation) -> str:
    curve = _train(e).get("reward_per_rollout") or []
    return f"{_percent(curve[0])} → {_percent(curve[-1])}" if curve else "—"


def _rounds(e: Evaluation) -> list[dict]:
    return e.extra.get("rounds") or []


def _accepted(e: Evaluation) -> str:
    records = _rounds(e)
    return f"{sum(r['accepted'] for r in records)} / {sum(r['proposals'] for r in records)}" if records else "—"


def _kept(e: Evaluation) -> str:
    train = _train(e)
    if _rounds(e):
        return str(train.get("kept", train.get("solver_completions", "—")))
    return str(train.get("samples", "—"))


TRAIN_COLUMNS: dict[str, list[Column]] = {
    "sft": [("recall w/ aliases", lambda e: _percent(e.extra.get("recall_with_aliases"))),
            ("steps", _value("steps", base="0")), ("train tok/s", _value("tokens_per_second")),
            ("peak MB", _value("peak_memory_mb")), ("train s", _value("seconds", "train_seconds")),
            ("loss (first → last)", _loss)],
    "rl": [("steps", _value("steps", base="0")), ("rollouts", _value("completions")),
           ("rollout reward (first → last)", _reward), ("rollout tok/s", _value("rollout_tokens_per_second")),
           ("update tok/s", _value("update_tokens_per_second", "tokens_per_second")),
           ("grading share", _value("grading_share")), ("grader faults", _value("grader_faults")),
           ("clip fraction", _value("clip_fraction")), ("max ratio", _value("ratio_max")),
           ("peak MB", _value("peak_memory_mb")),
           ("train s", _value("train_seconds", "seconds"))],
    "selfplay": [("rounds", lambda e: str(len(_rounds(e))) if _rounds(e) else "—"), ("accepted / proposed", _accepted),
                 ("kept / trained on", _kept), ("too long, dropped", _value("too_long_dropped")),
                 ("train s", _value("train_seconds", "seconds"))],
}
TITLES = {"sft": "SFT: Open-SFT vs Closed-SFT", "rl": "RL ablations (the RL Gap)",
          "selfplay": "Self-play: SFT self-play vs Absolute-Zero"}


def reward_curves(rows: list[Evaluation]) -> list[Curve]:
    """Each RL row's rollout pass rate (its reward) at the step each rollout batch was drawn."""
    curves = []
    for e in rows:
        rewards = _train(e).get("reward_per_rollout") or []
        if rewards:
            per = max(1, int(_train(e).get("steps") or len(rewards)) // len(rewards))  # steps per rollout batch
            curves.append(Curve(e.label, [per * i for i in range(len(rewards))], [100 * r for r in rewards]))
    return curves


ROUND_HEADER = ["learner", "round", "proposals", "accepted", "acceptance", "rejections by reason", "solve rate",
                "learnability", "too long, dropped", "seconds"]


def _dropped(record: dict) -> str:
    """How many of the round's training examples exceeded their role's token budget (SFT self-play:
    solutions over max_length, proposer targets over proposer_max_length); - where it trains none."""
    extra = record.get("extra") or {}
    if "too_long_dropped" not in extra:
        return "-"
    total = extra["too_long_dropped"] or 0
    roles = [f"{extra[k]} {name}" for k, name in (("dropped_solutions", "solutions"),
                                                  ("dropped_proposer_targets", "proposals")) if extra.get(k)]
    return f"{total}" + (f" ({', '.join(roles)})" if total and roles else "")


def round_lines(runs: list[Run]) -> tuple[list[list[str]], list[Curve], list[str]]:
    """Self-play's rounds (every run's, those of a run that ended without a model included), their
    solve-rate and acceptance curves, and a note per learner that ended without a model."""
    lines, curves, notes = [], [], []
    for run in runs:
        for name, records in (run.details.get("rounds") or {}).items():
            for x in records:
                rejected = ", ".join(f"{k} {v}" for k, v in x["rejections"].items()) or "-"
                lines.append([name, str(x["round"]), str(x["proposals"]), str(x["accepted"]),
                              f"{100 * x['acceptance_rate']:.0f}%", rejected,
                              "-" if x["solve_rate"] is None else f"{x['solve_rate']:.2f}",
                              "-" if x["learnability"] is None else f"{x['learnability']:.2f}", _dropped(x),
                              f"{x['seconds']:.0f}"])
            solved = [(x["round"], 100 * x["solve_rate"]) for x in records if x["solve_rate"] is not None]
            if solved:
                curves.append(Curve(f"{name} solve rate", *map(list, zip(*solved, strict=True))))
            if records:
                curves.append(Curve(f"{name} acceptance", [x["round"] for x in records],
                                    [100 * x["acceptance_rate"] for x in records], dashed=True))
        failed = run.details.get("failed") or {}
        notes += [f"{name}: no model to measure — {why[:300]}" for name, why in failed.items()]
    return lines, curves, notes
