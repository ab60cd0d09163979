"""The per-user cache: recall at 100k messages without serving forgotten, edited or foreign data.

One `RecallCache` lives in `recall.py` (module state; this package holds none, so each embedded
Runtime has its own). It holds, per user and model, an immutable `Snapshot` (plain numpy/str data),
and one global `GraphIndex` (User vertices by user_id, Action vertices by action_id).

Key. Memgraph keeps module state per process, across databases, and does not tell a procedure which
database it runs in; vertex ids restart in every database. An entry's key is (User vertex id,
user_id, digest of all the User vertex's properties, model, dimension), all read from the live graph
on every call, so two databases (or two graphs loaded in turn) share an entry only when their User
vertices agree on id, user_id and every property. Even then nothing foreign is returned: each call
re-checks the user's structure (`structure.compare`: any removed edge or vanished Session rebuilds)
and verifies every row it returns against the live graph (`verify`), and any mismatch drops the
entry and rebuilds, so a mix-up costs a rebuild, never a leak. (A cost to know: an application that
rewrites a User property on every turn makes every call after such a write a full build.)

Freshness, per call (`snapshot`):
- the structure (edge ids out of the User, its Sessions and Agents; no properties, no vectors) is
  compared with the cached one: unchanged -> warm; grown (new sessions, messages, notes, agent links)
  -> only the new parts are read and merged (`grow_snapshot`); an edge removed -> ownership walked
  again in full, turns already held with a vector kept (`renew_snapshot`);
- an entry older than `max_age` (`RECALL_CACHE_MAX_AGE`, default 60 s) has its facts, entities,
  notes and ontologies read again for the actions it holds (`renew_facts`: facts and entities added
  later to existing turns appear), with a GraphIndex at most `max_age` old (so it may rescan first);
  a collision that index now shows walks ownership again instead;
- `recall.invalidate`, a row that fails verification and eviction drop the entry: the next call reads
  the user in full (`build_snapshot`), every property included.

The `GraphIndex` (one full vertex scan of the whole graph, shared by all users) serves two things:
- user_id -> User vertex ids for a string `user`: verified on use (exists, label User, same user_id);
  any mismatch or an unknown user_id rescans at once (so an unknown user costs a scan per call: pass
  the User node, which Cypher finds through an index, to avoid it). A second User created later with
  the same user_id is not noticed (no error) until a rescan; the first one's data is still its own;
- action_id -> Action vertex ids, for the fail-closed collision rule (an action_id held by two users
  belongs to neither). Full builds use it while it is at most `max_age` old (else they rescan
  first), and rescan when it does not know one of the user's own Actions. Refreshes, verification
  and user lookup use it whatever its age, so a warm call never pays a scan.
What the index cannot see is an Action created or re-keyed after its scan. A refresh admits the
user's own new Actions the index does not know when no holder it does know lies outside the user
(they hang off the user's own sessions only: their text is the user's). Another user's Action created
after the scan with one of this user's action_ids goes unnoticed until the next rescan (at most
`max_age` after the scan, or `recall.invalidate()`): this user's turn of that id still shows (its own
message), and a fact citing that id written by the other user in that window could be read by a full
build in that window as this user's. Verification still checks that each returned fact's source
Action is this user's, holds that id and passes every ownership rule; it cannot see the new holder
either. So the collision rule holds fully for data older than the index, i.e. within `max_age`.

Concurrency: builds run under a per-key lock (double-checked: a caller that waited uses what the
other built), so one user's build never blocks another user's call; the entry table has its own
short lock. Snapshots are published whole and never changed, so readers need no lock.

Bounded: `RECALL_CACHE_BYTES` (default 1 GiB) over the snapshots' estimated bytes (`footprint`),
least recently used evicted first; a snapshot larger than the limit is used for its call, not kept.

Builds, renewals and refreshes run with Python's cyclic garbage collector paused (`gcpause`,
process-wide, `RECALL_CACHE_PAUSE_GC=0` to keep it running).
"""

import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from .footprint import ids_bytes
from .gcpause import CollectorPause
from .ownership import GraphIndex, id_text, labels_of
from .snapshot import Snapshot, build_snapshot, grow_snapshot, renew_facts, renew_snapshot
from .structure import Growth, compare

DEFAULT_BYTES = 1 << 30
DEFAULT_MAX_AGE = 60.0


@dataclass(frozen=True)
class _Step:
    """What a cached snapshot needs: older than max age? and how its structure changed (None: an edge
    was lost)."""

    expired: bool
    growth: Growth | None

    @property
    def current(self) -> bool:
        return not self.expired and self.growth is not None and self.growth.unchanged


