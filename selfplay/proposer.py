"""The proposer: a model writes new tasks for the zwc library, shown the docs it should use.

Each prompt holds the (trimmed) docs of a few sampled zwc functions, a complete worked
example in the proposal format (``proposal.py``) made from one of the env's own train tasks
(its real query, ZWC reference and inputs: nothing to fill in, so nothing to copy as a
placeholder), and, when given, a few reference tasks (e.g. from a self-play buffer) to
make something different from. The answer is parsed with ``parse_proposal``; validation is
``validate.py``'s job.

Any backend with ``generate(prompts, n=, temperature=, max_tokens=)`` works (the agents'
Model protocol), and the proposer's model may differ from the agent's (a stronger teacher,
``--proposer-model``). Loops that generate elsewhere (inside an RL trainer's rollouts) use
``requests`` for the prompts and ``parse`` for the answers.

Proposing reads the docs, so it belongs to phase ``train``: in phase ``test`` ``env.docs``
raises ``ProtocolError`` and so does the proposer.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from agents.models import Model, load_model
from agents.seeding import derive_seed, supports_seeds
from envs.zwc import CONSTRUCTORS, MIN_TESTS, Task, ZWCEnv, ZWCEnvError, trim_doc
from sebench.errors import DataError, SettingError
from selfplay.proposal import ENTRY, INPUTS_NAME, Proposal, parse_proposal, render_task
from selfplay.reasons import Rejected

SYSTEM = ("You invent programming tasks for zwc, a Python array library. You never use numpy. "
          "Answer with a single ```python code block.")
INSTRUCTIONS = (  # no "(...)" or "<name>" to copy: the worked example shows every part for real
    "Now write one new task that calls {functions}, in exactly the format of the example: one ```python "
    "block that imports zwc, defines a function named {entry} whose docstring states the task in plain words "
    "(without naming any zwc or numpy function) and whose body computes the answer with {functions}, and ends "
    "with a list named {inputs} that holds at least {min_tests} different inputs for {entry}, each a dict of "
    "its arguments written out as literal values, as in the example.")


def check_min_inputs(value: object) -> int:
    """``value`` if it is an int >= 2 (one input cannot tell a constant apart, and induction shows
    half of the pairs and grades the other half); a SettingError naming it otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise SettingError(f"min_inputs must be an integer >= 2 (one input cannot tell a constant apart; induction "
                           f"shows half of the pairs and grades the other half), got {value!r}")
    return value


@dataclass(frozen=True)
class ProposerConfig:
    """How prompts are made and sampled.

    Attributes:
        functions_per_task: zwc functions whose docs a prompt shows and asks to use.
        references: reference tasks shown per prompt, when the caller gives some.
        docs_chars: characters of each function's doc (its head: signature, summary,
            parameters); None for the whole doc. Small models keep short prompts better.
        temperature: sampling temperature (diversity of the proposals).
        max_tokens: the longest answer; a worked example is ~300 tokens.
        min_inputs: inputs a proposal must list (SE-Bench's tasks have 8; Absolute-Zero's fewer);
            the worked example shows exactly this many, and the instructions ask for as many.
        example_chars: worked examples longer than this are shown only when no shorter one
            exists (a long example crowds a small model's context).
        seed: sampling of functions, examples and references (per round), and of the proposals
            themselves on a backend that takes seeds (one per proposal: ``Proposer.seeds``).
    """

    functions_per_task: int = 1
    references: int = 2
    docs_chars: int | None = 1200
    temperature: float = 0.8
    max_tokens: int = 640
    example_chars: int = 1600
    seed: int = 0
    min_inputs: int = MIN_TESTS

    def __post_init__(self) -> None:
        if self.functions_per_task < 1:
            raise SettingError(f"functions_per_task ({self.functions_per_task}) must be at least 1")
        if self.references < 0:
            raise SettingError(f"references ({self.references}) must be >= 0")
        if self.docs_chars is not None and self.docs_chars < 100:
            raise SettingError(f"docs_chars ({self.docs_chars}) is too small to hold a signature; use >= 100 or None")
        if self.max_tokens < 64:
            raise SettingError(f"max_tokens ({self.max_tokens}) cannot hold a proposal; use >= 64")
        check_min_inputs(self.min_inputs)


