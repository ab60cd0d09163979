"""One database's directory for the string call form: which vertices hold a user_id or a database token.

Python procedures have no index access, yet `CALL recall.render("maya", ...)` must find the User with
that user_id, and a bare call must tell which database it runs in. The directory answers both from
memory. The fast call shape and the node form never need it: Memgraph finds their User (through the
`:User(user_id)` index, or the caller's MATCH) and the fast shape passes the RecallMeta nodes. Nothing
that decides **whose** a row is rests on it: every id it gives is checked in the calling transaction,
and ownership never asks it (`ownership`'s module docstring). What it can get wrong is only whether a
user_id is found yet, and it is built to find every one within a stated bound.

- **Built once** per database by one full pass (`scan`), the first time a string-form call needs it
  (the one pass per database the string form keeps; `recall.invalidate()` keeps the directory).
- **New vertices** (ids above the highest read, `top`) are read on every call (`advance`): ids are
  probed upward until `GAP` ids in a row are missing (ids an aborted or deleted write used up), so a
  user created a moment ago after at most `GAP` missing ids is found on its first call, and an unknown
  user_id costs `GAP` probes, never a scan.
- **Everything else** (a user_id set on an existing vertex, a transaction that took an id below `top`
  and committed later, vertices beyond a longer run of missing ids) is found by the **sweep**: each
  call re-reads the next `SWEEP` (16) ids of the range `[0, reach)`, where `reach` is twice `top` plus
  `GAP` (with at least `MIN_REACH`): a vertex past a run of missing ids shorter than the ids already
  handed out is read within one sweep cycle, `reach / 16` calls. Each cycle also probes far above
  `top` (`top + GAP * 2**k`), which finds a block of new vertices after a longer run when the block is
  at least as long as the run. Only a few vertices written after a run of missing ids longer than every
  id the database has handed out before it stay unseen, until the graph grows past them.

Entries are a **superset**, checked against the live graph on use (`users_of` returns ids the caller
verifies in its own transaction): a stale entry costs a lookup, never a wrong answer. An entry is
dropped only when a read lacks it `SETTLE_SECONDS` after it was last seen present (a reader on an older
snapshot may not see a newer vertex, but no transaction outlives Memgraph's query timeout, 600 s by
default), so readers on older snapshots never erase what newer ones saw.

Pure logic over mgp-like vertices (`.id`, `.labels[*].name`, `.properties.get`); no mgp import.
"""

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import schema as s
from .ownership import id_text

#: A run of this many missing ids ends the upward probe of new vertices.
GAP = 64
#: Most ids the upward probe reads in one call (the rest on the next calls).
ADVANCE_MAX = 20_000
#: Ids the sweep reads per call: a fixed share whatever the graph's size (~50 procedure-API calls).
SWEEP = 16
#: How long a key read present stays trusted against reads that lack it (see the module docstring).
SETTLE_SECONDS = 600.0
#: How far above `top` the end of each sweep cycle looks (top + GAP * 2**k for k below this).
FAR_PROBES = 40
#: The sweep's range is at least this many ids, however small the graph.
MIN_REACH = 1024

USER, META = "user", "meta"

#: Looks up a vertex of the current transaction by id; None when it does not exist there.
VertexLookup = Callable[[int], Any]


def vertex_keys(vertex: Any) -> tuple[tuple[str, str], ...]:
    """The directory keys a live vertex holds: (USER, user_id), (META, token)."""
    keys = []
    for label in vertex.labels:
        name = label.name
        if name == s.USER:
            key = id_text(vertex.properties.get(s.USER_ID))
            if key is not None:
                keys.append((USER, key))
        elif name == s.META:
            token = vertex.properties.get(s.TOKEN)
            if isinstance(token, str) and token:
                keys.append((META, token))
    return tuple(keys)


@dataclass
class DirectoryCounts:
    scans: int = 0  # full passes (one per database, unless invalidated)
    advanced: int = 0  # ids probed above `top`
    swept: int = 0  # ids re-read by the sweep
    cycles: int = 0  # sweeps that covered the whole id range
    seconds: float = 0.0  # spent keeping the directory current (advance and sweep), the full pass aside


