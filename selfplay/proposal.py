"""The proposal format: one ```python block that a small model can keep, read with ``ast`` only.

A proposal is the whole task in one block::

    import zwc

    def solve(x1, x2):
        \"\"\"The task in plain words (the problem text a solver will see).\"\"\"
        return zwc.gitozeb(x1, x2)

    INPUTS = [
        dict(x1=[1.5, -2.0], x2=[0.5, 3.0]),
        ...  # at least MIN_TESTS different inputs, written as literals
    ]

Why this shape: SE-Bench's sectioned format (PROBLEM:/SIGNATURE:/INPUTS:/SOLUTION:) was not
kept by small models (Qwen2.5-Coder-0.5B: 0/6, sections missing, placeholders copied). Code
is what they write best, so everything lives in code: the entry function is ``solve``, its
docstring (or a comment right above it, or at the top of the block) is the problem, and a
top-level ``INPUTS`` list holds the test inputs as ``dict(name=value)`` calls or ``{"name":
value}`` displays (a bare value per element when ``solve`` has one required parameter).
Expected outputs are never part of a proposal: they come only from running the solution in
the sandbox (``validate.py``).

Nothing here executes the proposal: values are read with ``ast.literal_eval``, so a
proposal cannot run code in this process. ``parse_proposal`` returns a ``Proposal`` or a
``Rejected`` whose detail says exactly what was missing; ``render_task`` writes a verified
Task in the same format (the worked example and the reference tasks a proposer is shown).
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field

from envs.zwc import MAX_TESTS, MIN_TESTS, Task
from selfplay.reasons import Reason, Rejected

ENTRY = "solve"
INPUTS_NAME = "INPUTS"
MAX_INPUT_CHARS = 4000  # one test input's keyword text; SE-Bench's inputs are a few hundred characters
MIN_PROBLEM_WORDS = 3
_SPECIAL = ("nan", "inf", "infinity")  # float('nan'), float('-inf') ... in inputs
_FENCE = re.compile(r"```[ \t]*(?P<lang>[A-Za-z0-9_+-]*)[ \t]*\n(?P<code>.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = ("", "python", "py", "python3")
_DEF_SOLVE = re.compile(rf"^[ \t]*def[ \t]+{ENTRY}\b", re.MULTILINE)
_KEPT_STATEMENTS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                    ast.Assign, ast.AnnAssign)


@dataclass(frozen=True)
class Proposal:
    """A parsed proposal, not yet validated.

    Attributes:
        problem: the task in words (the docstring of ``solve`` or its leading comment).
        signature: ``def solve(x1, x2):``, the Task's ``function_name``.
        solution: the ZWC solution as canonical source: the block's imports, definitions and
            assignments, without ``INPUTS``, top-level statements that do something (a
            ``print``, an ``if __name__`` block) or the docstring of ``solve``.
        inputs: keyword-argument text per test (``x1=[1.5, -2.0], x2=[0.5, 3.0]``), distinct,
            at most ``max_inputs``.
        functions: the zwc paths the proposer was asked to use.
        text: the model's whole answer.
        prompt: the chat prompt it answered (set by the proposer; the training target of the
            proposer role in SFT self-play is this prompt -> ``text``).
    """

    problem: str
    signature: str
    solution: str
    inputs: tuple[str, ...]
    functions: tuple[str, ...] = ()
    text: str = ""
    prompt: tuple[dict[str, str], ...] = field(default=(), compare=False, hash=False)

    @property
    def entry_point(self) -> str:
        return ENTRY


def parse_proposal(text: str, *, functions: tuple[str, ...] | list[str] = (), min_inputs: int = MIN_TESTS,
                   max_inputs: int = MAX_TESTS) -> Proposal | Rejected:
    """The proposal in a model's answer, or the first thing that keeps it from being one.

    Args:
        text: the model's answer.
        functions: the zwc paths the proposer was asked to use (kept on the result).
        min_inputs: usable inputs needed (SE-Bench's single-function tasks have at least 8).
        max_inputs: usable inputs kept (the first ones); SE-Bench's tasks have 8 to 10.
    """
    functions = tuple(functions)

    def reject(reason: Reason, detail: str) -> Rejected:
        return Rejected(reason, detail, text=text, functions=functions)

    block = _code_block(text)
    if block is None:
        return reject(Reason.NO_CODE_BLOCK, "no ```python block")
    try:
        tree = ast.parse(block)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None)
        where = f"line {line}: " if line else ""
        return reject(Reason.SYNTAX_ERROR, f"the ```python block does not parse ({where}{getattr(exc, 'msg', exc)})")
    entry = _entry(tree)
    if isinstance(entry, str):
        return reject(Reason.NO_ENTRY, entry)
    problem = _problem(tree, entry, block)
    if len(problem.split()) < MIN_PROBLEM_WORDS:
        what = f"the docstring of {ENTRY} is too short to state a task ({problem!r})" if problem else \
            f"no problem text: give {ENTRY} a docstring that states the task in plain words"
        return reject(Reason.NO_PROBLEM, what)
    inputs = _inputs(tree, entry, min_inputs, max_inputs)
    if isinstance(inputs, Rejected):
        return Rejected(inputs.reason, inputs.detail, text=text, functions=functions)
    return Proposal(problem=problem, signature=f"def {ENTRY}({ast.unparse(entry.args)}):",
                    solution=_solution(tree), inputs=tuple(inputs), functions=functions, text=text)


def _code_block(text: str) -> str | None:
    """The first fenced Python block that defines ``solve``, else the first Python block; an
    unclosed fence (an answer cut by max_tokens) runs to the end of the text."""
    blocks = [m.group("code") for m in _FENCE.finditer(text) if m.group("lang").lower() in _PYTHON_TAGS]
    blocks = [b for b in blocks if b.strip()]
    if not blocks:
        return None
    return next((b for b in blocks if _DEF_SOLVE.search(b)), blocks[0])


def _entry(tree: ast.Module) -> ast.FunctionDef | str:
    """The one top-level ``def solve`` with named parameters, or what is wrong with it."""
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == ENTRY]
    if not defs:
        nested = any(isinstance(n, ast.FunctionDef) and n.name == ENTRY for n in ast.walk(tree))
        where = " (it is nested inside something; move it to the top level)" if nested else ""
        return f"no function named {ENTRY}: define `def {ENTRY}(...)` at the top level of the block{where}"
    if len(defs) > 1:
        return f"{ENTRY} is defined {len(defs)} times; define it once"
    [entry] = defs
    if isinstance(entry, ast.AsyncFunctionDef):
        return f"{ENTRY} is async; make it a plain def"
    args = entry.args
    if args.posonlyargs or args.vararg or args.kwarg:
        return f"{ENTRY} must take named parameters only (no /, *args or **kwargs): its tests call it by name"
    if not args.args and not args.kwonlyargs:
        return f"{ENTRY} takes no parameters: a task needs inputs"
    return entry


def _parameters(entry: ast.FunctionDef) -> tuple[list[str], set[str]]:
    """All parameter names in order, and the required ones."""
    args = entry.args
    positional = [a.arg for a in args.args]
    required = set(positional[:len(positional) - len(args.defaults)])
    required |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None}
    return positional + [a.arg for a in args.kwonlyargs], required


def _problem(tree: ast.Module, entry: ast.FunctionDef, block: str) -> str:
    """The docstring of solve; else the module docstring; else the comment lines right above
    ``def solve``, at the start of its body, or at the top of the block."""
    for doc in (ast.get_docstring(entry), ast.get_docstring(tree)):
        if doc and doc.strip():
            return doc.strip()
    lines = block.splitlines()
    above = lines[:entry.lineno - 1 - len(entry.decorator_list)]
    inside = lines[entry.body[0].lineno - 1 - _comment_run(lines[:entry.body[0].lineno - 1][::-1]):
                   entry.body[0].lineno - 1]
    for chunk in (above[len(above) - _comment_run(above[::-1]):], inside, lines[:_comment_run(lines)]):
        text = " ".join(line.strip().lstrip("#").strip() for line in chunk).strip()
        if text:
            return text
    return ""


def _comment_run(lines: list[str]) -> int:
    """How many of ``lines`` in a row, from the first, are comments (blank lines end the run)."""
    count = 0
    for line in lines:
        if not line.strip().startswith("#"):
            break
        count += 1
    return count


def _inputs(tree: ast.Module, entry: ast.FunctionDef, min_inputs: int, max_inputs: int) -> list[str] | Rejected:
    """Keyword-argument text per usable input, or why there are not enough."""
    value = None
    for node in tree.body:  # the last top-level assignment wins, as it would at run time
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == INPUTS_NAME for t in targets):
            value = node.value
    if value is None:
        return Rejected(Reason.NO_INPUTS, f"no {INPUTS_NAME} list: end the block with "
                        f"{INPUTS_NAME} = [dict(...), ...] at the top level, one dict of arguments per test")
    if not isinstance(value, (ast.List, ast.Tuple)):
        return Rejected(Reason.NO_INPUTS, f"{INPUTS_NAME} is not a list literal (it is {_describe(value)}); "
                        "write each input out: [dict(x=[1, 2]), dict(x=[3]), ...]")
    names, required = _parameters(entry)
    usable: list[str] = []
    problems: list[str] = []
    for i, element in enumerate(value.elts):
        try:
            found = _one_input(element, names, required)
        except _Unusable as exc:
            problems.append(f"input {i} {exc}")
            continue
        if len(found) > MAX_INPUT_CHARS:
            problems.append(f"input {i} is too long ({len(found)} characters, at most {MAX_INPUT_CHARS})")
        elif found in usable:
            problems.append(f"input {i} repeats an earlier input")
        elif len(usable) < max_inputs:
            usable.append(found)
    if len(usable) < min_inputs:
        why = f" ({'; '.join(problems[:3])})" if problems else ""
        return Rejected(Reason.TOO_FEW_INPUTS, f"only {len(usable)} usable inputs, need >= {min_inputs}{why}")
    return usable


class _Unusable(ValueError):
    """One INPUTS element that cannot be a test input; the message says why."""


def _one_input(node: ast.expr, names: list[str], required: set[str]) -> str:
    """``x1=[1], x2=2`` for one INPUTS element (raises _Unusable)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        if node.args or any(k.arg is None for k in node.keywords):
            raise _Unusable("must be dict(name=value, ...) with named values only")
        pairs = [(k.arg, k.value) for k in node.keywords]
    elif isinstance(node, ast.Dict):
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            raise _Unusable("must have parameter names (strings) as keys")
        pairs = [(k.value, v) for k, v in zip(node.keys, node.values, strict=True)]
    elif len(required) == 1:
        pairs = [(next(n for n in names if n in required), node)]
    else:
        raise _Unusable(f"is not dict(...) of {ENTRY}'s parameters ({', '.join(names)})")
    values = {}
    for name, value in pairs:
        if name not in names:
            raise _Unusable(f"names {name!r}, which is not a parameter of {ENTRY} ({', '.join(names)})")
        try:
            values[name] = ast.literal_eval(_SpecialFloats().visit(copy.deepcopy(value)))
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise _Unusable(f"gives {name} a value that is not a literal ({ast.unparse(value)[:60]})") from None
    missing = [n for n in names if n in required and n not in values]
    if missing:
        raise _Unusable(f"misses {', '.join(missing)}")
    return ", ".join(f"{name}={values[name]!r}" for name in names if name in values)


class _SpecialFloats(ast.NodeTransformer):
    """``nan``, ``inf`` and ``float('nan')``/``float('-inf')`` as constants, the only non-literals
    an input may hold (the sandbox's input namespace defines ``nan`` and ``inf``, which is how
    ``repr`` writes them back)."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(float(node.id)) if node.id in ("nan", "inf") else node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if (isinstance(node.func, ast.Name) and node.func.id == "float" and isinstance(arg, ast.Constant)
                and isinstance(arg.value, str) and arg.value.strip().lower().lstrip("+-") in _SPECIAL):
            return ast.Constant(float(arg.value))
        return self.generic_visit(node)


def _describe(node: ast.expr) -> str:
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return "a comprehension"
    if isinstance(node, ast.Call):
        return f"a call to {ast.unparse(node.func)}"
    if isinstance(node, ast.Name):
        return f"the name {node.id}"
    return f"a {type(node).__name__} expression"


def _solution(tree: ast.Module) -> str:
    """The solution module: definitions and assignments, not INPUTS, not top-level actions,
    without the docstring of solve (the problem text travels as the Task's query)."""
    body = []
    for node in tree.body:
        if not isinstance(node, _KEPT_STATEMENTS):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == INPUTS_NAME for t in targets):
            continue
        if isinstance(node, ast.FunctionDef) and node.name == ENTRY and ast.get_docstring(node) is not None:
            node = copy.deepcopy(node)
            node.body = node.body[1:] or [ast.Pass()]
        body.append(node)
    return ast.unparse(ast.Module(body=body, type_ignores=[])) + "\n"


# -- writing a Task in the format -------------------------------------------------------------
def render_task(task: Task, max_inputs: int | None = None) -> str:
    """A verified Task as a proposal block: its ZWC ``reference`` with the query as the
    docstring of the entry function, and its test inputs as ``INPUTS`` (the first
    ``max_inputs`` of them when given: a worked example as long as the answer asked for).

    Raises:
        ValueError: the task has no ZWC reference, or an input is not keyword-argument literals.
    """
    if not task.reference:
        raise ValueError(f"task {task.task_id} has no ZWC reference solution to show")
    tree = ast.parse(task.reference)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == task.entry_point:
            if ast.get_docstring(node) is not None:
                node.body = node.body[1:]
            lines = [line.rstrip() for line in task.query.strip().splitlines()]
            docstring = "\n    ".join(lines) + ("\n    " if len(lines) > 1 else "")
            node.body.insert(0, ast.Expr(ast.Constant(docstring)))
            break
    else:
        raise ValueError(f"task {task.task_id}: its reference does not define {task.entry_point}")
    rows = []
    for i, text in enumerate(task.inputs()[:max_inputs]):
        try:
            call = ast.parse(f"f({text})", mode="eval").body
        except SyntaxError as exc:
            raise ValueError(f"task {task.task_id}: test input {i} is not keyword arguments: {exc.msg}") from None
        if not isinstance(call, ast.Call) or call.args or any(k.arg is None for k in call.keywords):
            raise ValueError(f"task {task.task_id}: test input {i} is not keyword arguments: {text[:80]}")
        rows.append("    dict(" + ", ".join(f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords) + "),\n")
    code = ast.unparse(ast.fix_missing_locations(tree))
    return f"```python\n{code}\n\n\n{INPUTS_NAME} = [\n{''.join(rows)}]\n```"
