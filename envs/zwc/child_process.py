"""Fork one confined child, read what it says on a pipe, end it: shared by both fork servers.

The child confines itself (``sandbox_child.confine``) and runs ``body(out)``, writing JSON lines
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


def run_child(limits: dict, body, confine, keep: tuple[int, ...] = ()) -> dict:
    """Run ``body(out)`` in a confined child; its records and how it ended.

    ``confine(write_fd, workdir, limits, keep)`` is called first in the child; ``keep``: other
    descriptors the child holds on to (the library channel)."""
    reap()
    workdir = tempfile.mkdtemp(prefix="zwc-sandbox-")
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 0
        try:
            os.close(read_fd)
            confine(write_fd, workdir, limits, keep)
            with os.fdopen(write_fd, "w") as out:
                body(out)
        except BaseException:  # noqa: BLE001
            status = 3
        os._exit(status)
    os.close(write_fd)
    data, killed = bytearray(), ""
    deadline = started + float(limits["wall_s"])
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


def kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            continue