#: (User vertex id, user_id, digest of the User's properties, model, dimension)
CacheKey = tuple[int, str | None, str, str, int | None]


class LiveGraph(Protocol):
    """The calling transaction's graph, as `recall.py` adapts `mgp.ProcCtx` for this package."""

    def vertex(self, vertex_id: int) -> Any:
        """The vertex with this id, or None when there is none."""

    @property
    def vertices(self) -> Iterable[Any]: ...

    def abort(self) -> None:
        """Raise when the query must stop (`ctx.check_must_abort`)."""


@dataclass(frozen=True)
class CacheSettings:
    max_bytes: int = DEFAULT_BYTES
    max_age: float = DEFAULT_MAX_AGE
    pause_gc: bool = True  # see `gcpause`
    problem: str | None = None  # a configuration error, reported by recall.status (defaults are used)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "CacheSettings":
        env = os.environ if env is None else env
        problems = []
        max_bytes, max_age = DEFAULT_BYTES, DEFAULT_MAX_AGE
        raw = env.get("RECALL_CACHE_BYTES", "").strip()
        if raw:
            try:
                max_bytes = int(raw)
                if max_bytes < 0:
                    raise ValueError
            except ValueError:
                problems.append(f"RECALL_CACHE_BYTES must be an integer >= 0, got {raw!r}")
                max_bytes = DEFAULT_BYTES
        raw = env.get("RECALL_CACHE_MAX_AGE", "").strip()
        if raw:
            try:
                max_age = float(raw)
                if not max_age >= 0 or max_age == float("inf"):
                    raise ValueError
            except ValueError:
                problems.append(f"RECALL_CACHE_MAX_AGE must be a number of seconds >= 0, got {raw!r}")
                max_age = DEFAULT_MAX_AGE
        pause_gc = True
        raw = env.get("RECALL_CACHE_PAUSE_GC", "").strip().lower()
        if raw in ("0", "false", "no", "off"):
            pause_gc = False
        elif raw not in ("", "1", "true", "yes", "on"):
            problems.append(f"RECALL_CACHE_PAUSE_GC must be 1 or 0, got {raw!r}")
        return cls(max_bytes, max_age, pause_gc, "; ".join(problems) or None)


@dataclass(frozen=True)
class CacheStats:
    entries: int
    bytes: int
    max_bytes: int
    max_age: float
    index_age: float | None  # seconds since the GraphIndex scan; None before the first
    index_bytes: int
    builds: int
    renewals: int
    refreshes: int
    hits: int
    evictions: int
    verify_failures: int
    problem: str | None


