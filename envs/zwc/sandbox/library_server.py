"""The library server: the one process per worker that holds NumPy and the real zwc.

Forked by the stub server (``forkserver.py``) at start-up, before that server imports
anything a candidate could reach, and spoken to over a UNIX socket that also carries file
descriptors. It imports NumPy (single-threaded BLAS, since children are forked), the
build's zwc package, and calls every zwc function once so that lazy imports happen here and
not in a child that may not import. Then, per request:

* ``prepare``: have the library child of the next candidate (``library_child.py``) forked on
  the channel descriptor that came with the request, confined as a candidate is (it computes
  on the candidate's data); it waits for its job;
* ``library``: hand that child the candidate's test inputs and answer with the call log the
  child wrote to this server;
* ``numpy``: run one candidate of the NumPy control in a confined child (it imports NumPy, so
  it cannot live in the stub server).

Every child is forked by this server's zygote (``zygote.py``), forked once when the set-up
above is done and before the first request: no child holds another job's inputs, log or code.
Its kind (``library`` or ``numpy``) picks the body it runs, built here before the zygote.
"""

from __future__ import annotations

import gc
import os
import socket

from envs.zwc.sandbox import wire
from envs.zwc.sandbox import zygote as zygotes
from envs.zwc.sandbox.child_process import collect, discard, finish, reap, start, start_janitor


def _warm(zwc_module, runtime) -> None:
    """Call each function on its catalogue sample so lazy imports happen before forking."""
    import numpy

    from envs.zwc.library.catalogue import CATALOGUE

    samples = {}
    for entry in CATALOGUE:
        target = numpy
        for part in entry.call_target.split(".")[1:]:
            target = getattr(target, part)
        samples[id(target)] = entry.call_sample
    for module in (zwc_module, zwc_module.rfx):
        for name in module.__all__:
            fn = getattr(module, name)
            sample = samples.get(id(getattr(fn, "_zwc_target", None)))
            if sample is None:
                continue
            try:
                args = eval(sample, {"arr": runtime.ZWCArray, "abs": abs})  # noqa: S307 - our data
                str(fn(*args))
            except Exception:  # noqa: BLE001 - warming is best effort; tests check the catalogue
                continue


def receive_request(sock: socket.socket) -> tuple[dict, list[int]]:
    """One framed request and the descriptors that came with its first bytes."""
    head, fds, _flags, _addr = socket.recv_fds(sock, 4, 4)
    if not head:
        raise wire.ChannelClosed("the stub server closed the control socket")
    while len(head) < 4:
        more = sock.recv(4 - len(head))
        if not more:
            raise wire.ChannelClosed("the stub server closed the control socket")
        head += more
    size = int.from_bytes(head, "big")
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(min(size - len(body), 1 << 20))
        if not chunk:
            raise wire.ChannelClosed("the stub server closed the control socket")
        body += chunk
    import json

    return json.loads(body.decode()), fds


def send_request(sock: socket.socket, request: dict, fds: list[int]) -> None:
    import json

    body = json.dumps(request).encode()
    socket.send_fds(sock, [len(body).to_bytes(4, "big") + body], fds)


def serve(sock: socket.socket, package_dir: str) -> None:
    """The library server's life: import, warm, freeze, then answer the stub server."""
    from envs.zwc.library.package import import_zwc

    zwc, runtime = import_zwc(package_dir)  # imported once, before any fork
    from envs.zwc.sandbox import child as harness
    from envs.zwc.sandbox.library_child import LibraryCatalogue, LibrarySession
    from envs.zwc.sandbox.sessions import InProcessSession
    from envs.zwc.sandbox.state import freeze_heap_types

    _warm(zwc, runtime)
    proxies, state = harness.prepare(zwc)
    numpy_session = InProcessSession(runtime, zwc)
    catalogue = LibraryCatalogue(zwc, runtime)

    def library(out, job, keep):  # the bodies a child runs, chosen in the zygote by kind
        LibrarySession(keep[0], out, list(job["inputs"]), catalogue, job.get("perturb")).serve()

    def numpy_control(out, job, keep):
        harness.run_candidate(job, out, numpy_session, proxies, state)

    freeze_heap_types()  # last: every class a child can reach exists now
    gc.collect()
    gc.freeze()  # children need not touch (and so copy) the pages of everything imported so far
    zygote = zygotes.start({"library": library, "numpy": numpy_control}, harness.confine)  # before any job
    start_janitor()  # a thread: this process forks no more
    wire.send(sock.fileno(), {"ready": True, "pid": os.getpid()})
    spare = [None]  # the library child of the next candidate, forked ahead
    try:
        while _answer(sock, zygote, spare):
            reap(block=True)  # the children answered were killed after their end record
    finally:
        if spare[0] is not None:
            discard(spare[0])
        zygote.close()
        finish()


def _answer(sock: socket.socket, zygote, spare: list) -> bool:
    """Read and answer one request of the stub server; False once it has gone."""
    try:
        request, fds = receive_request(sock)
    except (wire.ChannelClosed, OSError, ValueError):
        return False
    answer = None
    try:
        op = request.get("op")
        if op == "prepare" and len(fds) == 1:
            if spare[0] is not None:
                discard(spare[0])
                spare[0] = None
            spare[0] = zygote.spawn("library", request["limits"], keep=(fds[0],))
        elif op == "discard":
            if spare[0] is not None:
                discard(spare[0])
            spare[0] = None
        elif op == "library":
            if spare[0] is None:
                raise RuntimeError("no library child was prepared for this candidate")
            job, spare[0] = spare[0], None
            answer = collect(job, start(job, {"inputs": list(request["inputs"]),
                                              "perturb": list(request.get("perturb") or [])}))
        elif op == "numpy":
            job = zygote.spawn("numpy", request["job"]["limits"])
            answer = collect(job, start(job, request["job"]))
        else:
            answer = {"server_error": f"the library server got a request it does not know ({op!r})"}
    except Exception as exc:  # noqa: BLE001 - the server must keep serving
        answer = {"server_error": f"library server: {type(exc).__name__}: {exc}"}
    finally:
        for fd in fds:
            os.close(fd)
    if answer is not None:  # prepare and discard are not answered
        answer["id"] = request.get("id")
        wire.send(sock.fileno(), answer)
    return True
