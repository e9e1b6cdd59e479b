"""``sebench reproduce``'s budgets and plan: which commands a budget runs, in which directories.

A budget is a settings file a user can copy (``benchmarks/budgets/smoke.toml``, ``cpu.toml``,
``gpu.toml``; TOML or JSON). Its top level names the model, dtype, ZWC seeds and training seeds;
each part's table holds the options of the existing command that runs it, spelled as that
command's options without the dashes (``train_limit`` is ``--train-limit``), a ``set`` table for
its ``--set KEY=VALUE`` pairs, ``per_learner`` (one row, one command and one directory per
learner, so that no row runs longer than one learner's training) and, with it, ``by_learner``: a
table per learner whose options replace the part's in that learner's row (``[rl.by_learner.
"closed-rl@sft-like"] steps = 6``: a larger step costs more, so fewer of them keep the row within
its time). Keys are checked against the command's real options (the typer app), so a budget
cannot hold an option the command lacks.

The plan is the list of ``Row``s: the ZWC builds and task sets, then per part and seed the
comparison commands. Each row is one ``sebench`` command that writes one run directory the
report reads; the commands themselves resume after a kill, and ``done`` says whether a row's
directory holds what the command writes last, so a finished row is not run again.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sebench.errors import SettingError

BUDGETS = Path(__file__).with_name("budgets")
PARTS = {"validate": "validate", "memory": "compare", "sft": "sft-compare", "rl": "rl-compare",
         "selfplay": "selfplay-compare"}  # part -> the sebench command that runs it
TOP_KEYS = {"name", "about", "model", "dtype", "seeds", "train_seeds", "zwc", *PARTS}
OWN_KEYS = {"set", "per_learner", "by_learner"}  # a part's keys that are reproduce's, not the command's
TINY = "tiny:"  # model "tiny:smollm2-135m": agents.models.tiny's random-initialised model, written in OUT/models


class BudgetError(SettingError):
    """A budget file that cannot be read or names what its commands do not take; the message
    names the file, the field and what it accepts."""


class UnknownPartError(SettingError):
    """``--only`` named a part the plan does not have."""

    def __init__(self, part: str):
        super().__init__(f"--only {part!r}: unknown part; known parts: {', '.join(PARTS)} (comma-separated, "
                         "e.g. --only sft,rl)")


@dataclass
class Budget:
    name: str
    path: Path
    model: str
    dtype: str = "auto"
    seeds: list[int] = field(default_factory=lambda: [0])
    train_seeds: list[int] = field(default_factory=lambda: [0])
    zwc: dict[str, Any] = field(default_factory=dict)      # `sebench tasks build` options
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)
    commands: Any = field(default=None, repr=False)  # the sebench click group the tables were checked against


@dataclass
class Row:
    """One command of the plan and the directory it writes; ``marker`` is the file the command
    writes last (present: the row finished)."""

    id: str
    part: str
    args: list[str]          # the sebench command, without the program name
    out: Path
    marker: str
    learners: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)   # the part's options (for the estimate)
    report: bool = True      # a run directory the report reads
    ok_codes: tuple[int, ...] = (0,)

    @property
    def command(self) -> str:
        return shlex.join(["sebench", *self.args])

    @property
    def done(self) -> bool:
        return any(self.out.glob(self.marker))


def budget_path(budget: str) -> Path:
    """A budget's file: a name of ``benchmarks/budgets`` (smoke, cpu, gpu) or a path."""
    for candidate in (BUDGETS / f"{budget}.toml", BUDGETS / f"{budget}.json", Path(budget)):
        if candidate.is_file():
            return candidate
    known = ", ".join(sorted(p.stem for p in BUDGETS.glob("*.toml")))
    raise BudgetError(f"--budget {budget!r}: no such budget; give one of {known} or the path of a budget file "
                      f"(copy one of {BUDGETS}/*.toml)")


def command_options(commands: Any, name: str) -> dict[str, Any]:
    """The click parameters of ``sebench NAME`` by their budget key (``train_limit``); ``commands`` is
    the ``sebench`` click group (the running command's root, or ``typer.main.get_command(app)``),
    handed in so that the plan never imports the CLI that runs it."""
    group = commands
    ctx = group.context_class(group, info_name="sebench")
    command = group.get_command(ctx, name)
    return {p.name: p for p in command.params if p.name not in ("zwc", "out", "settings", "more")}


