"""Resolving the Apache Kafka broker's jars from Maven Central, once per machine.

The POM in ``deploy/local/kafka`` pins the version. Maven caches every artifact in ``~/.m2``, and
we copy the resolved jars into ``<data dir>/kafka/lib`` with a stamp of the POM's hash, so a
second ``om services up`` neither runs Maven nor needs the network, and editing the POM (a
version bump) resolves again.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

from rich.console import Console

from streams.services.errors import ServiceError
from streams.settings import PROJECT_ROOT

DEPLOY_DIR = PROJECT_ROOT / "deploy" / "local" / "kafka"
POM = DEPLOY_DIR / "pom.xml"


def kafka_version() -> str:
    """The pinned broker version; docker-compose must use the same ``apache/kafka`` tag."""
    match = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", POM.read_text())
    if match is None:
        raise ServiceError(f"{POM} has no <kafka.version> property; restore it from git")
    return match.group(1)


def ensure_jars(lib_dir: Path, console: Console | None = None) -> Path:
    """Make ``lib_dir`` hold the broker's runtime classpath; a no-op when already resolved."""
    stamp = lib_dir / ".pom-sha256"
    wanted = hashlib.sha256(POM.read_bytes()).hexdigest()
    if stamp.is_file() and stamp.read_text() == wanted:
        return lib_dir
    if shutil.which("mvn") is None:
        raise ServiceError("Maven (mvn) is not installed; install it (Debian: apt-get install maven), then retry")
    console = console or Console(stderr=True)
    staging = lib_dir.with_name(lib_dir.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    with console.status(f"Resolving Apache Kafka {kafka_version()} from Maven Central (first run only)…"):
        result = subprocess.run(
            [
                "mvn", "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
                "-DincludeScope=runtime", f"-DoutputDirectory={staging}",
            ],
            capture_output=True,
            text=True,
        )
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise ServiceError(
            f"Maven could not resolve the Kafka broker (exit {result.returncode}):\n{tail}\n"
            "Check that Maven Central is reachable (or that ~/.m2 already holds the artifacts), then retry."
        )
    shutil.rmtree(lib_dir, ignore_errors=True)
    staging.rename(lib_dir)
    stamp.write_text(wanted)
    console.print(f"[green]✓[/] Kafka {kafka_version()}: {sum(1 for _ in lib_dir.glob('*.jar'))} jars in {lib_dir}")
    return lib_dir
