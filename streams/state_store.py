"""Key states past RAM: a bounded number decoded in memory, every key's parts in a local RocksDB.

Issue 20 item 5: the worker held every key's whole :class:`KeyState` as Python objects (7.8 KiB for
a key with one message: 1,000,000 keys needed ~8 GB). Now the table's data is :class:`SpilledStates`.

Rules this module keeps:

* **The local store mirrors the changelog, nothing more.** It holds the changelog's own records
  (streams/state_changelog.py: a key's slim state, its record, its window's bodies, its observed
  ids), put as each batch sends them and as recovery reads them; a key read back from it is its
  state as last written. It is a cache of the changelog, which stays the source of truth, so it
  keeps no write-ahead log: after a kill -9 its live files are never trusted, only a snapshot's.
* **Kept across a clean stop, and its snapshot across a crash** (streams/state_checkpoint.py): at
  exit, if the store then reflects committed records only, it is flushed and a checkpoint written
  beside it (:meth:`PartStore.keep`); while it runs, a copy of it as of a commit is made now and
  then (:meth:`PartStore.copy` and :meth:`PartStore.publish`: RocksDB's checkpoint, hard links, with its own checkpoint file
  in ``snapshot/``). The next start on the host for the same changelog adopts the freshest kept
  store, or else the freshest snapshot of a store whose process died (its live files are replaced
  by the snapshot's), and recovery reads only what came after. A store with neither, or a stale one,
  is removed, and recovery fills a new one from the whole changelog.
* **Decoded states are bounded**: at most ``capacity`` units stay decoded (a key costs 1 + its
  window's messages), least recently used out first. A state leaves memory only once written: a
  batch sets its states, writes them (:meth:`SpilledStates.written`), then the table trims.
* **One directory per process** under ``<OM_DATA_DIR>/state/``, held with an exclusive ``flock``;
  a directory no process holds (its owner died or exec'd itself in place) is removed at the next
  start, by whichever worker starts next on the host — unless it has a checkpoint a worker may
  still adopt (fresh: :data:`streams.state_checkpoint.ADOPT_WITHIN_S`; another app's is left to it).
* **Made and swept one worker at a time** (``state/.lock``, held while a worker removes stale
  directories and makes and locks its own): a directory is locked before another worker can find
  it. Without it, workers started together on one host could sweep a directory made but not yet
  locked, and its owner failed to start (seen once in the cluster tests).
"""

from __future__ import annotations

import atexit
import fcntl
import logging
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import IO

from rocksdict import Checkpoint as RocksCheckpoint
from rocksdict import DBCompressionType, Options, Rdict, WriteOptions

from processors.machine import KeyState
from streams import state_checkpoint as checkpoint_file
from streams.state_checkpoint import Checkpoint

log = logging.getLogger(__name__)

STATE = b"\x00s\x00"  # local prefix of the slim-state records (the changelog keys them by the bare key)
LOCK = "lock"
SWEEP_LOCK = ".lock"  # in the state directory: held while a worker sweeps it and makes its own
SNAPSHOT = "snapshot"  # in a store's directory: its copy as of a commit (PartStore.copy, PartStore.publish)


def state_dir(data_dir: Path) -> Path:
    return data_dir / "state"


def open_parts(data_dir: Path, topic: str = "") -> PartStore:
    """This process's store: the freshest kept store of changelog ``topic`` on the host (adopted,
    its checkpoint taken), else a new one; stores no one may adopt any more are removed."""
    root = state_dir(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    now_ms, started = int(time.time() * 1000), time.monotonic()
    with open(root / SWEEP_LOCK, "a") as sweeping:
        fcntl.flock(sweeping, fcntl.LOCK_EX)  # released when the file closes, or its process dies
        kept: list[tuple[int, bool, Path, Checkpoint]] = []
        for old in root.iterdir():
            if old.name != SWEEP_LOCK:
                found = _unheld_checkpoint(old, topic, now_ms)
                if found is not None:
                    kept.append((found[0].closed_at_ms, found[1], old, found[0]))
        adopted = None
        if kept:
            _, snapshot, path, adopted = max(kept, key=lambda found: found[0])
            if snapshot:  # its process died: the snapshot replaces what the store had become since
                checkpoint_file.take(path / SNAPSHOT)
                shutil.rmtree(path / "db", ignore_errors=True)
                os.replace(path / SNAPSHOT / "db", path / "db")
            else:
                checkpoint_file.take(path)
            shutil.rmtree(path / SNAPSHOT, ignore_errors=True)
            log.info("om.state_store.adopted", extra={
                "directory": path.name, "snapshot": snapshot, "partitions": sorted(adopted.offsets),
                "keys": sum(map(len, adopted.keys.values())), "seconds": round(time.monotonic() - started, 3)})
        else:
            path = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root))
        lock = open(path / LOCK, "a")  # noqa: SIM115 - held until the process ends (or exec's itself)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    store = PartStore(path, lock, adopted)
    atexit.register(store.exit)  # an exec or a kill -9 leaves it to the next start
    return store


