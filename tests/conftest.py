"""Session-wide fixtures: the real Kafka broker, ClickHouse engine and PostgreSQL server, started only
when asked for.

Pure unit tests never touch these fixtures, so they start nothing. Integration tests ask for
``kafka_bootstrap`` / ``clickhouse_dsn``; the backend (Docker containers or the project's local
services) is chosen once per session and shown in the pytest header. ``postgres`` (a Mastra
PostgreSQL store's server) is always a local throwaway cluster (:mod:`tests.postgres_server`).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest

from streams.services.kafka_topics import create_topics, delete_topics
from tests import backends, postgres_server

NO_TESTS_COLLECTED = 5
# litellm's cost map from the copy it ships, whichever test imports litellm first (it reads this on import)
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def pytest_report_header(config: pytest.Config) -> str:
    return f"om test backend: {backends.chosen_backend()} (OM_TEST_BACKEND=auto|docker|local)"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run that collects nothing must not pass: it usually means a broken path or import."""
    if exitstatus == NO_TESTS_COLLECTED:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("ERROR: no tests were collected; failing the run on purpose", red=True, bold=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def test_backend() -> str:
    return backends.chosen_backend()


@pytest.fixture(scope="session")
def kafka_bootstrap(test_backend: str) -> Iterator[str]:
    """``host:port`` of a real broker, up for the whole session."""
    starter = backends.docker_kafka if test_backend == "docker" else backends.local_kafka
    with starter() as bootstrap:
        yield bootstrap


@pytest.fixture(scope="session")
def clickhouse_dsn(test_backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A DSN for :func:`streams.clickhouse.connect`: a server (docker) or chDB in a session temp dir."""
    if test_backend == "docker":
        with backends.docker_clickhouse() as dsn:
            yield dsn
    else:
        yield f"chdb://{tmp_path_factory.mktemp('clickhouse')}"


@pytest.fixture(autouse=True)
def _logger_levels_restored() -> Iterator[None]:
    """A command run in-process (typer's ``CliRunner``) sets levels for the whole process: ``om``'s
    commands quiet aiokafka's logger (streams/sdk/cli_common.py), the worker's logging setup the
    root's. Put back after each test, so a later one that reads aiokafka's records still gets them
    (the broker-loss fault test found none after the shell-override test). Handlers are pytest's."""
    loggers = [logging.getLogger(), logging.getLogger("aiokafka")]
    levels = [logger.level for logger in loggers]
    yield
    for logger, level in zip(loggers, levels):
        logger.setLevel(level)


@pytest.fixture(autouse=True)
def _drop_the_tests_databases(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test on the session's embedded engine makes its own databases (``t_<uuid>``, see
    tests/integration/om_pipeline.database_client); they are dropped once it ends. Left behind, the
    engine's background threads keep visiting every table of every earlier test: ~0.15 of a core at
    150 databases, taken from every test that runs later. Databases made before the test (by a
    module-scoped fixture, say) are left alone."""
    if "clickhouse_dsn" not in request.fixturenames:
        yield
        return
    dsn = request.getfixturevalue("clickhouse_dsn")
    if not dsn.startswith("chdb://"):
        yield
        return
    from clickhouse_connect.driver.binding import quote_identifier

    from streams.clickhouse import connect

    client = connect(dsn)
    before = _test_databases(client)
    yield
    for name in sorted(_test_databases(client) - before):
        client.command(f"DROP DATABASE IF EXISTS {quote_identifier(name)} SYNC")


def _test_databases(client) -> set[str]:
    return {row[0] for row in client.query(
        "SELECT name FROM system.databases WHERE startsWith(name, 't_')").result_rows}


@pytest.fixture(scope="session")
def postgres() -> Iterator[postgres_server.PostgresServer]:
    """A real PostgreSQL server for the session (started on first use, ~2 s); tests make their own databases."""
    with postgres_server.postgres_server() as server:
        yield server


@pytest.fixture
async def new_topic(kafka_bootstrap: str) -> AsyncIterator[Callable[..., Awaitable[str]]]:
    """``await new_topic(partitions=1)`` creates a uniquely named topic, deleted after the test."""
    created: list[str] = []

    async def make(partitions: int = 1, prefix: str = "test") -> str:
        name = f"{prefix}.{uuid.uuid4().hex[:12]}"
        await create_topics(kafka_bootstrap, [name], partitions=partitions)
        created.append(name)
        return name

    yield make
    if created:
        await delete_topics(kafka_bootstrap, created)
