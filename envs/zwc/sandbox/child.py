"""What runs inside one forked sandbox child: limits, walls, the candidate, its tests.

Imported by the fork servers (``forkserver.py``, ``library_server.py``) before they fork their
zygotes (``zygote.py``), from which every child is forked. In the child, in order: new
session (so the server can kill the whole group), stdin/stdout/stderr to /dev/null, every
other inherited descriptor closed but the result pipe and the library channel, private working
directory, privileges dropped to ``nobody`` when running as root, rlimits (CPU,
address space, file size, no new processes, no core files), the kernel walls
(``kernel_walls.apply``: seccomp filter and Landlock, whatever the server's probe found
working), restricted builtins with a guarded ``__import__``, then an audit hook that refuses
files, processes, sockets, frames, ``gc``, code objects, new imports and writes to function
code/defaults and class names for the rest of the child's life.

Each test begins with the session (``sessions.py``): the library process hands over
that test's arguments and forgets the last test's arrays. The candidate's module is then
executed again in fresh globals, after the state that allowed modules keep is reset
(``state.py``), and its entry function called. Results stream back as JSON lines,
one per test (a candidate that times out on test 5 still reports tests 1-4), written by
``_dump``: a serialiser made of functions captured at import that only accepts exact
built-in types. The last line ("end") says whether shared state changed, every violation and
whether output overflowed. Which zwc functions ran is not the candidate's to say: the
library process logs it for the grader.
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

from envs.zwc.grading.checks import ALLOWED_IMPORTS, FORBIDDEN_BUILTINS, GADGET_ATTRIBUTES, NUMPY_MODE_IMPORTS
from envs.zwc.sandbox import kernel_walls
from envs.zwc.sandbox.state import READ_ONLY, SharedState, frozen_module

STDOUT_KEEP = 64 * 1024  # characters of printed output kept for the verdict
STDOUT_LIMIT = 1024 * 1024  # characters printed before the candidate is stopped
VALUE_CHARS = 1024 * 1024  # longest encoded return value
_DENIED_EVENTS = ("open", "os.", "subprocess.", "socket.", "ctypes.", "sys._getframe",
                  "sys._current_frames", "sys.settrace", "sys.setprofile", "sys._settraceall",
                  "sys._setprofileall", "sys.excepthook", "sys.unraisablehook", "gc.",
                  "object.__getattr__", "object.__setattr__", "object.__delattr__",
                  "exec", "compile", "import", "marshal.", "pickle.",
                  "code.__new__", "function.__new__", "cpython.", "mmap.", "resource.",
                  "signal.", "pty.", "shutil.", "tempfile.", "glob.", "sqlite3.", "urllib.",
                  "webbrowser.", "fcntl.", "syslog.", "ftplib.", "http.", "smtplib.",
                  "builtins.input", "builtins.breakpoint", "setopencode", "time.sleep")

# captured now, before any candidate code exists: built-in functions of built-in types
_escape_str = json.encoder.c_encode_basestring_ascii or json.encoder.py_encode_basestring_ascii
_int_text, _float_text, _str_slice, _join = int.__repr__, float.__repr__, str.__getitem__, str.join
_isfinite, _perf_counter, _type, _len = math.isfinite, time.perf_counter, type, len


def _dump(value) -> str:
    """JSON text of a record made of exact built-in types (anything else is refused)."""
    kind = _type(value)
    if kind is str:
        return _escape_str(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if kind is int:
        return _int_text(value)
    if kind is float:
        if _isfinite(value):
            return _float_text(value)
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if kind is list or kind is tuple:
        return "[" + _join(",", [_dump(v) for v in value]) + "]"
    if kind is dict:
        return "{" + _join(",", [_escape_str(_plain(k)) + ":" + _dump(v) for k, v in value.items()]) + "}"
    raise TypeError(f"not a record value: {kind.__name__}")


def _plain(text) -> str:
    """An exact ``str`` with ``text``'s characters (a str subclass's methods never run)."""
    if _type(text) is str:
        return text
    if isinstance(text, str):
        return _str_slice(text, slice(None))
    return "<not text>"


class SandboxViolation(PermissionError):
    """The candidate tried something the sandbox does not permit."""


class SandboxImportError(ImportError):
    """The candidate imported a module outside the allowed list."""


class OutputLimitExceeded(Exception):
    """The candidate printed more than STDOUT_LIMIT characters."""


class _GateState:
    """The audit hook's state: an instance (class attributes are frozen), reachable only from
    this module, which candidate code cannot import."""

    __slots__ = ("armed", "allow_exec", "violations")

    def __init__(self) -> None:
        self.armed, self.allow_exec, self.violations = False, 0, []

    def violate(self, what: str) -> None:
        if _len(self.violations) < 20:
            self.violations.append(what)


_GATE = _GateState()


def _audit(event: str, args: tuple) -> None:
    if not _GATE.armed:
        return
    if event == "exec" and _GATE.allow_exec:
        _GATE.allow_exec -= 1
        return
    if event.startswith(_DENIED_EVENTS):
        if event == "object.__getattr__" and len(args) > 1 and args[1] not in GADGET_ATTRIBUTES \
                and not _plain(args[1]).startswith(("__", "f_", "tb_", "gi_", "co_", "cr_", "ag_")):
            return
        _GATE.violate(event)
        raise SandboxViolation(f"sandbox: {event} is not permitted")


class _Capture:
    """sys.stdout/sys.stderr for the candidate: keeps the start, stops runaway output.

    Once the limit is passed the candidate has failed, even if it catches the exception."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0
        self.exceeded = False

    def write(self, text: str) -> int:
        text = _plain(str(text))
        self.total += len(text)
        if self.kept < STDOUT_KEEP:
            piece = text[: STDOUT_KEEP - self.kept]
            self.parts.append(piece)
            self.kept += len(piece)
        if self.total > STDOUT_LIMIT:
            self.exceeded = True
            raise OutputLimitExceeded(f"printed more than {STDOUT_LIMIT} characters")
        return len(text)

    def flush(self) -> None:
        return None

    def text(self) -> str:
        return "".join(self.parts)


