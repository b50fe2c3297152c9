"""Where the figures were measured: they only mean something next to the machine and versions."""

from __future__ import annotations

import os
import platform
from datetime import datetime, timezone

import chdb

from streams.services.kafka import describe


def _first(path: str, prefix: str) -> str:
    with open(path) as lines:
        return next((line.split(":", 1)[1].strip() for line in lines if line.startswith(prefix)), "unknown")


def description() -> list[str]:
    ram_gib = int(_first("/proc/meminfo", "MemTotal").split()[0]) / 2**20
    return [
        f"date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"CPU: {_first('/proc/cpuinfo', 'model name')}, {os.cpu_count()} cores; RAM {ram_gib:.1f} GiB",
        f"OS: {platform.system()} {platform.release()}; Python {platform.python_version()}",
        f"broker: {describe()}, local; ClickHouse: chDB {chdb.__version__} (embedded)",
    ]
