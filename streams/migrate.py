"""Versioned ClickHouse DDL: ``deploy/clickhouse/migrations/NNN_name.sql``, applied once each, in order.

Why a runner and not one schema file: the tables are projections of the topics, but dropping and
replaying them is slow on a real installation, so schema changes ship as numbered steps that
upgrade a live database. Rules the runner keeps:

* A migration is applied at most once per database; ``om_schema_migrations`` records its version,
  name and checksum. Editing an applied migration is refused (write a new one instead).
* Statements use ``IF NOT EXISTS`` / ``IF EXISTS``, so two processes migrating at the same time (the
  worker starting while ``om migrate`` runs) both succeed; the bookkeeping table deduplicates.
* Statements in a file are separated by ``;`` at the end of a line; ``--`` comments are allowed.
* A migration that adds a projection the sink keeps fills it for what is already stored, once,
  right after it is applied (``_FILLS``: 008, the context rows).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from clickhouse_connect.driver.client import Client

from streams.settings import PROJECT_ROOT

log = logging.getLogger(__name__)

MIGRATIONS_DIR = PROJECT_ROOT / "deploy" / "clickhouse" / "migrations"
_FILE_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")
_BOOKKEEPING = """
CREATE TABLE IF NOT EXISTS om_schema_migrations
(
    version UInt32,
    name String,
    checksum String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
ORDER BY version
"""


class MigrationError(RuntimeError):
    """The migrations folder or the database's migration history is inconsistent."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()

    def statements(self) -> list[str]:
        """The file's statements, comments removed; a ``;`` ends a statement only at a line end."""
        lines = [line for line in self.sql.splitlines() if not line.lstrip().startswith("--")]
        text = "\n".join(lines)
        return [s.strip() for s in re.split(r";\s*$", text, flags=re.MULTILINE) if s.strip()]


def load_migrations(folder: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Every ``NNN_name.sql`` in ``folder``, by version; a repeated version is an error."""
    found: dict[int, Migration] = {}
    for path in sorted(folder.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if match is None:
            raise MigrationError(f"{path.name}: migration files are named NNN_lowercase_name.sql")
        version = int(match.group(1))
        if version in found:
            raise MigrationError(f"{path.name}: version {version} is used by {found[version].name} too")
        found[version] = Migration(version, match.group(2), path.read_text())
    return [found[v] for v in sorted(found)]


def applied_versions(client: Client) -> dict[int, str]:
    """Version -> checksum of what this database has applied."""
    client.command(_BOOKKEEPING)
    rows = client.query("SELECT version, checksum FROM om_schema_migrations FINAL").result_rows
    return {int(version): checksum for version, checksum in rows}


def apply_migrations(client: Client, folder: Path = MIGRATIONS_DIR) -> list[int]:
    """Apply the migrations this database lacks, in order; returns the versions applied now."""
    done = applied_versions(client)
    applied: list[int] = []
    for migration in load_migrations(folder):
        if migration.version in done:
            if done[migration.version] != migration.checksum:
                raise MigrationError(
                    f"migration {migration.version:03d}_{migration.name} changed after it was applied; "
                    "applied migrations are immutable, add a new one instead"
                )
            continue
        for statement in migration.statements():
            client.command(statement)
        client.insert(
            "om_schema_migrations",
            [[migration.version, migration.name, migration.checksum]],
            column_names=["version", "name", "checksum"],
        )
        log.info("clickhouse.migration.applied", extra={"version": migration.version, "migration": migration.name})
        applied.append(migration.version)
        if migration.version in _FILLS:
            filled = _FILLS[migration.version](client)
            log.info("clickhouse.migration.filled", extra={"version": migration.version, "keys": filled})
    return applied


def _fill_contexts(client: Client) -> int:
    # the sink's rules, imported only when 008 is new (they pull in the reader)
    from streams.sink.contexts import backfill

    return backfill(client)


_FILLS = {8: _fill_contexts}
