"""The decision core and the wire models import no IO library (ARCHITECTURE rule 3).

Checked two ways: statically (no import statement names one) and dynamically (importing every
module of ``processors`` and ``schemas`` in a fresh interpreter loads none of them).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = {"faust", "aiokafka", "clickhouse_connect", "litellm", "chdb", "aiohttp", "httpx", "requests", "mode",
             "opentelemetry"}


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_module_of_the_core_names_an_io_library() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imported_roots(path) & FORBIDDEN)
        for package in ("processors", "schemas")
        for path in (ROOT / package).rglob("*.py")
        if _imported_roots(path) & FORBIDDEN
    }
    assert offenders == {}


def test_importing_the_core_loads_no_io_library() -> None:
    modules = sorted(
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for package in ("processors", "schemas")
        for path in (ROOT / package).rglob("*.py")
    )
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(sorted(set(m.split('.')[0] for m in sys.modules) & set({sorted(FORBIDDEN)!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
