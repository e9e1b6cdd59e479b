"""``sebench serve``: an OpenAI-compatible server over any backend (``agents/models/serve.py``)."""

from __future__ import annotations

from pathlib import Path

import typer

from benchmarks import cli_checks as check
from benchmarks.cli_options import Dtype, Engine, dtype_option, engine_option, model_option
from benchmarks.cli_shared import console


def serve_command(
    model: str = model_option("The model served."),
    dtype: Dtype = dtype_option(),
    engine: Engine = engine_option(" auto streams through transformers' continuous batching; ct2-* answer whole."),
    port: int = typer.Option(8000, "--port"),
    host: str = typer.Option("127.0.0.1", "--host"),
    served_model_name: list[str] | None = typer.Option(
        None, "--served-model-name", help="Name(s) requests must use; default: the model's name and --model as typed."),
    max_model_len: int | None = typer.Option(None, "--max-model-len", min=2,
                                      help="Cap on prompt + answer tokens; default: the model's context."),
    max_num_seqs: int = typer.Option(16, "--max-num-seqs", min=1, help="Answers decoded together; more wait."),
) -> None:
    """An OpenAI-compatible chat-completions server over any backend (continuous batching, streaming)."""
    from agents.models import load_model
    from agents.models.serve import make_server

    check.model(model)
    backend = load_model(model, dtype=dtype, engine=engine)
    names = served_model_name or [backend.name, model, *([Path(model).name] if Path(model).is_dir() else [])]
    server = make_server(backend, host, port, served_names=names, max_model_len=max_model_len,
                         max_num_seqs=max_num_seqs)
    served = server.service.served
    console.print(f"serving {served[0]} at http://{host}:{server.server_address[1]}/v1 "
                  f"(model names accepted: {', '.join(served)}; Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()
