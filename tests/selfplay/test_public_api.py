"""Self-play uses the environment through its public API only (``envs.zwc``), never a room."""

import ast
from pathlib import Path

SELFPLAY = Path(__file__).resolve().parents[2] / "selfplay"


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    modules = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.append((node.lineno, node.module))
    return modules


def test_selfplay_imports_nothing_below_the_envs_public_api():
    files = sorted(SELFPLAY.glob("*.py"))
    assert files
    below = [f"{path.name}:{line}: {module}" for path in files for line, module in _imported_modules(path)
             if module.startswith("envs.zwc.")]
    assert below == [], "selfplay must import only `envs.zwc` (its public API):\n" + "\n".join(below)


def test_selfplay_imports_no_room_as_a_name_of_envs_zwc():
    """``from envs.zwc import sandbox`` would reach a room the same way."""
    rooms = {"sandbox", "library", "grading", "tasks", "env", "task", "errors", "run_result"}
    found = []
    for path in sorted(SELFPLAY.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module == "envs.zwc":
                found += [f"{path.name}:{node.lineno}: {a.name}" for a in node.names if a.name in rooms]
    assert found == []
