"""The per-user cache: recall at 100k messages without serving forgotten, edited or foreign data.

One `RecallCache` lives in `recall.py` (module state; this package holds none, so each embedded
Runtime has its own). Per user and model it keeps an `Entry`: the immutable `UserSnapshot` plus what
keeping it fresh needs (the user's structure as edge ids, the owned Actions). It also keeps one global
`GraphIndex` (User vertices by user_id, Action vertices by action_id: one full vertex scan).

Freshness, per call (`entry`):
- the structure (edge ids out of the User, its Sessions and Agents; no properties) is compared with
  the cached one: unchanged -> warm; only grown (new sessions, messages, agent links) -> the new
  Actions are read and appended (`snapshot.with_new_turns`: ~0.2 s after a new session at 100k
  messages, against ~4 s for a full build); anything else changed (an edge removed, notes or
  ontologies added, a back-filled older turn) -> a full build;
- older than `max_age` (`RECALL_CACHE_MAX_AGE`, 60 s): facts, entities, notes and ontologies are read
  again for the Actions held (facts and entities extracted later appear), with an index at most
  `max_age` old; a collision that index shows, or a vanished Action, means a full build;
- vectors written since the build are picked up on the next call (`pickup`), bounded per call;
- every row a call returns is verified against the live graph (`verify`); a failure makes the pipeline
  build the user afresh for that call (`entry(..., fresh=True)`), which also replaces the entry.

Key: (User vertex id, user_id, digest of the User's properties, model, dimension), read live on every
call, since Memgraph shares module state across databases whose vertex ids overlap. An unknown user_id
is remembered as missing for `max_age`, so asking for one does not scan the graph on every call.

The collision rule (an action_id held by two users belongs to neither) holds for data older than the
index, i.e. within `max_age`: another user's Action created after the scan with one of this user's
ids is seen at the next rescan (or `recall.invalidate()`).

Concurrency: builds run under a per-key lock (a caller that waited uses what the other built); the
entry table has its own short lock; snapshots are published whole and never changed. Bounded by
`RECALL_CACHE_BYTES` (total over all entries, a coarse estimate), least recently used evicted first.
"""

import hashlib
import os
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from . import schema as s
from .environment import env_number
from .kinds import ENTITY, FACT, TURN
from .ownership import (
    Candidates,
    GraphIndex,
    OwnedAction,
    OwnedGraph,
    admit_actions,
    agent_action_session,
    collect_entities_and_facts,
    collect_owned,
    expand_sessions,
    id_text,
    labels_of,
    owned_notes,
    owned_ontologies,
    session_skip,
)
from .pickup import pick_up
from .snapshot import UserSnapshot, build_snapshot, read_fact_part, with_fact_part, with_new_turns
from .structure import Growth, Structure, compare, read_structure

DEFAULT_BYTES = 1 << 30
DEFAULT_MAX_AGE = 60.0
#: Awaited vectors looked for per call (see `pickup`).
PICKUP_LIMIT = 2000

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
    problem: str | None = None  # a configuration error, reported by recall.status (defaults are used)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "CacheSettings":
        env = os.environ if env is None else env
        problems = []
        max_bytes = env_number(env, "RECALL_CACHE_BYTES", int, DEFAULT_BYTES, 0, problems)
        max_age = env_number(env, "RECALL_CACHE_MAX_AGE", float, DEFAULT_MAX_AGE, 0, problems)
        return cls(max_bytes, max_age, "; ".join(problems) or None)


@dataclass
class Entry:
    """A cached user: the snapshot and what keeping it fresh needs. Replaced whole, never changed, but
    for `pickup_at` (where the next look for awaited vectors starts)."""

    snapshot: UserSnapshot
    structure: Structure
    holders: Mapping[int, str | None]  # owned Session and Agent vertex ids -> their session id
    sessions: frozenset[int]  # which holders are Sessions
    actions: Mapping[str, int]  # owned action_id -> its Action vertex id (what facts cite)
    owned_actions: Mapping[int, tuple[str, str | None]]  # owned Action vertex id -> (action_id, session)
    built_at: float  # when facts and entities were last read
    nbytes: int = 0
    pickup_at: int = field(default=0, compare=False)


