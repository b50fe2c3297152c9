"""Every fault test says what it broke and what it checked (issue: "each prints what it broke and
what it checked"). The ``fault`` fixture prints each line as it happens (seen with ``pytest -s``)
and keeps it, and the run ends with a "fault suite" section listing them all, so the plain test
command shows the record without extra flags. A failing test lists its "broke" lines but not the
"checked" ones it never reached."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest


@dataclass
class FaultReport:
    test: str
    lines: list[str] = field(default_factory=list)

    def broke(self, what: str) -> None:
        self._say(f"broke:   {what}")

    def checked(self, what: str) -> None:
        self._say(f"checked: {what}")

    def _say(self, line: str) -> None:
        print(line)
        self.lines.append(line)


_REPORTS: list[FaultReport] = []


@pytest.fixture
def fault(request: pytest.FixtureRequest) -> FaultReport:
    report = FaultReport(request.node.nodeid.rpartition("::")[2])
    _REPORTS.append(report)
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _REPORTS:
        return
    terminalreporter.section("fault suite: what each test broke and checked")
    for report in _REPORTS:
        terminalreporter.write_line(report.test)
        for line in report.lines:
            terminalreporter.write_line(f"  {line}")
    _REPORTS.clear()  # tests/cluster/conftest.py registers this hook too: one section, not two
