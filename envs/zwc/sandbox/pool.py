"""The sandbox: runs untrusted candidate code against test inputs, safely and fast.

``SandboxPool`` keeps N workers, each a stub fork server (``forkserver.py``) that never imports
NumPy or the zwc implementation, and its library server (``library_server.py``) that holds
both. Per candidate each has a confined child forked by its zygote, the two joined by a
socket: the candidate's, whose ``zwc`` is a stub (``zwc_stub.py``), and its library child
(``library_child.py``), which runs the calls and writes the call log the grader reads. ``run``
sends one candidate to a free worker and returns its raw result (the candidate's records, and
the library's under ``library``); ``run_many`` keeps every worker busy from a thread pool.

Isolated, per candidate: its own process (forked from the server's zygote, ``zygote.py``,
which never saw a job, so it holds no other job's code, inputs, answers or log; nothing shared
back but a capped stream of JSON lines); its own session and process group, killed whole on
timeout; CPU time (RLIMIT_CPU) and wall-clock limits; address-space limit; no new
processes (RLIMIT_NPROC 0 after dropping root to ``nobody``, and the audit hook); no file
opens, sockets, subprocesses, frame/code/gc introspection, pickling or new imports (audit
hook); only allowed modules, as proxies with no module attributes, and no reflection
builtins (restricted ``__builtins__``); a private temporary working directory; at most
1 MB of printed output. Kernel walls (``kernel_walls.py``), which hold even where the
Python walls above have a hole: a seccomp-bpf filter (no fork, clone or clone3, so no
threads; no exec; no sockets; no ptrace, process_vm_*, pidfd_* or kcmp; kill, tkill,
tgkill and prlimit64 only on itself; no F_SETOWN; no mount, unshare, setns, chroot, bpf,
perf_event_open, userfaultfd, io_uring, keys, modules, kexec, reboot, clock setting, System
V or POSIX IPC, chmod/chown/utimes/xattr writes; calls newer than its table get ENOSYS;
other architectures and x32 are killed), and Landlock (no file opened, created, removed or
renamed outside the working directory; from ABI 4 no TCP bind/connect; from ABI 6 no
signals or abstract UNIX sockets outside the candidate's own domain). A forbidden system
call kills the candidate with SIGSYS; the answer says ``"killed": "syscall"``.
``SandboxPool.walls`` says which kernel walls a probe found working at server start; one
that this kernel lacks is reported (and logged), never silently skipped.

Not isolated: CPU cache and memory bandwidth (timing side channels); the wall clock of
other candidates on the same cores; kernel bugs reachable through the calls that stay
allowed (memory, time, files in its own directory, ioctl on descriptors it already has);
no namespaces, so a candidate may learn whether a path or a pid exists (stat, not open).
A dead or wedged server is killed and replaced; the pool keeps serving.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import select
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from envs.zwc.errors import SandboxError
from envs.zwc.sandbox.kernel_walls import describe as describe_walls

_log = logging.getLogger(__name__)

SERVER_START_TIMEOUT = 120.0


@dataclass(frozen=True)
class Limits:
    """Per-candidate limits. Defaults fit SE-Bench's small tasks with a wide margin."""

    cpu_s: int = 5          # CPU seconds for the whole candidate (all its tests)
    wall_s: float = 10.0    # wall-clock seconds, killing sleepers and blocked children
    mem_mb: int = 1024      # address space the candidate may add to what the server maps

    def __post_init__(self) -> None:
        if self.cpu_s < 1 or self.wall_s <= 0 or self.mem_mb < 16:
            raise ValueError(f"invalid sandbox limits {self}: need cpu_s >= 1, wall_s > 0, mem_mb >= 16")


class _Server:
    """One fork server process and its pipes."""

    def __init__(self, package_dir: Path):
        # PYTHONHASHSEED fixed: a candidate's str hash (and the order of a set of strings) is the same
        # on every server, so its verdict does not depend on which server the pool hands it to
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", OPENBLAS_NUM_THREADS="1",
                   OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "envs.zwc.sandbox.forkserver", str(package_dir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, start_new_session=True, bufsize=0)
        self._buffer = b""
        hello = self._readline(SERVER_START_TIMEOUT)
        greeting = json.loads(hello) if hello else {}
        if not greeting.get("ready"):
            self.kill()
            raise SandboxError(f"the sandbox server for {package_dir} did not start; "
                               "check that the directory holds a zwc package (`sebench zwc build`)")
        self.walls: dict = greeting.get("walls", {})
        self.numpy_loaded: bool = bool(greeting.get("numpy_loaded"))  # in the candidates' server: never

    def _readline(self, timeout: float) -> str | None:
        """One protocol line, or None if the server says nothing for ``timeout`` seconds."""
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def request(self, payload: dict, timeout: float) -> dict | None:
        try:
            self.proc.stdin.write(json.dumps(payload).encode() + b"\n")
        except (BrokenPipeError, OSError):
            return None
        line = self._readline(timeout)
        return json.loads(line) if line else None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()


