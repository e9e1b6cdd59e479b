"""The zygote: the process every sandbox child of a fork server is forked from, and that never
saw a job.

A fork server (``forkserver.py``, ``library_server.py``) that forked its children itself would
fork them with the last job still in its memory: the request it read (a reference solution's
code, its test inputs), the answer it wrote (values, the library's log), freed heap that
still holds their bytes. A child that gets around its Python walls reads them. So each server
forks its zygote once, at the end of its set-up (imports, proxies, ``freeze_heap_types``,
``gc.freeze``) and before it reads its first request, and asks it for every child: the zygote's
memory, and so every child's, holds no request, answer, log or code of any job. A child then
receives its own job, and only its own, on its job pipe.

The zygote's loop reads only ``spawn`` commands from its server, on a UNIX socket
(``SOCK_SEQPACKET``: one command a message): a kind name, the limits, the working directory the
server made, and (SCM_RIGHTS) the descriptors the child keeps (the library channel). The body
a child runs is chosen here from the kind name, among bodies the server built before forking
the zygote (``start``'s ``bodies``): code never crosses the socket. The child must be the
server's own, so that the server waits for, kills and classifies it as if it had forked it
(``child_process.collect`` reads its ``waitpid`` status): the zygote makes it with
``clone(CLONE_PARENT)`` (one copy of the zygote, born the server's child; CPython's
``PyOS_BeforeFork``/``PyOS_AfterFork_*`` around the call, as ``os.fork`` has them; glibc's
descriptor of the child's one thread keeps the zygote's thread id, which a raw ``clone`` does
not update: harmless in a single-threaded child that takes no PI or robust mutex, and no thread
can start under its seccomp filter), and where
that call is not available (an architecture without its number here, or a filter refusing it)
forks twice, zygote -> intermediate -> child, the intermediate exiting at once and reaped by
the zygote, so that the child is reparented to the server, a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``), before the zygote answers. The answer is the child's pid
and the server's ends of its job and result pipes (SCM_RIGHTS). The child confines itself and
waits for its job on the pipe (``child_process.child_life``). Cost, timed one spawn at a time
in a 30 MB process with NumPy imported (2-core AMD EPYC): ~3.8 ms per spawn through ``clone``,
~2.4 ms for a fork by the server itself, ~8.7 ms through an intermediate (whose fork and exit
copy and free the page tables once more).

The zygote dies with its server (``PR_SET_PDEATHSIG``, and at EOF on its socket). A server
whose zygote is gone cannot make a clean child: ``Zygote.spawn`` raises ``ZygoteGone``, which
ends the server, and the pool starts a fresh one.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import signal
import socket
import tempfile

from envs.zwc.sandbox.child_process import Spare, child_life, close_all

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
_CLONE_PARENT = 0x00008000
_CLONE = {"x86_64": 56, "aarch64": 220}  # the clone system call's number (linux/unistd.h)
_MESSAGE = 1 << 16  # bytes of one command or answer, at most
_libc = ctypes.CDLL(None, use_errno=True)
_syscall = ctypes.PyDLL(None, use_errno=True).syscall  # a PyDLL call keeps the GIL, as os.fork does
_syscall.restype, _syscall.argtypes = ctypes.c_long, [ctypes.c_long] * 6
_SIBLINGS = [True]  # clone(CLONE_PARENT) works here (cleared at its first failure)


class ZygoteGone(BaseException):
    """The zygote stopped answering: no clean child can be made (not an ``Exception``, so that
    it ends the server instead of being answered as one job's error)."""


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}, {value}) failed")


