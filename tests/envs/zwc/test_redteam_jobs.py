"""Red team of what one job leaves for the next (``zygote.py``) and of clean-up
(``workdirs.py``, ``child_process.py``).

1. A child is forked from a process that never saw a job. The attacker disarms the audit gate
   (the gate's state is reachable through the stub's globals), then searches everything it
   can reach: every object the garbage collector knows (after ``gc.unfreeze``) and what each
   refers to, every frame of its stack (its own, and the fork server's frames above them),
   ``sys.stdin`` and its buffer, every module's dict, and raw memory through ``ctypes``: the
   pymalloc arenas of every live object and the C heap around a fresh ``malloc``, each page
   probed first (``write`` of one byte to a pipe fails with EFAULT where nothing is mapped).
   What it looks for travels reversed in its code, so its own code does not hold it, and raw
   memory is searched with patterns split by an empty group, so no pattern holds it either.
   It finds nothing of the task's reference solution (run just before it by ``env.check``'s
   ``reference_usage``, on the same servers) nor of a sibling's answer or inputs under
   ``check_many``, in the stub server's children and in the library server's.
2. Nothing a candidate leaves in its directory breaks the server or reaches outside it: a tree
   5000 levels deep, directories it cannot read, links to a file and a directory outside, and
   no end record (it ends its own process) grade as a candidate failure; the directory is
   removed, what the links point to is intact; the directories of normal exits are removed too.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import stat
import tempfile
import time
from pathlib import Path

import pytest

from envs.zwc import Failure, Task, TestCase
from envs.zwc.grading.grade import grade

STUB_SYS = "zwc.ZWCArray.__init__.__globals__['weakref'].sys"  # the stub's globals, then the real sys
NUMPY_SYS = "zwc.ZWCArray.__init__.__globals__['_warnings'].sys"  # the real zwc runtime's, in the NumPy control
INPUT_MARK, INPUT_TEXT = 987654321 / 1000, "987654.321"  # a test input no other job holds
NOTHING = "nothing found"

SEARCH = r'''
def search(s, hidden, numbers):
    """Every place this process can reach that holds one of ``hidden`` (reversed) or ``numbers``."""
    gc, re_, os_, ct = s.modules['gc'], s.modules['re'], s.modules['os'], s.modules.get('ctypes')
    getattr = s.modules['builtins'].getattr  # the real builtins: the candidate's have no getattr
    needles = [h[::-1] for h in hidden]
    bneedles = [h[::-1].encode() for h in hidden]
    mine = set(map(id, needles + bneedles + numbers))
    found, seen = [], set()

    def look(obj, where, depth):
        i = id(obj)
        if i in mine:
            return
        t = type(obj)
        if t is str:
            found.extend(where + ' str ' + str(k) for k, n in enumerate(needles) if n in obj)
        elif t is bytes or t is bytearray:
            found.extend(where + ' bytes ' + str(k) for k, n in enumerate(bneedles) if n in obj)
        elif t is float:
            if obj in numbers:
                found.append(where + ' float')
        elif depth > 0 and i not in seen and (t is list or t is tuple or t is dict or t is set or t is frozenset):
            seen.add(i)
            for v in (list(obj.items()) if t is dict else list(obj)):
                look(v, where, depth - 1)

    gc.unfreeze()  # what the server froze before forking is back among gc's objects
    for obj in gc.get_objects():
        look(obj, 'gc', 3)
        for r in gc.get_referents(obj):
            look(r, 'gc referent', 2)
    frames = list(s._current_frames().values())
    try:
        raise ValueError
    except ValueError as e:
        frames.append(e.__traceback__.tb_frame)
    for f in frames:
        while f is not None:
            look(f.f_locals, 'frame ' + f.f_code.co_name, 3)
            look(f.f_globals, 'frame globals', 2)
            f = f.f_back
    for stream in (s.stdin, s.__stdin__, getattr(s.__stdin__, 'buffer', None)):
        if stream is not None:
            look(gc.get_referents(stream), 'stdin', 3)
    for m in list(s.modules.values()):
        look(getattr(m, '__dict__', {}), 'module', 2)
    if ct is not None:
        found.extend(raw(s, ct, os_, re_, gc, needles, bneedles, hidden))
    return found


def raw(s, ct, os_, re_, gc, needles, bneedles, hidden):
    """The needles in mapped memory: pymalloc arenas of live objects, the C heap around a malloc."""
    memoryview = s.modules['builtins'].memoryview
    libc = ct.CDLL(None)
    write = libc.write
    write.restype, write.argtypes = ct.c_ssize_t, [ct.c_int, ct.c_void_p, ct.c_size_t]
    r, w = os_.pipe()
    page, chunk = 4096, 1 << 20

    def mapped(a):
        if write(w, a, 1) == 1:
            os_.read(r, 1)
            return True
        return False

    chunks = set()
    for obj in gc.get_objects():
        c = id(obj) >> 20
        chunks.update((c - 1, c, c + 1))
    seed = ct.create_string_buffer(5000)  # malloc'd: the C heap
    c = ct.addressof(seed) >> 20
    chunks.update(range(c - 64, c + 64))
    patterns = [re_.compile(h[::-1][:2].encode() + b'(?:)' + h[::-1][2:].encode()) for h in hidden]
    buf = ct.create_string_buffer(chunk)
    skip = [(ct.addressof(buf), ct.addressof(buf) + chunk)]
    skip += [(id(x), id(x) + s.getsizeof(x)) for x in needles + bneedles]
    hits = []
    for c in sorted(chunks):
        start = c << 20
        a = start
        while a < start + chunk:
            if not mapped(a):
                a += page
                continue
            end = a
            while end < start + chunk and mapped(end):
                end += page
            ct.memmove(buf, a, end - a)
            view = memoryview(buf)[: end - a]
            for k, p in enumerate(patterns):
                for m in p.finditer(view):
                    at = a + m.start()
                    if not any(lo <= at < hi for lo, hi in skip):
                        hits.append('raw memory ' + str(k))
            a = end
    os_.close(r)
    os_.close(w)
    return hits
'''


def _searcher(route: str, hidden: list[str], numbers: str, setup: str = "") -> str:
    """A candidate that runs SEARCH for ``hidden`` (each given reversed) and returns what it found."""
    reversed_ = repr([h[::-1] for h in hidden])
    return (f"import zwc\n{SEARCH}\ndef solve(x):\n{setup}    s = {route}\n"
            "    s.modules['envs.zwc.sandbox.child']._GATE.armed = False  # the audit gate off\n"
            f"    found = search(s, {reversed_}, {numbers})\n"
            f"    return sorted(set(found))[:30] if found else {NOTHING!r}")


def _values(answer: dict) -> list:
    return [r.get("value", r.get("error")) for r in answer["records"] if r.get("event") == "test"]


def _name(env, path: str) -> str:
    return env.mapping.to_zwc(path)[4:]


# -- 1. nothing of another job -------------------------------------------------------------
def test_a_candidate_finds_nothing_of_the_reference_run_before_it(env7):
    """``env.check`` runs the task's reference first (``reference_usage``), then the candidates,
    through the same servers: a candidate on the server that ran the reference finds neither
    the reference's code (its note, the zwc name it used) nor its answers."""
    env, token = env7, secrets.token_hex(6)
    note, tail, cumsum = f"refnote_{token}", f"outmark_{token}", _name(env7, "numpy.cumsum")
    reference = (f"import zwc\ndef solve(x):\n    note = '{note}'\n"
                 f"    return str(float(zwc.{cumsum}(x)[-1])) + '_{tail}'")
    task = Task(task_id=f"jobs-ref-{token}", query="secret", function_name="def solve(x):", reference=reference,
                test_cases=[TestCase(input=f"x=[{INPUT_TEXT}, 1.0]", output=repr(f"987655.321_{tail}"))])
    [usage] = env.reference_usage([task])  # the reference ran, on one of the two servers
    assert usage is not None
    code = _searcher(STUB_SYS, [note, tail, cumsum, "987655.321"], "[]",
                     setup=f"    zwc.{_name(env, 'numpy.mean')}(x)\n")
    answers = env.pool.run_many([(code, "solve", task.inputs(), False, False)] * 2)  # one per server
    for answer in answers:
        assert _values(answer) == [NOTHING], _values(answer)