def _check_part(path: Path, part: str, values: Any, commands: Any) -> dict[str, Any]:
    if not isinstance(values, dict):
        raise BudgetError(f"{path}: [{part}] must be a table of `sebench {PARTS[part]}` options, got {values!r}")
    options = command_options(commands, PARTS[part])
    unknown = sorted(set(values) - set(options) - OWN_KEYS)
    if unknown:
        raise BudgetError(f"{path}: [{part}] {', '.join(unknown)}: not options of `sebench {PARTS[part]}`; known: "
                          f"{', '.join(sorted(options))}, and set (its --set pairs), per_learner")
    if not isinstance(values.get("set", {}), dict):
        raise BudgetError(f"{path}: [{part}] set must be a table of KEY = VALUE (the --set pairs)")
    if not isinstance(values.get("per_learner", False), bool):
        raise BudgetError(f"{path}: [{part}] per_learner must be true or false")
    by_learner = values.get("by_learner", {})
    if by_learner and not values.get("per_learner"):
        raise BudgetError(f"{path}: [{part}.by_learner] needs per_learner = true (each learner its own row)")
    if not isinstance(by_learner, dict):
        raise BudgetError(f"{path}: [{part}] by_learner must be a table of learner -> options")
    learners = _learners(part, values)
    for learner, own in by_learner.items():
        where = f'{path}: [{part}.by_learner."{learner}"]'
        if learner not in learners:
            raise BudgetError(f"{where}: not a learner of this part; its learners: {', '.join(learners)}")
        if not isinstance(own, dict):
            raise BudgetError(f"{where} must be a table of `sebench {PARTS[part]}` options")
        unknown = sorted(set(own) - set(options) - {"set"} | ({"learners"} & set(own)))
        if unknown:
            raise BudgetError(f"{where} {', '.join(unknown)}: not options a learner's row may change; known: "
                              f"{', '.join(sorted(set(options) - {'learners'}))}, and set")
    return values


def _ints(path: Path, key: str, value: Any) -> list[int]:
    if not isinstance(value, list) or not value or not all(isinstance(v, int) and not isinstance(v, bool)
                                                              for v in value):
        raise BudgetError(f"{path}: {key} must be a non-empty list of integers, e.g. {key} = [0, 1]; got {value!r}")
    return value


def load_budget(budget: str | Path, commands: Any) -> Budget:
    """Read and check a budget file (by name or path) against ``commands``, the ``sebench`` click group
    whose options its tables name; ``BudgetError`` names what is wrong."""
    path = budget_path(str(budget))
    try:
        data = tomllib.loads(path.read_text()) if path.suffix != ".json" else json.loads(path.read_text())
    except (tomllib.TOMLDecodeError, ValueError, UnicodeDecodeError) as exc:
        raise BudgetError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'TOML'} ({exc})") from None
    if not isinstance(data, dict):
        raise BudgetError(f"{path}: a budget is a table (TOML) or an object (JSON)")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise BudgetError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(TOP_KEYS))}")
    if not isinstance(data.get("model"), str) or not data["model"]:
        raise BudgetError(f"{path}: model is missing: the base model of every row (a name, a local directory, or "
                          f"{TINY}smollm2-135m for a tiny random-initialised one)")
    zwc = data.get("zwc", {})
    tasks = {k for k in _command_options_group(commands, "tasks", "build")}
    if not isinstance(zwc, dict) or set(zwc) - tasks:
        raise BudgetError(f"{path}: [zwc] holds `sebench tasks build` options ({', '.join(sorted(tasks))}); "
                          f"got {zwc!r}")
    parts = {part: _check_part(path, part, data[part], commands) for part in PARTS if part in data}
    if not parts:
        raise BudgetError(f"{path}: no part to run; give at least one of [{'], ['.join(PARTS)}]")
    return Budget(name=str(data.get("name", path.stem)), path=path, model=data["model"],
                  dtype=str(data.get("dtype", "auto")), seeds=_ints(path, "seeds", data.get("seeds", [0])),
                  train_seeds=_ints(path, "train_seeds", data.get("train_seeds", [0])), zwc=zwc, parts=parts,
                  commands=commands)


def _command_options_group(commands: Any, group: str, name: str) -> set[str]:
    top = commands
    ctx = top.context_class(top, info_name="sebench")
    sub = top.get_command(ctx, group)
    command = sub.get_command(sub.context_class(sub, info_name=group, parent=ctx), name)
    return {p.name for p in command.params if p.name not in ("zwc", "seed")}


def parse_parts(only: str | None) -> list[str]:
    """``--only sft,rl`` -> the parts, in the plan's order; every part when None."""
    if not only:
        return list(PARTS)
    asked = [p.strip() for p in only.split(",") if p.strip()]
    for part in asked:
        if part not in PARTS:
            raise UnknownPartError(part)
    return [p for p in PARTS if p in asked]


def parse_seeds(text: str | None, option: str) -> list[int] | None:
    if text is None:
        return None
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise SettingError(f"{option} {text!r}: give comma-separated integers, e.g. {option} 0,1") from None
    if not seeds:
        raise SettingError(f"{option} {text!r}: give at least one seed, e.g. {option} 0")
    return seeds


def model_name(budget: Budget, out: Path, model: str | None = None) -> str:
    """The model the commands get: ``tiny:BASE`` is the directory ``OUT/models/tiny-BASE``
    (written before the first row by ``reproduce_estimate``)."""
    model = model or budget.model
    return str(out / "models" / f"tiny-{model[len(TINY):]}") if model.startswith(TINY) else model


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return json.dumps(value) if isinstance(value, bool) or value is None else str(value)


