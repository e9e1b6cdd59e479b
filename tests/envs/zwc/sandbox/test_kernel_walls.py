"""Kernel walls: the seccomp filter's decisions, each forbidden family in a real walled
process, Landlock's directory wall, and a forbidden call reached through the fork server's
own child path ending as a bypass attempt; every catalogued function still runs walled."""

import ctypes
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

from envs.zwc.grading.equality import values_equal
from envs.zwc.grading.failure import Failure
from envs.zwc.grading.grade import UsageRule, decode, grade
from envs.zwc.library.catalogue import CATALOGUE
from envs.zwc.sandbox import child as sandbox_child
from envs.zwc.sandbox import child_process, kernel_walls
from envs.zwc.task import Task, TestCase

ROOT = Path(__file__).resolve().parents[3]
WALLS = kernel_walls.probe()
needs_seccomp = pytest.mark.skipif(not WALLS["seccomp"]["active"],
                                   reason=f"seccomp wall not on this machine: {WALLS['seccomp']['detail']}")
needs_landlock = pytest.mark.skipif(not WALLS["landlock"]["active"],
                                    reason=f"Landlock wall not on this machine: {WALLS['landlock']['detail']}")


# -- the filter, run by a small BPF interpreter (both architectures, no kernel needed) -----
def _decide(program, arch: int, nr: int, args=(0,) * 6) -> int:
    data = {0: nr & 0xFFFFFFFF, 4: arch}
    for i, value in enumerate(args):
        data[16 + 8 * i], data[20 + 8 * i] = value & 0xFFFFFFFF, (value >> 32) & 0xFFFFFFFF
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == kernel_walls.LD_W_ABS:
            acc, pc = data[k], pc + 1
        elif code == kernel_walls.RET_K:
            return k
        elif code == kernel_walls.JA:
            pc += 1 + k
        else:
            taken = {kernel_walls.JEQ_K: acc == k, kernel_walls.JGE_K: acc >= k, kernel_walls.JGT_K: acc > k}[code]
            pc += 1 + (jt if taken else jf)


@pytest.mark.parametrize("arch_name", ["x86_64", "aarch64"])
def test_filter_decisions(arch_name):
    arch = kernel_walls.ARCHES[arch_name]
    program, slots = kernel_walls.assemble(arch)
    pid = 4242
    program = [(c, jt, jf, pid if i in slots else k) for i, (c, jt, jf, k) in enumerate(program)]
    assert program[-1][0] == kernel_walls.RET_K and all(
        i + 1 + (k if c == kernel_walls.JA else max(jt, jf)) < len(program)
        for i, (c, jt, jf, k) in enumerate(program) if c not in (kernel_walls.LD_W_ABS, kernel_walls.RET_K))
    kill, allow = kernel_walls.RET_KILL_PROCESS, kernel_walls.RET_ALLOW
    nr = arch.numbers

    def decide(name_or_nr, *args, audit=arch.audit):
        number = nr[name_or_nr] if isinstance(name_or_nr, str) else name_or_nr
        return _decide(program, audit, number, args + (0,) * (6 - len(args)))

    denied = {nr[name] for name in kernel_walls.denied_names(arch)}
    checked = {nr[name] for name in ("kill", "tkill", "tgkill", "prlimit64", "fcntl")}
    for number in range(kernel_walls.MAX_KNOWN_SYSCALL + 1):  # every number: kill exactly the denied ones
        if number not in checked:
            assert decide(number) == (kill if number in denied else allow), number
    for family in ("process creation", "exec", "sockets"):
        assert all(n in nr for n in kernel_walls.DENIED[family] if n not in ("fork", "vfork")), family
    allowed = {"x86_64": (0, 1, 3, 9, 11, 12, 25, 28, 39, 60, 231, 257, 262, 318),  # read write close mmap
               "aarch64": (56, 57, 63, 64, 93, 94, 172, 214, 215, 222, 226, 233, 278)}[arch_name]
    for number in allowed:  # openat, mmap, brk, madvise, getpid, exit_group, getrandom ...
        assert decide(number) == allow, number
    assert decide("kill", pid, 9) == allow and decide("kill", 0, 9) == allow
    assert decide("kill", pid + 1, 0) == kill and decide("kill", (1 << 32) - 1, 9) == kill  # -1: everyone
    assert decide("tgkill", pid, pid, 6) == allow and decide("tgkill", 1, 1, 9) == kill
    assert decide("tkill", pid, 6) == allow and decide("tkill", 1, 9) == kill
    assert decide("prlimit64", 0, 7) == allow and decide("prlimit64", 1, 7) == kill
    assert decide("fcntl", 3, 3) == allow and decide("fcntl", 3, kernel_walls.F_SETOWN, 1) == kill
    assert decide("fcntl", 3, kernel_walls.F_SETOWN_EX) == kill
    assert decide(kernel_walls.MAX_KNOWN_SYSCALL + 1) == kernel_walls.RET_ERRNO | errno.ENOSYS
    assert decide(0, audit=0x40000003) == kill  # i386 (int 0x80) or any other architecture
    if arch.x32_bit:
        assert decide(0x40000000 | 0) == kill  # x32 read


