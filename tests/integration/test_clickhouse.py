"""The real ClickHouse engine (chDB) through ``streams.clickhouse.connect``.

chDB hosts one engine per process, and the pytest process may already run one on the session's
data directory (the ``clickhouse_dsn`` fixture). So every scenario here runs ``connect()`` in
child processes on its own ``tmp_path`` directory, leaving the pytest process's engine alone;
children report back one line per result on stdout.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import sys
from streams.clickhouse import ClickHouseConnectError, DataDirectoryLocked, close_all, connect
DSN = sys.argv[1]
EVENTS_DDL = '''
CREATE TABLE events (thread_key String, seq UInt64, body String, version UInt64, is_deleted UInt8)
ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY (thread_key, seq)
'''
COLUMNS = ["thread_key", "seq", "body", "version", "is_deleted"]
def say(value):
    print(value, flush=True)
"""


@pytest.fixture
def dsn(tmp_path: Path) -> str:
    return f"chdb://{tmp_path / 'clickhouse'}"


def _start(body: str, dsn: str) -> subprocess.Popen[str]:
    """A Python child running ``PRELUDE + body`` against ``dsn``, with this repo importable."""
    return subprocess.Popen(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body), dsn],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read_line(proc: subprocess.Popen[str], timeout: float = 60.0) -> str:
    """The child's next stdout line, failing with its stderr if it dies or stays silent."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline() if ready else ""
    if not line:
        proc.kill()
        _, stderr = proc.communicate()
        pytest.fail(f"child gave no line within {timeout}s (exit {proc.returncode}): {stderr[-2000:]}")
    return line.rstrip("\n")


def _run(body: str, dsn: str) -> list[str]:
    """Run a child to completion and return its stdout lines; a failing child fails the test."""
    proc = _start(body, dsn)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr[-2000:]
    return stdout.splitlines()


def test_rows_written_are_read_back_with_server_side_parameters(dsn: str) -> None:
    lines = _run(
        """
        client = connect(DSN)
        client.command(EVENTS_DDL)
        client.insert("events", [(f"thread:{i % 7}", i, f"body {i}", 1, 0) for i in range(10_000)], column_names=COLUMNS)
        say(client.query("SELECT count() FROM events").result_rows)
        say(client.query(
            "SELECT seq, body FROM events WHERE thread_key = {key:String} AND seq < {below:UInt64} ORDER BY seq",
            parameters={"key": "thread:3", "below": 30},
        ).result_rows)
        """,
        dsn,
    )

    assert lines == ["[(10000,)]", "[(3, 'body 3'), (10, 'body 10'), (17, 'body 17'), (24, 'body 24')]"]


def test_replacing_merge_tree_final_keeps_the_newest_version_and_drops_deletions(dsn: str) -> None:
    lines = _run(
        """
        client = connect(DSN)
        client.command(EVENTS_DDL)
        client.insert("events", [("thread:a", 1, "first draft", 1, 0), ("thread:a", 2, "doomed", 1, 0)], column_names=COLUMNS)
        client.insert("events", [("thread:a", 1, "rewritten", 2, 0), ("thread:a", 2, "doomed", 2, 1)], column_names=COLUMNS)
        client.insert("events", [("thread:a", 1, "stale retry", 1, 0)], column_names=COLUMNS)
        say(client.query("SELECT seq, body FROM events FINAL ORDER BY seq").result_rows)
        """,
        dsn,
    )

    assert lines == ["[(1, 'rewritten')]"]


def test_one_shared_client_per_dsn_and_one_directory_per_process(dsn: str, tmp_path: Path) -> None:
    other_dsn = f"chdb://{tmp_path / 'elsewhere'}"
    lines = _run(
        f"""
        client = connect(DSN)
        say(connect(DSN + "/") is client)
        try:
            connect({other_dsn!r})
        except ClickHouseConnectError as error:
            say(error)
        close_all()
        say(connect({other_dsn!r}).command("SELECT 1"))
        """,
        dsn,
    )

    assert lines[0] == "True"
    assert "already runs the embedded ClickHouse engine" in lines[1]
    assert "one data directory per process" in lines[1]
    assert lines[2] == "1"


def test_dsn_database_is_created_and_selected(dsn: str) -> None:
    lines = _run(
        """
        say(connect(DSN).command("SELECT currentDatabase()"))
        say(connect(DSN + "?database=om").command("SELECT currentDatabase()"))
        """,
        dsn,
    )

    assert lines == ["default", "om"]


def test_data_survives_the_writing_process_being_killed(dsn: str) -> None:
    writer = _start(
        """
        client = connect(DSN)
        client.command(EVENTS_DDL)
        client.insert("events", [("thread:k", i, "x", 1, 0) for i in range(500)], column_names=COLUMNS)
        say("written")
        input()
        """,
        dsn,
    )
    assert _read_line(writer) == "written"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)

    lines = _run('say(connect(DSN).query("SELECT count() FROM events FINAL").result_rows)', dsn)

    assert lines == ["[(500,)]"]


def test_data_written_by_a_closed_process_is_read_by_a_new_one(dsn: str) -> None:
    _run(
        """
        client = connect(DSN)
        client.command(EVENTS_DDL)
        client.insert("events", [("thread:p", i, f"b{i}", 1, 0) for i in range(100)], column_names=COLUMNS)
        close_all()
        """,
        dsn,
    )

    lines = _run('say(connect(DSN).query("SELECT count(), max(body) FROM events FINAL").result_rows)', dsn)

    assert lines == ["[(100, 'b99')]"]


def test_second_process_on_the_same_directory_gets_a_clear_error(dsn: str) -> None:
    holder = _start('connect(DSN)\nsay("holding")\ninput()', dsn)
    try:
        assert _read_line(holder) == "holding"
        refused = _run(
            """
            try:
                connect(DSN)
            except DataDirectoryLocked as error:
                say(error)
            """,
            dsn,
        )
    finally:
        holder.kill()
        holder.wait(timeout=30)

    reopened = _run('say(connect(DSN).command("SELECT 1"))', dsn)

    assert len(refused) == 1
    assert f"in use by process {holder.pid}" in refused[0]
    assert "one process per data directory" in refused[0]
    assert reopened == ["1"]


def test_named_handles_share_the_engine_and_run_side_by_side(dsn: str) -> None:
    """The embedded sink starts a batch on one handle while it inserts on another, and its reader
    reads on a third: each sees what the others wrote, and a slow call on one does not hold the others."""
    lines = _run(
        """
        import threading, time
        writer, other = connect(DSN), connect(DSN, handle="other")
        say(other is not writer and connect(DSN, handle="other") is other)
        writer.command(EVENTS_DDL)
        writer.insert("events", [["t", 1, "one", 1, 0]], column_names=COLUMNS)
        say(other.query("SELECT body FROM events").result_rows)
        finished = []
        slow = threading.Thread(target=lambda: (writer.command(
            "SELECT sum(sleepEachRow(0.01)) FROM numbers(100) SETTINGS max_block_size = 1"), finished.append("slow")))
        slow.start()
        deadline = time.monotonic() + 30
        while not other.command("SELECT count() FROM system.processes WHERE query LIKE '%sleepEachRow(0.01)%' "
                                "AND query NOT LIKE '%system.processes%'"):  # answered while the slow call runs
            assert time.monotonic() < deadline and not finished, "the slow call was never seen running"
        finished.append("other")
        slow.join()
        say(finished)
        """,
        dsn,
    )

    assert lines[0] == "True"
    assert lines[1] == "[('one',)]"
    assert lines[2] == "['other', 'slow']", "the other handle answered while the slow call ran (1 s)"
