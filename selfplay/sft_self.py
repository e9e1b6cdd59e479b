"""Closed-SFT-self and Open-SFT-self (SE-Bench §4.3): self-play coupled with SFT.

Each round (``selfplay.curriculum.RoundLoop``) the model proposes tasks with the docs of
sampled functions, the validator keeps the sound ones, the model solves them with the docs
(the ordinary open-book episode, graded in the sandbox), and the passing solutions are the
fine-tuning data (``learners.training.sft_data.passing_samples``, ``learners.training.sft_train.train_sft``):
Closed-SFT-self trains them after the prompt *without* the docs, Open-SFT-self after the
prompt *with* them, as Closed-SFT and Open-SFT do with the train tasks. The round's accepted
proposals are fine-tuning targets too, after the proposal prompt they answered
(``proposer_role='train'``, the default): trained on solutions alone, the model answered the
next round's proposal prompt with a solution and every later round kept nothing. Each role's
examples have their own token budget: a proposal prompt carries the docs and a worked example
(~2,000 qwen2.5 tokens with its proposal), a solution ~550, so ``proposer_max_length`` (3072)
budgets the first and ``max_length`` (1024) the second; a round records how many of each it left
out (``too_long_dropped``, ``dropped_solutions``, ``dropped_proposer_targets``). With
``proposer_role='frozen'`` the starting model proposes in every round instead. The next round
proposes and solves with the model the last one trained. The paper finds SFT self-play
internalises the library (Qwen3-8B, single-function: Closed-SFT-self 22.5) where RL
self-play does not (Absolute-Zero 0.0).

Who proposes and who solves can be changed (``proposer_model``, ``gather_model``): the
default is the agent's own model for both, which is self-play; ``reference`` is a teacher
(``selfplay.teacher``) that re-proposes or solves known train tasks, for testing the loop.

Files, under ``state_dir`` (``RUN/`` from ``sebench selfplay``, ``RUN/learner/`` from
``sebench evolve``): the curriculum's buffer, round log and plot; ``round-<r>/`` with the
round's proposals, its kept samples (``trajectories.jsonl``), its training and its model;
``selfplay.json`` with the settings. The final model is ``model_dir`` (``RUN/model``).
Resumable: finished rounds are not redone, a killed round is redone whole, and a state made
with other settings is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from agents.learner import EvolveReport, ParametricConfig, setting
from learners.base import gathering_agent, warn_empty
from learners.parametric import ParametricLearner
from learners.sft import ClosedSFTLearner
from learners.training.sft_data import CollectReport, SFTSample, passing_samples
from learners.training.sft_train import SamplesTooLong, SFTSettings, train_sft
from sebench.errors import SebenchError, SettingError
from selfplay.curriculum import Round, RoundLog, RoundLoop
from selfplay.proposer import ProposerConfig
from selfplay.teacher import make_proposer
from selfplay.validate import Accepted

SETTINGS_FILE = "selfplay.json"
PROPOSER_ROLES = ("train", "frozen")
_RUN_FILES = ("rounds.jsonl", "rounds.png")  # and buffer-*.jsonl: copied beside a saved state


class SFTSelfError(SebenchError, RuntimeError):
    """SFT self-play cannot run as configured, or made nothing to train on."""


@dataclass
class SFTSelfConfig(ParametricConfig):
    """The rounds, the proposer and the solver; ``train`` holds the SFT trainer's settings, set by
    their own names: ``ClosedSFTSelfLearner(rounds=2, proposals=8, max_steps=20, lora=True)``."""

    limit: int | None = setting(48, "First N train tasks: the proposer samples functions and worked examples from "
                                    "these only (None: the whole train split).")
    rounds: int = setting(2, "Rounds of propose, validate, solve, fine-tune; each on the model the last one trained.")
    proposals: int = setting(8, "Tasks proposed per round.")
    samples: int = setting(2, "Open-book attempts per accepted task: its pass rate (learnability needs more than "
                              "one) and the passing solutions kept for training.")
    proposer_model: str | None = setting(None, "Who proposes: None / 'self' for the agent's own (current) model, as "
                                               "self-play does; 'reference' for a teacher that re-proposes known train "
                                               "tasks (tests the loop, it is not self-play); or a backend name.")
    gather_model: str | None = setting(None, "Who solves the accepted tasks with the docs: None / 'self' for the "
                                             "agent's own (current) model, as self-play does; 'reference' for the "
                                             "teacher (it knows the train tasks, so it solves re-proposed ones "
                                             "only); or a backend name.")
    docs_chars: int | None = setting(1200, "Per-function doc budget in the proposer's and the solver's prompts.")
    max_tokens: int | None = setting(None, "The solver's answer length; None = the agent's.")
    proposal_max_tokens: int = setting(640, "The longest proposal answer (a worked example is ~300 tokens).")
    proposal_temperature: float = setting(0.8, "The proposer's sampling temperature (diversity of the tasks).")
    proposal_seed: int = setting(0, "Seed of the proposer's sampling of functions, examples and references.")
    proposer_role: str = setting("train", "train: each round's accepted proposals are fine-tuning targets too (the "
                                          "proposal prompt, docs and all, -> the proposal), so the model keeps "
                                          "proposing round after round; frozen: the starting model proposes in "
                                          "every round, the trained one only solves.")
    proposer_max_length: int = setting(3072, "Tokens of a proposer-role example (prompt + proposal), apart from "
                                             "max_length, which budgets the solutions: the proposal prompt carries "
                                             "the docs and a worked example (~1,860-2,170 qwen2.5 tokens with its "
                                             "proposal at docs_chars 1200, against ~550 for a solution), so one "
                                             "budget for both dropped every proposer example at the defaults.")
    train: SFTSettings = field(default_factory=SFTSettings)

    def __post_init__(self) -> None:
        super().__post_init__()
        value = self.proposer_max_length
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SettingError(f"proposer_max_length must be an integer >= 1, got {value!r}")
        if self.proposer_role not in PROPOSER_ROLES:
            raise SettingError(f"proposer_role must be one of {', '.join(PROPOSER_ROLES)}, got {self.proposer_role!r}")
        for name in ("rounds", "proposals", "samples"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SettingError(f"{name} must be an integer >= 1, got {value!r}")
        self.proposer_config()  # its own checks (docs_chars, max_tokens), named

    def proposer_config(self) -> ProposerConfig:
        return ProposerConfig(docs_chars=self.docs_chars, temperature=self.proposal_temperature,
                              max_tokens=self.proposal_max_tokens, seed=self.proposal_seed)

    @classmethod
    def from_overrides(cls, overrides: dict[str, Any]) -> SFTSelfConfig:
        own = {f.name for f in fields(cls)} - {"train"}
        mine = {k: v for k, v in overrides.items() if k in own}
        return cls(**mine, train=SFTSettings.from_dict({k: v for k, v in overrides.items() if k not in own}))

    def fingerprint(self) -> dict[str, Any]:
        """What a resumed run must share with the rounds already done (``rounds`` may grow)."""
        return {k: v for k, v in asdict(self).items() if k not in ("rounds", "state_dir", "model_dir")}


def latest_model(log: RoundLog) -> Path | None:
    """The model the newest training round wrote (None before any round trained)."""
    return next((Path(r.extra["model"]) for r in reversed(log.records) if r.extra.get("model")), None)


def publish(source: Path, target: Path) -> None:
    """Make ``target`` a copy of the model directory ``source``, atomically; hard links where the
    file system allows (no second copy of the weights: trained models are never edited in place)."""
    if target.exists() and source.resolve() == target.resolve():
        return
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source, partial, copy_function=_link_or_copy)
    if target.exists():
        shutil.rmtree(target)
    partial.rename(target)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or one without hard links
        shutil.copy2(source, target)


class _SFTSelfLearner(ParametricLearner):
    """Shared by both variants; ``variant`` picks the prompt the kept solutions are trained after."""

    name = "sft-self"
    variant = "closed"
    config_class = SFTSelfConfig
    # the learner checker's tiny settings (learners.checker): SFT's, one round; the teacher proposes
    # (re-proposes train tasks) and the reference solves: smollm2 keeps neither format
    checker_settings: dict[str, Any] = {**ClosedSFTLearner.checker_settings, "rounds": 1, "proposals": 2,
                                        "samples": 1, "proposer_model": "reference"}
    saved = {"rounds": ("rounds", list)}  # per finished round: its record (RoundRecord fields)

    def evolve(self, agent, env) -> EvolveReport:
        started = time.perf_counter()
        base = self.resolve_base(agent)
        root = self.state_dir
        self._same_settings(root)
        tasks = env.tasks("train")[: self.config.limit]
        if not tasks:
            raise SFTSelfError("the build has no train tasks to draw functions and examples from; run "
                               f"`sebench tasks build --zwc {env.root}`")
        label = f"{agent.name}+{self.name}"
        done = RoundLog.in_run(root)
        current = latest_model(done)
        if current is not None and done.next_round < self.config.rounds:
            # resumed: the rounds go on from the model the last finished one trained
            self.adopt(agent, current, label)
        state = {"model": current or base, "label": label}
        backends: dict[str, Any] = {}

        def proposer(number: int):
            spec = self.config.proposer_model
            if spec in (None, "self") and self.config.proposer_role == "frozen":  # the starting model, kept
                if "frozen" not in backends:
                    backends["frozen"] = self.weights_model(base, f"{agent.name} (frozen proposer)", agent.dtype)
                model = backends["frozen"]
            elif spec in (None, "self"):
                model = agent.model
            elif spec == "reference":
                model = spec
            else:  # a backend other than the agent's: loaded once for all rounds
                from agents.models import load_model

                if spec not in backends:
                    backends[spec] = load_model(spec)
                model = backends[spec]
            return make_proposer(env, model, tasks=tasks, config=self.config.proposer_config())

        def solver(number: int):
            return gathering_agent(agent, self.config.gather_model,
                                   max_tokens=self.config.max_tokens or agent.max_tokens)

        loop = RoundLoop(root, env, rounds=self.config.rounds, proposals=self.config.proposals,
                         samples=self.config.samples, docs_chars=self.config.docs_chars, title=self.name)
        log = loop.run(proposer, solver, lambda work: self._learn(work, agent, env, state))
        final = latest_model(log)
        too_long = [r.round for r in log.records if r.extra.get("too_long_dropped") and not r.extra.get("trained")]
        if final is None and too_long:
            raise SFTSelfError(f"no round trained: every sample of round(s) {', '.join(map(str, too_long))} is longer "
                               f"than its role's budget (solutions: max_length={self.config.train.max_length} tokens, "
                               f"proposals: proposer_max_length={self.config.proposer_max_length}); raise them (--set "
                               "max_length=N, --set proposer_max_length=N) or lower docs_chars; the round log is "
                               + str(log.path))
        if final is None:
            raise SFTSelfError(f"none of {len(log.records)} rounds kept a passing solution to fine-tune on "
                               f"({', '.join(_round_summary(r) for r in log.records)}); the round log is "
                               f"{log.path}. Propose with a model that keeps the format (proposer_model), solve with "
                               "a stronger one (gather_model), or raise proposals and samples")
        _prune(root, keep=final)
        publish(final, self.model_dir)
        self.adopt(agent, name=label)
        self.rounds = [r.model_dump(mode="json") for r in log.records]
        return self._report(log, loop, tasks, started)

    def _learn(self, work: Round, agent, env, state: dict[str, Any]) -> dict[str, Any]:
        """The round's update: fine-tune the current model on the passing solutions."""
        collected = CollectReport(tasks=len(work.tasks), source=work.solver)
        samples = [s for task in work.tasks for s in passing_samples(task, work.attempts[task.task_id], env, collected)]
        proposals = proposer_targets(work) if self.config.proposer_role == "train" else []
        if not samples and not proposals:
            return {"kept": 0, "proposer_targets": 0, "trained": False, "model": None}
        (work.directory / "trajectories.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in samples))
        data = work.directory / "sft_data.jsonl"  # the solver role's samples, then the proposer role's
        data.write_text("".join(s.model_dump_json() + "\n" for s in [*samples, *proposals]))
        _prune(self.state_dir, keep=Path(state["model"]))  # models of rounds before the last finished one
        self.release(agent)
        out = work.directory / "model"
        budgets = {"proposer": self.config.proposer_max_length}  # a proposal prompt carries docs and an example
        try:
            result = train_sft(data, state["model"], self.variant, work.directory / "train", out, self.config.train,
                               role_max_length=budgets)
        except SamplesTooLong as exc:  # the round's samples are there; these budgets train none of them
            print(f"warning: {self.name}: round {work.number}: {exc}; the model is unchanged this round",
                  file=sys.stderr, flush=True)
            return {"kept": len(samples), "proposer_targets": len(proposals), "trained": False, "model": None,
                    "too_long_dropped": len(samples) + len(proposals), "dropped_solutions": len(samples),
                    "dropped_proposer_targets": len(proposals)}
        dropped = len(samples) + len(proposals) - result.samples
        by_role = result.dropped_by_role
        if dropped:
            print(f"warning: {self.name}: round {work.number}: {dropped} of {len(samples) + len(proposals)} samples "
                  f"were longer than their role's budget and left out ({by_role.get('solver', 0)} of {len(samples)} "
                  f"solutions over max_length={self.config.train.max_length}, {by_role.get('proposer', 0)} of "
                  f"{len(proposals)} proposer targets over proposer_max_length={self.config.proposer_max_length}); "
                  "raise the budget to train them (each token of a sample costs vocabulary x 4 bytes of logits per "
                  "step)", file=sys.stderr, flush=True)
        for checkpoint in (work.directory / "train").glob("checkpoint-*"):  # a redone round starts afresh anyway
            shutil.rmtree(checkpoint, ignore_errors=True)
        state["model"] = out
        self.adopt(agent, out, state["label"])
        return {"kept": len(samples), "proposer_targets": len(proposals), "trained": True, "model": str(out),
                "steps": result.steps, "too_long_dropped": dropped, "dropped_solutions": by_role.get("solver", 0),
                "dropped_proposer_targets": by_role.get("proposer", 0),
                "train_samples": result.samples, "first_loss": result.first_loss, "last_loss": result.last_loss,
                "train_seconds": result.seconds}

    def _same_settings(self, root: Path) -> None:
        """Refuse a state made with other settings; record these ones."""
        path = root / SETTINGS_FILE
        mine = {"learner": self.name, **self.config.fingerprint()}
        mine = json.loads(json.dumps(mine))  # as it reads back (tuples become lists)
        if path.is_file():
            theirs = json.loads(path.read_text())
            differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            if differ:
                raise SFTSelfError(f"{root} holds rounds made with other settings ({', '.join(differ)} differ; "
                                   f"{path}); evolve into another state_dir (--out), or delete it to start over "
                                   "(only rounds may change on a resumed run)")
            return
        root.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(mine, indent=1) + "\n")

    def _report(self, log: RoundLog, loop: RoundLoop, tasks: list, started: float) -> EvolveReport:
        records = log.records
        extra = [r.extra for r in records]
        now = [r for r in records if r.round >= loop.resumed_from]  # the rounds this call did
        details = {"rounds": len(records), "rounds_run": len(now),
                   "resumed_from": f"round {loop.resumed_from}" if loop.resumed_from else None, "tasks": len(tasks),
                   "proposer": extra[-1].get("proposer") if extra else None,
                   "solver": extra[-1].get("solver") if extra else None,
                   "proposals": sum(r.proposals for r in records), "accepted": sum(r.accepted for r in records),
                   "kept": sum(e.get("kept", 0) for e in extra), "steps": sum(e.get("steps", 0) or 0 for e in extra),
                   "too_long_dropped": sum(e.get("too_long_dropped", 0) or 0 for e in extra),
                   "per_round": [_round_summary(r) for r in records], "model_dir": str(self.model_dir),
                   "buffer": str(loop.buffer_path), "round_log": str(log.path), "plot": str(loop.plot_path)}
        report = EvolveReport(learner=self.name, episodes=sum(r.extra.get("episodes", 0) for r in now),
                              seconds=time.perf_counter() - started, details=details)
        idle = [str(r.round) for r in records if not r.extra.get("trained")]
        if idle:
            warn_empty(report, f"round(s) {', '.join(idle)} kept no passing solution, so the model did not change "
                               "in them")
        return report

    def run_files(self, target: Path) -> list[Path]:
        """The round log, its plot and the buffer, beside a state saved outside the run (beside the
        run's own files they are already there)."""
        root = self.state_dir.resolve()
        if target.resolve().is_relative_to(root):
            return []
        return [root / name for name in _RUN_FILES] + sorted(root.glob("buffer-*.jsonl"))