class SandboxPool:
    """A pool of fork servers for one zwc package directory.

    Args:
        package_dir: the directory that contains the ``zwc`` package.
        workers: number of servers (parallel candidates); default: CPU count.
        limits: per-candidate limits.
    """

    def __init__(self, package_dir: str | Path, workers: int | None = None, limits: Limits | None = None):
        self.package_dir = Path(package_dir).resolve()
        if not (self.package_dir / "zwc" / "__init__.py").is_file():
            raise SandboxError(f"{self.package_dir}: no zwc package here (build one with `sebench zwc build`)")
        self.limits = limits or Limits()
        self.workers = max(1, workers or os.cpu_count() or 1)
        self._idle: queue.Queue[_Server] = queue.Queue()
        self._all: list[_Server] = []
        self._lock = threading.Lock()
        self._closed = False
        self.restarts = 0
        self.walls: dict = {}  # which kernel walls hold: {"seccomp": {"active", "detail"}, "landlock": ...}
        with ThreadPoolExecutor(self.workers) as ex:
            for server in ex.map(lambda _: _Server(self.package_dir), range(self.workers)):
                self._all.append(server)
                self._idle.put(server)
        self.walls = self._all[0].walls
        missing = [name for name, wall in self.walls.items() if not wall.get("active")]
        if missing:  # the pool still serves, and says so: SandboxPool.walls, docs/environment.md
            _log.warning("sandbox kernel walls missing on this machine: %s", describe_walls(self.walls))

    def run(self, code: str, entry: str, inputs: list[str], numpy_mode: bool = False,
            printed: bool = True, limits: Limits | None = None, perturb: list[str] | None = None) -> dict:
        """Run ``code``'s ``entry`` on each input (keyword-argument text); the raw result.

        ``numpy_mode`` lets the candidate import NumPy (the paper's reasoning control);
        ``printed`` also returns each value's printed form (what official grading compares);
        ``perturb``: counted zwc names whose results on the test's data the library changes
        (the grader's counterfactual run, ``dependence.py``).
        """
        if self._closed:
            raise SandboxError("the sandbox pool is closed")
        limits = limits or self.limits
        payload = {"code": code, "entry": entry, "inputs": list(inputs), "limits": asdict(limits),
                   "numpy": bool(numpy_mode), "printed": bool(printed)}
        if perturb:
            payload["perturb"] = sorted(perturb)
        server = self._idle.get()
        try:
            for _attempt in range(2):  # a server found dead is replaced and the job sent again
                answer = server.request(payload, timeout=limits.wall_s + 30.0)
                if answer is not None and server.alive():
                    return answer
                server = self._replace(server)
            return {"records": [], "killed": "", "signal": 0, "exit_code": None, "seconds": 0.0,
                    "server_error": "the sandbox server died twice on this job"}
        finally:
            self._idle.put(server)

    def run_many(self, jobs: list[tuple]) -> list[dict]:
        """Run many (code, entry, inputs[, numpy_mode[, printed]]) jobs (or dicts of ``run``'s
        arguments), every server busy; in order."""
        with ThreadPoolExecutor(self.workers) as ex:
            return list(ex.map(lambda job: self.run(**job) if isinstance(job, dict) else self.run(*job), jobs))

    def _replace(self, dead: _Server) -> _Server:
        dead.kill()
        fresh = _Server(self.package_dir)
        with self._lock:
            self._all[self._all.index(dead)] = fresh
            self.restarts += 1
        return fresh

    def close(self) -> None:
        self._closed = True
        for server in self._all:
            try:
                server.proc.stdin.close()
            except OSError:
                pass
            deadline = time.monotonic() + 2
            while server.alive() and time.monotonic() < deadline:
                time.sleep(0.01)
            if server.alive():
                server.kill()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            self.close()