@dataclass(frozen=True)
class ProposalRequest:
    """One prompt and what it asked for."""

    prompt: list[dict[str, str]]
    functions: tuple[str, ...]  # zwc paths the task should use
    example: str  # task_id of the worked example shown
    references: tuple[str, ...] = field(default=())  # task_ids of the reference tasks shown


class Proposer:
    """Writes proposals with ``model`` for ``env``'s zwc build.

    Args:
        env: the environment (its docs, mapping and train tasks).
        model: a Model, or a name ``agents.models.load_model`` resolves.
        config: prompt and sampling settings.
        tasks: the train tasks it may use (a learner's first ``limit``): worked examples come
            from these, and functions are sampled among those they use. None: the whole train
            split, and every documented function.
    """

    def __init__(self, env: ZWCEnv, model: Model | str, config: ProposerConfig | None = None,
                 tasks: Sequence[Task] | None = None):
        self.env = env
        self.model = load_model(model) if isinstance(model, str) else model
        self.config = config or ProposerConfig()
        self.tasks = None if tasks is None else list(tasks)
        index = env.docs  # raises ProtocolError in phase test: proposing reads the docs
        functions = {e.zwc for e in env.mapping if e.numpy not in CONSTRUCTORS and e.zwc in index.entries}
        if self.tasks is not None:
            functions &= {p for t in self.tasks for p in env.function_paths(t)}
        self.functions = sorted(functions)
        if len(self.functions) < self.config.functions_per_task:
            among = f" used by the {len(self.tasks)} train tasks given" if self.tasks is not None else ""
            raise DataError(f"{env.root}: only {len(self.functions)} documented functions{among} to sample, "
                             f"{self.config.functions_per_task} asked per task")
        self.examples = self._example_tasks()

    def _example_tasks(self) -> list[tuple[Task, str]]:
        """Train tasks that render as a worked example, with their rendering."""
        try:
            train = self.env.tasks("train") if self.tasks is None else self.tasks
        except ZWCEnvError as exc:
            raise ZWCEnvError(f"the proposer's worked example comes from the env's train tasks, and {exc}") from None
        examples = []
        for task in train:
            if len(task.selected_functions) != 1 or task.entry_point != ENTRY:
                continue
            if any(self.env.mapping.to_numpy(p) in CONSTRUCTORS for p in self.env.function_paths(task)):
                continue  # an array constructor alone does not count as using zwc (the validator would refuse it)
            rendered = _rendered(task, self.config.min_inputs)
            if rendered is not None and isinstance(parse_proposal(rendered, min_inputs=self.config.min_inputs),
                                                   Proposal):
                examples.append((task, rendered))
        short = [(t, r) for t, r in examples if len(r) <= self.config.example_chars]
        examples = short or examples
        if not examples:
            raise DataError(f"{self.env.root}: no train task can serve as a worked example (none has a ZWC "
                             f"reference defining {ENTRY} and >= {self.config.min_inputs} literal inputs); "
                             f"rebuild the tasks with `sebench tasks build --zwc {self.env.root}`")
        return examples

    # -- prompts -----------------------------------------------------------------------------
    def requests(self, count: int, references: Sequence[Task] = (), round: int = 0) -> list[ProposalRequest]:
        """``count`` prompts, each with its own sampled functions, example and references
        (deterministic for a seed and round)."""
        if count < 0:
            raise SettingError(f"count ({count}) must be >= 0")
        rng = random.Random(f"{self.config.seed}-propose-{round}")
        shown = [(t, r) for t in references if (r := _rendered(t, self.config.min_inputs)) is not None]
        return [self._request(rng, shown) for _ in range(count)]

    def _request(self, rng: random.Random, shown: list[tuple[Task, str]]) -> ProposalRequest:
        functions = tuple(rng.sample(self.functions, self.config.functions_per_task))
        targets = set(functions)
        others = [(t, r) for t, r in self.examples if not targets & set(self.env.function_paths(t))]
        example, rendered = rng.choice(others or self.examples)
        chosen = rng.sample(shown, min(self.config.references, len(shown)))
        return ProposalRequest(prompt=self.prompt(functions, rendered, [r for _, r in chosen]),
                               functions=functions, example=example.task_id,
                               references=tuple(t.task_id for t, _ in chosen))

    def prompt(self, functions: Sequence[str], example: str, references: Sequence[str] = ()) -> list[dict[str, str]]:
        """The chat prompt for ``functions`` (zwc paths), a rendered worked example and
        rendered reference tasks."""
        return proposal_prompt(self.env, self.config, functions, example, references)

    # -- answers -----------------------------------------------------------------------------
    def parse(self, request: ProposalRequest, text: str) -> Proposal | Rejected:
        return parse_proposal(text, functions=request.functions, min_inputs=self.config.min_inputs)

    @property
    def seeded(self) -> bool:
        """Whether the model draws each proposal from a seed of its own (``agents.seeding``)."""
        return supports_seeds(self.model)

    def seeds(self, count: int, round: int = 0) -> list[int]:
        """The seed of each of a round's ``count`` proposals: from ``config.seed``, the round and the
        proposal's place, so the same seed proposes the same tasks whatever else shares the batch."""
        return [derive_seed(self.config.seed, "propose", round, i) for i in range(count)]

    def propose(self, count: int, references: Sequence[Task] = (), round: int = 0) -> list[Proposal | Rejected]:
        """``count`` proposals from the model, parsed (one batched ``generate`` call); seeded on a
        backend that takes seeds (``seeded``), so a rerun with the same seed proposes the same."""
        requests = self.requests(count, references, round)
        if not requests:
            return []
        seeded = {"seeds": self.seeds(len(requests), round)} if self.seeded else {}
        answers = self.model.generate([r.prompt for r in requests], n=1, temperature=self.config.temperature,
                                      max_tokens=self.config.max_tokens, **seeded)
        return [with_prompt(self.parse(request, completions[0].text), request.prompt)
                for request, completions in zip(requests, answers, strict=True)]