def proposer_targets(work: Round) -> list[SFTSample]:
    """The proposer role's training targets: each accepted proposal after the prompt it answered
    (the same prompt for both variants: proposing always reads the docs). Without them a model
    fine-tuned on solutions only answers the next round's proposal prompt with a solution."""
    targets, seen = [], set()
    for result in work.results:
        if not isinstance(result, Accepted) or not result.proposal.prompt or result.task.task_id in seen:
            continue
        seen.add(result.task.task_id)
        prompt = [dict(m) for m in result.proposal.prompt]
        targets.append(SFTSample(task_id=result.task.task_id, functions=list(result.task.selected_functions),
                                 sample=-1, prompt_open=prompt, prompt_closed=prompt,
                                 completion=result.proposal.text, source=work.proposer, role="proposer"))
    return targets


def _round_summary(record) -> str:
    solved = "no task" if record.solve_rate is None else f"solve rate {record.solve_rate:.2f}"
    dropped = record.extra.get("too_long_dropped") or 0
    return f"round {record.round}: {record.accepted}/{record.proposals} accepted, {solved}, " \
           f"kept {record.extra.get('kept', 0)}" + (f", {dropped} too long to train" if dropped else "")


def _prune(root: Path, keep: Path) -> None:
    """Remove the round models other than ``keep`` (only the newest finished one is built on)."""
    for model in root.glob("round-*/model"):
        if model.resolve() != keep.resolve():
            shutil.rmtree(model, ignore_errors=True)


class ClosedSFTSelfLearner(_SFTSelfLearner):
    """Self-play, then SFT on the passing solutions after the prompt without the docs: the paper's
    Closed-SFT-self."""

    name = "closed-sft-self"
    variant = "closed"


class OpenSFTSelfLearner(_SFTSelfLearner):
    """Self-play, then SFT on the passing solutions after the prompt with the docs: the paper's
    Open-SFT-self."""

    name = "open-sft-self"
    variant = "open"
