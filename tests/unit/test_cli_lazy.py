"""`om`'s subcommands are imported when run, not with the command (streams/cli.py): a worker's restart
(`om run`) must not pay for the replay, eval, SDK and cost commands."""

from __future__ import annotations

import subprocess
import sys

from typer.core import TyperCommand, TyperGroup
from typer.testing import CliRunner

from streams.cli import SUBCOMMANDS, app, subcommand


def test_importing_om_loads_no_subcommand_module() -> None:
    modules = sorted({target.partition(":")[0] for target in SUBCOMMANDS})
    probe = f"import sys, streams.cli; print([m for m in {modules!r} if m in sys.modules])"
    loaded = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert loaded.strip() == "[]"


def test_every_subcommand_resolves_to_a_command_of_its_name() -> None:
    for name in SUBCOMMANDS:
        command = subcommand(name)
        assert isinstance(command, (TyperCommand, TyperGroup)) and command.name == name
        assert command.help, f"{name}: no help text"


def test_help_lists_every_subcommand_and_runs_one_on_demand() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0
    for name in [*SUBCOMMANDS, "demo", "run"]:
        assert f" {name} " in listed.output
    assert runner.invoke(app, ["simulate", "--help"]).exit_code == 0
    unknown = runner.invoke(app, ["no-such-command"])
    assert unknown.exit_code != 0 and "No such command" in unknown.output
