"""Issue 18 item 9: a connection cap near the process's descriptor limit protects nothing, and says so."""

from __future__ import annotations

import logging

import pytest

from streams.reader import serve


@pytest.mark.parametrize(("cap", "warned"), [(256, False), (512, False), (513, True)])
def test_a_cap_over_half_the_descriptor_limit_is_warned_about(cap: int, warned: bool, monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(serve.resource, "getrlimit", lambda which: (1024, 4096))
    with caplog.at_level(logging.WARNING, logger=serve.__name__):
        serve._check_descriptor_limit(cap)
    assert [r.message for r in caplog.records] == (["reader.connection_cap_high"] if warned else [])
