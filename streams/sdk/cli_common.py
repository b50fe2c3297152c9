"""What the SDK's commands share: the client options, one way to run them and report failures.

Every failure a user can fix (broker down, reader not running, wrong token, bad input) becomes a
red line saying what to do and exit code 1, instead of a traceback. While a broker is away the
client's progress lines ("broker 127.0.0.1:19092 unreachable, retrying in 2 s") go to stderr.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import typer
from aiokafka.errors import KafkaConnectionError, KafkaError
from rich.console import Console

from schemas.base import SchemaError
from streams.sdk.client import OMClient
from streams.sdk.reader import ReaderError
from streams.services.kafka_retry import KafkaUnavailable, describe
from streams.settings import get_settings

T = TypeVar("T")
console = Console()
errors = Console(stderr=True)

TokenOption = typer.Option(None, "--token", envvar="OM_READER_TOKEN",
                           help="bearer token for the reader (one of OM_READER_TOKENS)")
UrlOption = typer.Option(None, "--url", envvar="OM_READER_URL",
                         help="reader base URL (default http://OM_READER_HOST:OM_READER_PORT)")
ResourceOption = typer.Option(None, "--resource", "-r", help="resource id (optional if the token reads one)")
JsonOption = typer.Option(False, "--json", help="print JSON instead of the pretty view")


def run_with_client(work: Callable[[OMClient], Awaitable[T]], *, token: str | None = None,
                    url: str | None = None) -> T:
    """Run ``work`` with a client on a fresh event loop; fixable failures exit 1 with a hint."""

    quiet_kafka_logs()

    async def main() -> T:
        async with OMClient(get_settings(), token=token, reader_url=url, report=progress) as client:
            return await work(client)

    try:
        return asyncio.run(main())
    except (ReaderError, KafkaUnavailable) as error:
        fail(str(error))
    except KafkaConnectionError as error:
        fail(f"Kafka at {get_settings().kafka_bootstrap} does not answer ({error}); start it with "
             "`om services up` or set OM_KAFKA_BOOTSTRAP")
    except KafkaError as error:
        fail(f"Kafka refused the request ({describe(error)})")
    except LookupError as error:
        fail(str(error))
    except SchemaError as error:
        fail(f"invalid input: {error}")
    raise AssertionError("unreachable")


def quiet_kafka_logs() -> None:
    """A command's own progress lines and final error say what aiokafka's log lines would repeat
    (a line per failed connect, several a second while a broker is away)."""
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)


def progress(line: str) -> None:
    """A broker-loss progress line, on stderr so ``--json`` output stays clean."""
    errors.print(f"[yellow]…[/] {line}", highlight=False)


def fail(message: str) -> None:
    errors.print(f"[red]✗[/] {message}")
    raise typer.Exit(1)
