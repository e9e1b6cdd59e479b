"""README.md is a short landing page, and the commands it and the docs pages show are real.

Nothing here runs a command: each `sebench …` line is parsed against the real typer app
(`typer.main.get_command(benchmarks.cli.app)`), the way the shell would hand it over, so a renamed
command, a removed option or a value of the wrong type fails here before a reader finds it.

Checked:
- README.md has at most 150 lines, opens with `# sebench` and then one bash block holding exactly
  `make demo` and `make test` (comments allowed);
- no tracked file names the `shared` folder beside the clone (a user's clone has none);
- every python block of README.md compiles;
- every `sebench` line of a bash block (README.md and docs/**/*.md) and every `sebench …` command
  in backticks in README.md's tables parses: the sub-command chain resolves (group -> command by
  `get_command`) and `make_context(..., resilient_parsing=False)` accepts the rest. Lines with a
  `...` or `…` placeholder are skipped: they stand for "the command above, plus", not a command;
- every `make X` in README.md's or a docs page's code is a Makefile target;
- every relative link of README.md and docs/ names a file that exists, and an anchor a heading.
"""

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import typer

import benchmarks.cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
PLACEHOLDERS = ("...", "…")
SEPARATORS = {"&&", "||", ";", "|"}


def _blocks(text: str, lang: str | None = None) -> list[str]:
    return [body for kind, body in FENCE.findall(text) if lang is None or kind == lang]


def _strip_comment(line: str) -> str:
    """The line without its `# comment`, as bash reads it: `#` starts one only at the start of a
    word and outside quotes (shlex's `comments=True` also cuts `openai:…/v1#model`)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _shell_commands(block: str) -> list[list[str]]:
    """The commands of a bash block: continuation lines joined, `# comments` dropped, split at
    `&&`, `||`, `;` and `|`."""
    commands = []
    for line in re.sub(r"\\\n\s*", " ", block).splitlines():
        command: list[str] = []
        for token in shlex.split(_strip_comment(line)):
            if token in SEPARATORS:
                commands.append(command)
                command = []
            else:
                command.append(token)
        commands.append(command)
    return [c for c in commands if c]


def check_sebench(args: list[str]) -> None:
    """Parse `sebench …` (a token list) against the real app without running it; AssertionError
    says what is wrong."""
    assert args and args[0] == "sebench", args
    command, name, rest = typer.main.get_command(benchmarks.cli.app), "sebench", list(args[1:])
    ctx = command.context_class(command, info_name=name)
    while hasattr(command, "get_command"):  # a group: resolve the next name
        assert rest, f"`{shlex.join(args)}` names a group, not a command"
        sub = command.get_command(ctx, rest[0])
        assert sub is not None, f"`{shlex.join(args)}`: `{name}` has no command {rest[0]!r}"
        command, name, rest = sub, rest[0], rest[1:]
        if hasattr(command, "get_command"):
            ctx = command.context_class(command, info_name=name, parent=ctx)
    try:
        command.make_context(name, rest, parent=ctx, resilient_parsing=False)
    except Exception as exc:  # typer's click errors (NoSuchOption, BadParameter, MissingParameter, …)
        raise AssertionError(f"`{shlex.join(args)}` does not parse: {type(exc).__name__}: {exc}") from exc


def _sebench_lines(path: Path) -> list[list[str]]:
    """The sebench commands of a page's bash blocks, and for README.md also its tables' ones."""
    text = path.read_text()
    commands = [c for block in _blocks(text, "bash") for c in _shell_commands(block)]
    if path == README:
        for row in (line for line in text.splitlines() if line.startswith("|")):
            commands += [shlex.split(span) for span in re.findall(r"`([^`]+)`", row) if span.startswith("sebench ")]
    return [c for c in commands if c[0] == "sebench" and not any(p in t for t in c for p in PLACEHOLDERS)]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_the_readme_is_a_short_landing_page():
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move reference text into docs/"
    assert lines[0] == "# sebench"
    assert next(line for line in lines[1:] if line.strip()) == "```bash", "the two commands come right after the title"


def test_the_first_block_is_exactly_make_demo_and_make_test():
    first = FENCE.search(README.read_text())
    assert first is not None and first.group(1) == "bash"
    assert _shell_commands(first.group(2)) == [["make", "demo"], ["make", "test"]]


BESIDE_THE_CLONE = "/".join(("..", "shared"))  # spelled in parts, so this file does not name it either


def test_nothing_refers_to_a_shared_folder_beside_the_clone():
    """Every tracked text file (code, docs, Makefile, settings), this one included."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
    if listed.returncode == 0:
        names = listed.stdout.splitlines()
    else:  # not a git checkout (an unpacked archive): every file outside hidden folders and the venv
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)]
    hits = []
    for name in names:
        path = ROOT / name
        if not path.is_file() or path.suffix not in {".py", ".md", ".toml", ".cfg", ".txt", ".json", ".yml", ""}:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        hits += [f"{name}:{n}: {line}" for n, line in enumerate(text.splitlines(), 1) if BESIDE_THE_CLONE in line]
    assert not hits, "a user's clone has no such folder; official files are inputs passed by path:\n" + "\n".join(hits)


def test_every_python_block_of_the_readme_compiles():
    blocks = _blocks(README.read_text(), "python")
    assert blocks, "README.md has its quickstart"
    for src in blocks:
        compile(src, "README.md", "exec")


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_sebench_command_shown_parses(path):
    errors = []
    for args in _sebench_lines(path):
        try:
            check_sebench(args)
        except AssertionError as exc:
            errors.append(str(exc))
    assert not errors, "\n".join(errors)


def test_the_readme_shows_sebench_commands():
    assert len(_sebench_lines(README)) >= 10, "the commands table is made of parseable `sebench …` commands"


@pytest.mark.parametrize("line", [
    "sebench zwc build --seed 7 --out runs/x --bogus",   # no such option
    "sebench zwc biuld --out runs/x",                    # no such command
    "sebench eval --zwc runs/x --n many",                # not an int
    "sebench evolve --zwc runs/x --out RUN",             # --learner is required
    "sebench zwc",                                       # a group alone
])
def test_the_parse_check_can_fail(line):
    with pytest.raises(AssertionError):
        check_sebench(shlex.split(line))


def test_every_make_target_named_exists():
    targets = set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", (ROOT / "Makefile").read_text(), flags=re.M))
    assert {"demo", "test", "setup", "bench"} <= targets
    named = set()
    for path in (README, *PAGES):
        text = path.read_text()
        named |= {m for span in re.findall(r"`([^`\n]+)`", FENCE.sub("", text)) for m in re.findall(r"^make ([\w-]+)", span)}
        named |= {c[1] for block in _blocks(text, "bash") for c in _shell_commands(block) if c[0] == "make" and len(c) > 1}
    assert named, "README.md names its make targets"
    assert named <= targets, f"not Makefile targets: {sorted(named - targets)}"


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    broken = []
    for target in re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", FENCE.sub("", path.read_text())):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, "\n".join(broken)
