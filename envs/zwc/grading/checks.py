"""Static checks of candidate code, run before anything executes.

A candidate passes only if it imports zwc, defines the entry function and calls zwc
somewhere (a fast first filter: whether a catalogued zwc function really runs in every
test is verified at run time, by the sandbox); never imports or names NumPy; and uses no
way around the wrapper: no ``_``-prefixed attribute, no ``__`` name (``__name__`` aside),
no reflection builtin (``hasattr`` only as ``hasattr(obj, "public_name")``), no import
outside ``ALLOWED_IMPORTS``, no string that spells a dunder, no known reflection gadget
(frame, traceback and code attributes, ``attrgetter`` ...), no ``str.format`` on a
computed template, no attribute written on an imported module or what it holds. Every
rejection carries a reason code and a line.

These checks are the first wall; the sandbox's restricted builtins, guarded imports, audit
hook, immutable classes and run-time usage count are the second; process limits and the
kernel's filters the third.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import StrEnum

from envs.zwc.grading.failure import Failure

ALLOWED_IMPORTS = frozenset({
    "zwc", "math", "cmath", "itertools", "functools", "collections", "collections.abc",
    "typing", "statistics", "fractions", "decimal", "heapq", "bisect", "copy", "random",
    "re", "numbers", "operator", "json",
})
FORBIDDEN_MODULES = frozenset({  # named in messages: the modules people reach for
    "sys", "os", "importlib", "inspect", "gc", "ctypes", "pickle", "marshal", "subprocess",
    "builtins", "types", "code", "codeop", "socket", "shutil", "pathlib", "io", "signal",
    "threading", "multiprocessing", "traceback", "string", "dataclasses", "weakref",
})
FORBIDDEN_BUILTINS = frozenset({  # hasattr is allowed with a literal public name (see _Visitor.visit_Call)
    "getattr", "setattr", "delattr", "vars", "globals", "locals", "eval", "exec",
    "compile", "open", "breakpoint", "input", "help", "memoryview", "exit", "quit",
    "__import__", "__build_class__", "__loader__", "__spec__", "__builtins__",
})
# attribute names that lead to frames, code, modules or string-driven attribute access
GADGET_ATTRIBUTES = frozenset({
    "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "gi_frame", "gi_code",
    "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code", "tb_frame",
    "tb_next", "co_consts", "co_code", "co_names", "attrgetter", "methodcaller",
    "get_type_hints", "ForwardRef", "get_field", "modules", "import_module", "format_map",
})
NUMPY_MODE_IMPORTS = frozenset({"numpy", "numpy.linalg"})  # the NumPy control's extra imports
ALLOWED_DUNDERS = frozenset({"__name__", "__main__"})


class Reason(StrEnum):
    """Why a candidate was rejected before running."""

    EMPTY = "empty"
    SYNTAX = "syntax"
    NO_ENTRY = "no_entry"
    NUMPY_IMPORT = "numpy_import"
    NUMPY_NAME = "numpy_name"
    FORBIDDEN_IMPORT = "forbidden_import"
    PRIVATE_IMPORT = "private_import"
    PRIVATE_ATTRIBUTE = "private_attribute"
    DUNDER_NAME = "dunder_name"
    DUNDER_STRING = "dunder_string"
    FORBIDDEN_BUILTIN = "forbidden_builtin"
    REFLECTION = "reflection"
    COMPUTED_FORMAT = "computed_format"
    UNKNOWN_ZWC_NAME = "unknown_zwc_name"
    NO_ZWC_IMPORT = "no_zwc_import"
    NO_ZWC_CALL = "no_zwc_call"
    MODULE_WRITE = "module_write"


_FAILURE_OF = {
    Reason.EMPTY: Failure.NO_CODE, Reason.NO_ENTRY: Failure.NO_CODE,
    Reason.SYNTAX: Failure.SYNTAX_ERROR,
    Reason.NUMPY_IMPORT: Failure.NUMPY_USED, Reason.NUMPY_NAME: Failure.NUMPY_USED,
    Reason.UNKNOWN_ZWC_NAME: Failure.UNKNOWN_API,
    Reason.NO_ZWC_IMPORT: Failure.NO_ZWC_CALL, Reason.NO_ZWC_CALL: Failure.NO_ZWC_CALL,
}


@dataclass(frozen=True)
class Rejection:
    reason: Reason
    detail: str
    line: int = 0

    @property
    def failure(self) -> Failure:
        return _FAILURE_OF.get(self.reason, Failure.BYPASS_ATTEMPT)

    def __str__(self) -> str:
        return f"line {self.line}: {self.detail}" if self.line else self.detail


def check_code(code: str, entry_point: str, zwc_names: set[str] | frozenset[str],
               numpy_mode: bool = False) -> Rejection | None:
    """The first rejection of ``code`` (by failure precedence), or None if it passes.

    Args:
        code: the candidate source.
        entry_point: the function the task calls (``solve``).
        zwc_names: every public path of the package (``zwc.kocito``, ``zwc.rfx.quvohe``).
        numpy_mode: the NumPy control: NumPy may be imported, zwc is not required; the
            wall against reflection and escapes stands.
    """
    if not code or not code.strip():
        return Rejection(Reason.EMPTY, "no code")
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", 0) or 0
        return Rejection(Reason.SYNTAX, f"syntax error: {getattr(exc, 'msg', exc)}", line)
    visitor = _Visitor(zwc_names, _bound_names(tree), numpy_mode, _imported_names(tree))
    try:
        visitor.visit(tree)
    except RecursionError:
        return Rejection(Reason.SYNTAX, "code nested too deeply to check")
    found = sorted(visitor.rejections, key=lambda r: list(Failure).index(r.failure))
    if found:
        return found[0]
    if numpy_mode:
        defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return None if entry_point in defs else Rejection(
            Reason.NO_ENTRY, f"does not define the function {entry_point!r}")
    return _check_usage(tree, entry_point, visitor)


class _Visitor(ast.NodeVisitor):
    """Collects security rejections and where zwc is bound."""

    def __init__(self, zwc_names: set[str] | frozenset[str], bound: set[str], numpy_mode: bool = False,
                 imported: set[str] | None = None):
        self.numpy_mode = numpy_mode
        self.imported = imported or set()  # names bound by import statements
        self.hasattr_calls: set[int] = set()  # ids of `hasattr` names called the allowed way
        self.zwc_names = zwc_names
        self.bound = bound  # names the candidate binds itself: "np" may be its own variable
        self.rejections: list[Rejection] = []
        self.aliases: dict[str, str] = {}  # local name -> zwc path it is bound to
        self.docstrings: set[int] = set()

    def reject(self, reason: Reason, detail: str, node: ast.AST) -> None:
        self.rejections.append(Rejection(reason, detail, getattr(node, "lineno", 0)))

    # -- imports ----------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(alias.name, node)
            self._check_identifier(alias.asname, node)
            if alias.name == "zwc" or alias.name.startswith("zwc."):
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    self.aliases["zwc"] = "zwc"
                self._check_zwc_path(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.reject(Reason.FORBIDDEN_IMPORT, "relative imports are not allowed", node)
            return
        self._check_module(module, node)
        for alias in node.names:
            if alias.name == "*":
                self.reject(Reason.FORBIDDEN_IMPORT, f"'from {module} import *' is not allowed", node)
                continue
            if alias.name.startswith("_"):
                self.reject(Reason.PRIVATE_IMPORT, f"imports private name {alias.name!r}", node)
            self._check_identifier(alias.asname, node)
            if module == "zwc" or module.startswith("zwc."):
                path = f"{module}.{alias.name}"
                self._check_zwc_path(path, node)
                self.aliases[alias.asname or alias.name] = path

    def _check_module(self, name: str, node: ast.AST) -> None:
        root = name.split(".")[0]
        if root == "numpy" and self.numpy_mode and name in NUMPY_MODE_IMPORTS:
            return
        if root == "numpy":
            self.reject(Reason.NUMPY_IMPORT, f"imports {name}: NumPy is not available, use zwc", node)
        elif any(part.startswith("_") for part in name.split(".")):
            self.reject(Reason.PRIVATE_IMPORT, f"imports private module {name!r}", node)
        elif root == "zwc":
            return
        elif name not in ALLOWED_IMPORTS:
            why = "is forbidden" if root in FORBIDDEN_MODULES else "is not in the allowed modules"
            self.reject(Reason.FORBIDDEN_IMPORT,
                        f"import of {name!r} {why} (allowed: {', '.join(sorted(ALLOWED_IMPORTS))})", node)

    def _check_zwc_path(self, path: str, node: ast.AST) -> None:
        if path != "zwc" and path not in self.zwc_names and not path.split(".")[-1].startswith("_"):
            self.reject(Reason.UNKNOWN_ZWC_NAME, f"{path} does not exist", node)

    # -- names and attributes ---------------------------------------------------------
    def _check_identifier(self, name: str | None, node: ast.AST) -> None:
        if not name:
            return
        if name.startswith("__") and name not in ALLOWED_DUNDERS:
            self.reject(Reason.DUNDER_NAME, f"uses the name {name!r}", node)
        elif name in FORBIDDEN_BUILTINS:
            self.reject(Reason.FORBIDDEN_BUILTIN, f"uses {name!r}", node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "hasattr":
            name = node.args[1] if len(node.args) == 2 and not node.keywords else None
            if isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier() \
                    and not name.value.startswith("_") and name.value not in GADGET_ATTRIBUTES:
                self.hasattr_calls.add(id(func))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "hasattr":
            if id(node) not in self.hasattr_calls:
                self.reject(Reason.FORBIDDEN_BUILTIN, "hasattr takes an object and a public attribute name "
                            "written as a string literal: hasattr(x, \"shape\")", node)
            return
        self._check_identifier(node.id, node)
        if node.id in ("numpy", "np") and node.id not in self.bound and not self.numpy_mode:
            self.reject(Reason.NUMPY_NAME, f"uses {node.id!r}: NumPy is not available, use zwc", node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            kind = Reason.DUNDER_NAME if node.attr.startswith("__") else Reason.PRIVATE_ATTRIBUTE
            self.reject(kind, f"accesses the attribute {node.attr!r}", node)
        elif node.attr in GADGET_ATTRIBUTES:
            self.reject(Reason.REFLECTION, f"accesses the reflection attribute {node.attr!r}", node)
        elif node.attr == "format" and not isinstance(node.value, ast.Constant):
            self.reject(Reason.COMPUTED_FORMAT, "str.format on a computed template", node)
        path = _dotted(node)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and path.split(".")[0] in self.imported:
            self.reject(Reason.MODULE_WRITE, f"writes the attribute {path!r} of an imported module; "
                        "modules and what they hold are read-only", node)
        if path:
            root, _, rest = path.partition(".")
            if root in self.aliases and rest:
                self._check_zwc_path(f"{self.aliases[root]}.{rest}", node)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and id(node) not in self.docstrings:
            text = node.value
            if "__" in text and text not in ALLOWED_DUNDERS:
                self.reject(Reason.DUNDER_STRING, "a string spells a dunder name", node)
            elif (text == "numpy" or text.startswith("numpy.")) and not self.numpy_mode:
                self.reject(Reason.NUMPY_NAME, "a string names numpy", node)
            elif "{" in text and any(m in text for m in (".__", "._", "[_")):
                self.reject(Reason.DUNDER_STRING, "a format template reaches a private field", node)

    # -- definitions ------------------------------------------------------------------
    def _visit_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self._check_identifier(node.name, node)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self.docstrings.add(id(body[0].value))
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_def

    def visit_Module(self, node: ast.Module) -> None:
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self.docstrings.add(id(body[0].value))
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self._check_identifier(node.arg, node)
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        self._check_identifier(node.arg, node)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for name in node.names:
            self._check_identifier(name, node)

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._check_identifier(node.name, node)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.AST) -> None:
        self._check_identifier(getattr(node, "name", None), node)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.AST) -> None:
        self._check_identifier(getattr(node, "name", None), node)

    def visit_MatchMapping(self, node: ast.AST) -> None:
        self._check_identifier(getattr(node, "rest", None), node)
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for name in node.kwd_attrs:
            if name.startswith("_"):
                self.reject(Reason.PRIVATE_ATTRIBUTE, f"matches the attribute {name!r}", node)
        self.generic_visit(node)


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the code binds (assignments, imports, parameters, definitions)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
    return bound


def _imported_names(tree: ast.AST) -> set[str]:
    """Names that import statements bind."""
    return {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` for a pure attribute chain on a name, else ''."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))


# -- the SE-Bench usage rule, as a first filter --------------------------------------------
def _check_usage(tree: ast.Module, entry_point: str, visitor: _Visitor) -> Rejection | None:
    """Imports zwc, defines the entry, calls zwc somewhere. What the entry returns is not
    judged here: the sandbox verifies at run time that a catalogued zwc function ran in
    each test (an honest filter by a zwc predicate returns plain values)."""
    if not visitor.aliases:
        return Rejection(Reason.NO_ZWC_IMPORT, "does not import zwc")
    defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if entry_point not in defs:
        return Rejection(Reason.NO_ENTRY, f"does not define the function {entry_point!r}")
    if not any(isinstance(node, ast.Call) and _dotted(node.func).split(".")[0] in visitor.aliases
               for node in ast.walk(tree)):
        return Rejection(Reason.NO_ZWC_CALL, "never calls a zwc function")
    return None
