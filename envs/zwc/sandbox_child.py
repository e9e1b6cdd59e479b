"""What runs inside one forked sandbox child: limits, walls, the candidate, its tests.

Imported by the fork server (``forkserver.py``) before it forks, so a child starts with
NumPy, the zwc package and this harness already in memory. In the child, in order:
new session (so the server can kill the whole group), stdin/stdout/stderr to /dev/null,
every other inherited descriptor closed, private working directory, privileges dropped to
``nobody`` when running as root, rlimits (CPU, address space, file size, no new
processes, no core files), restricted builtins with a guarded ``__import__``, then an
audit hook that refuses files, processes, sockets, frames, ``gc``, code objects and new
imports for the rest of the child's life. Results stream back as JSON lines, one per test,
so a candidate that times out on test 5 still reports tests 1-4.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import resource
import sys
import time
import types

import numpy as _numpy

from envs.zwc.checks import ALLOWED_IMPORTS, FORBIDDEN_BUILTINS, GADGET_ATTRIBUTES

STDOUT_KEEP = 64 * 1024  # characters of printed output kept for the verdict
STDOUT_LIMIT = 1024 * 1024  # characters printed before the candidate is stopped
VALUE_CHARS = 1024 * 1024  # longest encoded return value
_DENIED_EVENTS = ("open", "os.", "subprocess.", "socket.", "ctypes.", "sys._getframe",
                  "sys._current_frames", "sys.settrace", "sys.setprofile", "sys._settraceall",
                  "sys._setprofileall", "sys.excepthook", "sys.unraisablehook", "gc.",
                  "object.__getattr__", "exec", "compile", "import", "marshal.", "pickle.",
                  "code.__new__", "function.__new__", "cpython.", "mmap.", "resource.",
                  "signal.", "pty.", "shutil.", "tempfile.", "glob.", "sqlite3.", "urllib.",
                  "webbrowser.", "fcntl.", "syslog.", "ftplib.", "http.", "smtplib.",
                  "builtins.input", "builtins.breakpoint", "setopencode", "time.sleep")


class SandboxViolation(PermissionError):
    """The candidate tried something the sandbox does not permit."""


class SandboxImportError(ImportError):
    """The candidate imported a module outside the allowed list."""


class OutputLimitExceeded(Exception):
    """The candidate printed more than STDOUT_LIMIT characters."""


class _Gate:
    """The audit hook's state. Lives only in the child; no path from candidate code to it."""

    armed = False
    allow_exec = 0
    violations: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if not _Gate.armed:
        return
    if event == "exec" and _Gate.allow_exec:
        _Gate.allow_exec -= 1
        return
    if event.startswith(_DENIED_EVENTS):
        if event == "object.__getattr__" and len(args) > 1 and args[1] not in GADGET_ATTRIBUTES \
                and not str(args[1]).startswith(("__", "f_", "tb_", "gi_", "co_", "cr_", "ag_")):
            return
        if len(_Gate.violations) < 20:
            _Gate.violations.append(event)
        raise SandboxViolation(f"sandbox: {event} is not permitted")