def proposal_prompt(env: ZWCEnv, config: ProposerConfig, functions: Sequence[str], example: str,
                    references: Sequence[str] = ()) -> list[dict[str, str]]:
    """The proposal prompt: the docs of ``functions`` (zwc paths), a rendered worked example,
    rendered reference tasks and the instructions (the teacher's requests carry the same one)."""
    docs = "\n\n".join(f"## {path}\n{trim_doc(env.docs.lookup(path).text.strip(), config.docs_chars)}"
                       for path in functions)
    names = " and ".join(functions)
    parts = [f"Documentation of {names}:\n\n{docs}",
             f"A complete example task, in the exact format to use:\n\n{example}"]
    if references:
        parts.append("Tasks that already exist (write a different one):\n\n" + "\n\n".join(references))
    parts.append(INSTRUCTIONS.format(functions=names, entry=ENTRY, inputs=INPUTS_NAME, min_tests=config.min_inputs))
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def with_prompt(item: Proposal | Rejected, prompt: list[dict[str, str]]) -> Proposal | Rejected:
    """A parsed proposal with the prompt it answered (what the proposer role trains after)."""
    return replace(item, prompt=tuple(prompt)) if isinstance(item, Proposal) else item


def _rendered(task: Task, max_inputs: int | None = None) -> str | None:
    """``task`` in the proposal format (its first ``max_inputs`` inputs); None when it has no ZWC
    reference to show."""
    try:
        return render_task(task, max_inputs)
    except (ValueError, SyntaxError):
        return None
