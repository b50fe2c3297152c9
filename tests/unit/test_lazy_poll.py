"""The embedded reader's selector (streams/reader/lazy_poll.py): a zero-timeout poll soon after another
is skipped, any other poll is made, and a loop that always has callbacks ready still sees its sockets."""

from __future__ import annotations

import asyncio
import selectors
import socket

import pytest

from streams.reader.lazy_poll import LazyPollSelector


@pytest.fixture
def readable():
    """A selector watching a socket that has data to read, and the socket pair."""
    left, right = socket.socketpair()
    now = [0.0]
    selector = LazyPollSelector(min_gap_s=0.05, clock=lambda: now[0])
    selector.register(left, selectors.EVENT_READ)
    right.send(b"x")
    yield selector, left, now
    selector.close()
    left.close()
    right.close()


def test_a_zero_timeout_poll_within_the_gap_is_skipped_and_one_after_it_is_made(readable) -> None:
    selector, left, now = readable
    assert [key.fileobj for key, _ in selector.select(0)] == [left]  # the first poll is made
    now[0] += 0.049
    assert selector.select(0) == [] and selector.skipped == 1  # readable, but polled just now
    now[0] += 0.002
    assert [key.fileobj for key, _ in selector.select(0)] == [left]
    assert selector.skipped == 1


def test_a_poll_that_may_wait_is_always_made(readable) -> None:
    selector, left, _ = readable
    selector.select(0)
    assert [key.fileobj for key, _ in selector.select(0.5)] == [left]
    assert [key.fileobj for key, _ in selector.select(None)] == [left]
    assert selector.skipped == 0


def test_a_loop_that_always_has_callbacks_ready_still_reads_its_sockets() -> None:
    loop = asyncio.SelectorEventLoop(LazyPollSelector(min_gap_s=0.001))
    left, right = socket.socketpair()
    left.setblocking(False)
    got = loop.create_future()
    spins = 0

    def spin() -> None:  # a callback that is always ready again: every poll asks a zero timeout
        nonlocal spins
        spins += 1
        if not got.done():
            loop.call_soon(spin)

    def on_readable() -> None:
        if not got.done():
            got.set_result(left.recv(16))

    try:
        loop.add_reader(left, on_readable)
        loop.call_soon(spin)
        loop.call_soon(right.send, b"ping")
        assert loop.run_until_complete(asyncio.wait_for(got, timeout=5)) == b"ping"
        assert spins > 1
    finally:
        loop.remove_reader(left)
        loop.close()
        left.close()
        right.close()