def test_a_sibling_finds_nothing_of_the_sibling_graded_before_it(env7):
    """Under ``check_many`` (GRPO's grading) samples run one after another on the same servers:
    B, run right after A on each server, finds neither A's answer nor A's test input."""
    env, token = env7, secrets.token_hex(6)
    mark = f"sibling_{token}"
    sibling = (f"import zwc\ndef solve(x):\n    zwc.{_name(env, 'numpy.mean')}(x)\n"
               f"    return {mark[::-1]!r}[::-1]")  # its answer exists only at run time
    code = _searcher(STUB_SYS, [mark, INPUT_TEXT], f"[{INPUT_MARK.as_integer_ratio()[0]} / "
                     f"{INPUT_MARK.as_integer_ratio()[1]}]")
    a = (sibling, "solve", [f"x=[{INPUT_TEXT}, 2.5]"], False, False)
    b = (code, "solve", ["x=[1.0, 2.0]"], False, False)
    answers = env.pool.run_many([a, a, b, b])  # A on both servers, then B after it on each
    assert [_values(x) for x in answers[:2]] == [[mark]] * 2
    for answer in answers[2:]:
        assert _values(answer) == [NOTHING], _values(answer)


def test_the_numpy_control_finds_nothing_of_the_job_before_it(env7):
    """The NumPy control runs in children of the library server's zygote: a sample finds
    neither the answer nor the inputs of the sample graded before it there."""
    env, token = env7, secrets.token_hex(6)
    mark = f"numpysib_{token}"
    sibling = f"import zwc\ndef solve(x):\n    return {mark[::-1]!r}[::-1]"
    inputs = [f"x=[{INPUT_TEXT}" + ", 1.5" * 400 + "]"] * 8  # inputs larger than the next request
    code = _searcher(NUMPY_SYS, [mark, INPUT_TEXT],
                     f"[{INPUT_MARK.as_integer_ratio()[0]} / {INPUT_MARK.as_integer_ratio()[1]}]")
    m = (sibling, "solve", inputs, True, False)
    n = (code, "solve", ["x=[1.0, 2.0]"], True, False)
    answers = env.pool.run_many([m, m, n, n])
    assert [_values(x) for x in answers[:2]] == [[mark] * 8] * 2
    for answer in answers[2:]:
        assert _values(answer) == [NOTHING], _values(answer)