def _unheld_checkpoint(path: Path, topic: str, now_ms: int) -> tuple[Checkpoint, bool] | None:
    """The checkpoint of a store no process holds, if a worker of ``topic`` may adopt it now, and
    whether it is its snapshot's (its process died) rather than its own (a clean stop). A store no
    worker may adopt any more is removed; a live worker's, or another topic's fresh one, is left alone."""
    try:
        with open(path / LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            checkpoint, snapshot = checkpoint_file.read(path), False
            if checkpoint is None:
                checkpoint, snapshot = checkpoint_file.read(path / SNAPSHOT), True
            if checkpoint is not None and checkpoint.fresh(now_ms):
                return (checkpoint, snapshot) if topic and checkpoint.topic == topic else None
            shutil.rmtree(path, ignore_errors=True)
            log.info("om.state_store.removed_stale", extra={"directory": path.name})
    except BlockingIOError:
        pass  # a live worker's
    except OSError:
        shutil.rmtree(path, ignore_errors=True)  # not a store (no lock file can be made): not ours to keep
    return None


class PartStore:
    """The changelog's records for the keys this process owns, by the changelog's own keys."""

    def __init__(self, path: Path, lock: IO[str] | None = None, adopted: Checkpoint | None = None) -> None:
        options = Options(raw_mode=True)
        options.create_if_missing(True)
        options.set_compression_type(DBCompressionType.lz4())
        options.set_write_buffer_size(32 * 2**20)
        self.path, self._lock = path, lock
        self.adopted = adopted  # a kept store's checkpoint, until recovery takes it (LocalChangelog.adopt)
        self._copying = threading.Lock()  # a snapshot (in a thread) is made before the store closes
        self.checkpoint: Callable[[], Checkpoint | None] = lambda: None  # at exit: what it holds, if it may be kept
        self._closed = False
        self._db = Rdict(str(path / "db"), options)
        unlogged = WriteOptions()
        unlogged.disable_wal = True  # a cache of the changelog: flushed when kept, else refilled
        self._db.set_write_options(unlogged)

    def put(self, key: str, value: bytes | None) -> None:
        """A changelog record: ``key`` as the changelog names it, ``value`` None for a tombstone."""
        raw = _local(key)
        if value is None:
            self._db.delete(raw)
        else:
            self._db[raw] = value

    def get(self, key: str) -> bytes | None:
        return self._db.get(_local(key))

    def scan(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Records whose changelog key starts with ``prefix`` (one of a key's part families)."""
        start = prefix.encode()
        for raw, value in self._db.items(from_key=start):
            if not raw.startswith(start):
                return
            yield raw.decode(), value

    def drop_range(self, prefix: str) -> None:
        """Remove every record whose changelog key starts with ``prefix`` (which ends in ``\\0``)."""
        start = prefix.encode()
        self._db.delete_range(start, start[:-1] + b"\x01")

    def flush(self) -> None:
        """Write the memtable out (before a copy, so the copy's own flush has little left to do)."""
        with self._copying:
            if not self._closed:
                self._db.flush(True)

    def copy(self) -> bool:
        """Copy the store as it is now (RocksDB's checkpoint: a flush, then hard links) for a snapshot;
        nothing may write to the store meanwhile. :meth:`publish` makes it the snapshot."""
        with self._copying:
            if self._closed:
                return False
            fresh = self.path / f"{SNAPSHOT}.new"
            shutil.rmtree(fresh, ignore_errors=True)
            fresh.mkdir()
            RocksCheckpoint(self._db).create_checkpoint(str(fresh / "db"))
            return True

    def publish(self, checkpoint: Checkpoint | None) -> None:
        """The last copy becomes ``snapshot/`` with ``checkpoint`` (what it holds): what a start after
        this process dies adopts. None: the copy is dropped."""
        fresh, current, old = (self.path / f"{SNAPSHOT}{suffix}" for suffix in (".new", "", ".old"))
        with self._copying:
            if checkpoint is None or self._closed:
                shutil.rmtree(fresh, ignore_errors=True)
                return
            checkpoint_file.write(fresh, checkpoint)
            shutil.rmtree(old, ignore_errors=True)
            if current.exists():
                os.replace(current, old)
            os.replace(fresh, current)  # a death between the two renames leaves no snapshot: read whole
            shutil.rmtree(old, ignore_errors=True)

    def keep(self, checkpoint: Checkpoint) -> None:
        """Flush the store to disk and write ``checkpoint`` beside it: a later start may adopt it."""
        with self._copying:
            self._db.flush(True)
            self._db.close()
            self._closed = True
        checkpoint_file.write(self.path, checkpoint)
        for name in (SNAPSHOT, f"{SNAPSHOT}.new"):  # older than what is kept now (and outranked by it)
            shutil.rmtree(self.path / name, ignore_errors=True)
        if self._lock is not None:
            self._lock.close()  # the process is ending: the next start may take it now

    def exit(self) -> None:
        """At the process's exit: kept if :attr:`checkpoint` vouches for what it holds, else removed."""
        if self._closed:
            return
        try:
            checkpoint = self.checkpoint()
            if checkpoint is not None:
                self.keep(checkpoint)
                log.info("om.state_store.kept", extra={"partitions": sorted(checkpoint.offsets),
                                                       "keys": sum(map(len, checkpoint.keys.values()))})
                return
        except Exception as error:  # noqa: BLE001 - a store not kept is only read again
            log.warning("om.state_store.not_kept", extra={"error": type(error).__name__})
        self.close()

    def close(self) -> None:
        with self._copying:
            if not self._closed:
                self._db.close()
                self._closed = True
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock is not None:
            self._lock.close()


def _local(key: str) -> bytes:
    return key.encode() if key.startswith("\x00") else STATE + key.encode()


class SpilledStates(MutableMapping[str, KeyState]):
    """The table's ``{lookup key: KeyState}``: decoded states in a bounded LRU, the rest in ``parts``.

    ``read(parts, key)`` assembles a key's state from its parts; ``drop(parts, key)`` removes them."""

    def __init__(self, parts: PartStore, read: Callable[[PartStore, str], KeyState | None],
                 drop: Callable[[PartStore, str], None], capacity: int) -> None:
        self.parts, self._read, self._drop, self.capacity = parts, read, drop, capacity
        self._keys: set[str] = set()
        self._hot: OrderedDict[str, KeyState] = OrderedDict()
        self._dirty: set[str] = set()
        self.used = 0
        self.reads = 0  # states assembled from parts: how often the LRU missed

    def __getitem__(self, key: str) -> KeyState:
        state = self._hot.get(key)
        if state is not None:
            self._hot.move_to_end(key)
            return state
        if key not in self._keys:
            raise KeyError(key)
        state = self._read(self.parts, key)
        if state is None:  # its records are gone (not expected): the key is gone
            self._keys.discard(key)
            raise KeyError(key)
        self.reads += 1
        self._hot[key] = state
        self.used += _cost(state)
        return state

    def __setitem__(self, key: str, state: KeyState) -> None:
        self._unhold(key)
        self._keys.add(key)
        self._hot[key] = state
        self.used += _cost(state)
        self._dirty.add(key)

    def __delitem__(self, key: str) -> None:
        """A deleted state; its parts go with the tombstones the batch writes (and puts here)."""
        if key not in self._keys:
            raise KeyError(key)
        self._keys.discard(key)
        self._dirty.discard(key)
        self._unhold(key)

    def discard(self, key: str) -> None:
        """Forget ``key`` and its parts without reading its state (its partition moved away)."""
        self._keys.discard(key)
        self._dirty.discard(key)
        self._unhold(key)
        self._drop(self.parts, key)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def __len__(self) -> int:
        return len(self._keys)

    def recovered(self, key: str, *, present: bool = False) -> None:
        """Recovery put a record of ``key`` in the parts (``present``: its state record): a decoded
        copy is stale."""
        self._unhold(key)
        if present:
            self._keys.add(key)

    @property
    def clean(self) -> bool:
        """Whether every decoded state is in the parts as it is in memory."""
        return not self._dirty

    def adopt(self, keys: set[str]) -> None:
        """``keys`` have their records in the parts already (a kept store adopted): none is decoded."""
        self._keys.update(keys)

    def written(self, key: str) -> None:
        """``key``'s state is in the parts as it is in memory: it may leave memory."""
        self._dirty.discard(key)

    def trim(self) -> None:
        """Leave decoded only as many states as ``capacity`` allows, least recently used out first;
        it stops at the first unwritten state (a batch's own, at the recent end)."""
        hot = self._hot
        while self.used > self.capacity and hot:
            key = next(iter(hot))
            if key in self._dirty:
                return
            self._unhold(key)

    def clear(self) -> None:
        for key in list(self._keys):
            self.discard(key)

    def _unhold(self, key: str) -> None:
        state = self._hot.pop(key, None)
        if state is not None:
            self.used -= _cost(state)


def _cost(state: KeyState) -> int:
    return 1 + len(state.window)
