"""The layering of docs/architecture.md, checked on the source: which of our packages imports which.

The graph is built with ``ast`` from every ``import`` / ``from ... import`` of our packages, at
module level and inside functions alike (a function-level import is still a dependency, only a
later one). Imports under ``if TYPE_CHECKING:`` count too: a type a module names is a module a
reader must follow, and a cycle there is the same tangle, only hidden from the interpreter; the
way out is a Protocol (``agents.learner.AgentLike``) or a shared shape in a module both import.

Asserted: no cycle among the modules of any package of ours (and none among the ``benchmarks``
report modules, named apart because their writers were the last tangle); ``sebench`` imports
nothing of ours outside itself (the ground floor); ``memory`` and ``envs`` import nothing of ours
but ``sebench``; ``learners`` never imports ``selfplay``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("sebench", "envs", "agents", "learners", "memory", "selfplay", "benchmarks")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:  # relative: resolved against this module's package
            base = module.split(".")
            base = base[:len(base) - node.level + (1 if is_package else 0)]
            stem = ".".join(base + ([node.module] if node.module else []))
        else:
            stem = node.module or ""
        return [stem] + [f"{stem}.{alias.name}" for alias in node.names]
    return []


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of ours it imports (a ``from pkg import name`` names ``pkg.name``
    where that is a module of ours, else ``pkg``)."""
    files = {_module_name(p): p for package in OURS for p in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for name in _imported(node, module, is_package):
                while name and name not in files:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    found.add(name)
        graph[module] = found
    return graph


def cycles(graph: dict[str, set[str]], members: set[str]) -> list[list[str]]:
    """Every strongly connected group of more than one module among ``members`` (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, set()) & members):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(members):
        if node not in index:
            visit(node)
    return found


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


GRAPH = import_graph()


def _members(prefix: str) -> set[str]:
    return {m for m in GRAPH if _in(m, prefix)}


REPORT = {m for m in GRAPH if m == "benchmarks.report" or m.startswith("benchmarks.report_")}


@pytest.mark.parametrize("package", ["sebench", "envs", "agents", "learners", "memory", "selfplay", "benchmarks",
                                     "benchmarks-report"])
def test_no_import_cycle_within(package):
    members = REPORT if package == "benchmarks-report" else _members(package)
    assert members, f"no modules found for {package}"
    assert cycles(GRAPH, members) == []


@pytest.mark.parametrize(("package", "allowed"), [("sebench", ()), ("memory", ("sebench",)), ("envs", ("sebench",)),
                                                  ("learners", ("sebench", "envs", "agents", "memory"))])
def test_a_lower_floor_imports_nothing_of_ours_above_it(package, allowed):
    outside = {(module, target) for module in _members(package) for target in GRAPH[module]
               if not _in(target, package) and not any(_in(target, a) for a in allowed)}
    assert sorted(outside) == []


def test_the_graph_sees_imports_in_functions_and_type_checking_blocks():
    assert "agents.models.registry" in GRAPH["agents.agent"]
    assert "sebench.registry" in GRAPH["learners.registry"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, {"a", "b", "c", "d"}) == [["a", "b", "c"]]
