"""The stub fork server: runs each candidate in a confined child, in a process without NumPy.

Run as ``python -m envs.zwc.sandbox.forkserver PACKAGE_DIR`` by ``pool.SandboxPool``; speaks JSON
lines on stdin/stdout. At start it probes the kernel walls (``kernel_walls.probe``), then forks
the library server (``library_server.py``), the only process of this worker that imports
NumPy and the real zwc, and keeps a UNIX socket to it. This process imports neither: its
candidates' ``zwc`` is the stub of ``zwc_stub.py``, so nothing they can reach by any
reflection holds NumPy, the zwc implementation, its name table or the call log. Once set up
(proxies, frozen types, ``gc.freeze``) and before it reads its first request, it forks its
zygote (``zygote.py``), and every candidate child is forked from that zygote, never from this
process: a child's memory holds no request, answer or code of any other job, whatever
reflection reaches (frames, ``gc``, ``sys.stdin``'s buffers, freed heap).

Per candidate: a socket pair, one end sent to the library server, which has its own zygote
fork that candidate's library child on it, the other end kept by the candidate child that this
server's zygote forks (``child.run_candidate``). Both are forked and confined ahead,
after the previous answer went out (``_Pairs``), and wait for their jobs: the code, and the
test inputs, which go to the library child only. The answer carries the candidate's records
and, separately, the library's log as the library server sent it: the grader reads which zwc
functions ran from the latter only. A request of the NumPy control (``numpy``: the candidate
imports NumPy) is run by the library server, in a child of its zygote. Children's working
directories are removed on a janitor thread (``child_process.start_janitor``). A server whose
zygote or library server is gone exits (the pool starts a fresh one and sends the job again).
The hello line carries ``walls`` and ``numpy_loaded`` (False: this server has no NumPy).
"""

from __future__ import annotations

import gc
import json
import os
import select
import socket
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

LIBRARY_GRACE_S = 5.0  # how long past the wall-clock limit the library's log may take to arrive


