"""Fork one confined child, read what it says on a pipe, end it: shared by both fork servers.

A child can be forked ahead of its job (``spawn``, then ``start`` and ``collect``): the fork
servers keep one ready, so a candidate's clock starts with its tests, not with a fork. The
child confines itself (``sandbox_child.confine``) and runs ``body(out)``, writing JSON lines
to ``out``; the server reads them until EOF or the wall-clock limit, kills the child's whole
process group on timeout or on too much output, reaps it and classifies how it ended (death by
SIGSYS: the seccomp filter of ``kernel_walls`` stopped a forbidden system call, answered as
``"killed": "syscall"``). A child whose last line was ``{"event": "end"}`` said everything: it
is answered at once and reaped later, off the hot path.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass

from envs.zwc import wire

MAX_CHILD_BYTES = 8 * 1024 * 1024

_FINISHING: list[tuple[int, str]] = []  # children that reported "end" and are still exiting


def reap(block: bool = False) -> None:
    """Collect children that finished; their exit (address-space teardown) is off the hot path."""
    for pid, workdir in list(_FINISHING):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _FINISHING.remove((pid, workdir))
            shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class Spare:
    """A forked, confined child waiting for its job on a pipe (fork and confinement are paid
    before the job arrives, off its clock)."""

    pid: int
    job_fd: int
    result_fd: int
    workdir: str
    limits: dict


def spawn(limits: dict, body, confine, keep: tuple[int, ...] = ()) -> Spare:
    """Fork a child that confines itself, then waits for one job and runs ``body(out, job)``.

    ``confine(write_fd, workdir, limits, keep)`` is called first in the child; ``keep``: other
    descriptors the child holds on to (the library channel). The job comes over a pipe (plain
    ``read``: the seccomp filter refuses ``recvmsg``)."""
    reap()
    workdir = tempfile.mkdtemp(prefix="zwc-sandbox-")
    read_fd, write_fd = os.pipe()
    job_read, job_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 0
        try:
            os.close(read_fd)
            os.close(job_write)
            confine(write_fd, workdir, limits, (*keep, job_read))
            job = wire.receive(job_read)  # the server closing the pipe instead ends the child here
            os.close(job_read)
            with os.fdopen(write_fd, "w") as out:
                body(out, job)
        except BaseException:  # noqa: BLE001
            status = 3
        os._exit(status)
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
    os.waitpid(spare.pid, 0)
    shutil.rmtree(spare.workdir, ignore_errors=True)


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
    records = []
    for line in bytes(data).decode("utf-8", "replace").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut short by a kill
    ended = bool(records) and records[-1].get("event") == "end"
    if not killed and ended:  # it said everything: answer now, reap it later
        _FINISHING.append((pid, workdir))
        return {"records": records, "killed": "", "signal": 0, "exit_code": 0,
                "seconds": time.monotonic() - started}
    if killed:
        kill_group(pid)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(workdir, ignore_errors=True)
    signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    if not killed and signal_number in (signal.SIGXCPU, signal.SIGKILL) and not ended:
        killed = "timeout"
    if not killed and signal_number == signal.SIGSYS:  # the seccomp filter ended it (kernel_walls)
        killed = "syscall"
    return {"records": records, "killed": killed, "signal": signal_number,
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "seconds": time.monotonic() - started}


def run_child(limits: dict, body, confine, keep: tuple[int, ...] = ()) -> dict:
    """Run ``body(out)`` in a freshly forked confined child; its records and how it ended."""
    spare = spawn(limits, lambda out, _job: body(out), confine, keep)
    return collect(spare, start(spare, {}))


def kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            continue
