"""check_model: the Model protocol as a function a backend author runs, like Gymnasium's ``check_env``.

    from agents.models.conformance import check_model
    report = check_model(MyModel("my-weights"))       # a model, a factory, or a registry name
    print(*report.lines(), sep="\\n")                  # one line per check: PASS/FAIL, name, what to fix

Five generate calls on two short chat prompts (a few seconds with ``smollm2-135m`` on a CPU; a
sixth when the batched greedy answer differs from the lone one) and five refused ones. An
exception is reported as the failure of the checks that needed the call, never raised. The
checks, from docs/architecture.md's Model protocol and ``agents.models.base``:

protocol (``name`` and a ``generate`` of the right signature), shapes (one list per prompt, ``n``
Completions each), max-tokens (``0 < tokens <= max_tokens``; a longer answer is cut at exactly
``max_tokens`` generated tokens), finish-reason (``"length"`` when cut, ``"stop"`` at a stop
string), prompt-tokens (None or the prompt's length, padding not counted), stop (the text ends
just before the first stop string), greedy (temperature 0 gives the same text in every copy and
every call), batch-invariance (a prompt's greedy answer does not depend on its batch; pass
``batch_invariant=False`` for a backend that does not promise it), sampling (temperature 1.5
varies; ``sampling=False`` for a deterministic backend), bad-arguments (``ValueError`` or
``TypeError`` before any generation).
"""

from __future__ import annotations

import inspect
import time
from typing import Any

from agents.models.base import FINISH_REASONS, Completion, Model
from sebench.check_report import ConformanceReport
from sebench.errors import SettingError

CHECKS = ("protocol", "shapes", "max-tokens", "finish-reason", "prompt-tokens", "stop", "greedy",
          "batch-invariance", "sampling", "bad-arguments")
# A prompt whose greedy answer is long and has commas (any chat model counts), and a short one.
COUNTING = [{"role": "user", "content": "Count from one to five in words, separated by commas."}]
COLOUR = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour."}]
NEVER = "@@never-generated@@"  # a stop string no answer contains, listed beside the real one
SHORT = 3  # max_tokens of the call that must be cut


def check_model(model: Any, *, max_tokens: int = 16, batch_invariant: bool = True, sampling: bool = True,
                target: str | None = None) -> ConformanceReport:
    """Run every check of the Model protocol against ``model``.

    Args:
        model: a model (has ``generate``), a zero-argument factory returning one, or a name for
            ``agents.models.load_model``.
        max_tokens: the answer length of the full-length calls (>= 12: the stop check cuts inside it).
        batch_invariant: whether a prompt's greedy answer must not depend on the other prompts of
            its batch (true of our backends; padded batches in low precision may break it).
        sampling: whether temperature > 0 must give varied answers (False for a deterministic backend).
        target: the name the report carries (default: the model's ``name``).
    """
    started = time.perf_counter()
    if max_tokens < 12:
        raise SettingError(f"max_tokens must be >= 12 (the stop check needs an answer to cut), got {max_tokens}")
    if isinstance(model, str):
        from agents.models.registry import load_model

        model = load_model(model)
    elif not hasattr(model, "generate") and callable(model):
        model = model()
    report = ConformanceReport(target or str(getattr(model, "name", type(model).__name__)))
    checks = _ModelChecks(model, max_tokens, batch_invariant, report)
    for name in CHECKS:
        if name == "batch-invariance" and not batch_invariant:
            report.add(name, [], "skipped: batch_invariant=False")
        elif name == "sampling" and not sampling:
            report.add(name, [], "skipped: sampling=False (a deterministic backend)")
        else:
            checks.run(name)
    report.seconds = time.perf_counter() - started
    return report


class CallFailed(Exception):
    """A generate call the check needs raised or returned the wrong shape; the message says which."""


