"""Task buffers: fsynced appends, FIFO cap, dedup, resume after SIGKILL, a torn last line."""

import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from envs.zwc import Task, TestCase
from sebench.jsonl import JsonlCorruptError
from selfplay.buffer import TaskBuffer

ROOT = Path(__file__).resolve().parents[2]


def task(i: int, pad: int = 0) -> Task:
    return Task(task_id=f"sp-{i}", query=f"task {i} " + "x" * pad, function_name="def solve(x):",
                test_cases=[TestCase(input=f"x={i}", output=str(i))], reference="import zwc\n")


def test_entries_persist_with_their_round_and_metadata(tmp_path):
    buffer = TaskBuffer.in_run(tmp_path, "induction", capacity=10)
    assert buffer.path == tmp_path / "buffer-induction.jsonl" and len(buffer) == 0 and buffer.last_round is None
    buffer.extend([task(0), task(1)], round=0, metadata={"proposer": "smollm2-135m"})
    assert buffer.add(task(2), round=1, pass_rate=0.5).seq == 2
    assert buffer.add(task(1), round=1) is None  # already held
    again = TaskBuffer.in_run(tmp_path, "induction", capacity=10)
    assert [(e.task.task_id, e.round, e.seq) for e in again] == [("sp-0", 0, 0), ("sp-1", 0, 1), ("sp-2", 1, 2)]
    assert again.entries[0].metadata == {"proposer": "smollm2-135m"} and again.entries[2].metadata == {"pass_rate": 0.5}
    assert again.tasks()[2] == task(2) and again.last_round == 1 and "sp-2" in again
    assert {t.task_id for t in again.sample(2, random.Random(0))} <= {"sp-0", "sp-1", "sp-2"}


def test_the_cap_drops_the_oldest_and_the_file_is_compacted(tmp_path):
    buffer = TaskBuffer.in_run(tmp_path, "deduction", capacity=3)
    for i in range(6):
        buffer.add(task(i), round=i)
    assert [t.task_id for t in buffer.tasks()] == ["sp-3", "sp-4", "sp-5"]
    assert len(buffer.path.read_text().splitlines()) == 6  # dropped lines stay until twice the capacity
    buffer.add(task(6), round=6)
    assert len(buffer.path.read_text().splitlines()) == 3  # then the file is rewritten with what is held
    assert [t.task_id for t in TaskBuffer.in_run(tmp_path, "deduction", capacity=3).tasks()] == ["sp-4", "sp-5", "sp-6"]
    buffer.add(task(0), round=7)  # dropped long ago: it may come back, as the newest
    assert [t.task_id for t in TaskBuffer.in_run(tmp_path, "deduction", capacity=3).tasks()] == ["sp-5", "sp-6", "sp-0"]


def test_a_torn_last_line_is_ignored_with_a_warning_and_cut(tmp_path):
    buffer = TaskBuffer.in_run(tmp_path, "induction")
    buffer.extend([task(0), task(1)], round=0)
    whole = buffer.path.read_bytes()
    line = whole.splitlines(keepends=True)[1]
    buffer.path.write_bytes(whole + line[: len(line) // 2])  # what a kill inside a write leaves
    with pytest.warns(UserWarning, match="half-written last line"):
        reopened = TaskBuffer.in_run(tmp_path, "induction")
    assert len(reopened) == 2 and buffer.path.read_bytes() == whole
    reopened.add(task(2), round=1)  # starts on a fresh line, not glued to the torn one
    assert [t.task_id for t in TaskBuffer.in_run(tmp_path, "induction").tasks()] == ["sp-0", "sp-1", "sp-2"]


def test_damage_elsewhere_and_a_wrong_type_are_named(tmp_path):
    buffer = TaskBuffer.in_run(tmp_path, "induction")
    buffer.extend([task(0), task(1)], round=0)
    lines = buffer.path.read_text().splitlines(keepends=True)
    buffer.path.write_text(lines[0][:20] + "\n" + lines[1])
    with pytest.raises(JsonlCorruptError, match=r"buffer-induction.jsonl, line 1: not JSON"):
        TaskBuffer.in_run(tmp_path, "induction")
    buffer.path.write_text(lines[0].replace('"round": 0', '"round": -1') + lines[1])
    with pytest.raises(JsonlCorruptError, match="line 1: field round"):
        TaskBuffer.in_run(tmp_path, "induction")
    buffer.path.write_text("".join(lines))
    with pytest.raises(JsonlCorruptError, match="open it with task_type='induction'"):
        TaskBuffer(buffer.path, "abduction")
    with pytest.raises(ValueError, match="lower-case"):
        TaskBuffer.in_run(tmp_path, "../x")


def test_a_resumed_run_can_drop_an_unfinished_round(tmp_path):
    buffer = TaskBuffer.in_run(tmp_path, "induction")
    buffer.extend([task(0)], round=0)
    buffer.extend([task(1), task(2)], round=1)
    assert buffer.discard_rounds_after(0) == 2
    assert [t.task_id for t in TaskBuffer.in_run(tmp_path, "induction").tasks()] == ["sp-0"]


WRITER = """
import sys
from envs.zwc import Task, TestCase
from selfplay.buffer import TaskBuffer
buffer = TaskBuffer.in_run(sys.argv[1], "induction", capacity=100000)
i = len(buffer)
while True:  # until killed: big entries, so that the kill often lands inside a write
    buffer.add(Task(task_id=f"sp-{i}", query="q" * 400000, function_name="def solve(x):",
                    test_cases=[TestCase(input="x=1", output="1")]), round=i // 3)
    i += 1
"""


def test_a_buffer_survives_sigkill_while_appending_and_the_rerun_continues(tmp_path):
    """A real kill, three times over the same file (where it lands is chance: a torn line is
    tested for certain above)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    path = tmp_path / "buffer-induction.jsonl"
    for run in range(3):
        before = len(TaskBuffer.in_run(tmp_path, "induction", capacity=100000)) if run else 0
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], env=env)
        deadline = time.monotonic() + 60
        while (not path.exists() or path.read_bytes().count(b"\n") < before + 5) and time.monotonic() < deadline:
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL
        complete = path.read_bytes().count(b"\n")
        with warnings.catch_warnings(record=True) as caught:  # a torn line warns; a kill between writes leaves none
            warnings.simplefilter("always")
            reopened = TaskBuffer.in_run(tmp_path, "induction", capacity=100000)
        assert all("half-written" in str(w.message) for w in caught)
        assert len(reopened) == complete >= before + 5  # everything fully written, nothing else
        assert [e.seq for e in reopened] == list(range(complete))  # the rerun continued where it stopped
        assert path.read_bytes().endswith(b"\n")
