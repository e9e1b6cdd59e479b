"""The fork server: a long-lived process that forks one confined child per candidate.

Run as ``python -m envs.zwc.forkserver PACKAGE_DIR`` by ``sandbox.SandboxPool``; speaks
JSON lines on stdin/stdout. Before serving it imports NumPy (single-threaded BLAS, since
children are forked), the zwc package, the allowed modules, and calls every zwc function
once so that lazy imports happen here and not in a child that may not import; then it
builds the module proxies and the fingerprint of shared state, and makes every class
immutable (``sandbox_state.py``).

Per request: a private working directory, a pipe, ``fork``; the child confines itself and
runs the candidate (``sandbox_child``); the server reads the child's JSON lines until EOF
or the wall-clock limit, kills the child's whole process group on timeout or on too much
output, reaps it, classifies how it ended and answers (death by SIGSYS: the seccomp filter of
``kernel_walls`` stopped a forbidden system call, answered as ``"killed": "syscall"``).
Nothing the child does can reach the server except bytes on that pipe, which the server
reads with a size cap. The hello line carries ``walls``: the kernel walls that a probe at
start-up found working (``kernel_walls.probe``).
"""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

MAX_CHILD_BYTES = 8 * 1024 * 1024


def _warm(zwc_module, runtime) -> None:
    """Call each function on its catalogue sample so lazy imports happen before forking."""
    import numpy

    from envs.zwc.catalogue import CATALOGUE

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


_FINISHING: list[tuple[int, str]] = []  # children that reported "end" and are still exiting


def _reap(block: bool = False) -> None:
    """Collect children that finished; their exit (address-space teardown) is off the hot path."""
    for pid, workdir in list(_FINISHING):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _FINISHING.remove((pid, workdir))
            shutil.rmtree(workdir, ignore_errors=True)


def _run_one(request: dict, runtime, proxies, state, harness) -> dict:
    _reap()
    workdir = tempfile.mkdtemp(prefix="zwc-sandbox-")
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 0
        try:
            os.close(read_fd)
            harness.confine(write_fd, workdir, request["limits"])
            with os.fdopen(write_fd, "w") as out:
                harness.run_candidate(request, out, runtime, proxies, state)
        except BaseException:  # noqa: BLE001
            status = 3
        os._exit(status)
    os.close(write_fd)
    data, killed = bytearray(), ""
    deadline = started + float(request["limits"]["wall_s"])
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
    finished = not killed and any(r.get("event") == "end" for r in records)
    if finished:  # it said everything: answer now, reap it later
        _FINISHING.append((pid, workdir))
        return {"records": records, "killed": "", "signal": 0, "exit_code": 0,
                "seconds": time.monotonic() - started}
    if killed:
        _kill_group(pid)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(workdir, ignore_errors=True)
    signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    if not killed and signal_number in (signal.SIGXCPU, signal.SIGKILL) and \
            not any(r.get("event") == "end" for r in records):
        killed = "timeout"
    if not killed and signal_number == signal.SIGSYS:  # the seccomp filter ended it (kernel_walls)
        killed = "syscall"
    return {"records": records, "killed": killed, "signal": signal_number,
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "seconds": time.monotonic() - started}


def _kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            continue


def serve(package_dir: str) -> None:
    from envs.zwc import kernel_walls

    walls = kernel_walls.probe()  # first, while this process is small: the probe forks once
    sys.path.insert(0, package_dir)
    import zwc  # noqa: F401 - imported once, before any fork
    import zwc._runtime as runtime

    from envs.zwc import sandbox_child as harness
    from envs.zwc.sandbox_state import freeze_heap_types

    _warm(zwc, runtime)
    proxies, state = harness.prepare(zwc)
    freeze_heap_types()  # last: every class a child can reach exists now
    gc.collect()
    gc.freeze()  # children need not touch (and so copy) the pages of everything imported so far
    protocol_out = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints must not corrupt the protocol
    protocol_out.write(json.dumps({"ready": True, "pid": os.getpid(), "walls": walls}) + "\n")
    protocol_out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            answer = _run_one(request, runtime, proxies, state, harness)
        except Exception as exc:  # noqa: BLE001 - the server must keep serving
            answer = {"records": [], "killed": "", "signal": 0, "exit_code": None,
                      "seconds": 0.0, "server_error": f"{type(exc).__name__}: {exc}"}
        protocol_out.write(json.dumps(answer) + "\n")
        protocol_out.flush()
    _reap(block=True)


if __name__ == "__main__":
    serve(sys.argv[1])
