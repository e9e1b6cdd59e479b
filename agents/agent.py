"""The agent: one LangGraph loop shared by every learner and model.

    prompt -> generate -> (search -> generate)* -> execute -> (feedback -> generate)* -> end

``generate`` asks the model for one answer; a ```search block queries the env's docs (mode
``search``, phase ``train`` only) and loops back; a ```python block is graded by the env
(``env.check``, so episodes may run concurrently); a failure gets execution feedback and a
retry while turns remain (Reflexion-style, ``max_turns``). Episodes run in threads and
share one dynamic batcher, so generation is batched across tasks and samples while
execution of finished answers overlaps it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import EllipsisType
from typing import TYPE_CHECKING, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from agents.batching import DynamicBatcher
from agents.learner import EvolveReport, Learner, set_limit
from agents.models import DEFAULT_MODEL, Model
from agents.models.dtype import check_dtype, resolve_dtype
from agents.models.local_model import LocalModel, check_engine, fast_engine
from agents.models.registry import ModelRegistry, default_registry, load_model, release_model
from agents.presets import preset as get_preset
from agents.prompts import extract_code, extract_search, feedback, first_prompt
from agents.seeding import DEFAULT_SEED, derive_seed
from agents.thinking import TRUNCATED_THINKING, split_thinking
from agents.trajectory import Trajectory
from envs.zwc import Observation, Task, Verdict
from envs.zwc.grading.failure import Failure
from sebench.errors import SettingError

if TYPE_CHECKING:
    from agents.evaluate import EvalReport
    from envs.zwc import ZWCEnv


class EpisodeState(TypedDict, total=False):
    env: Any
    task: Task
    sample: int
    obs: Observation
    messages: list[dict[str, str]]
    code: str
    query: str
    verdict: Verdict | None
    turns: int
    searches: int
    tokens: int
    temperature: float
    cut_in_thinking: bool  # the last answer ended inside an open <think> block (agents.thinking)


class Agent:
    """Args:
        model: a model name (default ``qwen2.5-coder-0.5b``, the capable embedded one; ``smollm2-135m``
            where speed matters more than skill; ``reference``, a directory, ``vllm:…``, ``openai:…``)
            or a Model.
        learner: anything implementing ``agents.learner.Learner``; None means no learning.
        max_turns: answers per episode (1 = no retry; >1 retries with execution feedback).
        max_searches: doc searches per episode in mode ``search``.
        temperature: the one temperature every answer is drawn at unless a caller names another, for
            any number of samples per task (``evaluate`` records it); None: the preset's (``cpu``
            0.8, ``paper`` 0.6). 0 decodes greedily, and only when asked for.
        max_tokens: new tokens per answer.
        concurrency: episodes in flight at once (the batch the model sees).
        dtype: ``auto`` | ``bfloat16`` | ``float32``, for a model loaded by name (``agents.models.dtype``).
        preset: the evaluation preset these settings came from (``agents.presets``: ``cpu``, ``paper``),
            recorded in every result's config; ``Agent(**preset("paper").agent_settings())`` sets them.
        engine: what generates for a model loaded by name or directory (``agents.models.local_model``):
            ``auto`` (CTranslate2 for greedy answers where installed, transformers for seeded
            sampling), ``transformers``, ``ct2-int8`` or ``ct2-float32``.
        seed: the run seed every sampled answer's seed derives from (``agents.seeding``: run, task,
            sample, turn), on backends that seed per prompt: the same seed gives the same samples.
        registry: where a model named by ``model`` is looked up and shared (``agents.models.ModelRegistry``);
            None: the process's (``load_model``), shared with every other agent. A test passes its own.
    """

    def __init__(self, model: str | Model = DEFAULT_MODEL, learner: Learner | None = None, *,
                 max_turns: int = 1, max_searches: int = 3, temperature: float | None = None,
                 max_tokens: int = 512, concurrency: int = 32,
                 dtype: str = "auto", seed: int = DEFAULT_SEED, engine: str = "auto", preset: str = "cpu",
                 registry: ModelRegistry | None = None):
        if max_turns < 1 or max_searches < 0 or concurrency < 1:
            raise SettingError(f"need max_turns >= 1 (got {max_turns}), max_searches >= 0 (got {max_searches}), "
                             f"concurrency >= 1 (got {concurrency})")
        self.model_spec, self.dtype, self.engine = model, check_dtype(dtype), check_engine(engine)
        chosen = get_preset(preset)
        self.preset = chosen.name
        temperature = chosen.temperature if temperature is None else float(temperature)
        if temperature < 0:
            raise SettingError(f"temperature must be >= 0 (0 decodes greedily), got {temperature}")
        self._model: Model | None = model if not isinstance(model, str) else None
        self._loaded = False  # whether self._model came from load_model (then close() gives it back)
        self._reload: str | None = None  # where an unloaded model's weights are (unload_model)
        self.learner = learner
        self.registry = registry
        self.max_turns, self.max_searches = max_turns, max_searches
        self.temperature = temperature
        self.max_tokens, self.concurrency = max_tokens, concurrency
        self.seed = int(seed)
        self._batcher: DynamicBatcher | None = None
        self._batched: Model | None = None  # the model the batcher was made for (agent.model)
        self._fast: LocalModel | None = None  # agent.model behind self.engine's switch, when it has one
        self._graph = self._build_graph()

    # -- the model ------------------------------------------------------------------------
    @property
    def model(self) -> Model:
        if self._model is None:
            if self.model_spec == "reference":
                raise ValueError("the reference model needs the env's tasks: call agent.evaluate(...) "
                                 "or bind it with agent.bind_reference(env)")
            self._model = self._load(self._reload or str(self.model_spec), dtype=self.dtype)
            self._loaded = True
        return self._model

    @model.setter
    def model(self, model: Model) -> None:
        """Parametric learners replace the model they trained."""
        self._let_go()
        self._model, self.model_spec, self._reload = model, model.name, None

    def unload_model(self) -> bool:
        """Drop the loaded model so a trainer can have its memory (a 0.5B RL run needs nearly all of
        24 GB); the next use loads it again from its weights' directory. A model without one (a
        backend, a test double) stays. True when something was dropped."""
        path = getattr(self._model, "path", None)
        if path is None or not (Path(path) / "config.json").is_file():
            return False
        self._let_go()
        self._reload = str(path)
        return True

    def close(self) -> None:
        """Release what this agent loaded: its batcher's thread ends, and a model it loaded by
        name goes back to the registry, which frees it when no other agent holds it. The agent
        can still be used afterwards: its next generation loads the model again."""
        self._let_go()

    def _let_go(self) -> None:
        self._close_batcher()
        if self._model is not None and self._loaded:
            if self.registry is None:
                release_model(self._model)
            else:
                self.registry.release(self._model)
        self._model, self._loaded = None, False

    def _load(self, name: str, **kwargs: Any) -> Model:
        """``name`` from this agent's registry, else the process's (``load_model``, looked up at
        each call)."""
        return load_model(name, **kwargs) if self.registry is None else self.registry.load(name, **kwargs)

    def _has_local_weights(self, spec: str) -> bool:
        return (default_registry() if self.registry is None else self.registry).has_local_weights(spec)

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def bind_reference(self, env: ZWCEnv, splits: tuple[str, ...] = ("train", "single_test", "multiple_test")):
        tasks = [t for s in splits if (env.root / f"{s}.jsonl").is_file() for t in env.tasks(s)]
        self._let_go()
        self._model = self._load("reference", tasks=tasks, mapping=env.mapping)

    @staticmethod
    def _reference_splits(phase: str) -> tuple[str, ...]:
        """A reference teacher in phase train (a learner gathering) knows the train tasks only;
        ``evaluate`` binds the split it evaluates itself."""
        return ("train",) if phase == "train" else ("train", "single_test", "multiple_test")

    @property
    def weights_dtype(self) -> str | None:
        """The dtype the model's weights run in (``bfloat16`` / ``float32``), ``auto`` resolved;
        None for backends whose weights are not ours (reference, openai:, vllm:)."""
        if self._model is not None:
            return getattr(self._model, "dtype", None)
        if not self._has_local_weights(str(self.model_spec)):
            return None
        return resolve_dtype(self.dtype)

    def engine_for(self, temperature: float) -> str | None:
        """The engine that answers at ``temperature`` (``transformers``, ``ct2-int8`` ...), recorded in
        every result's config; None for backends whose engine is not ours (reference, remote)."""
        model = self._model
        if model is None:
            if not self._has_local_weights(str(self.model_spec)):
                return None
            model = self.model  # a local model: which engine answers depends on where it runs
        fast = self._fast if self._fast is not None and self._batched is model else fast_engine(model, self.engine)
        if fast is not None:
            return fast.engine_for(temperature)
        if type(model).__name__ == "TransformersModel":
            return "transformers"
        return getattr(model, "engine", None)

    @property
    def name(self) -> str:
        return self.model_spec if isinstance(self.model_spec, str) else self.model_spec.name

    def _generator(self) -> DynamicBatcher:
        """The batcher every episode generates through: over ``agent.model``, or over it behind
        ``engine``'s switch (``fast_engine``: CTranslate2 for greedy answers on a CPU model)."""
        model = self.model
        if self._batcher is None or self._batched is not model:
            self._close_batcher()
            self._fast = fast_engine(model, self.engine)
            self._batcher = DynamicBatcher(self._fast or model, max_batch=self.concurrency)
            self._batched = model
        return self._batcher

    def _close_batcher(self) -> None:
        if self._batcher is not None:
            self._batcher.close()
        if self._fast is not None:
            self._fast.close()  # its CTranslate2 weights; agent.model itself is not its to free
        self._batcher = self._batched = self._fast = None

    # -- the graph ------------------------------------------------------------------------
    def _build_graph(self):
        graph = StateGraph(EpisodeState)
        graph.add_node("generate", self._generate)
        graph.add_node("search", self._search)
        graph.add_node("execute", self._execute)
        graph.add_node("feedback", self._feedback)
        graph.add_edge(START, "generate")
        graph.add_conditional_edges("generate", self._route, {"search": "search", "execute": "execute"})
        graph.add_edge("search", "generate")
        graph.add_conditional_edges("execute", self._after_execute, {"feedback": "feedback", "end": END})
        graph.add_edge("feedback", "generate")
        return graph.compile()

    def _generate(self, state: EpisodeState) -> dict:
        turn = sum(m["role"] == "assistant" for m in state["messages"])
        seed = derive_seed(self.seed, state["task"].task_id, state.get("sample", 0), turn)
        [[completion]] = self._generator().generate([state["messages"]], n=1, temperature=state["temperature"],
                                                    max_tokens=self.max_tokens, seeds=[seed])
        messages = [*state["messages"], {"role": "assistant", "content": completion.text}]
        split = split_thinking(completion.text)  # the code is the answer's, not a draft in its reasoning
        return {"messages": messages, "tokens": state["tokens"] + completion.tokens,
                "code": extract_code(split.answer), "query": extract_search(split.answer),
                "cut_in_thinking": split.cut_in_thinking}

    def _route(self, state: EpisodeState) -> str:
        if state["query"] and state["obs"].can_search and state["searches"] < self.max_searches:
            return "search"
        return "execute"

    def _search(self, state: EpisodeState) -> dict:
        hits = state["env"].search(state["query"], k=5, phase=state["obs"].phase)
        lines = [f"{h.name}: {h.summary}" for h in hits] or ["no results"]
        text = f"Search results for {state['query']!r}:\n" + "\n".join(lines)
        return {"messages": [*state["messages"], {"role": "user", "content": text}],
                "searches": state["searches"] + 1}

    def _execute(self, state: EpisodeState) -> dict:
        verdict = state["env"].check(state["task"], state["code"], mode=state["obs"].mode)
        if state.get("cut_in_thinking") and verdict.failure is Failure.NO_CODE:
            verdict = verdict.model_copy(update={
                "reason": TRUNCATED_THINKING,
                "detail": f"the answer ended inside its <think> block: max_tokens={self.max_tokens} is too small for "
                          "this model's reasoning (the paper preset gives 8192)"})
        return {"verdict": verdict, "turns": state["turns"] + 1}

    def _after_execute(self, state: EpisodeState) -> str:
        verdict = state["verdict"]
        if verdict is None or verdict.passed or state["turns"] >= self.max_turns:
            return "end"
        return "feedback"

    def _feedback(self, state: EpisodeState) -> dict:
        """Execution feedback for a retry; in phase test it never carries a hidden expected value."""
        note = feedback(state["verdict"], state["obs"], state["task"].inputs())
        return {"messages": [*state["messages"], {"role": "user", "content": note}]}

    # -- episodes -------------------------------------------------------------------------
    def run_episode(self, env: ZWCEnv, task: Task, phase: str = "train", mode: str = "closed",
                    sample: int = 0, temperature: float | None = None,
                    docs_chars: int | None | EllipsisType = ...) -> Trajectory:
        """One episode; phase, mode and the open-book doc budget (default ``env.docs_chars``) are
        this episode's own: nothing here changes the env, so episodes of any settings may overlap."""
        started = time.perf_counter()
        if self.model_spec == "reference" and self._model is None:
            self.bind_reference(env, self._reference_splits(phase))
        obs = env.observe(task, phase=phase, mode=mode, docs_chars=docs_chars)
        context = self.learner.context(obs) if self.learner is not None else ""
        state: EpisodeState = {"env": env, "task": task, "obs": obs, "messages": first_prompt(obs, context),
                               "code": "", "query": "", "verdict": None, "turns": 0, "searches": 0, "tokens": 0,
                               "sample": sample,
                               "temperature": self.temperature if temperature is None else temperature}

        final = self._graph.invoke(state, config={"recursion_limit": 4 * (self.max_turns + self.max_searches) + 8})
        messages = final["messages"]
        verdict = final.get("verdict")
        trajectory = Trajectory(task_id=task.task_id, sample=sample, phase=phase, mode=mode, messages=messages,
                                code=final.get("code", ""), verdict=verdict, turns=final.get("turns", 0),
                                searches=final.get("searches", 0), tokens=final.get("tokens", 0),
                                seconds=time.perf_counter() - started, context=context)
        if self.learner is not None:
            self.learner.observe(trajectory)
        return trajectory

    def run_episodes(self, env: ZWCEnv, items: list[tuple[Task, int]], phase: str, mode: str,
                     temperature: float | None = None,
                     on_done: Callable[[Trajectory], None] | None = None,
                     docs_chars: int | None | EllipsisType = ...) -> list[Trajectory]:
        """Run (task, sample) episodes concurrently; ``on_done`` sees each as it finishes."""
        def one(item: tuple[Task, int]) -> Trajectory:
            task, sample = item
            trajectory = self.run_episode(env, task, phase, mode, sample, temperature, docs_chars)
            if on_done is not None:
                on_done(trajectory)
            return trajectory

        if self.model_spec == "reference" and self._model is None:
            self.bind_reference(env, self._reference_splits(phase))
        self._generator()  # load the model here, once, not in racing episode threads
        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(one, items))

    # -- the two phases -------------------------------------------------------------------
    def evolve(self, env: ZWCEnv, limit: int | None = None) -> EvolveReport:
        """The learner's training phase (docs open); without a learner, nothing changes.
        ``limit``: the learner uses the first N train tasks (its config's ``limit``), whatever
        the learner."""
        if self.learner is None:
            return EvolveReport(learner="none")
        if limit is not None:
            set_limit(self.learner, limit)
        return self.learner.evolve(self, env)

    def evaluate(self, env: ZWCEnv, split: str = "single_test", n: int = 5, mode: str = "closed",
                 out: str | None = None, limit: int | None = None, resume: bool = False,
                 functions: list[str] | None = None) -> EvalReport:
        from agents.evaluate import evaluate

        return evaluate(self, env, split=split, n=n, mode=mode, out=out, limit=limit, resume=resume,
                        functions=functions)