@pytest.mark.parametrize("clone", [True, False], ids=["clone CLONE_PARENT", "double fork"])
def test_a_zygote_child_is_its_server_s_own(clone):
    """Both ways the zygote makes a child (``clone(CLONE_PARENT)``, and the double fork where that
    is missing) give the server a child it waits for and classifies by its exit status; the
    zygote ends with its socket. Run in a forked process: ``start`` makes its caller a subreaper."""
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            from envs.zwc.sandbox import child as sandbox_child
            from envs.zwc.sandbox import child_process, kernel_walls, zygote

            kernel_walls.probe()
            if not clone:
                zygote._SIBLINGS.clear()

            def echo(out, job, keep):
                out.write(json.dumps({"event": "end", "job": job}) + "\n")

            def crash(out, job, keep):
                os.kill(os.getpid(), signal.SIGTERM)

            z = zygote.start({"echo": echo, "crash": crash}, sandbox_child.confine)
            limits = {"cpu_s": 2, "wall_s": 5.0, "mem_mb": 256}
            spare = z.spawn("echo", limits)
            said = child_process.collect(spare, child_process.start(spare, {"x": 1}))
            spare = z.spawn("crash", limits)
            crashed = child_process.collect(spare, child_process.start(spare, {}))
            child_process.discard(z.spawn("echo", limits))
            z.close()
            child_process.finish()
            ok = (said["records"] == [{"event": "end", "job": {"x": 1}}] and crashed["signal"] == signal.SIGTERM
                  and zygote._SIBLINGS == ([True] if clone else []))
            status = 0 if ok else 2
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