def _start_library(package_dir: str) -> socket.socket:
    """Fork the library server; the socket to it."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        ours.close()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1):  # the stub server's protocol pipes are not the library server's
            os.dup2(devnull, fd)
        status = 0
        try:
            from envs.zwc.sandbox import library_server

            library_server.serve(theirs, package_dir)
        except BaseException:  # noqa: BLE001
            status = 3
        os._exit(status)
    theirs.close()
    return ours


_NEXT_ID = [0]


def _receive(sock: socket.socket, timeout: float, request_id: int | None = None):
    """The library server's answer to request ``request_id`` (an answer to an older request,
    given up on, is dropped), or None after ``timeout`` seconds."""
    from envs.zwc.sandbox import wire

    deadline = time.monotonic() + timeout
    while wire.pending(sock.fileno()) or select.select([sock], [], [], max(0.0, deadline - time.monotonic()))[0]:
        try:
            answer = wire.receive(sock.fileno())
        except (wire.ChannelClosed, wire.FrameError, OSError):
            return None
        if request_id is None or (isinstance(answer, dict) and answer.pop("id", None) == request_id):
            return answer
    return None


def _ask(library: socket.socket, request: dict, fds: list[int]) -> int:
    from envs.zwc.sandbox.library_server import send_request
    from envs.zwc.sandbox.zygote import ZygoteGone

    _NEXT_ID[0] += 1
    try:
        send_request(library, {**request, "id": _NEXT_ID[0]}, fds)
    except OSError as exc:  # the library server is gone: this worker cannot grade; the pool replaces it
        raise ZygoteGone(f"the library server is gone: {exc}") from None
    return _NEXT_ID[0]


class _Pairs:
    """The next candidate's two children, forked ahead: its candidate child here and its library
    child in the library server, joined by a fresh socket pair, both confined and waiting."""

    def __init__(self, library: socket.socket, zygote):
        self.library, self.zygote = library, zygote
        self.ready = None  # a child_process.Spare whose library twin waits in the library server

    def prepare(self, limits: dict) -> None:
        candidate_end, library_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            _ask(self.library, {"op": "prepare", "limits": limits}, [library_end.fileno()])
            self.ready = self.zygote.spawn("candidate", limits, keep=(candidate_end.fileno(),))
        finally:
            library_end.close()
            candidate_end.close()

    def take(self, limits: dict):
        """The ready pair if it was made for ``limits``, else a fresh one."""
        from envs.zwc.sandbox.child_process import discard

        if self.ready is not None and self.ready.limits != limits:
            discard(self.ready)
            self.ready = None
        if self.ready is None:
            self.prepare(limits)
        spare, self.ready = self.ready, None
        return spare


def _run_stub(request: dict, pairs: _Pairs) -> dict:
    from envs.zwc.sandbox.child_process import collect, start

    spare = pairs.take(request["limits"])
    request_id = _ask(pairs.library, {"op": "library", "inputs": request["inputs"],
                                      "perturb": list(request.get("perturb") or [])}, [])
    answer = collect(spare, start(spare, request))
    log = _receive(pairs.library, float(request["limits"]["wall_s"]) + LIBRARY_GRACE_S, request_id)
    answer["library"] = log if isinstance(log, dict) else {"server_error": "the library server did not answer"}
    return answer


def serve(package_dir: str) -> None:
    from envs.zwc.sandbox import kernel_walls

    walls = kernel_walls.probe()  # first, while this process is small: the probe forks once
    library = _start_library(package_dir)

    from envs.zwc.sandbox import child as harness
    from envs.zwc.sandbox import sessions
    from envs.zwc.sandbox import zygote as zygotes
    from envs.zwc.sandbox.child_process import discard, finish, start_janitor
    from envs.zwc.sandbox.state import freeze_heap_types

    proxies, state = harness.prepare(None)

    def candidate(out, job, keep):  # what a candidate child runs (chosen in the zygote by its kind)
        harness.run_candidate(job, out, sessions.StubSession(keep[0]), proxies, state)

    freeze_heap_types()  # last: every class a child can reach exists now
    gc.collect()
    gc.freeze()
    zygote = zygotes.start({"candidate": candidate}, harness.confine)  # before any request exists here
    start_janitor()  # a thread: this process forks no more
    ready = _receive(library, 120.0)
    protocol_out = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints must not corrupt the protocol
    hello = {"ready": bool(ready and ready.get("ready")), "pid": os.getpid(), "walls": walls,
             "numpy_loaded": "numpy" in sys.modules}
    protocol_out.write(json.dumps(hello) + "\n")
    protocol_out.flush()
    pairs = _Pairs(library, zygote)
    try:
        _loop(pairs, protocol_out)
    finally:
        if pairs.ready is not None:
            discard(pairs.ready)
        library.close()
        zygote.close()
        finish()


def _loop(pairs: _Pairs, protocol_out) -> None:
    """Answer requests until stdin closes (``ZygoteGone`` ends it early)."""
    from envs.zwc.sandbox.child_process import reap

    library = pairs.library
    for line in sys.stdin:
        if not line.strip():
            continue
        started = time.monotonic()
        request: dict = {}
        try:
            request = json.loads(line)
            if request.get("numpy"):
                request_id = _ask(library, {"op": "numpy", "job": request}, [])
                answer = _receive(library, float(request["limits"]["wall_s"]) + LIBRARY_GRACE_S, request_id)
                if not isinstance(answer, dict):
                    answer = {"records": [], "killed": "", "signal": 0, "exit_code": None, "seconds": 0.0,
                              "server_error": "the library server did not answer"}
            else:
                answer = _run_stub(request, pairs)
        except Exception as exc:  # noqa: BLE001 - the server must keep serving
            answer = {"records": [], "killed": "", "signal": 0, "exit_code": None,
                      "seconds": time.monotonic() - started, "server_error": f"{type(exc).__name__}: {exc}"}
        protocol_out.write(json.dumps(answer) + "\n")
        protocol_out.flush()
        if "limits" in request and not request.get("numpy") and pairs.ready is None:
            try:  # the next candidate's children, forked while the grader reads this answer
                pairs.prepare(request["limits"])
            except Exception:  # noqa: BLE001 - the next request prepares its own
                pairs.ready = None
        reap(block=True)  # the children of this answer were killed after their end record


if __name__ == "__main__":
    serve(sys.argv[1])