class _Capture:
    """sys.stdout/sys.stderr for the candidate: keeps the start, stops runaway output."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0

    def write(self, text: str) -> int:
        text = str(text)
        self.total += len(text)
        if self.kept < STDOUT_KEEP:
            piece = text[: STDOUT_KEEP - self.kept]
            self.parts.append(piece)
            self.kept += len(piece)
        if self.total > STDOUT_LIMIT:
            raise OutputLimitExceeded(f"printed more than {STDOUT_LIMIT} characters")
        return len(text)

    def flush(self) -> None:
        return None

    def text(self) -> str:
        return "".join(self.parts)


# -- the candidate's view of the world ----------------------------------------------------
def public_proxy(module: types.ModuleType, name: str) -> types.ModuleType:
    """A stand-in module holding only ``module``'s public, non-module, non-gadget names.

    Real modules leak their own imports (``typing.sys``); proxies do not.
    """
    proxy = types.ModuleType(name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for attr in names:
        if attr.startswith("_") or attr in GADGET_ATTRIBUTES:
            continue
        value = getattr(module, attr, None)
        if isinstance(value, types.ModuleType):
            continue
        setattr(proxy, attr, value)
    return proxy


def build_proxies(zwc_module: types.ModuleType) -> dict[str, types.ModuleType]:
    """Proxies of every importable module, built once in the server before forking."""
    import importlib

    proxies: dict[str, types.ModuleType] = {}
    for name in sorted(ALLOWED_IMPORTS - {"zwc"}):
        proxies[name] = public_proxy(importlib.import_module(name), name)
    proxies["collections"].abc = proxies["collections.abc"]
    import numpy

    proxies["numpy"] = public_proxy(numpy, "numpy")
    proxies["numpy"].linalg = proxies["numpy.linalg"] = public_proxy(numpy.linalg, "numpy.linalg")
    top = public_proxy(zwc_module, "zwc")
    top.rfx = public_proxy(zwc_module.rfx, "zwc.rfx")
    proxies["zwc"] = top
    proxies["zwc.rfx"] = top.rfx
    return proxies


def restricted_builtins(proxies: dict[str, types.ModuleType], numpy_mode: bool) -> dict:
    """Builtins without reflection, with an import that only hands out proxies."""
    hidden = set() if numpy_mode else {"numpy", "numpy.linalg"}

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        if level or name not in proxies or name in hidden:
            if len(_Gate.violations) < 20:
                _Gate.violations.append(f"import {name}")
            raise SandboxImportError(f"import of {name!r} is not allowed in the sandbox")
        if fromlist or "." not in name:
            return proxies[name]
        return proxies[name.split(".")[0]]

    allowed = {k: v for k, v in vars(builtins).items()
               if k not in FORBIDDEN_BUILTINS and not k.startswith("_")}
    allowed["__import__"] = guarded_import
    allowed["__build_class__"] = builtins.__build_class__
    allowed["__name__"] = "builtins"
    return allowed


# -- values crossing back -----------------------------------------------------------------
def encode(value, runtime, depth: int = 0):
    """A plain JSON-able form of a returned value (ZWCArray -> nested lists)."""
    if depth > 64:
        raise ValueError("returned value nested too deeply")
    kind = type(value)
    if kind is runtime.ZWCArray:
        return encode(value._zwc_nd.tolist(), runtime, depth + 1)
    if isinstance(value, _numpy.ndarray):  # the NumPy control returns real arrays
        return encode(value.tolist(), runtime, depth + 1)
    if isinstance(value, _numpy.generic):
        return encode(value.item(), runtime, depth + 1)
    if kind in (bool, int, str) or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if kind is complex:
        return {"$complex": [value.real, value.imag]}
    if kind is list:
        return [encode(v, runtime, depth + 1) for v in value]
    if kind is tuple:
        return {"$tuple": [encode(v, runtime, depth + 1) for v in value]}
    if kind is dict:
        return {"$dict": [[encode(k, runtime, depth + 1), encode(v, runtime, depth + 1)]
                          for k, v in value.items()]}
    return {"$repr": f"<{kind.__name__} object>"}


def _classify(exc: BaseException, runtime) -> str:
    if isinstance(exc, (SandboxViolation, SandboxImportError)):
        return "violation"
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, OutputLimitExceeded):
        return "output"
    if isinstance(exc, RecursionError):
        return "runtime"
    if isinstance(exc, runtime.ZWCError):
        return "zwc"
    if isinstance(exc, AttributeError) and "module 'zwc" in str(exc):
        return "unknown_api"
    if isinstance(exc, ImportError) and "zwc" in str(exc):
        return "unknown_api"
    return "runtime"


def _error(exc: BaseException, runtime) -> dict:
    message = str(exc)
    return {"category": _classify(exc, runtime), "error": f"{type(exc).__name__}: {message[:2000]}"}


# -- the child's life ---------------------------------------------------------------------
def confine(result_fd: int, workdir: str, limits: dict) -> None:
    """OS-level confinement; called first thing in the forked child."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.closerange(3, result_fd)
    os.closerange(result_fd + 1, 1 << 16)
    if os.geteuid() == 0:
        os.chown(workdir, 65534, 65534)
    os.chdir(workdir)
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    address_space = mapped + int(limits["mem_mb"]) * 1024 * 1024
    cpu = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))