# -- the candidate's view of the world ----------------------------------------------------
def public_proxy(module: types.ModuleType, name: str) -> types.ModuleType:
    """A stand-in module holding only ``module``'s public, non-module, non-gadget names; it
    refuses attribute writes.

    Real modules leak their own imports (``typing.sys``); proxies do not.
    """
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    namespace = {}
    for attr in names:
        if attr.startswith("_") or attr in GADGET_ATTRIBUTES:
            continue
        value = getattr(module, attr, None)
        if not isinstance(value, types.ModuleType):
            namespace[attr] = value
    return frozen_module(name, namespace)


def build_proxies(zwc_module: types.ModuleType | None) -> dict[str, types.ModuleType]:
    """Proxies of every importable module, built once in the server before forking.

    ``zwc_module`` None: the candidate's zwc is the stub (``zwc_stub``) and NumPy is not
    importable (the stub server never imports it); else the real zwc and NumPy, for the NumPy
    control."""
    import importlib

    proxies: dict[str, types.ModuleType] = {}
    for name in sorted(ALLOWED_IMPORTS - {"zwc"}):
        proxies[name] = public_proxy(importlib.import_module(name), name)
    vars(proxies["collections"])["abc"] = proxies["collections.abc"]
    if zwc_module is None:
        from envs.zwc.sandbox import zwc_stub

        proxies.update(zwc_stub.modules())
        return proxies
    import numpy

    proxies["numpy"] = public_proxy(numpy, "numpy")
    proxies["numpy.linalg"] = public_proxy(numpy.linalg, "numpy.linalg")
    vars(proxies["numpy"])["linalg"] = proxies["numpy.linalg"]
    proxies["zwc.rfx"] = public_proxy(zwc_module.rfx, "zwc.rfx")
    proxies["zwc"] = public_proxy(zwc_module, "zwc")
    vars(proxies["zwc"])["rfx"] = proxies["zwc.rfx"]
    return proxies


_BUILTINS: dict[bool, dict] = {}  # numpy_mode -> the candidates' builtins, made by prepare()


def prepare(zwc_module: types.ModuleType | None) -> tuple[dict[str, types.ModuleType], SharedState]:
    """The proxies and the watched shared state, in a fork server, before it forks."""
    proxies = build_proxies(zwc_module)
    for numpy_mode in (False, True):  # built once here: building them in each child copies pages
        _BUILTINS[numpy_mode] = restricted_builtins(proxies, numpy_mode)
    state = SharedState(proxies, watch=set(proxies) - NUMPY_MODE_IMPORTS)
    state.install(proxies)
    return proxies, state


