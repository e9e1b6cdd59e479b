"""Where a sandboxed candidate's test arguments come from, and where its zwc calls run.

``StubSession`` (every graded mode but the NumPy control): zwc is the stub of
``zwc_stub.py``; each test's arguments come from the library process when the candidate
``begin``s that test, and the calls run (and are counted) there. The candidate's process
reports no calls: the grader reads them from the library's log.

``InProcessSession`` (the NumPy control, ``numpy_mode``): the candidate imports NumPy, so it
runs in a fork of the library server, with the real zwc in its own process, as a reasoning
control and not an adversarial setting; calls are counted by the zwc runtime in-process.
"""

from __future__ import annotations

from envs.zwc.sandbox import zwc_stub

_type = type


class StubSession:
    """Arguments and calls through the library channel (``fd``)."""

    def __init__(self, fd: int):
        self.client = zwc_stub.connect(fd)
        self.zwc_error = zwc_stub.ZWCError
        self.counts_calls = False

    def prepare(self, texts: list[str]) -> None:
        return None  # the library evaluates the inputs

    def begin(self, index: int, text: str):
        return self.client.begin(index)

    def enter(self) -> None:
        self.client.enter()

    def calls(self) -> None:
        return None

    def plain(self, value):
        """A returned array as nested lists; ``None`` if ``value`` is not an array."""
        if _type(value) is zwc_stub.ZWCArray:
            return zwc_stub.to_plain(value)
        return None

    def end(self) -> None:
        self.client.end()


class InProcessSession:
    """Arguments evaluated here, calls counted by the in-process zwc runtime."""

    def __init__(self, runtime, zwc_module):
        import numpy

        from envs.zwc.sandbox.library_child import input_globals

        self.runtime, self.numpy = runtime, numpy
        self.globals = input_globals(zwc_module, runtime)
        self.zwc_error = runtime.ZWCError
        self.counts_calls = True

    def prepare(self, texts: list[str]) -> None:
        """Compile the inputs before the audit hook is armed (it refuses ``compile``)."""
        self.compiled = []
        for index, text in enumerate(texts):
            try:
                self.compiled.append(compile(f"__collect__({text})", "<input>", "eval"))
            except SyntaxError as exc:
                self.compiled.append(ValueError(f"test input {index} is not valid Python: {exc}"))

    def begin(self, index: int, text: str):
        code = self.compiled[index]
        if isinstance(code, BaseException):
            raise code
        return eval(code, dict(self.globals))  # noqa: S307 - task data, in the sandbox

    def enter(self) -> None:
        self.runtime._CALLS.clear()  # what importing the module ran does not count

    def calls(self) -> dict:
        return {k: v for k, v in self.runtime._CALLS.items() if _type(v) is int}

    def plain(self, value):
        numpy = self.numpy
        if _type(value) is self.runtime.ZWCArray:
            return value._zwc_nd.tolist()
        if isinstance(value, numpy.ndarray):
            return numpy.ndarray.tolist(value)
        if isinstance(value, numpy.generic):
            return numpy.generic.item(value)
        return None

    def end(self) -> None:
        return None
