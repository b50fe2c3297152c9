"""``om reader …``: the reader's HTTP service as its own process."""

from __future__ import annotations

import asyncio

import typer

from streams.settings import get_settings

reader_app = typer.Typer(help="The agent-side reader (context, status, recall) over HTTP.", no_args_is_help=True)


@reader_app.command()
def serve(
    host: str = typer.Option(None, help="listen address (default OM_READER_HOST)"),
    port: int = typer.Option(None, help="listen port (default OM_READER_PORT)"),
) -> None:
    """Serve the reader until interrupted; tokens come from OM_READER_TOKENS."""
    from streams.reader.serve import serve_reader

    overrides = {k: v for k, v in (("reader_host", host), ("reader_port", port)) if v is not None}
    asyncio.run(serve_reader(get_settings().model_copy(update=overrides)))