def _safe_hasattr(obj, name) -> bool:
    """``hasattr`` for public names only: ``hasattr(x, "shape")`` is honest code."""
    if _type(name) is not str or name.startswith("_") or name in GADGET_ATTRIBUTES:
        _GATE.violate("hasattr of a private name")
        raise SandboxViolation("sandbox: hasattr takes a public attribute name")
    return builtins.hasattr(obj, name)


def restricted_builtins(proxies: dict[str, types.ModuleType], numpy_mode: bool) -> dict:
    """Builtins without reflection, with an import that only hands out proxies."""
    hidden = set() if numpy_mode else set(NUMPY_MODE_IMPORTS)

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        name = _plain(name)
        if level or name not in proxies or name in hidden:
            _GATE.violate(f"import {name}")
            raise SandboxImportError(f"import of {name!r} is not allowed in the sandbox")
        if fromlist or "." not in name:
            return proxies[name]
        return proxies[name.split(".")[0]]

    allowed = {k: v for k, v in vars(builtins).items()
               if k not in FORBIDDEN_BUILTINS and not k.startswith("_")}
    allowed["hasattr"] = _safe_hasattr
    allowed["__import__"] = guarded_import
    allowed["__build_class__"] = builtins.__build_class__
    allowed["__name__"] = "builtins"
    return allowed


# -- values crossing back -----------------------------------------------------------------
def encode(value, session, depth: int = 0):
    """A plain JSON-able form of a returned value (ZWCArray -> nested lists), exact types only."""
    if depth > 64:
        raise ValueError("returned value nested too deeply")
    kind = _type(value)
    if kind not in (bool, int, str, float, list, tuple, dict, complex) and value is not None:
        plain = session.plain(value)  # an array (the NumPy control's too) -> nested lists
        if plain is not None:
            return encode(plain, session, depth + 1)
    if kind in (bool, int, str) or value is None:
        return value
    if kind is float:
        return value if _isfinite(value) else {"$float": repr(value)}
    if kind is complex:
        return {"$complex": [value.real, value.imag]}
    if kind is list:
        return [encode(v, session, depth + 1) for v in value]
    if kind is tuple:
        return {"$tuple": [encode(v, session, depth + 1) for v in value]}
    if kind is dict:
        return {"$dict": [[encode(k, session, depth + 1), encode(v, session, depth + 1)]
                          for k, v in dict.items(value)]}
    return {"$repr": f"<{_plain(kind.__name__)} object>"}


def _classify(exc: BaseException, zwc_error: type) -> str:
    if isinstance(exc, (SandboxViolation, SandboxImportError)):
        return "violation"
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, OutputLimitExceeded):
        return "output"
    if isinstance(exc, RecursionError):
        return "runtime"
    if isinstance(exc, TypeError) and ("of immutable type" in _message(exc) or READ_ONLY in _message(exc)):
        return "violation"  # wrote an attribute of a class or module it did not define (state.py)
    if isinstance(exc, zwc_error):
        return "zwc"
    if isinstance(exc, AttributeError) and "module 'zwc" in _message(exc):
        return "unknown_api"
    if isinstance(exc, ImportError) and "zwc" in _message(exc):
        return "unknown_api"
    return "runtime"


def _message(exc: BaseException) -> str:
    try:
        return _plain(str(exc))[:2000]
    except BaseException:  # noqa: BLE001 - a candidate exception whose str() fails
        return "<the exception could not be printed>"


def _error(exc: BaseException, zwc_error: type) -> dict:
    return {"category": _classify(exc, zwc_error), "error": f"{_plain(_type(exc).__name__)}: {_message(exc)}"}