class Zygote:
    """A server's handle on its zygote: ``spawn`` a confined child of a kind, waiting for its job."""

    def __init__(self, pid: int, sock: socket.socket):
        self.pid, self.sock = pid, sock

    def spawn(self, kind: str, limits: dict, keep: tuple[int, ...] = ()) -> Spare:
        """A fresh child running ``kind``'s body, confined by ``limits``, holding ``keep`` (the
        server's copies stay the caller's to close); it waits for ``child_process.start``."""
        workdir = tempfile.mkdtemp(prefix="zwc-sandbox-")
        command = json.dumps({"kind": kind, "limits": limits, "workdir": workdir}).encode()
        try:
            socket.send_fds(self.sock, [command], list(keep))
            reply, fds, _flags, _addr = socket.recv_fds(self.sock, _MESSAGE, 2)
        except OSError as exc:
            os.rmdir(workdir)
            raise ZygoteGone(f"the zygote is gone: {exc}") from None
        if not reply:
            os.rmdir(workdir)
            raise ZygoteGone("the zygote closed its socket")
        answer = json.loads(reply)
        if "pid" not in answer or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            os.rmdir(workdir)
            raise RuntimeError(f"the zygote could not make a child: {answer.get('error', answer)}")
        job_fd, result_fd = fds
        return Spare(int(answer["pid"]), job_fd, result_fd, workdir, dict(limits))

    def close(self) -> None:
        """End the zygote (EOF on its socket) and reap it."""
        self.sock.close()
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def start(bodies: dict, confine) -> Zygote:
    """Make the calling server a child subreaper and fork its zygote.

    ``bodies``: kind name -> ``body(out, job, keep)``, run by a child of that kind with its job
    and the descriptors it kept; ``confine``: ``child.confine``. Call it once, after the
    server's set-up and before its first request."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server = os.getpid()
    pid = os.fork()
    if pid == 0:  # the zygote: never returns
        status = 0
        try:
            ours.close()
            _serve(theirs.detach(), server, bodies, confine)
        except BaseException:  # noqa: BLE001
            status = 3
        os._exit(status)
    theirs.close()
    return Zygote(pid, ours)


def _serve(fd: int, server: int, bodies: dict, confine) -> None:
    """The zygote's life: one child per command until its server is gone."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != server:  # the server died before the line above
        return
    devnull = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    os.closerange(3, fd)  # nothing of the server's stays open here: its pipes, the library socket
    os.closerange(fd + 1, 1 << 16)
    sock = socket.socket(fileno=fd)
    pid_read, pid_write = os.pipe()  # the intermediate reports the child's pid here
    os.set_blocking(pid_read, False)
    while True:
        try:
            command, fds, _flags, _addr = socket.recv_fds(sock, _MESSAGE, 8)
        except OSError:
            return
        if not command:
            return  # the server closed its end
        give: list[int] = []
        try:
            reply, give = _fork(json.loads(command), tuple(fds), bodies, confine, pid_read, pid_write)
        except Exception as exc:  # noqa: BLE001 - the server raises it for that request
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for kept in fds:
                os.close(kept)
        try:
            socket.send_fds(sock, [json.dumps(reply).encode()], give)
        except OSError:
            return
        finally:
            for end in give:
                os.close(end)


def _fork(command: dict, keep: tuple[int, ...], bodies: dict, confine, pid_read: int,
          pid_write: int) -> tuple[dict, list[int]]:
    """Fork one child of the server; its pid and the server's ends of its pipes."""
    body = bodies[command["kind"]]
    limits, workdir = dict(command["limits"]), str(command["workdir"])
    result_read, result_write = os.pipe()
    job_read, job_write = os.pipe()

    def life() -> None:  # the child's: never returns
        child_life(result_write, job_read, workdir, limits, keep, confine, lambda out, job: body(out, job, keep))

    try:
        child = _clone_sibling() if _SIBLINGS else -1
        if child == 0:
            life()
        if child < 0:  # no clone(CLONE_PARENT) here: fork through an intermediate that exits at once
            _SIBLINGS.clear()
            child = _fork_through(life, pid_read, pid_write)
    except BaseException:
        close_all(result_read, job_write)
        raise
    finally:
        close_all(result_write, job_read)
    return {"pid": child}, [job_write, result_read]


def _clone_sibling() -> int:
    """``clone(CLONE_PARENT | SIGCHLD)``: a child of the server (this process's parent) with a
    copy of this process, as ``os.fork`` makes one (CPython's ``PyOS_BeforeFork`` and
    ``PyOS_AfterFork_*`` around it, the GIL held throughout); 0 in the child, -1 where it
    cannot be made (an unknown architecture, a kernel or host filter that refuses it)."""
    number = _CLONE.get(platform.machine())
    if number is None:
        return -1
    api = ctypes.pythonapi
    api.PyOS_BeforeFork()
    pid = _syscall(number, _CLONE_PARENT | signal.SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        api.PyOS_AfterFork_Child()
    else:
        api.PyOS_AfterFork_Parent()
    return int(pid)


def _fork_through(life, pid_read: int, pid_write: int) -> int:
    """zygote -> intermediate -> child; the intermediate exits at once and is reaped here, so the
    child is the server's (a child subreaper) before its pid is answered."""
    middle = os.fork()
    if middle == 0:  # the intermediate: fork the child, report its pid, exit
        child = 0
        try:
            child = os.fork()
            if child == 0:
                life()
        except BaseException:  # noqa: BLE001
            child = 0
        try:
            os.write(pid_write, child.to_bytes(8, "little"))
        finally:
            os._exit(0)
    os.waitpid(middle, 0)  # reaped: the child is the server's now
    try:
        child = int.from_bytes(os.read(pid_read, 8), "little")
    except BlockingIOError:
        child = 0
    if child <= 0:
        raise OSError("the intermediate could not fork the child")
    return child