def user_key(user: Any, model: str, dim: int | None) -> CacheKey:
    """The cache key of a live User vertex (see the module docstring)."""
    props = sorted((name, repr(value)) for name, value in user.properties.items())
    digest = hashlib.blake2b(repr(props).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return (user.id, id_text(user.properties.get(s.USER_ID)), digest, model, dim)


def entry_bytes(entry: Entry) -> int:
    """A coarse estimate: the arrays' bytes, the texts' lengths, and ~100 bytes per item and id held."""
    snap = entry.snapshot
    arrays = sum(
        v.nbytes for v in (snap.turn_vectors, snap.entity_vectors, snap.fact_vectors, snap.note_vectors)
    )
    arrays += snap.text_index.nbytes + snap.note_text_index.nbytes
    texts = sum(map(len, snap.turns.texts)) + sum(len(f.text) for f in snap.facts)
    texts += sum(len(n.content) for n in snap.notes)
    items = len(snap.turns) + len(snap.facts) + len(snap.entities) + len(snap.notes)
    return int(arrays + texts + 100 * (items + len(entry.owned_actions) + entry.structure.edge_count))


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


class RecallCache:
    def __init__(
        self, settings: CacheSettings | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings or CacheSettings.from_env()
        self.clock = clock
        self._lock = threading.Lock()  # guards the tables below and the counters
        self._entries: OrderedDict[CacheKey, Entry] = OrderedDict()
        self._bytes = 0
        self._building = _KeyedLocks()
        self._index: GraphIndex | None = None
        self._index_at = 0.0
        self._index_lock = threading.Lock()  # one scan at a time
        self._misses: dict[str, float] = {}  # unknown user_id -> when it was found missing
        self.counts = dict.fromkeys(
            ("builds", "renewals", "refreshes", "hits", "pickups", "evictions", "verify_failures", "scans"), 0
        )

    # -- the global index ---------------------------------------------------------------------------
    def graph_index(self, graph: LiveGraph, max_age: float | None = None) -> GraphIndex:
        """The cached GraphIndex, scanned again when there is none or it is older than `max_age`."""
        with self._lock:
            index, taken_at = self._index, self._index_at
        if index is not None and (max_age is None or self.clock() - taken_at <= max_age):
            return index
        with self._index_lock:
            with self._lock:
                if self._index is not None and self._index_at > taken_at:  # scanned while we waited
                    return self._index
            started = self.clock()
            index = GraphIndex.scan(graph.vertices, graph.abort)
            with self._lock:
                self._index, self._index_at = index, started
                self.counts["scans"] += 1
            return index

    def find_user(self, graph: LiveGraph, user_id: str) -> Any:
        """The live User vertex with `user_id`, or None; a ValueError when several hold it. A miss is
        remembered for `max_age` (an unknown user must not cost a scan per call)."""
        with self._lock:
            missed_at = self._misses.get(user_id)
        if missed_at is not None and self.clock() - missed_at <= self.settings.max_age:
            return None
        found = self._live_users(graph, self.graph_index(graph), user_id)
        if found is None:  # unknown to the index, or stale: scan once more, now
            found = self._live_users(graph, self.graph_index(graph, max_age=0.0), user_id)
        if not found:
            with self._lock:
                self._misses[user_id] = self.clock()
            return None
        if len(found) > 1:
            raise ValueError(
                f"user: {len(found)} :User nodes have user_id {user_id!r}; pass the node instead"
            )
        return found[0]

    @staticmethod
    def _live_users(graph: LiveGraph, index: GraphIndex, user_id: str) -> list[Any] | None:
        """The index's User vertices for `user_id`, each verified live; None when unknown or stale."""
        live = []
        for vertex_id in index.users.get(user_id, ()):
            vertex = graph.vertex(vertex_id)
            if (
                vertex is None
                or s.USER not in labels_of(vertex)
                or id_text(vertex.properties.get(s.USER_ID)) != user_id
            ):
                return None
            live.append(vertex)
        return live or None

    # -- entries ------------------------------------------------------------------------------------
    def entry(self, graph: LiveGraph, user: Any, model: str, dim: int | None, fresh: bool = False) -> Entry:
        """The user's current entry for `model`: cached, grown, renewed, with vectors picked up, or built
        (`fresh`: built, whatever is cached)."""
        key = user_key(user, model, dim)
        with self._building.hold(key):
            cached = None if fresh else self._get(key)
            if fresh:
                self._count("verify_failures")
            if cached is None:
                made, counter = self._build(graph, user, model, dim), "builds"
            else:
                made, counter = self._refreshed(cached, graph, user, model, dim)
            self._count(counter)
            if made is not cached:
                self._publish(key, made)
            return made

    def _refreshed(
        self, cached: Entry, graph: LiveGraph, user: Any, model: str, dim: int | None
    ) -> tuple[Entry, str]:
        growth = compare(user, cached.structure, graph.vertex, graph.abort)
        entry, counter = cached, "hits"
        if growth is not None and not growth.unchanged:
            entry, counter = self._grow(cached, growth, graph, user), "refreshes"
        if entry is None or growth is None:
            return self._build(graph, user, model, dim), "builds"
        if self.clock() - entry.built_at > self.settings.max_age:
            entry, counter = self._renew_facts(entry, graph, user), "renewals"
            if entry is None:
                return self._build(graph, user, model, dim), "builds"
        picked, entry.pickup_at = pick_up(
            entry.snapshot, _properties(entry, graph), entry.pickup_at, PICKUP_LIMIT
        )
        if picked is not None:
            return replace(entry, snapshot=picked), "pickups" if counter == "hits" else counter
        return entry, counter

    def _build(self, graph: LiveGraph, user: Any, model: str, dim: int | None) -> Entry:
        """A full read of the user, with an index at most max age old (scanned again when it does not
        know one of the user's Actions)."""
        owned = collect_owned(user, self.graph_index(graph, self.settings.max_age), graph.vertex, graph.abort)
        if owned.skipped["action_not_in_index"]:
            owned = collect_owned(user, self.graph_index(graph, max_age=0.0), graph.vertex, graph.abort)
        return self._entry(owned, build_snapshot(owned, model, dim, graph.abort), user, graph)

    def _entry(self, owned: OwnedGraph, snapshot: UserSnapshot, user: Any, graph: LiveGraph) -> Entry:
        sessions = frozenset(owned.sessions)
        structure = read_structure(user, graph.vertex, owned.holders, owned.holders.keys() - sessions)
        if structure is None:
            raise RuntimeError("a session or agent vanished while the user was read")
        actions: dict[str, int] = {}
        for item in owned.actions:
            actions.setdefault(item.action_id, item.vertex_id)
        owned_actions = {a.vertex_id: (a.action_id, a.session_id) for a in owned.actions}
        entry = Entry(
            snapshot, structure, dict(owned.holders), sessions, actions, owned_actions, self.clock()
        )
        return replace(entry, nbytes=entry_bytes(entry))

    def _grow(self, cached: Entry, growth: Growth, graph: LiveGraph, user: Any) -> Entry | None:
        """`cached` with the new sessions, Agents and Actions `growth` shows (same rules as a build);
        None when only a full build can apply it (a new note or ontology, an Agent now shared with a
        session that is not the user's, a back-filled turn)."""
        holders, sessions = dict(cached.holders), set(cached.sessions)
        to_expand: dict[int, Any] = {}
        for edge in growth.user_edges:
            if edge.type.name != s.HAD_SESSION:
                return None
            session = edge.to_vertex
            if session.id not in sessions and session_skip(session, user.id) is None:
                sessions.add(session.id)
                to_expand[session.id] = session
        for edges in growth.agent_in_edges.values():
            if any(e.type.name == s.HAS_AGENT and e.from_vertex.id not in sessions for e in edges):
                return None
        candidates: Candidates = {}
        for holder, edges in growth.out_edges.items():
            for edge in edges:
                if edge.type.name == s.HAS_ACTION:
                    action, sid = edge.to_vertex, holders[holder]
                    agent = holder not in sessions
                    candidates.setdefault(action.id, agent_action_session(action, sid) if agent else sid)
                elif edge.type.name == s.HAS_AGENT and holder in sessions:
                    to_expand.setdefault(holder, edge.from_vertex)
        skipped: Counter = Counter()
        expand_sessions(to_expand, sessions, holders, candidates, skipped, graph.abort)
        new = {
            vertex_id: sid for vertex_id, sid in candidates.items() if vertex_id not in cached.owned_actions
        }
        index = self.graph_index(graph)
        admitted = admit_actions(
            new,
            graph.vertex,
            holders,
            index,
            skipped,
            graph.abort,
            also_owned=cached.owned_actions,
            unindexed_ok=True,
        )
        snapshot = with_new_turns(cached.snapshot, admitted, graph.vertex, skipped, graph.abort)
        new_holders = holders.keys() - cached.holders.keys()
        added = read_structure(user, graph.vertex, new_holders, new_holders - sessions)
        if snapshot is None or added is None:
            return None
        structure = Structure(
            growth.structure.user_edges,
            {**growth.structure.out_edges, **added.out_edges},
            {**growth.structure.agent_in_edges, **added.agent_in_edges},
        )
        actions = dict(cached.actions)
        for item in admitted:
            actions.setdefault(item.action_id, item.vertex_id)
        owned_actions = {
            **cached.owned_actions,
            **{a.vertex_id: (a.action_id, a.session_id) for a in admitted},
        }
        grown = replace(
            cached,
            snapshot=snapshot,
            structure=structure,
            holders=holders,
            sessions=frozenset(sessions),
            actions=actions,
            owned_actions=owned_actions,
        )
        return replace(grown, nbytes=entry_bytes(grown))

    def _renew_facts(self, cached: Entry, graph: LiveGraph, user: Any) -> Entry | None:
        """Facts, entities, notes and ontologies read again for the Actions held (turns kept); None when
        an index at most max age old shows a collision on one of them, or one is gone."""
        index = self.graph_index(graph, self.settings.max_age)
        owned = OwnedGraph(user, graph.vertex)
        for vertex_id, (action_id, session_id) in cached.owned_actions.items():
            if any(h not in cached.owned_actions for h in index.action_holders.get(action_id, ())):
                return None
            if graph.vertex(vertex_id) is None:
                return None
            owned.actions.append(OwnedAction(action_id, session_id, vertex_id))
        collect_entities_and_facts(owned, graph.abort)
        owned.notes = owned_notes(user, owned.skipped)
        owned.ontologies = owned_ontologies(user)
        snapshot = cached.snapshot
        part, awaiting = read_fact_part(owned, snapshot.model, snapshot.dimension, Counter())
        renewed = replace(cached, snapshot=with_fact_part(snapshot, part, awaiting), built_at=self.clock())
        return replace(renewed, nbytes=entry_bytes(renewed))

    def _get(self, key: CacheKey) -> Entry | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def _publish(self, key: CacheKey, entry: Entry) -> None:
        with self._lock:
            if key in self._entries:
                self._bytes -= self._entries.pop(key).nbytes
            if entry.nbytes > self.settings.max_bytes:
                return  # larger than the whole cache: used for this call only
            self._entries[key] = entry
            self._bytes += entry.nbytes
            while self._bytes > self.settings.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.nbytes
                self.counts["evictions"] += 1

    def _count(self, name: str) -> None:
        with self._lock:
            self.counts[name] += 1

    # -- invalidation and status --------------------------------------------------------------------
    def invalidate(self, user_id: str | None = None, vertex_id: int | None = None) -> int:
        """Drop the entries of a user (by user_id and/or User vertex id), or every entry, the index and
        the remembered misses when neither is given; returns how many entries were dropped."""
        with self._lock:
            if user_id is None and vertex_id is None:
                dropped = len(self._entries)
                self._entries.clear()
                self._bytes, self._index, self._misses = 0, None, {}
                return dropped
            self._misses.pop(user_id, None)
            keys = [
                k for k in self._entries if (user_id is not None and k[1] == user_id) or k[0] == vertex_id
            ]
            for key in keys:
                self._bytes -= self._entries.pop(key).nbytes
            return len(keys)

    def status_rows(self) -> list[dict[str, Any]]:
        """`recall.status` rows for the cache: section "cache", the figure in `count`, units in `detail`."""
        with self._lock:
            index_age = None if self._index is None else max(0.0, self.clock() - self._index_at)
            indexed = 0 if self._index is None else len(self._index.users) + len(self._index.action_holders)
            figures = [
                ("entries", len(self._entries), "users x models cached"),
                ("bytes", self._bytes, f"estimated; limit {self.settings.max_bytes} (RECALL_CACHE_BYTES)"),
                (
                    "max_age",
                    int(self.settings.max_age),
                    f"{self.settings.max_age:g} s (RECALL_CACHE_MAX_AGE)",
                ),
                (
                    "index",
                    indexed,
                    "not scanned yet" if index_age is None else f"ids; scanned {index_age:.1f} s ago",
                ),
                ("scans", self.counts["scans"], "full vertex scans for the index"),
                ("builds", self.counts["builds"], "full reads of a user"),
                ("renewals", self.counts["renewals"], "facts, entities and notes read again at max age"),
                ("refreshes", self.counts["refreshes"], "new sessions or messages read incrementally"),
                ("pickups", self.counts["pickups"], "vectors written since a build, picked up"),
                ("hits", self.counts["hits"], "calls served from a current snapshot"),
                ("evictions", self.counts["evictions"], "entries dropped for the byte limit"),
                (
                    "verify_failures",
                    self.counts["verify_failures"],
                    "users built afresh: a row no longer matched",
                ),
            ]
        rows = [
            {"section": "cache", "name": n, "model": None, "count": c, "detail": d} for n, c, d in figures
        ]
        if self.settings.problem:
            rows.append(
                {
                    "section": "cache",
                    "name": "configuration",
                    "model": None,
                    "count": None,
                    "detail": self.settings.problem,
                }
            )
        return rows


def _properties(entry: Entry, graph: LiveGraph) -> Callable[[str, int], Any]:
    """Live properties of a snapshot's item by kind and index (for `pickup`); None when it is gone."""
    snapshot = entry.snapshot

    def properties_of(kind: str, index: int) -> Any:
        if kind == FACT:
            fact = snapshot.facts[index]
            head = graph.vertex(fact.head_vertex_id)
            edge = (
                next((e for e in head.out_edges if e.id == fact.edge_id), None) if head is not None else None
            )
            return None if edge is None else edge.properties
        if kind == TURN:
            vertex_id = snapshot.turns.vertex_ids[index]
        else:
            vertex_id = (snapshot.entities if kind == ENTITY else snapshot.notes)[index].vertex_id
        vertex = graph.vertex(vertex_id)
        return None if vertex is None else vertex.properties

    return properties_of
