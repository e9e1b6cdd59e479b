"""The learner checker's fresh process: ``python -m learners.checker.child REQUEST.json RESULT.json``.

A saved learner must load in a process that never held it, and an ``evolve`` killed with
SIGKILL must be followed by one that finishes: both need a process of their own. The parent
(``learners.checker.checks``, through ``run_child`` and ``run_killed`` below) writes a request
naming the learner (a target ``resolve_target``
understands), its config and a list of jobs; this process runs them in order and writes one
result per job (``ok``, ``error`` with the traceback's tail, and the job's figures):

- ``load``: a fresh learner from the factory, ``load(saved)``, its ``context`` for the given
  observations and, for a parametric learner, the hash of the weights in its model directory.
- ``evolve``: ``Agent(model, learner).evolve(env, limit=N)`` with a ``state_dir`` (the parent
  may kill it), then ``save``; then a fresh learner loads what was saved, as ``load`` does.
"""

from __future__ import annotations

import hashlib
import json
import sys
import traceback
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any


def weights_hash(model: Any) -> str:
    """SHA-256 over a model's state dict (names, dtypes, shapes, bytes), in name order; ``model``
    is a backend holding a torch module as ``.model`` (``TransformersModel``)."""
    import torch

    module = getattr(model, "model", None)
    if module is None or not hasattr(module, "state_dict"):
        raise TypeError(f"{type(model).__name__} holds no torch model (.model) whose weights can be compared")
    digest = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        data = tensor.detach().cpu().contiguous()
        digest.update(f"{name}|{data.dtype}|{tuple(data.shape)}|".encode())
        digest.update(data.flatten().view(torch.uint8).numpy().tobytes())  # bfloat16 has no NumPy dtype
    return digest.hexdigest()


def model_dir_of(learner: Any) -> Path | None:
    """Where a parametric learner's trained model is: ``learner.model_dir`` or ``config.model_dir``."""
    found = getattr(learner, "model_dir", None) or getattr(getattr(learner, "config", None), "model_dir", None)
    return Path(found) if found else None


def _observations(rows: list[dict]) -> list:
    from envs.zwc import Observation

    return [Observation.model_validate(row) for row in rows]


def _load(factory, config: dict, saved: str, rows: list[dict], weights: bool, dtype: str | None) -> dict:
    learner = factory(**config)
    learner.load(saved)
    result: dict[str, Any] = {"contexts": [learner.context(obs) for obs in _observations(rows)]}
    if weights:
        from agents.models import load_model

        found = model_dir_of(learner)
        result["model_dir"] = str(found) if found else None
        if found is None or not (found / "config.json").is_file():
            raise FileNotFoundError(f"after load({saved!r}) the learner names no model directory with a config.json "
                                    f"(model_dir={found}); save must record where the trained model is")
        result["weights"] = weights_hash(load_model(str(found), dtype=dtype or "auto", cache=False))
    return result


def kill_on_write(state_dir: str) -> None:
    """SIGKILL this process at its first write into ``state_dir`` made after some file there has
    content: a kill mid-``evolve`` at a point that does not depend on how fast the learner is.
    (Writes that bypass Python's ``open``, e.g. sqlite's or safetensors', are left to the parent,
    which kills once it sees content.)"""
    import os
    import signal

    root = os.path.abspath(state_dir) + os.sep
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND

    def audit(event: str, args: tuple) -> None:
        if event != "open" or not args or not isinstance(args[0], str | bytes | os.PathLike):
            return
        mode, flags = (args[1], args[2]) if len(args) > 2 else (None, 0)
        writing = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & write_flags)
        if writing and os.path.abspath(os.fsdecode(args[0])).startswith(root):
            if any(f.stat().st_size for f in Path(root).rglob("*") if f.is_file()):
                os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(audit)


