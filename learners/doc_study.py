"""Learners that study the docs themselves: the baseline between "no learner" and Closed-SFT.

SE-Bench's Closed-SFT needs solved train tasks. Two learners here learn from the build's docs
alone, with no train task solved by anyone, each as its source defines it (docs/learners-doc.md):

- ``doc-sft`` (CodeUpdateArena's FT(U), Liu et al. 2024): next-token training on the
  documentation. Each studied function gives one example: a user turn naming the function, the
  doc entry as the assistant's turn (the loss on the doc only: a chat model's form of training on
  the update's docstring).
- ``doc-selfedit`` (SEAL's self-edits, Zweiger et al. 2025; EntiGraph's synthetic continued
  pretraining, Yang et al. 2024): the model reads each function's doc and writes practice
  exercises (a question that does not name the function, an input, a solution); the sandbox keeps
  only exercises whose solution runs on its input and calls the function; Closed-SFT then trains
  on them with the evaluation's closed-book prompt (no docs). ``writer`` says who writes the
  exercises: ``self`` (the agent's model, the paper's setting), another backend (a teacher: the row
  is then named after it), or ``doc-examples`` (the docs' own examples turned into exercises: no
  model at all, what the learner checker's tiny settings use).

Which functions: those of the first ``limit`` train tasks (the functions Closed-SFT learns at the
same limit, so the rows compare like with like; only the tasks' function names are read, never
their queries or solutions), or every function in the docs when ``limit`` is None. Training is
``learners.training.sft_train.train_sft``, resumable as Closed-SFT's is.
"""

from __future__ import annotations

import ast
import doctest
import json
import re
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agents.learner import SELF_GATHERED, EvolveReport, ParametricConfig, setting, teacher_of
from agents.prompts import extract_code, first_prompt
from agents.seeding import derive_seed
from envs.zwc import Task, TestCase
from learners.base import progress_bar
from learners.parametric import ParametricLearner, SFTLearnerError
from learners.training.sft_data import SFTSample, read_samples
from learners.training.sft_train import SFTSettings, train_sft
from learners.training.training_run import RESULT_FILE
from sebench.errors import SettingError

WRITERS_WITHOUT_MODEL = ("doc-examples",)
_QUESTION = re.compile(r"^\s*QUESTION:\s*(.+)$", re.MULTILINE)
_INPUT = re.compile(r"^\s*INPUT:\s*(.+)$", re.MULTILINE)


@dataclass
class DocStudyConfig(ParametricConfig):
    """Which functions' docs to study and how to train on them (``train``: the SFT settings)."""

    limit: int | None = setting(48, "Study the functions of the first N train tasks (Closed-SFT's functions at the "
                                    "same limit); None: every function in the docs.")
    docs_chars: int | None = setting(1200, "Characters of each doc entry studied (None: the whole entry).")
    train: SFTSettings = field(default_factory=SFTSettings)

    @classmethod
    def from_overrides(cls, overrides: dict[str, Any]) -> DocStudyConfig:
        own = {f.name for f in fields(cls)} - {"train"}
        train = SFTSettings.from_dict({k: v for k, v in overrides.items() if k not in own})
        return cls(**{k: v for k, v in overrides.items() if k in own}, train=train)


@dataclass
class DocSelfEditConfig(DocStudyConfig):
    writer: str = setting("self", "Who writes the exercises: 'self' (the agent's model: SEAL's self-edits), a "
                                  "backend (a teacher; the row is named after it) or 'doc-examples' (the docs' own "
                                  "examples, no model).")
    edits: int = setting(4, "Exercises the writer drafts per function (sampled); those that run and call it are kept.")
    max_tokens: int = setting(256, "Length of a drafted exercise.")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.edits < 1:
            raise SettingError(f"need edits >= 1, got edits={self.edits}")


