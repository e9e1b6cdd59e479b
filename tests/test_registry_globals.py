"""No registry lives on a module global, and no test reaches into a registry's private parts.

A module-level registry is state every importer shares: a test that adds an entry to it leaks into
the next test, and one that must not see an entry has to patch it out. Registries are built where a
lookup happens (``learners.registry.registry()``, ``memory.registry.registry()``,
``agents.models.registry.default_registry()``; each reads its entry-point group anew and costs
nothing to build); what a process does share, its loaded models, sits in a pool
(``agents.models.pool``), and an instrument that must see every load uses
``agents.models.registry.wrapping_loads``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("sebench", "envs", "agents", "learners", "memory", "selfplay", "benchmarks")


def _called(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def test_no_module_builds_a_registry_at_import():
    found = []
    for package in OURS:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.parse(path.read_text(), str(path)).body:
                value = getattr(node, "value", None) if isinstance(node, ast.Assign | ast.AnnAssign) else None
                name = _called(value) if value is not None else ""
                if name.endswith("Registry") or name.endswith("registry"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}")
    assert not found, "a registry built at import, shared by every importer:\n" + "\n".join(found)


def test_no_test_touches_a_private_attribute_of_a_registry():
    pattern = re.compile(r"[Rr]egistry\w*(\(\))?\._\w+|_Registry|_entry_points\.cache_clear")
    found = [f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
             for path in (ROOT / "tests").rglob("*.py") if path.name != Path(__file__).name
             for i, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, "\n".join(found)