class Directory:
    """The keys of one database's vertices, by key and by vertex; see the module docstring."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._maps: dict[str, dict[str, tuple[int, ...]]] = {USER: {}, META: {}}
        self._vertices: dict[int, tuple[tuple[str, str, float], ...]] = {}  # id -> (kind, key, seen at)
        self.top = -1  # the highest vertex id read
        self.seen = -1  # the highest vertex id known to exist (read, or seen through an edge)
        self.passed = -1  # ids up to here, below `seen`, were probed on the way to it (they were taken)
        self.sweep_at = 0
        self._cycle_started: float | None = None
        self.last_cycle_seconds: float | None = None
        self.counts = DirectoryCounts()

    # -- building and keeping current ------------------------------------------------------------
    @classmethod
    def scan(
        cls,
        vertices: Iterable[Any],
        abort: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> "Directory":
        """A directory of every vertex, read in one pass."""
        directory = cls(clock)
        now = clock()
        for count, vertex in enumerate(vertices):
            if count % 512 == 0:
                abort()
            vertex_id = vertex.id
            keys = vertex_keys(vertex)
            if keys:
                directory._record(vertex_id, keys, now)
            if vertex_id > directory.top:
                directory.top = vertex_id
        directory.seen = directory.top
        directory.counts.scans = 1
        directory._cycle_started = now
        return directory

    def saw(self, vertex_id: int) -> None:
        """A vertex this id exists (seen through an edge): `advance` reads up to it."""
        if vertex_id > self.seen:
            self.seen = vertex_id

    def advance(self, lookup: VertexLookup, abort: Callable[[], None]) -> int:
        """Read new vertices above `top` (see the module docstring); returns the ids probed.

        Missing ids below `seen` were taken (ids are handed out in order) by a write that aborted, was
        deleted or has not committed yet: they are walked through once (resuming there on the next
        call) and left to the sweep; but only by a call that sees the `seen` vertex itself, so a
        transaction on an older snapshot never walks past vertices it cannot see yet. Missing ids
        above it may still be handed out: probed again on every call.
        """
        started, now = time.perf_counter(), self.clock()
        probe, missing, probed = max(self.top, self.passed) + 1, 0, 0
        seen = self.seen
        walk_to = seen if seen >= probe and lookup(seen) is not None else -1
        while probed < ADVANCE_MAX and (missing < GAP or probe <= walk_to):
            if probed % 512 == 0:
                abort()
            vertex = lookup(probe)
            probed += 1
            if vertex is None:
                missing += 1
            else:
                self.read(probe, vertex, now)
                missing = 0
            if probe <= walk_to:
                self.passed = probe
            probe += 1
        self.counts.advanced += probed
        self.counts.seconds += time.perf_counter() - started
        return probed

    @property
    def reach(self) -> int:
        """The end (exclusive) of the range the sweep re-reads: see the module docstring."""
        return max(2 * self.top + GAP, MIN_REACH)

    def sweep(self, lookup: VertexLookup, abort: Callable[[], None]) -> int:
        """Re-read the next `SWEEP` ids of `[0, reach)`; returns the ids probed."""
        started = time.perf_counter()
        now = self.clock()
        probed = 0
        while probed < SWEEP:
            if self.sweep_at >= self.reach:
                self._far_probes(lookup)
                self.sweep_at = 0
                self.counts.cycles += 1
                if self._cycle_started is not None:
                    self.last_cycle_seconds = now - self._cycle_started
                self._cycle_started = now
            vertex_id = self.sweep_at
            self.read(vertex_id, lookup(vertex_id), now)
            self.sweep_at += 1
            probed += 1
        self.counts.swept += probed
        self.counts.seconds += time.perf_counter() - started
        return probed

    def _far_probes(self, lookup: VertexLookup) -> None:
        """Probe far above `top`: vertices beyond a long run of missing ids are then read by `advance`."""
        for k in range(1, FAR_PROBES):
            probe = self.top + GAP * (1 << k)
            if lookup(probe) is not None:
                self.saw(probe)

    def read(self, vertex_id: int, vertex: Any, now: float | None = None) -> None:
        """Record what one live vertex holds now (None: it does not exist in this transaction)."""
        keys = vertex_keys(vertex) if vertex is not None else ()
        if vertex is not None and vertex_id > self.top:
            self.top = vertex_id
            self.saw(vertex_id)
        held = self._vertices.get(vertex_id)
        now = self.clock() if now is None else now
        if held is not None and len(held) == len(keys) and all(
            h[:2] == k for h, k in zip(held, keys, strict=True)
        ):
            self._vertices[vertex_id] = tuple((kind, key, now) for kind, key in keys)  # as held: seen now
        elif keys or held is not None:
            self._record(vertex_id, keys, now)

    def _record(self, vertex_id: int, keys: tuple[tuple[str, str], ...], now: float) -> None:
        with self._lock:
            held = {(kind, key): seen for kind, key, seen in self._vertices.get(vertex_id, ())}
            kept = {
                (kind, key): seen for (kind, key), seen in held.items() if now - seen < SETTLE_SECONDS
            }
            kept.update(dict.fromkeys(keys, now))
            for kind, key in held.keys() - kept.keys():
                self._unmap(kind, key, vertex_id)
            for kind, key in kept.keys() - held.keys():
                ids = self._maps[kind].get(key, ())
                self._maps[kind][key] = (*ids, vertex_id)
            if kept:
                self._vertices[vertex_id] = tuple((kind, key, seen) for (kind, key), seen in kept.items())
            else:
                self._vertices.pop(vertex_id, None)

    def _unmap(self, kind: str, key: str, vertex_id: int) -> None:
        ids = tuple(i for i in self._maps[kind].get(key, ()) if i != vertex_id)
        if ids:
            self._maps[kind][key] = ids
        else:
            self._maps[kind].pop(key, None)

    # -- answers (supersets: the caller checks each id in its own transaction) --------------------
    def users_of(self, user_id: str) -> tuple[int, ...]:
        return self._maps[USER].get(user_id, ())

    def user_ids(self) -> list[str]:
        return list(self._maps[USER])

    def metas(self) -> dict[int, str]:
        """RecallMeta vertex id -> token."""
        return {vertex_id: token for token, ids in self._maps[META].items() for vertex_id in ids}

    @property
    def size(self) -> int:
        return len(self._vertices)

    def nbytes(self) -> int:
        """A coarse estimate: ~150 bytes per vertex held and per key, plus the keys' lengths."""
        keys = sum(len(key) for table in self._maps.values() for key in table)
        return 150 * (len(self._vertices) + sum(map(len, self._maps.values()))) + keys