def _evolve(factory, config: dict, job: dict) -> dict:
    from agents import Agent
    from envs.zwc import ZWCEnv

    if job.get("kill_on_write"):
        kill_on_write(job["state_dir"])

    learner = factory(**{**config, "limit": job["limit"], "state_dir": job["state_dir"]})
    env = ZWCEnv.load(job["root"], workers=2)
    try:
        agent = Agent(model=job["model"], learner=learner, **job.get("agent", {}))
        if job["model"] == "reference":
            agent.bind_reference(env)  # its answers need the tasks before any episode asks
        report = agent.evolve(env, limit=job["limit"])
    finally:
        env.close()
    result: dict[str, Any] = {"report": _plain(report)}
    if job.get("save"):
        learner.save(job["save"])
        reloaded = _load(factory, config, job["save"], job.get("observations", []), False, None)
        result["contexts_equal"] = reloaded["contexts"] == [learner.context(o) for o in
                                                            _observations(job.get("observations", []))]
        found = model_dir_of(learner) if job.get("parametric") else None
        result["model_dir_ok"] = None if found is None else (found / "config.json").is_file()
    return result


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        value = asdict(value)
    return json.loads(json.dumps(value, default=str))


# -- the parent's side -------------------------------------------------------------------------------
def _start(request: dict, base: Path, jobs: list[dict] | None = None):
    """Write ``BASE-request.json`` and start this module on it (a session of its own, so that its
    sandbox workers can be killed with it); output goes to ``BASE.log``."""
    import subprocess

    path, result, log = (base.with_name(f"{base.name}-{part}") for part in ("request.json", "result.json", "log"))
    path.write_text(json.dumps(request if jobs is None else {**request, "jobs": jobs}, indent=1, default=str))
    out = log.open("w")
    process = subprocess.Popen([sys.executable, "-m", "learners.checker.child", str(path), str(result)],
                               stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return process, out, result, log


def _kill_group(process) -> None:
    import contextlib
    import os
    import signal

    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # the process and its sandbox workers, which outlive it otherwise
    process.wait()


def run_child(request: dict, base: Path, timeout: float) -> tuple[list[dict], str]:
    """Run the request's jobs to the end (or ``timeout`` seconds); their results and a line on how
    the process ended (exit status, the log's tail)."""
    import subprocess

    process, out, result, log = _start(request, base)
    with out:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        _kill_group(process)
    results = json.loads(result.read_text()) if result.is_file() else []
    tail = log.read_text()[-600:].strip().replace("\n", " | ")
    return results, f"exit status {process.returncode}; log: {tail or '(empty)'}"


def run_killed(request: dict, base: Path, kill_after: float) -> dict:
    """Run the request's ``evolve`` job and SIGKILL it once it has written to its state_dir: the
    process kills itself at its next write there (``kill_on_write``), and this one kills its
    process group when it sees content written otherwise, or after ``kill_after`` seconds."""
    import signal
    import time

    [job] = request["jobs"]
    state = Path(job["state_dir"])

    def written() -> list[Path]:
        return [p for p in state.rglob("*") if p.is_file() and p.stat().st_size] if state.exists() else []

    started = time.monotonic()
    process, out, _, _ = _start(request, base, [{**job, "kill_on_write": True}])
    with out:
        while process.poll() is None and not written() and time.monotonic() - started < kill_after:
            time.sleep(0.1)
        _kill_group(process)
    elapsed, files = time.monotonic() - started, written()
    what = f"once it had written {files[0].relative_to(state)}" if files else "having written nothing"
    if process.returncode == -signal.SIGKILL:
        return {"killed": True, "when": f"{what} ({elapsed:.1f}s in)", "seconds": round(elapsed, 1)}
    return {"killed": False, "when": f"ended by itself in {elapsed:.1f}s (exit status {process.returncode}, "
                                     f"{what.replace('once it had', 'having')}) before it could be killed",
            "seconds": round(elapsed, 1)}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m learners.checker.child REQUEST.json RESULT.json", file=sys.stderr)
        return 2
    request = json.loads(Path(args[0]).read_text())
    for entry in reversed(request.get("sys_path", [])):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    from learners.checker.target import resolve_target

    factory = resolve_target(request["target"]).factory
    results = []
    for job in request["jobs"]:
        try:
            if job["kind"] == "load":
                outcome = _load(factory, request["config"], job["saved"], job["observations"],
                                job.get("weights", False), job.get("dtype"))
            else:
                outcome = _evolve(factory, request["config"], job)
            results.append({"kind": job["kind"], "ok": True, **outcome})
        except Exception as exc:  # noqa: BLE001 - every failure is the learner's to read, in the report
            tail = "".join(traceback.format_exception(exc))[-2000:]
            results.append({"kind": job["kind"], "ok": False, "error": f"{type(exc).__name__}: {exc}",
                            "traceback": tail})
        Path(args[1]).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