def _options(options: dict[str, Any], known: dict[str, Any]) -> list[str]:
    """Command-line options from a part's table; a boolean option is its flag (or --no-…)."""
    args: list[str] = []
    for key, value in options.items():
        if key in OWN_KEYS:
            continue
        param = known[key]
        if getattr(param, "is_flag", False):
            name = param.opts[0] if value else (param.secondary_opts or [f"--no-{key.replace('_', '-')}"])[0]
            args.append(name)
        else:
            args += [_flag(key), _value(value)]
    for key, value in options.get("set", {}).items():
        args += ["--set", f"{key}={json.dumps(value) if not isinstance(value, str) else value}"]
    return args


# training seeds: which --set pairs carry the row's training seed T (README: RLSettings / SFTSettings ``seed``)
SEED_SETS = {
    "sft": lambda t: {"seed": t},
    "rl": lambda t: {"seed": t, "closed-sft-rl.sft_seed": t},
    "selfplay": lambda t: {"seed": t, "proposal_seed": t},
}
DEFAULT_LEARNERS = {"memory": ["none", "expel", "ace"], "sft": ["closed-sft", "open-sft"],
                    "selfplay": ["closed-sft-self", "open-sft-self", "absolute-zero"]}
MARKERS = {"validate": "3-*-closed.summary.json", "memory": "summary.json", "sft": "summary.json",
           "rl": "summary.json", "selfplay": "summary.json"}


def rl_learners() -> list[str]:
    """Open-RL, Closed-RL (GRPO), every Table 3 preset of ``learners.rl.PRESETS`` but plain GRPO, Closed-SFT-RL."""
    from learners.rl import PRESETS

    return ["open-rl", "closed-rl", *(f"closed-rl@{p}" for p in PRESETS if p != "grpo"), "closed-sft-rl"]


def _learners(part: str, options: dict[str, Any]) -> list[str]:
    given = options.get("learners")
    if given is not None:
        return given if isinstance(given, list) else [s.strip() for s in str(given).split(",") if s.strip()]
    return rl_learners() if part == "rl" else DEFAULT_LEARNERS.get(part, [])


def build_plan(budget: Budget, out: Path, parts: list[str], seeds: list[int] | None = None,
               train_seeds: list[int] | None = None) -> list[Row]:
    """Every row the budget runs for ``parts``, builds first; directories under ``out``."""
    seeds = seeds or budget.seeds
    train_seeds = train_seeds or budget.train_seeds
    rows: list[Row] = []
    for z in seeds:
        build = out / f"zwc-seed{z}"
        rows.append(Row(f"zwc-{z}", "zwc", ["zwc", "build", "--seed", str(z), "--out", str(build)], build,
                        "docs.md", report=False))  # written last (envs.zwc.env.build_directory)
        tasks = ["tasks", "build", "--zwc", str(build), "--seed", str(z)]
        tasks += _options(budget.zwc, {k: object() for k in budget.zwc})
        rows.append(Row(f"tasks-{z}", "zwc", tasks, build, "build_report.json", options=dict(budget.zwc),
                        report=False))
    for part in parts:
        if part not in budget.parts:
            continue
        options = dict(budget.parts[part])
        known = command_options(budget.commands, PARTS[part])
        model = model_name(budget, out, options.pop("model", None))
        head = {"model": model, "dtype": options.pop("dtype", budget.dtype)}
        learners = _learners(part, options)
        groups = [[name] for name in learners] if options.get("per_learner") and learners else [learners]
        trained = part in SEED_SETS
        for z in seeds:
            build = out / f"zwc-seed{z}"
            for t in train_seeds if trained else [None]:
                folder = out / part / (f"zwc{z}" + (f"-train{t}" if t is not None else ""))
                for group in groups:
                    own = {k: v for k, v in options.items() if k != "by_learner"}
                    change = options.get("by_learner", {}).get(group[0], {}) if len(group) == 1 else {}
                    own |= {k: v for k, v in change.items() if k != "set"}
                    if "set" in change:
                        own["set"] = {**own.get("set", {}), **change["set"]}
                    if "learners" in known and group:
                        own["learners"] = ",".join(group)
                    if t is not None:
                        own["set"] = {**own.get("set", {}), **SEED_SETS[part](t)}
                    target = folder / group[0].replace("@", "_") if len(groups) > 1 else folder
                    row_id = f"{part}-{target.relative_to(out / part).as_posix().replace('/', '-')}"
                    args = [PARTS[part], "--zwc", str(build), "--out", str(target),
                            *_options(head | own, known)]
                    rows.append(Row(row_id, part, args, target, MARKERS[part], group, own,
                                    ok_codes=(0, 1) if part == "validate" else (0,)))
    return rows
