"""The rooms of ``processors/`` and who may enter them (beside the sans-IO rule of test_sans_io).

* ``config/`` imports nothing of the state machine or the context assembly.
* ``context/`` never imports the state machine.
* Only the simulation (``processors/simulate.py``) and the shell (``streams/``, ``bench/``, and the
  tests driving them) import ``machine/``, and only through its entry point.
* Outside a room (``machine``, ``config``, ``context``), only its entry point is imported; the room's
  own unit tests (``tests/unit/<room>/``) may reach inside, and so may the fidelity tests
  (``tests/fidelity/``), which switch a deliberate fix off to compare with Mastra.
* The top-level units of ``processors/`` import each other without a cycle.
* ``bench/`` imports nothing from ``tests/``: the drivers both use live in ``streams/harness/``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("machine", "config", "context")


def _sources(*folders: str) -> list[Path]:
    return [path for folder in folders for path in (ROOT / folder).rglob("*.py")]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _offenders(paths: list[Path], bad) -> dict[str, list[str]]:
    found = {_rel(p): sorted(m for m in _imports(p) if bad(m)) for p in paths}
    return {path: mods for path, mods in found.items() if mods}


def _in_room(module: str, room: str) -> bool:
    return module == f"processors.{room}" or module.startswith(f"processors.{room}.")


def test_config_imports_neither_the_machine_nor_the_context() -> None:
    bad = lambda m: _in_room(m, "machine") or _in_room(m, "context")  # noqa: E731
    assert _offenders(_sources("processors/config"), bad) == {}


def test_context_never_imports_the_machine() -> None:
    assert _offenders(_sources("processors/context"), lambda m: _in_room(m, "machine")) == {}


def test_only_the_simulation_and_the_shell_use_the_machine() -> None:
    core = [p for p in _sources("processors")
            if not _rel(p).startswith("processors/machine/") and _rel(p) != "processors/simulate.py"]
    assert _offenders(core, lambda m: _in_room(m, "machine")) == {}


def test_outside_a_room_only_its_entry_point_is_imported() -> None:
    for room in ROOMS:
        outside = [p for p in _sources("processors", "streams", "bench", "tests")
                   if not _rel(p).startswith((f"processors/{room}/", f"tests/unit/{room}/", "tests/fidelity/"))]
        bad = lambda m, room=room: m.startswith(f"processors.{room}.")  # noqa: E731
        assert _offenders(outside, bad) == {}, f"reach into processors/{room}/ from outside"


def _unit(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "processors" and len(parts) > 1 else None


def test_processors_top_level_units_have_no_import_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in _sources("processors"):
        parts = path.relative_to(ROOT / "processors").with_suffix("").parts
        if parts == ("__init__",):
            continue
        unit = parts[0]
        graph[unit].update(u for m in _imports(path) if (u := _unit(m)) and u != unit)
    visiting, done = set(), set()

    def visit(unit: str, trail: tuple[str, ...]) -> None:
        assert unit not in visiting, f"import cycle: {' -> '.join(trail + (unit,))}"
        if unit in done:
            return
        visiting.add(unit)
        for nxt in sorted(graph.get(unit, ())):
            visit(nxt, trail + (unit,))
        visiting.discard(unit)
        done.add(unit)

    for unit in sorted(graph):
        visit(unit, ())
    assert len(graph) <= 12, f"processors/ has {len(graph)} top-level units: {sorted(graph)}"


def test_bench_imports_nothing_from_tests() -> None:
    assert _offenders(_sources("bench"), lambda m: m == "tests" or m.startswith("tests.")) == {}
