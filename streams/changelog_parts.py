"""Collections as one changelog record per item, so a batch writes what changed, not the collection.

Issue 20 item 2: a state's collections (its window, applied cycle ids, observation log …) grow with
the thread; written whole with every change, the bytes per message grew with them. Each shape here
is written from the collection as last written (``before``) and as it is now (``after``) — what a
batch knows — so the writer keeps no bookkeeping of its own, and read back from the process's local
copy of the changelog (streams/state_store.py).

Rules this module keeps:

* **A record per item, keyed** ``<family prefix><lookup key>\\0<item>`` (the caller's ``prefix`` ends
  in ``\\0``); a batch writes the items that are new or changed and tombstones the ones gone, so log
  compaction keeps exactly the collection's items.
* **Three shapes.** A *map* (``{id: value}``, unordered): an item per id. A *chain* (items with ids,
  in order): an item is ``<predecessor id>\\n<payload>`` and the order is read back by walking from
  the last item (its parent record names it, with the count) to the first; an item is written again
  only when its value or its predecessor changed, so appending, or dropping items from either end,
  writes the items added (or the tombstones) alone. *Blocks* (a text that is appended to): its UTF-8
  bytes in fixed blocks of :data:`BLOCK` bytes; an append writes its last block again and the new
  ones, and the parent record keeps the length.
* **Ids name records**: a chain's ids are unique and hold no newline (:func:`chainable`); the caller
  keeps a collection whose ids cannot key a chain in its parent record instead.
* **whole**: the changelog holds none of ``before``'s items in this form (an older worker wrote them
  otherwise): every item of ``after`` is written, and ``before``'s items that ``after`` lacks are
  still tombstoned (an older form may hold them under the same keys).
* **Reading reports what is missing** (not expected: an item is written in its parent's transaction):
  a log line and a failure count, and the collection as far as it was found.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

from streams import metrics
from streams.state_store import PartStore

log = logging.getLogger(__name__)

T, V = TypeVar("T"), TypeVar("V")
Part = tuple[str, bytes | None]  # (changelog key, value or tombstone)
BLOCK = 2048  # part of the format: blocks written with another size would be read wrongly


def map_parts(prefix: str, before: Mapping[str, V], after: Mapping[str, V], encode: Callable[[V], bytes],
              whole: bool = False) -> list[Part]:
    out: list[Part] = [(prefix + k, None) for k in before if k not in after]
    for k, value in after.items():
        if whole or k not in before or not _same(before[k], value):
            out.append((prefix + k, encode(value)))
    return out


def read_map(parts: PartStore, prefix: str) -> dict[str, bytes]:
    return {k[len(prefix):]: v for k, v in parts.scan(prefix)}


def chainable(ids: Sequence[str]) -> bool:
    """Whether these ids can key a chain: unique, and none holds a newline."""
    return len(set(ids)) == len(ids) and "\n" not in "".join(ids)


def chain_parts(prefix: str, before: Sequence[T], after: Sequence[T], ident: Callable[[T], str],
                encode: Callable[[T], bytes], whole: bool = False, dirty: Collection[str] = ()) -> list[Part]:
    """``before`` and ``after``: the items in order, ``ident`` an item's id; ``dirty``: ids whose
    encoding changed though their item did not. Items are compared with ``is``, then ``==``.

    The work is in proportion to the items added, dropped or changed: the run of ``after`` that is a
    run of ``before`` (the common case: items dropped from the front, added at the end) is compared
    as tuples and left alone."""
    before, after = tuple(before), tuple(after)  # the same objects when they are tuples already
    d, run = (0, 0) if whole else _run(before, after)
    was = {ident(before[n]): n for n in (*range(d), *range(d + run, len(before)))}
    new = {ident(after[n]) for n in range(run, len(after))}
    out: list[Part] = [(prefix + i, None) for i in was if i not in new]
    for n in range(run, len(after)):
        item = after[n]
        i, j = ident(item), was.get(ident(item))
        # the first item's predecessor is never followed (the walk has passed every other item)
        linked = n == 0 or (j is not None and j > 0 and ident(before[j - 1]) == ident(after[n - 1]))
        if whole or j is None or not linked or i in dirty or not _same(before[j], item):
            out.append(_link(prefix, after, n, ident, encode))
    if unmoved := {i for i in dirty if i not in was and i not in new}:  # changed in the run itself
        out += [_link(prefix, after, n, ident, encode) for n in range(run) if ident(after[n]) in unmoved]
    return out


def _run(before: tuple[T, ...], after: tuple[T, ...]) -> tuple[int, int]:
    """``(d, run)``: ``after`` starts with ``before[d:d + run]``, the longest such run (0: none)."""
    if not before or not after:
        return 0, 0
    try:
        d = before.index(after[0])
    except ValueError:
        return 0, 0
    lo, hi = 1, min(len(before) - d, len(after))
    if before[d:d + hi] == after[:hi]:  # the common case
        return d, hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if before[d:d + mid] == after[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return d, lo


def _link(prefix: str, items: Sequence[T], n: int, ident: Callable[[T], str],
          encode: Callable[[T], bytes]) -> Part:
    return prefix + ident(items[n]), (ident(items[n - 1]) if n else "").encode() + b"\n" + encode(items[n])


def chain_head(items: Sequence[T], ident: Callable[[T], str]) -> list[Any]:
    """What the parent record keeps of a chain: its last id and its length."""
    return [ident(items[-1]) if items else "", len(items)]


def read_chain(parts: PartStore, prefix: str, head: Sequence[Any]) -> list[tuple[str, bytes]]:
    """The chain's ``(id, payload)`` pairs in order, from the parent's :func:`chain_head`."""
    items = read_map(parts, prefix)
    out, at = [], head[0]
    while at in items:
        pred, _, payload = items.pop(at).partition(b"\n")
        out.append((at, payload))
        at = pred.decode()
    out.reverse()
    if len(out) != head[1]:
        report_missing(prefix, head[1] - len(out))
    return out


def blocks(prefix: str, before: bytes | None, after: bytes | None, whole: bool = False) -> list[Part]:
    """The records of text ``after`` (None: no text) written as ``before`` was."""
    old, new = before or b"", after or b""
    if not whole and old == new:
        return []
    out: list[Part] = []
    for n in range(0, len(new), BLOCK):
        block = new[n:n + BLOCK]
        if whole or old[n:n + BLOCK] != block:
            out.append((f"{prefix}{n // BLOCK}", block))
    out += [(f"{prefix}{n // BLOCK}", None) for n in range(_ceil(len(new)), len(old), BLOCK)]
    return out


def read_blocks(parts: PartStore, prefix: str, size: int) -> bytes:
    found = [parts.get(f"{prefix}{n // BLOCK}") for n in range(0, size, BLOCK)]
    text = b"".join(b for b in found if b is not None)
    if len(text) != size:
        report_missing(prefix, sum(b is None for b in found) or 1)
    return text


def _ceil(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


def _same(a: Any, b: Any) -> bool:
    return a is b or a == b


def report_missing(prefix: str, count: int) -> None:
    """Items of a collection not found (not expected: a log line and a failure count)."""
    log.error("om.recovery.missing_parts", extra={"family": prefix[:3].strip("\x00"), "missing": count})
    metrics.failure("missing-state-parts", count)