# -- the child's life ---------------------------------------------------------------------
def confine(result_fd: int, workdir: str, limits: dict, keep: tuple[int, ...] = ()) -> None:
    """OS-level confinement; called first thing in the forked child. Every descriptor but
    ``result_fd`` and ``keep`` (the library channel) is closed."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    start = 3
    for fd in sorted({result_fd, *keep}):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 1 << 16)
    if os.geteuid() == 0:
        os.chown(workdir, 65534, 65534)
    os.chdir(workdir)
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    statm = os.open("/proc/self/statm", os.O_RDONLY)  # not open(): a file object copies ~70 pages
    try:
        mapped = int(os.read(statm, 256).split()[0]) * os.sysconf("SC_PAGE_SIZE")
    finally:
        os.close(statm)
    address_space = mapped + int(limits["mem_mb"]) * 1024 * 1024
    cpu = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    kernel_walls.apply(workdir)  # last: seccomp filter and Landlock, for the rest of its life


def run_candidate(request: dict, out, session, proxies: dict, state: SharedState) -> None:
    """Run one candidate's tests, writing one JSON line per event to ``out``.

    ``session`` (``sessions``) hands over each test's arguments and says which
    calls ran where the candidate's process can know it (the NumPy control only)."""

    def emit(record: dict) -> None:
        out.write(_dump(record) + "\n")
        out.flush()

    capture = _Capture()
    numpy_mode = bool(request.get("numpy"))
    builtins_ = _BUILTINS.get(numpy_mode) or restricted_builtins(proxies, numpy_mode)
    entry_name, zwc_error = request["entry"], session.zwc_error
    try:
        code = compile(request["code"], "<candidate>", "exec")
    except (SyntaxError, ValueError) as exc:
        emit({"event": "load", "ok": False, "category": "syntax", "error": str(exc)})
        return
    texts = list(request["inputs"])
    session.prepare(texts)

    sys.addaudithook(_audit)
    sys.stdout = sys.stderr = capture
    _GATE.armed = True
    for i, text in enumerate(texts):
        record: dict = {"event": "test", "i": i}
        seen = _len(_GATE.violations)
        started = _perf_counter()
        arguments = None
        try:
            _GATE.allow_exec = 1
            arguments = session.begin(i, text)  # first: the library forgets the last test's arrays
        except BaseException as exc:  # noqa: BLE001 - a test input that cannot be built
            arguments = exc
        try:
            entry = _load(code, builtins_, entry_name, state)
        except BaseException as exc:  # noqa: BLE001 - anything the candidate raises is a result
            if i == 0:
                emit({"event": "load", "ok": False, **_error(exc, zwc_error), "stdout": capture.text(),
                      "violations": list(_GATE.violations), "output_exceeded": capture.exceeded})
                session.end()
                return
            entry = exc
        if i == 0:
            emit({"event": "load", "ok": True})
        try:
            if isinstance(arguments, BaseException):
                raise arguments
            if isinstance(entry, BaseException):
                raise entry
            args, kwargs = arguments
            session.enter()
            value = entry(*args, **kwargs)
            calls = session.calls()
            if calls is not None:
                record["calls"] = {_plain(k): v for k, v in calls.items()}
            record["value"] = encode(value, session)
            if request.get("printed"):  # the official rule grades printed text; ours needs none
                record["printed"] = _printed(value)[:VALUE_CHARS]
            record["ok"] = True
        except BaseException as exc:  # noqa: BLE001
            record.update(ok=False, **_error(exc, zwc_error))
            record.pop("value", None)
        record["seconds"] = _perf_counter() - started
        if _len(_GATE.violations) > seen:
            record["violations"] = list(_GATE.violations[seen:])
        if capture.exceeded:
            record["output_exceeded"] = True
        try:
            line = _dump(record)
        except BaseException as exc:  # noqa: BLE001 - e.g. an int too long to print
            line = _dump({"event": "test", "i": i, "ok": False, "category": "runtime",
                          "error": f"the result could not be recorded: {_message(exc)}"})
        if _len(line) > VALUE_CHARS:
            line = _dump({"event": "test", "i": i, "ok": False, "category": "output",
                          "error": "returned value too large", "seconds": record["seconds"]})
        out.write(line + "\n")
        out.flush()
    session.end()
    try:
        changes = state.changes()
    except BaseException as exc:  # noqa: BLE001 - the candidate broke what is being checked
        changes = [f"state that could not be checked ({_message(exc)})"]
    emit({"event": "end", "stdout": capture.text(), "violations": list(_GATE.violations),
          "state_changes": changes, "output_exceeded": capture.exceeded})


def _load(code, builtins_: dict, entry_name: str, state: SharedState):
    """Execute the candidate's module in fresh globals (after resetting shared state); its entry."""
    state.reset_for_test()
    namespace = {"__builtins__": dict(builtins_), "__name__": "__candidate__"}
    _GATE.allow_exec = 1
    exec(code, namespace)  # noqa: S102 - this is the sandbox
    entry = namespace.get(entry_name)
    if not callable(entry):
        raise NameError(f"the code does not define {entry_name}()")
    return entry


def _printed(value) -> str:
    try:
        return _plain(str(value))
    except BaseException as exc:  # noqa: BLE001
        return f"<unprintable: {_plain(_type(exc).__name__)}>"