# -- the real kernel: each family in a forked, walled process ------------------------------
def _walled(action) -> tuple[int, dict]:
    """Fork; in the child apply the walls and run ``action()``; (terminating signal, its report)."""
    workdir = tempfile.mkdtemp(prefix="walls-test-")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            os.chdir(workdir)
            kernel_walls.apply(workdir)
            report = action()
            os.write(write_fd, json.dumps({"ok": True, **(report if isinstance(report, dict) else {})}).encode())
        except BaseException as exc:  # noqa: BLE001
            os.write(write_fd, json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}).encode())
        os._exit(0)
    os.close(write_fd)
    data = b""
    while chunk := os.read(read_fd, 1 << 16):
        data += chunk
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(workdir, ignore_errors=True)
    first = json.JSONDecoder().raw_decode(data.decode())[0] if data else {}  # a fork that got through writes twice
    return (os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0), first


def _thread():
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()


def _libc(name, *args):
    return getattr(ctypes.CDLL(None, use_errno=True), name)(*args)


FORBIDDEN = {
    "fork": lambda: os.fork(),
    "thread": _thread,
    "exec": lambda: os.execv("/bin/true", ["true"]),
    "socket": lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM),
    "unix socketpair": lambda: socket.socketpair(),
    "ptrace": lambda: _libc("ptrace", 0, 0, 0, 0),  # PTRACE_TRACEME
    "signal to another process": lambda: os.kill(os.getppid(), 0),
    "signal to every process": lambda: os.kill(-1, 0),
    "mount": lambda: _libc("mount", None, None, None, 0, None),  # harmless (EFAULT) if it got through
    "unshare": lambda: _libc("unshare", 0x20000000),  # CLONE_NEWUTS
    "raise another's rlimit": lambda: _libc("prlimit", os.getppid(), 7, None, ctypes.byref(ctypes.c_ulong())),
    "chmod": lambda: os.chmod(".", 0o777),
}


@needs_seccomp
@pytest.mark.parametrize("name", list(FORBIDDEN))
def test_forbidden_call_kills_the_walled_process(name):
    sig, report = _walled(FORBIDDEN[name])
    assert sig == signal.SIGSYS, f"{name}: not stopped by the filter ({sig}, {report})"
    assert report == {}, report  # it died at the call, before saying anything


HONEST_WORK = """
import json, os, sys
import numpy as np
from envs.zwc.sandbox import kernel_walls
os.chdir(sys.argv[1])
kernel_walls.apply(sys.argv[1])
a = np.linspace(0.0, 1.0, 300 * 300).reshape(300, 300) + np.eye(300)
inv = np.linalg.inv(a)  # BLAS and LAPACK
big = np.ones(20_000_000)  # 160 MB: mmap, page faults, munmap
with open("scratch.txt", "w") as f:  # inside the working directory
    f.write("kept")
with open("scratch.txt") as f:
    kept = f.read()
os.kill(os.getpid(), 0)
os.kill(0, 0)
print(json.dumps({"trace": float(np.trace(a @ inv)), "big": float(big.sum()), "kept": kept,
                  "random": len(os.urandom(8)), "listing": os.listdir(".")}), flush=True)
os._exit(0)
"""


