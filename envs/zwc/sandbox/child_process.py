"""One confined child's life, and how a fork server starts, reads and ends it.

In the fork servers every child is forked by the server's zygote (``zygote.py``), ahead of its
job, and lives ``child_life``: it confines itself (``child.confine``), waits for one
job on its job pipe (``start``), runs ``body(out, job)`` writing JSON lines to ``out``, exits.
The server reads those lines until EOF or the wall-clock limit (``collect``), kills the
child's whole process group on timeout or on too much output, reaps it and classifies how it
ended (death by SIGSYS: the seccomp filter of ``kernel_walls`` stopped a forbidden system
call, answered as ``"killed": "syscall"``). A child whose last line was ``{"event": "end"}``
said everything: it is answered at once, killed (nothing it runs after its end record can
matter or delay anything) and reaped later by ``reap``, off the hot path.

What a child wrote is read as records only while each line is a JSON object at most
``MAX_RECORD_DEPTH`` deep; reading stops at the first line that is not (as at a line a kill
cut short), so nothing a candidate writes to its own pipe can make the server fail. Its
working directory is removed after it is reaped, by ``workdirs.remove_tree`` (iterative,
never following a link), on the server's ``Janitor`` thread where one was started
(``start_janitor``), else at once.

``spawn`` forks a child from the calling process itself: for a process that never served a
job (the tests of ``test_kernel_walls.py``); the fork servers never use it.
"""

from __future__ import annotations

import json
import os
import select
import signal
import tempfile
import time
from dataclasses import dataclass

from envs.zwc.sandbox import wire
from envs.zwc.sandbox.workdirs import Janitor, remove_tree

MAX_CHILD_BYTES = 8 * 1024 * 1024
MAX_RECORD_DEPTH = 256  # JSON nesting of one record: an honest one stays under ~200 (encode's 64 levels)

_FINISHING: list[tuple[int, str]] = []  # children that reported "end" and are still exiting
_JANITOR: list[Janitor] = []


def close_all(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def start_janitor() -> None:
    """Remove working directories on a thread from now on (call it once the process forks no more)."""
    if not _JANITOR:
        _JANITOR.append(Janitor())


def _dispose(workdir: str) -> None:
    if _JANITOR:
        _JANITOR[0].remove(workdir)
    else:
        remove_tree(workdir)


def reap(block: bool = False) -> None:
    """Collect children that finished, and have their working directories removed."""
    for pid, workdir in list(_FINISHING):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _FINISHING.remove((pid, workdir))
            _dispose(workdir)


def finish(timeout: float = 1.5) -> None:
    """At a server's end: reap every child, then wait (at most ``timeout`` s) for the removals."""
    reap(block=True)
    if _JANITOR:
        _JANITOR.pop().close(timeout)


@dataclass
class Spare:
    """A forked, confined child waiting for its job on a pipe (fork and confinement are paid
    before the job arrives, off its clock)."""

    pid: int
    job_fd: int
    result_fd: int
    workdir: str
    limits: dict


def child_life(result_fd: int, job_read: int, workdir: str, limits: dict, keep: tuple[int, ...], confine,
               body) -> None:
    """A child's whole life (never returns): ``confine(result_fd, workdir, limits, keep)``
    closes every other descriptor, then one job is read from ``job_read`` (plain ``read``:
    the seccomp filter refuses ``recvmsg``; EOF instead ends the child) and ``body(out, job)``
    runs."""
    status = 0
    try:
        confine(result_fd, workdir, limits, (*keep, job_read))
        job = wire.receive(job_read)
        os.close(job_read)
        with os.fdopen(result_fd, "w") as out:
            body(out, job)
    except BaseException:  # noqa: BLE001
        status = 3
    os._exit(status)


def spawn(limits: dict, body, confine, keep: tuple[int, ...] = ()) -> Spare:
    """Fork a child of this process that lives ``child_life`` (see the module's note: tests only)."""
    workdir = tempfile.mkdtemp(prefix="zwc-sandbox-")
    read_fd, write_fd = os.pipe()
    job_read, job_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        child_life(write_fd, job_read, workdir, limits, keep, confine, body)
    os.close(write_fd)
    os.close(job_read)
    return Spare(pid, job_write, read_fd, workdir, dict(limits))


def start(spare: Spare, job) -> float:
    """Hand ``spare`` its job; the time its clock starts."""
    started = time.monotonic()
    try:
        wire.send(spare.job_fd, job)
    except OSError:  # it died waiting; collect() says how
        pass
    finally:
        os.close(spare.job_fd)
    return started


def discard(spare: Spare) -> None:
    """End a spare that will get no job."""
    os.close(spare.job_fd)  # it reads EOF and exits; killed too, in case it is not reading
    kill_group(spare.pid)
    os.close(spare.result_fd)
    try:
        os.waitpid(spare.pid, 0)
    except ChildProcessError:
        pass
    _dispose(spare.workdir)


def _too_deep(value, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if type(item) is dict:
            stack.extend((v, depth + 1) for v in item.values())
        elif type(item) is list:
            stack.extend((v, depth + 1) for v in item)
    return False


def records_of(data: bytes) -> list[dict]:
    """The records in what a child wrote: its lines up to the first that is not a JSON object
    (a line cut by a kill, or anything a candidate wrote there itself) or is nested deeper
    than ``MAX_RECORD_DEPTH``."""
    records = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            break
        if type(record) is not dict or (len(line) > 2 * MAX_RECORD_DEPTH and _too_deep(record, MAX_RECORD_DEPTH)):
            break
        records.append(record)
    return records


def collect(spare: Spare, started: float) -> dict:
    """Read a started child's records until it ends or its wall-clock limit; how it ended."""
    read_fd, pid, workdir = spare.result_fd, spare.pid, spare.workdir
    data, killed = bytearray(), ""
    deadline = started + float(spare.limits["wall_s"])
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                killed = "timeout"
                break
            ready, _, _ = select.select([read_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            data += chunk
            if len(data) > MAX_CHILD_BYTES:
                killed = "output"
                break
    finally:
        os.close(read_fd)
    records = records_of(bytes(data))
    ended = bool(records) and records[-1].get("event") == "end"
    if not killed and ended:  # it said everything: answer now, reap it later
        kill_group(pid)
        _FINISHING.append((pid, workdir))
        return {"records": records, "killed": "", "signal": 0, "exit_code": 0,
                "seconds": time.monotonic() - started}
    if killed:
        kill_group(pid)
    _, status = os.waitpid(pid, 0)
    _dispose(workdir)
    signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    if not killed and signal_number in (signal.SIGXCPU, signal.SIGKILL) and not ended:
        killed = "timeout"
    if not killed and signal_number == signal.SIGSYS:  # the seccomp filter ended it (kernel_walls)
        killed = "syscall"
    return {"records": records, "killed": killed, "signal": signal_number,
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "seconds": time.monotonic() - started}


def run_child(limits: dict, body, confine, keep: tuple[int, ...] = ()) -> dict:
    """Run ``body(out)`` in a child forked from this process (``spawn``); its records and how it ended."""
    spare = spawn(limits, lambda out, _job: body(out), confine, keep)
    return collect(spare, start(spare, {}))


def kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            continue
