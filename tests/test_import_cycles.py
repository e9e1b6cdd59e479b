"""No import cycle inside a package of ours: its modules form a tree of rooms, each importing only
what sits below it, so any one can be read, tested and moved without the rest.

The graph is read from the source with ``ast``, not from ``sys.modules``: an import inside a
function counts as much as one at the top of a module (a lazy import only hides a cycle until the
function runs), and so does one under ``TYPE_CHECKING``. ``from package import name`` is an edge
to ``package.name`` where that is a module, else to ``package``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sebench", "envs", "agents", "learners", "memory", "selfplay", "benchmarks")
# the packages whose modules import each other in no cycle; the others still have some (cycles() says which)
ACYCLIC = ("sebench", "envs", "learners", "memory", "selfplay")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of our packages, by dotted name."""
    return {module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ours that ``name`` (at ``path``) imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import a.b.c` of a non-module attribute: its module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}


def cycles(package: str, edges: dict[str, set[str]] | None = None) -> list[list[str]]:
    """The strongly connected components of more than one module among ``package``'s modules
    (Tarjan's algorithm): each is a set of modules that import each other, directly or not."""
    edges = graph() if edges is None else edges
    inside = {n for n in edges if n == package or n.startswith(package + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node] & inside):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(inside):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    source = tmp_path / "source.py"
    source.write_text("import os\nfrom . import b\n\ndef later():\n    from pkg.c import thing\n")
    known = {"pkg", "pkg.a", "pkg.b", "pkg.c"}
    assert imports("pkg.a", source, known) == {"pkg.b", "pkg.c"}
    assert cycles("pkg", {"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"}, "pkg.c": {"pkg.a"}, "pkg": set()}) == \
        [["pkg.a", "pkg.b", "pkg.c"]]


@pytest.mark.parametrize("package", ACYCLIC)
def test_no_import_cycle_inside_the_package(package):
    assert cycles(package) == [], f"modules of {package} that import each other (directly or not)"