class _ModelChecks:
    """The calls, made once each and shared, and the checks over them."""

    def __init__(self, model: Any, max_tokens: int, batch_invariant: bool, report: ConformanceReport):
        self.model, self.max_tokens, self.batch_invariant, self.report = model, max_tokens, batch_invariant, report
        self._results: dict[str, Any] = {}

    def run(self, check: str) -> None:
        try:
            problems, why = getattr(self, "check_" + check.replace("-", "_"))()
        except CallFailed as exc:
            problems, why = [str(exc)], ""
        except Exception as exc:  # noqa: BLE001 - a backend's error is this check's failure
            problems, why = [f"raised {type(exc).__name__}: {exc}"], ""
        self.report.add(check, problems, why)

    # -- the calls ------------------------------------------------------------------------------
    def spec(self, key: str) -> tuple[list, dict[str, Any]]:
        """Prompts and keyword arguments of call ``key``."""
        full = {"temperature": 0.0, "max_tokens": self.max_tokens}
        if key == "stopped":  # needs the answer of "single" to pick its stop string
            return [COUNTING], {**full, "stop": [NEVER, self.stop_string()]}
        return {"batch": ([COUNTING, COLOUR], {**full, "n": 2}), "single": ([COUNTING], full),
                "repeat": ([COUNTING], full), "short": ([COUNTING], {**full, "max_tokens": SHORT}),
                "sampled": ([COLOUR] * 4, {"temperature": 1.5, "max_tokens": 12})}[key]

    def describe(self, key: str) -> str:
        prompts, kwargs = self.spec(key)
        names = ", ".join("COUNTING" if p is COUNTING else "COLOUR" for p in prompts)
        return f"generate([{names}], {', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"

    def call(self, key: str) -> list:
        """The result of call ``key`` (made once), checked to be a list of lists; CallFailed otherwise."""
        prompts, kwargs = self.spec(key)
        if key not in self._results:
            try:
                self._results[key] = self.model.generate(prompts, **kwargs)
            except Exception as exc:  # noqa: BLE001 - kept, and reported by every check that needs it
                self._results[key] = exc
        result = self._results[key]
        if isinstance(result, Exception):
            raise CallFailed(f"{self.describe(key)} raised {type(result).__name__}: {result}")
        if not isinstance(result, list) or len(result) != len(prompts) or \
                any(not isinstance(per, list) or not per for per in result):
            raise CallFailed(f"{self.describe(key)} returned {_short(result)}: return one non-empty list of "
                             "Completions per prompt (the shapes check says more)")
        return result

    def one(self, key: str) -> Completion:
        [[completion, *_]] = self.call(key)
        if not isinstance(completion, Completion):
            raise CallFailed(f"{self.describe(key)} returned a {type(completion).__name__}, not a Completion")
        return completion

    def stop_string(self) -> str:
        """Three characters from inside the greedy answer to COUNTING (crossing a token boundary)."""
        text = self.one("single").text
        for start in (6, len(text) // 2, 1):
            piece = text[start:start + 3]
            if len(piece) == 3 and piece.strip():
                return piece
        raise CallFailed(f"the greedy answer to COUNTING is {text!r}: too short to test a stop string "
                         f"inside it (max_tokens={self.max_tokens})")

    def completions(self, *keys: str) -> list[tuple[str, Completion]]:
        return [(k, c) for k in keys for per in self.call(k) for c in per if isinstance(c, Completion)]

    # -- the checks -----------------------------------------------------------------------------
    def check_protocol(self):
        problems = []
        name = getattr(self.model, "name", None)
        if not isinstance(name, str) or not name.strip():
            problems.append(f"name is {name!r}: give the backend a non-empty str attribute name (results are "
                            "reported under it)")
        generate = getattr(self.model, "generate", None)
        if not callable(generate):
            problems.append("no callable generate: implement generate(prompts, *, n, temperature, max_tokens, stop)")
        else:
            try:
                inspect.signature(generate).bind([COUNTING], n=1, temperature=0.0, max_tokens=8, stop=None)
            except TypeError:
                problems.append(f"generate{inspect.signature(generate)} cannot be called as generate(prompts, n=, "
                                "temperature=, max_tokens=, stop=): take those keyword arguments")
            except ValueError:
                pass  # no signature to read: the calls tell
        if not problems and not isinstance(self.model, Model):
            problems.append("not an agents.models.Model at run time (isinstance fails)")
        return problems, "a name and generate(prompts, *, n, temperature, max_tokens, stop)"

    def check_shapes(self):
        result = self.call("batch")  # two prompts, n=2
        problems = []
        counts = [len(per) for per in result]
        if counts != [2, 2]:
            problems.append(f"{self.describe('batch')} returned {counts} completions per prompt: return exactly n "
                            "Completions for every prompt")
        wrong = {type(c).__name__ for per in result for c in per if not isinstance(c, Completion)}
        if wrong:
            problems.append(f"generate returned {', '.join(sorted(wrong))} items: return "
                            "agents.models.Completion(text, tokens, finish_reason, prompt_tokens)")
        for c in (c for per in result for c in per if isinstance(c, Completion)):
            if not isinstance(c.text, str) or not c.text.strip() or not isinstance(c.tokens, int):
                problems.append(f"{c!r}: text must be the (non-empty) answer as a str and tokens an int")
                break
        return problems, "one list per prompt, in order, n Completions each, with text and tokens"

    def check_max_tokens(self):
        problems = []
        limits = {"short": SHORT}
        for key, c in self.completions("batch", "single", "short"):
            limit = limits.get(key, self.max_tokens)
            if not 0 < c.tokens <= limit:
                problems.append(f"{self.describe(key)} gave a completion of {c.tokens} tokens: tokens counts the "
                                f"generated tokens, between 1 and max_tokens={limit}")
                break
        full, short = self.one("single"), self.one("short")
        if full.tokens > SHORT and (short.tokens != SHORT or len(short.text) >= len(full.text)):
            problems.append(f"with max_tokens={SHORT} the answer has {short.tokens} tokens ({short.text!r}); with "
                            f"{self.max_tokens}, {full.tokens}: stop generating after exactly max_tokens tokens")
        return problems, f"0 < tokens <= max_tokens; max_tokens={SHORT} cuts a longer answer at {SHORT} tokens"

    def check_finish_reason(self):
        problems = []
        odd = {c.finish_reason for _, c in self.completions("batch", "single", "short", "stopped")} - \
            set(FINISH_REASONS)
        if odd:
            problems.append(f"finish_reason {sorted(map(repr, odd))}: use OpenAI's 'stop' or 'length'")
        full, short, stopped = self.one("single"), self.one("short"), self.one("stopped")
        if full.tokens > SHORT and short.finish_reason != "length":
            problems.append(f"an answer cut by max_tokens={SHORT} has finish_reason {short.finish_reason!r}: "
                            "say 'length'")
        if stopped.finish_reason != "stop":
            problems.append(f"an answer ended by a stop string has finish_reason {stopped.finish_reason!r}: say 'stop'")
        return problems, "'length' when max_tokens cut the answer, 'stop' when a stop string (or the model) ended it"

    def check_prompt_tokens(self):
        problems = []
        made = [key for key in ("single", "repeat", "short", "stopped") if key != "repeat" or key in self._results]
        counts = {key: self.one(key).prompt_tokens for key in made}
        counts["batch"] = self.call("batch")[0][0].prompt_tokens
        self.report.details["prompt_tokens"] = counts["single"]
        if any(v is not None and (not isinstance(v, int) or v < 1) for v in counts.values()):
            problems.append(f"prompt_tokens {counts}: give the prompt's length in tokens (a positive int) or None")
        elif counts["single"] is not None and len(set(counts.values())) != 1:
            problems.append(f"one prompt's prompt_tokens differ across calls {counts}: count the prompt's own "
                            "tokens, not the padding of its batch")
        known = "known" if counts["single"] is not None else "None (unknown to the backend)"
        return problems, f"prompt_tokens is {known}, the same for a prompt in every call"

    def check_stop(self):
        full, stopped = self.one("single"), self.one("stopped")
        stop = self.stop_string()
        expected = full.text[:full.text.find(stop)]
        self.report.details["stop"] = {"stop": stop, "text": stopped.text, "expected": expected}
        if stopped.text != expected:
            return [f"stop=[..., {stop!r}] gave {stopped.text!r}; the greedy answer {full.text!r} cut before the "
                    f"first {stop!r} is {expected!r}: end the text before the first stop string, even one that "
                    "spans tokens (agents.models.base.cut_at_stop), and check every string of the list"], ""
        return [], "the text ends just before the first of the stop strings, also one spanning tokens"

    def check_greedy(self):
        problems = []
        for per, prompt in zip(self.call("batch"), ("COUNTING", "COLOUR"), strict=True):
            texts = {c.text for c in per if isinstance(c, Completion)}
            if len(texts) > 1:
                problems.append(f"the n=2 copies for {prompt} at temperature 0 differ: {sorted(texts)}; "
                                "temperature 0 is greedy decoding")
        single, batched = self.one("single"), self.call("batch")[0][0]
        if self.batch_invariant and isinstance(batched, Completion) and batched.text == single.text:
            return problems, "temperature 0 gives the same text in every copy and in two calls (batched, alone)"
        repeat = self.one("repeat")  # only needed when the batched call cannot witness determinism
        if single.text != repeat.text:
            problems.append(f"two identical calls at temperature 0 gave {single.text!r} and {repeat.text!r}: "
                            "temperature 0 must be greedy and deterministic")
        return problems, "temperature 0 gives the same text in every copy and in two identical calls"

    def check_batch_invariance(self):
        batched, alone = self.call("batch")[0][0], self.one("single")
        if not isinstance(batched, Completion) or batched.text != alone.text:
            text = batched.text if isinstance(batched, Completion) else batched
            if isinstance(self._results.get("repeat"), list) and self.one("repeat").text != alone.text:
                return [f"not judged: the same call at temperature 0 gave different answers ({alone.text!r}, "
                        f"{self.one('repeat').text!r}); make greedy decoding deterministic first"], ""
            return [f"COUNTING's greedy answer is {alone.text!r} alone and {text!r} batched with COLOUR: pad "
                    "batches on the left and mask the padding (or pass batch_invariant=False)"], ""
        return [], "a prompt's greedy answer is the same alone and in a batch"

    def check_sampling(self):
        texts = [c.text for _, c in self.completions("sampled")]
        if len(set(texts)) < 2:
            return [f"4 answers to COLOUR at temperature 1.5 are all {texts[:1]!r}: sample when temperature > 0 "
                    "(or pass sampling=False for a deterministic backend)"], ""
        return [], f"temperature 1.5 gave {len(set(texts))} different answers of 4"

    def check_bad_arguments(self):
        cases = [("n=0", [COUNTING], {"n": 0}), ("temperature=-1", [COUNTING], {"temperature": -1.0}),
                 ("max_tokens=0", [COUNTING], {"max_tokens": 0}),
                 ("a message without 'role'", [[{"content": "no role"}]], {}),
                 ("one prompt instead of a list of prompts", COUNTING, {})]
        problems = []
        for what, prompts, kwargs in cases:
            try:
                self.model.generate(prompts, **{"max_tokens": 4, **kwargs})
                problems.append(f"{what} was accepted: raise ValueError or TypeError naming the argument "
                                "(agents.models.base.check_generate_args does)")
            except (ValueError, TypeError):
                pass
            except Exception as exc:  # noqa: BLE001 - the wrong error type is the finding
                problems.append(f"{what} raised {type(exc).__name__}: {exc}; raise ValueError or TypeError")
        return problems, "n < 1, temperature < 0, max_tokens < 1 and malformed prompts raise ValueError/TypeError"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."