class _DocStudyLearner(ParametricLearner, ABC):
    """Shared: the studied functions, the data file, training and the report."""

    config_class = DocStudyConfig
    saved = {"study": ("study_report", dict), "train": ("train_result", dict)}
    checker_settings: dict[str, Any] = {"docs_chars": 300, "max_steps": 1, "batch_size": 2, "max_length": 512,
                                        "save_steps": 100, "logging_steps": 1, "lora": True, "warmup_ratio": 0.0}

    def studied(self, env) -> list[tuple[str, str]]:
        """(zwc path, whole doc entry) of each function to study, in the train split's order."""
        docs = env.docs.entries  # phase train: the docs are open
        if self.config.limit is None:
            paths = list(docs)
        else:
            tasks = env.tasks("train")[: self.config.limit]
            paths = list(dict.fromkeys(p for t in tasks for p in env.function_paths(t)))
        return [(p, docs[p].text) for p in paths if p in docs]

    def cut(self, text: str) -> str:
        """The part of a doc entry studied (``docs_chars``)."""
        return text if self.config.docs_chars is None else text[: self.config.docs_chars]

    def evolve(self, agent, env) -> EvolveReport:
        started = time.perf_counter()
        base = self.resolve_base(agent)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        data = self.state_dir / "study.jsonl"
        done = self.state_dir / "study_report.json"
        if done.is_file() and data.is_file():  # written last: the data is complete
            self.study_report = json.loads(done.read_text())
        else:
            samples, self.study_report = self.write_samples(agent, env, self.studied(env))
            tmp = data.with_suffix(".tmp")
            tmp.write_text("".join(s.model_dump_json() + "\n" for s in samples))
            tmp.replace(data)
            tmp = done.with_suffix(".tmp")  # written last and whole: its presence says the data is complete
            tmp.write_text(json.dumps(self.study_report))
            tmp.replace(done)
        if not read_samples(data):
            raise SFTLearnerError(f"{self.name}: no study example was kept ({self.study_report}); with writer='self' "
                                  "a model too small to write runnable code keeps none: use a capable model, a "
                                  "teacher, or writer='doc-examples'")
        self.release(agent)
        train_sft(data, base, "closed", self.state_dir / "train", self.model_dir, self.config.train)
        self.train_result = json.loads((self.state_dir / "train" / RESULT_FILE).read_text())
        self.adopt(agent)
        details = {**self.study_report, **{k: self.train_result.get(k) for k in (
            "samples", "too_long_dropped", "steps", "resumed_from", "dtype", "tokens_per_second", "first_loss",
            "last_loss")}, "train_seconds": self.train_result.get("seconds"), "model_dir": str(self.model_dir),
            "trained_tokens": self.train_result.get("tokens")}
        return EvolveReport(learner=self.name, episodes=self.study_report.get("functions", 0),
                            seconds=time.perf_counter() - started, details=details)

    @abstractmethod
    def write_samples(self, agent, env, studied: list[tuple[str, str]]) -> tuple[list[SFTSample], dict]:
        """The training examples made from ``studied`` and a report of how (each learner its own)."""

    def run_files(self, target: Path) -> list[Path]:
        return [self.state_dir / name for name in ("study.jsonl", "study_report.json")
                if (self.state_dir / name).resolve() != (target / name).resolve()]


class DocSFTLearner(_DocStudyLearner):
    """Next-token training on the docs (CodeUpdateArena's FT(U)): the function's name asked, its doc answered."""

    name = "doc-sft"

    def write_samples(self, agent, env, studied):
        samples = []
        for path, text in studied:
            ask = f"Write the documentation of `{path}` from the Python library `zwc`."
            prompt = [{"role": "user", "content": ask}]
            samples.append(SFTSample(task_id=f"doc:{path}", functions=[env.mapping.to_numpy(path)], sample=0,
                                     prompt_open=prompt, prompt_closed=prompt, completion=self.cut(text).strip(),
                                     source="docs"))
        return samples, {"functions": len(studied), "kept": len(samples), "writer": "docs"}