@needs_seccomp
def test_honest_work_runs_walled(tmp_path):
    """NumPy, LAPACK, big allocations, files in its own directory, signals to itself. In a
    fresh interpreter with single-threaded BLAS, as the fork server runs it: a BLAS thread
    pool started after the walls would die at its first ``clone``."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", HONEST_WORK, str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    report = json.loads(proc.stdout)
    assert round(report["trace"]) == 300 and report["big"] == 20_000_000.0
    assert report["kept"] == "kept" and report["random"] == 8 and report["listing"] == ["scratch.txt"]


def _outside():
    outcomes = {}
    for what, call in {"read /etc/hostname": lambda: open("/etc/hostname").close(),
                       "list /": lambda: os.listdir("/"),
                       "create in /tmp": lambda: open(os.path.join(tempfile.gettempdir(), "walls-out"), "w"),
                       "read /proc/self/environ": lambda: open("/proc/self/environ").close()}.items():
        try:
            call()
            outcomes[what] = "allowed"
        except PermissionError:
            outcomes[what] = "refused"
    return outcomes


@needs_landlock
def test_landlock_refuses_paths_outside_the_working_directory():
    sig, report = _walled(_outside)
    assert sig == 0 and report.pop("ok"), report
    assert set(report.values()) == {"refused"}, report


# -- through the fork server's child path -------------------------------------------------
TASK = Task(task_id="walls", query="identity", function_name="def solve(x):",
            test_cases=[TestCase(input="x=1", output="1")])
REQUEST = {"code": "", "entry": "solve", "inputs": ["x=1"], "limits": {"cpu_s": 5, "wall_s": 10.0, "mem_mb": 512},
           "numpy": False, "printed": False}


def _candidate(then):
    """After the real ``confine`` (rlimits, nobody, walls), a stand-in for ``run_candidate``
    that skips the Python walls, as a hole in them would: it reports a passing test and
    then does ``then()``. Test-only; the production harness is untouched."""

    def body(out):
        out.write(json.dumps({"event": "load", "ok": True}) + "\n")
        out.write(json.dumps({"event": "test", "i": 0, "ok": True, "value": 1, "seconds": 0.0}) + "\n")
        out.flush()
        then()
        out.write(json.dumps({"event": "end", "stdout": "", "violations": []}) + "\n")
        out.flush()

    return body


@needs_seccomp
def test_forbidden_call_in_a_sandbox_child_is_a_bypass_attempt():
    usage = UsageRule(names={}, required=False)
    control = child_process.run_child(REQUEST["limits"], _candidate(lambda: None), sandbox_child.confine)
    assert control["killed"] == "" and grade(TASK, control, usage).passed  # the same path, no forbidden call
    answer = child_process.run_child(REQUEST["limits"], _candidate(lambda: socket.socket()), sandbox_child.confine)
    assert answer["killed"] == "syscall" and answer["signal"] == signal.SIGSYS, answer
    verdict = grade(TASK, answer, usage)
    assert not verdict.passed and verdict.failure is Failure.BYPASS_ATTEMPT, verdict
    child_process.reap(block=True)


@needs_seccomp
def test_a_missing_or_failing_wall_is_reported_and_the_other_still_holds(monkeypatch):
    monkeypatch.setattr(kernel_walls, "_PLAN", None)  # a fresh plan, as in a new server
    monkeypatch.setattr(kernel_walls, "_landlock_abi", lambda: (0, "unsupported: this kernel has no Landlock"))
    walls = kernel_walls.probe()
    assert walls["seccomp"]["active"] and not walls["landlock"]["active"]
    assert "landlock OFF (unsupported: this kernel has no Landlock)" in kernel_walls.describe(walls)
    sig, _ = _walled(FORBIDDEN["socket"])
    assert sig == signal.SIGSYS  # seccomp alone still stops it

    def broken(workdir, abi):
        raise kernel_walls.KernelWallError("sandbox kernel wall: landlock_restrict_self failed: test")

    monkeypatch.setattr(kernel_walls, "_PLAN", None)
    monkeypatch.setattr(kernel_walls, "_landlock_abi", lambda: (1, "ABI 1"))
    monkeypatch.setattr(kernel_walls, "_apply_landlock", broken)
    walls = kernel_walls.probe()  # the probe child found it failing: dropped, and said why
    assert walls["seccomp"]["active"] and not walls["landlock"]["active"]
    assert walls["landlock"]["detail"] == "unavailable: sandbox kernel wall: landlock_restrict_self failed: test"


# -- the pool -----------------------------------------------------------------------------
def test_pool_reports_its_walls(env7):
    walls = env7.pool.walls
    assert set(walls) == {"seccomp", "landlock"} and all(w["detail"] for w in walls.values())
    for name in ("seccomp", "landlock"):  # the server's probe agrees with this process's
        assert walls[name]["active"] == WALLS[name]["active"], (walls, WALLS)
    if not walls["landlock"]["active"]:
        assert walls["landlock"]["detail"].startswith(("unsupported", "unavailable"))


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value) if isinstance(value, tuple) else [_plain(v) for v in value]
    return value


def test_every_catalogued_function_runs_walled(env7):
    """Each function on its catalogue sample, in the real sandbox: nothing hits a wall."""
    entries = [e for e in CATALOGUE if e.numpy not in ("numpy.empty", "numpy.empty_like", "numpy.vectorize")]
    jobs = [(f"import zwc\narr = zwc.ZWCArray\ndef solve():\n    return {env7.mapping.to_zwc(e.numpy)}"
             f"(*{e.call_sample})\n", "solve", [""]) for e in entries]
    answers = env7.pool.run_many(jobs)
    wrong = []
    for entry, answer in zip(entries, answers, strict=True):
        assert answer["killed"] == "" and answer["signal"] == 0, (entry.numpy, answer)
        test = next(r for r in answer["records"] if r.get("event") == "test")
        target = np
        for part in entry.call_target.split(".")[1:]:
            target = getattr(target, part)
        with np.errstate(all="ignore"):
            expected = _plain(target(*eval(entry.call_sample, {"arr": np.array, "abs": abs})))  # noqa: S307
        if not (test["ok"] and values_equal(decode(test["value"]), expected, rel_tol=1e-12, abs_tol=1e-12)):
            wrong.append((entry.numpy, test.get("error"), test.get("value")))
    assert not wrong, wrong[:5]