def user_key(user: Any, model: str, dim: int | None) -> CacheKey:
    """The cache key of a live User vertex (see the module docstring)."""
    props = sorted((name, repr(value)) for name, value in user.properties.items())
    digest = hashlib.blake2b(repr(props).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return (user.id, id_text(user.properties.get("user_id")), digest, model, dim)


class _KeyedLocks:
    """One lock per key while someone holds or waits for it (so different users never wait on each other)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Any, list] = {}  # key -> [lock, holders and waiters]

    @contextmanager
    def hold(self, key: Any) -> Iterator[None]:
        with self._guard:
            entry = self._locks.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._guard:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._locks[key]


def _index_bytes(index: GraphIndex) -> int:
    held = 0
    for mapping in (index.users, index.action_holders):
        held += sum(len(key) + 49 for key in mapping) + ids_bytes(sum(map(len, mapping.values())))
        held += 64 * len(mapping)  # the dict slot and the tuple of each key
    return held


class RecallCache:
    def __init__(
        self, settings: CacheSettings | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings or CacheSettings.from_env()
        self.clock = clock
        self._lock = threading.Lock()  # guards the entry table and the counters
        self._entries: OrderedDict[CacheKey, Snapshot] = OrderedDict()
        self._bytes = 0
        self._building = _KeyedLocks()
        self._collector = CollectorPause(self.settings.pause_gc)
        self._index_lock = threading.Lock()  # serialises scans
        self._index: GraphIndex | None = None
        self._index_at = 0.0  # clock time the published scan began
        self._index_number = 0  # which scan it was (scans are numbered as they begin)
        self._index_bytes = 0
        self._scans_started = 0
        self._generation = 0  # bumped by invalidate(): a scan begun before it is not published
        self._counts = dict.fromkeys(
            ("builds", "renewals", "refreshes", "hits", "evictions", "verify_failures"), 0
        )

    # -- the global index ---------------------------------------------------------------------------
    def graph_index(self, graph: LiveGraph) -> GraphIndex:
        """The cached GraphIndex whatever its age (scanned only when there is none): for checks that
        hold without it being current (verifying rows, admitting new actions, finding a user, which a
        miss rescans). Full builds use `_graph_index`, which rescans one older than max age, so a warm
        call never pays a full scan."""
        return self._graph_index(graph, any_age=True)[0]

    def _graph_index(
        self, graph: LiveGraph, fresh_after: int | None = None, any_age: bool = False
    ) -> tuple[GraphIndex, int]:
        """(index, its scan number): cached while younger than max age (or `any_age`); with `fresh_after`,
        only a scan begun after that scan number will do."""
        with self._lock:
            index, taken_at, number = self._index, self._index_at, self._index_number
        current = any_age or self.clock() - taken_at <= self.settings.max_age
        if index is not None and fresh_after is None and current:
            return index, number
        wanted = self._scans_started if fresh_after is None else fresh_after
        with self._index_lock:  # one scan at a time; a caller that waited takes a scan begun after it asked
            with self._lock:
                if self._index is not None and self._index_number > wanted:
                    return self._index, self._index_number
                generation = self._generation
            self._scans_started += 1
            number, started = self._scans_started, self.clock()
            index = GraphIndex.scan(graph.vertices, graph.abort)
            size = _index_bytes(index)
            with self._lock:
                if self._generation == generation:  # not invalidated meanwhile
                    self._index, self._index_at, self._index_number, self._index_bytes = (
                        index,
                        started,
                        number,
                        size,
                    )
            return index, number

    def find_user(self, graph: LiveGraph, user_id: str) -> Any:
        """The live User vertex with `user_id`, or None; a ValueError when several hold it."""
        began = self._scans_started
        index, number = self._graph_index(graph, any_age=True)
        found = self._live_users(graph, index, user_id)
        if found is None and number <= began:  # unknown or stale, and not scanned during this call
            found = self._live_users(graph, self._graph_index(graph, fresh_after=began)[0], user_id)
        found = found or []
        if len(found) > 1:
            raise ValueError(
                f"user: {len(found)} :User nodes have user_id {user_id!r}; pass the node instead"
            )
        return found[0] if found else None

    @staticmethod
    def _live_users(graph: LiveGraph, index: GraphIndex, user_id: str) -> list[Any] | None:
        """The index's User vertices for `user_id`, each verified live; None when unknown or stale."""
        holders = index.users.get(user_id, ())
        live = []
        for vertex_id in holders:
            vertex = graph.vertex(vertex_id)
            if vertex is None or "User" not in labels_of(vertex):
                return None
            if id_text(vertex.properties.get("user_id")) != user_id:
                return None
            live.append(vertex)
        return live or None

    # -- snapshots ----------------------------------------------------------------------------------
    def snapshot(self, graph: LiveGraph, user: Any, model: str, dim: int | None) -> tuple[CacheKey, Snapshot]:
        """The user's current snapshot for `model`: cached, grown with what is new, renewed, or built."""
        key = user_key(user, model, dim)
        cached = self._get(key)
        step = self._next_step(cached, graph, user) if cached is not None else None
        if step is not None and step.current:
            self._count("hits")
            return key, cached
        with self._building.hold(key):
            latest = self._get(key)
            if latest is not cached:  # someone published while we waited: check theirs
                cached, step = latest, (self._next_step(latest, graph, user) if latest is not None else None)
                if step is not None and step.current:
                    self._count("hits")
                    return key, cached
            with self._collector.during():
                snapshot, counter = self._make(graph, user, model, dim, cached, step)
            self._count(counter)
            self._publish(key, snapshot, cached)
            return key, snapshot

    def _next_step(self, cached: Snapshot, graph: LiveGraph, user: Any) -> "_Step":
        return _Step(
            self.clock() - cached.built_at > self.settings.max_age,
            compare(user, cached.structure, graph.vertex, graph.abort),
        )

    def _make(
        self, graph: LiveGraph, user: Any, model: str, dim: int | None, cached: Snapshot | None, step: Any
    ) -> tuple[Snapshot, str]:
        """(snapshot, the counter it adds to), from `cached` as `step` says (see the module docstring)."""
        began = self._scans_started

        def index_for(rescan: bool) -> GraphIndex:  # a rescan reuses a scan begun during this call
            return self._graph_index(graph, fresh_after=began if rescan else None)[0]

        now = self.clock()
        if cached is None:
            return build_snapshot(user, index_for, model, dim, graph.vertex, graph.abort, now), "builds"
        base: Snapshot | None = cached
        if step.growth is not None and not step.growth.unchanged:
            base = grow_snapshot(
                cached, step.growth, user, self.graph_index(graph), graph.vertex, graph.abort
            )
            if base is not None and not step.expired:
                return base, "refreshes"
        if base is not None and step.growth is not None:  # expired, nothing lost: facts and entities again
            renewed = renew_facts(base, user, index_for(False), graph.vertex, graph.abort, now)
            if renewed is not None:
                return renewed, "renewals"
        # An edge lost, an Agent now shared, or a collision the fresh index shows: walk ownership again.
        return renew_snapshot(base or cached, user, index_for, graph.vertex, graph.abort, now), "renewals"

    def discard(self, key: CacheKey, snapshot: Snapshot) -> None:
        """Drop `snapshot` (a row of it failed verification) unless a newer one replaced it already."""
        with self._lock:
            self._counts["verify_failures"] += 1
            if self._entries.get(key) is snapshot:
                self._bytes -= self._entries.pop(key).nbytes

    def _get(self, key: CacheKey) -> Snapshot | None:
        with self._lock:
            snapshot = self._entries.get(key)
            if snapshot is not None:
                self._entries.move_to_end(key)
            return snapshot

    def _publish(self, key: CacheKey, snapshot: Snapshot, replaces: Snapshot | None) -> None:
        with self._lock:
            current = self._entries.get(key)
            if current is not None and current is not replaces:
                return  # a caller with a newer view published meanwhile; keep theirs
            if current is not None:
                self._bytes -= self._entries.pop(key).nbytes
            if snapshot.nbytes > self.settings.max_bytes:
                return  # larger than the whole cache: used for this call only
            self._entries[key] = snapshot
            self._bytes += snapshot.nbytes
            while self._bytes > self.settings.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.nbytes
                self._counts["evictions"] += 1

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    # -- invalidation and status --------------------------------------------------------------------
    def invalidate(
        self, user_id: str | None = None, vertex_id: int | None = None, *, keep_index: bool = False
    ) -> int:
        """Drop the entries of a user (by user_id and/or User vertex id), or every entry and the index
        when neither is given (`keep_index`: every entry only); returns how many entries were dropped."""
        with self._lock:
            if user_id is None and vertex_id is None:
                dropped = len(self._entries)
                self._entries.clear()
                self._bytes = 0
                if not keep_index:
                    self._index, self._index_at, self._index_number, self._index_bytes = None, 0.0, 0, 0
                    self._generation += 1
                return dropped
            keys = [
                k for k in self._entries if (user_id is not None and k[1] == user_id) or k[0] == vertex_id
            ]
            for key in keys:
                self._bytes -= self._entries.pop(key).nbytes
            return len(keys)

    def stats(self) -> CacheStats:
        with self._lock:
            index_age = None if self._index is None else max(0.0, self.clock() - self._index_at)
            return CacheStats(
                entries=len(self._entries),
                bytes=self._bytes,
                max_bytes=self.settings.max_bytes,
                max_age=self.settings.max_age,
                index_age=index_age,
                index_bytes=self._index_bytes,
                problem=self.settings.problem,
                **self._counts,
            )


def cache_rows(stats: CacheStats) -> list[dict[str, Any]]:
    """`recall.status` rows for the cache: section "cache", the figure in `count`, units in `detail`."""

    def row(name: str, count: int | None, detail: str | None = None) -> dict[str, Any]:
        return {"section": "cache", "name": name, "model": None, "count": count, "detail": detail}

    rows = [
        row("entries", stats.entries, "users x models cached"),
        row("bytes", stats.bytes, f"estimated; limit {stats.max_bytes} (RECALL_CACHE_BYTES)"),
        row("max_age", int(stats.max_age), f"{stats.max_age:g} seconds (RECALL_CACHE_MAX_AGE)"),
        row(
            "index",
            stats.index_bytes,
            "not scanned yet" if stats.index_age is None else f"bytes; scanned {stats.index_age:.1f} s ago",
        ),
        row("builds", stats.builds, "full reads of a user"),
        row(
            "renewals",
            stats.renewals,
            "ownership, facts and entities read again, turns kept (max age, shrink)",
        ),
        row("refreshes", stats.refreshes, "incremental reads of new sessions or messages"),
        row("hits", stats.hits, "calls served from a current snapshot"),
        row("evictions", stats.evictions, "entries dropped for the byte limit"),
        row("verify_failures", stats.verify_failures, "snapshots dropped because a row no longer matched"),
    ]
    if stats.problem:
        rows.append(row("configuration", None, stats.problem))
    return rows