class DocSelfEditLearner(_DocStudyLearner):
    """Exercises written from each doc, kept when the sandbox runs them and they call the function,
    then Closed-SFT on them (SEAL / EntiGraph style): no train task is solved by anyone."""

    name = "doc-selfedit"
    config_class = DocSelfEditConfig
    checker_settings = {**_DocStudyLearner.checker_settings, "writer": "doc-examples", "edits": 4}

    def write_samples(self, agent, env, studied):
        writer, self.generated_tokens = self.config.writer, 0
        drafts = (_doc_example_drafts(studied, self.config.edits) if writer in WRITERS_WITHOUT_MODEL
                  else self._model_drafts(agent, studied))
        verdicts = env.run_many([(d["code"], "solve", [d["input"]]) for d in drafts]) if drafts else []
        samples, seen = [], set()
        rejected = {"does not run": 0, "does not call the function": 0, "duplicate": 0}
        for draft, result in zip(drafts, verdicts, strict=True):
            test = result.tests[0] if result.tests else None
            if test is None or not test.ok or result.violations:
                rejected["does not run"] += 1
            elif not calls(draft["code"], draft["path"]):
                rejected["does not call the function"] += 1
            elif draft["code"] in seen:
                rejected["duplicate"] += 1
            else:
                seen.add(draft["code"])
                samples.append(self._sample(env, draft, repr(test.value), len(samples)))
        teacher = None if writer in (*SELF_GATHERED, *WRITERS_WITHOUT_MODEL) else teacher_of(writer, "")
        return samples, {"functions": len(studied), "drafts": len(drafts), "kept": len(samples),
                         "rejected": rejected, "writer": writer, "generated_tokens": self.generated_tokens,
                         **({"teacher": teacher} if teacher else {})}

    def _model_drafts(self, agent, studied) -> list[dict]:
        from learners.base import gathering_agent

        if self.config.writer == "reference":
            raise SettingError("writer='reference' has no exercises to write (it answers the build's tasks); use "
                               "'self', another model, or 'doc-examples'")
        writer = gathering_agent(agent, self.config.writer)
        try:
            return self._drafts_of(writer.model, agent, studied)
        finally:
            writer.close()  # a teacher's weights go before the trainer loads the student's (the agent's own stay)

    def _drafts_of(self, model, agent, studied) -> list[dict]:
        prompts = [[{"role": "system", "content": "You write practice exercises for a Python library from its "
                                                  "documentation."},
                    {"role": "user", "content": _exercise_request(path, self.cut(text))}] for path, text in studied]
        temperature = agent.temperature if agent.temperature > 0 else 0.8  # several distinct drafts need sampling
        kwargs: dict[str, Any] = {"n": self.config.edits, "temperature": temperature,
                                  "max_tokens": self.config.max_tokens}
        if getattr(model, "supports_seeds", False):
            kwargs["seeds"] = [derive_seed(getattr(agent, "seed", 0), "doc-selfedit", p) for p, _ in studied]
        drafts = []
        with progress_bar(f"{self.name}: {len(studied)} functions' exercises") as progress:
            for i, ((path, _), completions) in enumerate(zip(studied, model.generate(prompts, **kwargs),
                                                             strict=True), 1):
                drafts += [d for c in completions if (d := parse_exercise(c.text, path))]
                self.generated_tokens += sum(c.tokens for c in completions)
                progress(i, len(studied))
        return drafts

    @staticmethod
    def _sample(env, draft: dict, output: str, i: int) -> SFTSample:
        task = Task(task_id=f"selfedit:{draft['path']}:{i}", query=draft["question"],
                    function_name=draft["signature"], test_cases=[TestCase(input=draft["input"], output=output)])
        prompt = first_prompt(env.observe(task, phase="train", mode="closed"))
        return SFTSample(task_id=task.task_id, functions=[env.mapping.to_numpy(draft["path"])], sample=0,
                         prompt_open=prompt, prompt_closed=prompt,
                         completion=f"```python\n{draft['code'].strip()}\n```", source=draft["source"])


def _exercise_request(path: str, text: str) -> str:
    return (f"Documentation of `{path}` from the Python library `zwc`:\n\n{text}\n\nWrite one practice exercise "
            f"that needs `{path}`, in exactly this form:\nQUESTION: <a one-sentence task that does not name the "
            "function>\nINPUT: <the keyword arguments of one call, e.g. x=[1.0, 2.0, 3.0]>\n```python\nimport "
            f"zwc\n\ndef solve(x):\n    return {path}(x)\n```\n(the solution's parameters named as in INPUT)")


def parse_exercise(text: str, path: str) -> dict | None:
    """A drafted exercise's question, input, solution and signature; None when a part is missing
    or the question names the function."""
    question, given, code = _QUESTION.search(text), _INPUT.search(text), extract_code(text)
    signature = re.search(r"^def solve\(.*\):", code, re.MULTILINE) if code else None
    if not (question and given and signature) or path.rsplit(".", 1)[1] in question.group(1):
        return None
    return {"path": path, "question": question.group(1).strip(), "input": given.group(1).strip(), "code": code,
            "signature": signature.group(0), "source": "model"}


def _doc_example_drafts(studied: list[tuple[str, str]], per_function: int) -> list[dict]:
    """The docs' own examples as exercises: for each call of the function in a doc's examples, the
    statements before it as the setup, the call's value as the answer, the doc's summary as the
    question (the whole entry is read: the examples come last)."""
    drafts = []
    for path, text in studied:
        short = path.rsplit(".", 1)[1]
        summary = next((p.strip() for p in text.split("\n\n")[1:] if p.strip()), "")
        setup, found = [], 0
        try:
            examples = doctest.DocTestParser().get_examples(text)
        except ValueError:  # a malformed >>> block: this doc gives no exercise
            continue
        for example in examples:
            source = example.source.strip()
            if f".{short}(" in source and found < per_function and "\n" not in source:
                body = "\n".join(f"    {line}" for line in [*setup, f"return {source}"])
                question = (f"{summary} Compute it for this setup:\n" + ("\n".join(setup) or "(no setup)")
                            + f"\nwith the arguments {source.partition('(')[2][:-1]}.")
                if short in question:  # nested in its own arguments, or named by the summary: not closed-book
                    continue
                drafts.append({"path": path, "question": question, "input": "",
                               "code": f"import zwc\n\ndef solve():\n{body}\n", "signature": "def solve():",
                               "source": "doc-examples"})
                found += 1
            elif not source.startswith(("import", "from")) and "=" in source.split("(")[0]:
                setup.append(source)  # an assignment the later examples use
    return drafts


def calls(code: str, path: str) -> bool:
    """Whether ``code`` calls ``path`` (``zwc.name`` or ``zwc.sub.name``) by its full dotted name."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Call) and ast.unparse(node.func) == path for node in ast.walk(tree))