def run_candidate(request: dict, out, runtime, proxies: dict) -> None:
    """Run one candidate's tests, writing one JSON line per event to ``out``."""

    def emit(record: dict) -> None:
        out.write(json.dumps(record) + "\n")
        out.flush()

    capture = _Capture()
    input_numpy = _InputNumpy(runtime)
    builtins_ = restricted_builtins(proxies, bool(request.get("numpy")))
    candidate_globals = {"__builtins__": builtins_, "__name__": "__candidate__"}
    input_globals = {"__builtins__": {"float": float, "int": int, "complex": complex,
                                      "list": list, "tuple": tuple, "range": range, "dict": dict},
                     "np": input_numpy, "numpy": input_numpy, "array": input_numpy.array,
                     "zwc": proxies["zwc"],
                     "nan": math.nan, "inf": math.inf}
    try:
        code = compile(request["code"], "<candidate>", "exec")
    except (SyntaxError, ValueError) as exc:
        emit({"event": "load", "ok": False, "category": "syntax", "error": str(exc)})
        return
    args_code = []
    for text in request["inputs"]:
        try:
            args_code.append(compile(f"__collect__({text})", "<input>", "eval"))
        except SyntaxError as exc:
            args_code.append(exc)
    input_globals["__collect__"] = lambda *a, **k: (a, k)

    sys.addaudithook(_audit)
    sys.stdout = sys.stderr = capture
    _Gate.armed = True
    _Gate.allow_exec = 1
    try:
        exec(code, candidate_globals)  # noqa: S102 - this is the sandbox
        entry = candidate_globals.get(request["entry"])
        if not callable(entry):
            raise NameError(f"the code does not define {request['entry']}()")
    except BaseException as exc:  # noqa: BLE001 - anything the candidate raises is a result
        emit({"event": "load", "ok": False, **_error(exc, runtime), "stdout": capture.text(),
              "violations": _Gate.violations})
        return
    emit({"event": "load", "ok": True})
    for i, compiled in enumerate(args_code):
        record: dict = {"event": "test", "i": i}
        started = time.perf_counter()
        try:
            if isinstance(compiled, SyntaxError):
                raise ValueError(f"test input {i} is not valid Python: {compiled}")
            _Gate.allow_exec = 1
            args, kwargs = eval(compiled, input_globals)  # noqa: S307 - task data, in the sandbox
            value = entry(*args, **kwargs)
            record["value"] = encode(value, runtime)
            if request.get("printed"):  # the official rule grades printed text; ours needs none
                record["printed"] = _printed(value)[:VALUE_CHARS]
            record["ok"] = True
        except BaseException as exc:  # noqa: BLE001
            record.update(ok=False, **_error(exc, runtime))
        record["seconds"] = time.perf_counter() - started
        line = json.dumps(record)
        if len(line) > VALUE_CHARS:
            line = json.dumps({"event": "test", "i": i, "ok": False, "category": "output",
                               "error": "returned value too large", "seconds": record["seconds"]})
        out.write(line + "\n")
        out.flush()
    emit({"event": "end", "stdout": capture.text(), "violations": _Gate.violations})


def _printed(value) -> str:
    try:
        return str(value)
    except Exception as exc:  # noqa: BLE001
        return f"<unprintable: {type(exc).__name__}>"


class _InputNumpy:
    """``np`` inside official test inputs: ``np.array(...)`` builds a ZWCArray."""

    def __init__(self, runtime):
        import numpy

        def array(data, dtype=None):
            return runtime.wrap(numpy.array(runtime.unwrap(data), dtype=dtype))

        self.array = self.asarray = array
        self.nan, self.inf, self.pi, self.e = math.nan, math.inf, math.pi, math.e
        for dtype in runtime.DTYPES:
            setattr(self, dtype, dtype)