# -- 2. clean-up a candidate cannot break -------------------------------------------------
def _wait_gone(paths: list[str], seconds: float) -> list[str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(os.path.lexists(p) for p in paths):
        time.sleep(0.1)
    return [p for p in paths if os.path.lexists(p)]


@pytest.fixture()
def outside(tmp_path):
    """A file and a directory outside every sandbox directory, readable by the candidate's user."""
    tmp_path.chmod(0o755)
    (tmp_path / "keep.txt").write_text("intact")
    (tmp_path / "dir").mkdir(mode=0o755)
    (tmp_path / "dir" / "inner.txt").write_text("intact too")
    return tmp_path


def test_a_deep_tree_links_outside_and_no_end_record_are_a_candidate_failure(env7, outside):
    note = ("    try:\n        raise ValueError\n    except ValueError as e:\n"
            "        out = e.__traceback__.tb_frame.f_back.f_locals['out']\n"
            "    out.write('{\"event\": \"note\", \"cwd\": \"' + o.getcwd() + '\"}\\n')\n    out.flush()\n")
    code = (f"import zwc\ndef solve(x):\n    zwc.{_name(env7, 'numpy.mean')}(x)\n    s = {STUB_SYS}\n"
            "    s.modules['envs.zwc.sandbox.child']._GATE.armed = False\n    o = s.modules['os']\n" + note +
            f"    o.symlink({str(outside / 'keep.txt')!r}, 'to_file')\n"
            f"    o.symlink({str(outside / 'dir')!r}, 'to_dir')\n    o.symlink('/', 'to_root')\n"
            "    o.mkdir('unreadable', 0o300)\n    o.close(o.open('unreadable/f', o.O_CREAT | o.O_WRONLY, 0o600))\n"
            "    o.mkdir('unreadable/locked', 0)\n    o.mkdir('wide')\n"
            "    for i in range(300):\n        o.close(o.open('wide/' + str(i), o.O_CREAT | o.O_WRONLY, 0o600))\n"
            "    for i in range(5000):\n        o.mkdir('d')\n        o.chdir('d')\n"
            f"    o.symlink({str(outside / 'dir')!r}, 'deep_link')\n"
            "    o._exit(0)  # no end record\n")
    task = Task(task_id="jobs-deep", query="deep", function_name="def solve(x):",
                test_cases=[TestCase(input="x=[1.0, 2.0]", output="1.5")])
    env7.reference_usage([task])
    answer = env7.pool.run(code, "solve", task.inputs())
    verdict = grade(task, answer, env7.usage_rule(task))
    assert verdict.failure is Failure.RUNTIME_ERROR, (verdict.failure, verdict.detail)
    assert "server_error" not in answer and "server_error" not in answer["library"], answer
    [workdir] = [r["cwd"] for r in answer["records"] if r.get("event") == "note"]
    assert _wait_gone([workdir], 120.0) == [], "the candidate's directory was not removed"
    assert (outside / "keep.txt").read_text() == "intact"
    assert (outside / "dir" / "inner.txt").read_text() == "intact too"


MALFORMED = {  # what the candidate writes to its own result pipe (gate off), then it ends itself
    "a line nested 100000 deep": "'[' * 100000 + ']' * 100000",
    "a line that is not an object": "'[5]'",
    "a value that does not decode": """'{"event": "test", "i": 0, "ok": true, "value": {"$complex": 5}}'""",
    "a dict key that cannot be a key": """'{"event": "test", "i": 0, "ok": true, "value": {"$dict": [[{"$dict": []}, 1]]}}'""",
    "violations that are not texts": """'{"event": "end", "violations": 5, "state_changes": []}'""",
    "a category that cannot be a key": """'{"event": "test", "i": 0, "ok": false, "category": [1]}'""",
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_records_the_harness_never_writes_fail_the_candidate_not_the_grader(name, env7):
    code = (f"import zwc\ndef solve(x):\n    zwc.{_name(env7, 'numpy.mean')}(x)\n    s = {STUB_SYS}\n"
            "    s.modules['envs.zwc.sandbox.child']._GATE.armed = False\n"
            "    try:\n        raise ValueError\n    except ValueError as e:\n"
            "        out = e.__traceback__.tb_frame.f_back.f_locals['out']\n"
            f"    out.write({MALFORMED[name]} + '\\n')\n    out.flush()\n    s.modules['os']._exit(0)\n")
    task = Task(task_id="jobs-malformed", query="malformed", function_name="def solve(x):",
                test_cases=[TestCase(input="x=[1.0, 2.0]", output="1.5")])
    env7.reference_usage([task])
    answer = env7.pool.run(code, "solve", task.inputs())
    verdict = grade(task, answer, env7.usage_rule(task))  # returns: nothing here raises
    assert verdict.failure in (Failure.RUNTIME_ERROR, Failure.BYPASS_ATTEMPT), (name, verdict.failure, verdict.detail)


def test_the_directories_of_normal_exits_are_removed(env7):
    code = (f"import zwc\ndef solve(x):\n    zwc.{_name(env7, 'numpy.mean')}(x)\n"
            f"    o = {STUB_SYS}.modules['os']\n"
            "    return o.getcwd()")
    answers = env7.pool.run_many([(code, "solve", ["x=[1.0]"], False, False)] * 20)
    workdirs = [_values(a)[0] for a in answers]
    assert len(set(workdirs)) == 20 and all(Path(w).name.startswith("zwc-sandbox-") for w in workdirs), workdirs
    assert _wait_gone(workdirs, 10.0) == []


def test_remove_tree_holds_whatever_the_tree_is():
    """As the candidate's user (``nobody`` when the tests run as root): unreadable and mode-000
    directories, a tree deeper than Python's recursion limit, links to outside; nothing outside
    is touched, and it never raises."""
    from envs.zwc.sandbox.workdirs import remove_tree

    base = Path(tempfile.mkdtemp(prefix="zwc-remove-test-"))  # under /tmp: nobody can reach it
    try:
        base.chmod(0o1777)  # as /tmp is: the candidate's user may remove what it owns there
        outside, root = base / "outside", base / "root"
        outside.mkdir(mode=0o755)
        (outside / "keep.txt").write_text("intact")
        root.mkdir()
        pid = os.fork()
        if pid == 0:  # build it as the candidate's user would, and remove it as the server would
            status = 1
            try:
                if os.geteuid() == 0:
                    os.chown(root, 65534, 65534)
                    os.setgid(65534)
                    os.setuid(65534)
                os.chdir(root)
                os.symlink(outside, "to_dir")
                os.symlink(outside / "keep.txt", "to_file")
                os.mkdir("unreadable", 0o300)
                os.close(os.open("unreadable/f", os.O_CREAT | os.O_WRONLY, 0o600))
                os.mkdir("unreadable/locked", 0)
                os.mkdir("no_search", 0o600)
                for _ in range(1500):
                    os.mkdir("d")
                    os.chdir("d")
                os.symlink(outside, "deep_link")
                os.chdir("/")
                status = 0 if remove_tree(str(root)) and not os.path.lexists(root) else 2
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert (outside / "keep.txt").read_text() == "intact"
        assert stat.S_IMODE(outside.stat().st_mode) == 0o755
        assert remove_tree(str(base / "missing")) is True
    finally:
        shutil.rmtree(base, ignore_errors=True)
