"""The per-user cache: recall at 100k messages without serving forgotten, edited or foreign data.

One `RecallCache` lives in `recall.py` (module state; this package holds none, so each embedded
Runtime has its own). Memgraph shares that state between all the databases of an instance, so every
call first finds **where** it runs (`place`): its database, by RecallMeta token (`databases`), and that
database's `Directory` (user_ids and action_ids of the whole graph, kept current incrementally). A
database that cannot be identified (no RecallMeta) keeps nothing: its calls read the graph afresh.

Per user and model the cache keeps an `Entry`: the immutable `UserSnapshot` plus what keeping it fresh
needs (the user's structure as edge ids, the owned Actions). Freshness, per call (`entry`):
- the structure (edge ids out of and into the User, its Sessions and Agents; no properties) is
  compared with the cached one. The bare call forms read all of it; the fast call shape passes each
  holder's signature and only holders whose signature differs from the one recall derived from its
  own last read are read (`structure`). Unchanged -> warm; only grown (new sessions, messages, agent
  links) -> the new Actions are read and appended; new notes, ontologies or facts on the User -> facts
  re-read; anything else changed (an edge removed, a session with a new parent, a back-filled older
  turn) -> a full build (after a removal, one that takes over the turns the entry held, `turn_reuse`);
- older than `max_age` (`RECALL_CACHE_MAX_AGE`, 60 s): every holder is read whatever the signature
  says, and facts, entities, notes and ontologies are read again for the Actions held (facts and
  entities extracted later appear);
- vectors written since the build are picked up on the next call (`pickup`), bounded per call;
- every row a call returns is verified against the live graph (`verify`); a failure makes the pipeline
  build the user afresh for that call (`entry(..., fresh=True)`), which also replaces the entry.

Key: (database, User vertex id, user_id, model, dimension). The collision rule (an action_id held by
two users belongs to neither) reads the database's directory, each colliding holder checked live; its
window is the directory's (new Actions at once, late or edited ones within one sweep cycle). An
operator may declare action_ids unique (`RECALL_ACTION_IDS_UNIQUE=true`, for graphs under upstream's
unique constraint): then no id is looked up and the directory holds no Actions.

After a storage rebuild (`RECOVER SNAPSHOT`, a replica's resync) ids start again below ones recall has
read: rows are still read back before they are shown, but new data may go unseen until
`CALL recall.invalidate()` drops the database's entries and directory.

Concurrency: builds run under a per-key lock (a caller that waited uses what the other built); the
entry table has its own short lock; snapshots are published whole and never changed. Bounded by
`RECALL_CACHE_BYTES` (total over all entries, a coarse estimate), least recently used evicted first.
"""

import os
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from . import schema as s
from .databases import Database, DatabaseKey, Databases
from .directory import Directory
from .environment import env_number
from .kinds import ENTITY, FACT, TURN
from .layered import Layered
from .ownership import (
    Candidates,
    Collisions,
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
from .reading import TurnReader
from .snapshot import UserSnapshot, build_snapshot, read_fact_part, with_fact_part, with_new_turns
from .structure import (
    Growth,
    PassedSignatures,
    Removal,
    Structure,
    compare,
    read_holders,
    read_structure,
)
from .turn_reuse import TurnReuse

DEFAULT_BYTES = 1 << 30
DEFAULT_MAX_AGE = 60.0
#: Awaited vectors looked for per call (see `pickup`).
PICKUP_LIMIT = 2000

#: (database key, User vertex id, user_id, model, dimension)
CacheKey = tuple[DatabaseKey, int, str | None, str, int | None]


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
    unique_action_ids: bool = False  # the operator's word that no action_id is held twice
    problem: str | None = None  # a configuration error, reported by recall.status (defaults are used)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "CacheSettings":
        env = os.environ if env is None else env
        problems = []
        max_bytes = env_number(env, "RECALL_CACHE_BYTES", int, DEFAULT_BYTES, 0, problems)
        max_age = env_number(env, "RECALL_CACHE_MAX_AGE", float, DEFAULT_MAX_AGE, 0, problems)
        unique = env.get("RECALL_ACTION_IDS_UNIQUE", "").strip().lower()
        if unique not in ("", "true", "false"):
            problems.append(f"RECALL_ACTION_IDS_UNIQUE must be true or false, got {unique!r}")
        return cls(max_bytes, max_age, unique == "true", "; ".join(problems) or None)


@dataclass(frozen=True)
class Place:
    """Where one call runs: its database (None when it cannot be told) and a directory valid for it."""

    database: Database | None
    directory: Directory

    @property
    def key(self) -> DatabaseKey | None:
        return None if self.database is None else self.database.key


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
    built_at: float  # when facts and entities were last read, and every holder
    nbytes: int = 0
    pickup_at: int = field(default=0, compare=False)


def entry_bytes(entry: Entry) -> int:
    """A coarse estimate: the arrays' bytes, the texts' lengths, and ~100 bytes per item and id held."""
    snap = entry.snapshot
    arrays = sum(
        v.nbytes for v in (snap.turn_vectors, snap.entity_vectors, snap.fact_vectors, snap.note_vectors)
    )
    arrays += snap.text_index.nbytes + snap.note_text_index.nbytes
    texts = snap.turns.text_chars + sum(len(f.text) for f in snap.facts)
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


COUNTERS = (
    "builds", "renewals", "refreshes", "hits", "pickups", "evictions", "verify_failures", "scans",
    "unidentified",
)  # fmt: skip


class RecallCache:
    def __init__(
        self, settings: CacheSettings | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings or CacheSettings.from_env()
        self.clock = clock
        self.databases = Databases(clock)
        self._lock = threading.Lock()  # guards the entry table and the counters
        self._entries: OrderedDict[CacheKey, Entry] = OrderedDict()
        self._bytes = 0
        self._building = _KeyedLocks()
        self.counts = dict.fromkeys(COUNTERS, 0)

    # -- where a call runs -------------------------------------------------------------------------
    def database(self, graph: LiveGraph, metas: Iterable[Any] | None = None) -> Database | None:
        """The database the call runs in, from the fast shape's `metas` or (None) by probing the
        RecallMeta ids of databases seen before; None when it cannot be told without a full pass."""
        if metas is not None:
            return self.databases.named(list(metas))
        return self.databases.identify(graph.vertex)

    def place(self, graph: LiveGraph, metas: Iterable[Any] | None = None) -> Place:
        """This call's database and directory, the directory brought up to date with what changed.

        `metas`: the RecallMeta vertices the fast call shape passed (None for the bare forms, which
        are identified by probing). A database never seen, or none identified, is read in one full pass.
        """
        fast = metas is not None
        db = self.database(graph, metas)
        if db is not None:
            directory = self._directory(db, graph)
            directory.advance(graph.vertex, graph.abort)
            directory.sweep(graph.vertex, graph.abort)
            return Place(db, directory)
        directory = self._scan(graph)
        db = None if fast else self.databases.found(directory)
        self._forget_evicted()
        if db is None:
            self._count("unidentified")
            return Place(None, directory)
        return Place(db, db.directory)

    def _directory(self, db: Database, graph: LiveGraph) -> Directory:
        with db.lock:
            if db.directory is None:
                db.directory = self._scan(graph)
            return db.directory

    def _scan(self, graph: LiveGraph) -> Directory:
        directory = Directory.scan(
            graph.vertices, graph.abort, self.clock, actions=not self.settings.unique_action_ids
        )
        self._count("scans")
        return directory

    def collisions(self, place: Place, graph: LiveGraph) -> Collisions:
        """The collision rule's view for one call (none when the operator declared action_ids unique)."""
        holders = None if self.settings.unique_action_ids else place.directory.holders_of
        return Collisions(holders, graph.vertex)

    @staticmethod
    def live_users(place: Place, graph: LiveGraph, user_id: str) -> list[Any]:
        """The live User vertices with `user_id`: the directory's ids, each checked in this transaction
        (the directory is a superset)."""
        found = []
        for vertex_id in place.directory.users_of(user_id):
            vertex = graph.vertex(vertex_id)
            if (
                vertex is not None
                and s.USER in labels_of(vertex)
                and id_text(vertex.properties.get(s.USER_ID)) == user_id
            ):
                found.append(vertex)
        return found

    def find_user(self, place: Place, graph: LiveGraph, user_id: str) -> Any:
        """The live User vertex with `user_id`, or None; a ValueError when several hold it."""
        found = self.live_users(place, graph, user_id)
        if len(found) > 1:
            raise ValueError(
                f"user: {len(found)} :User nodes have user_id {user_id!r}; pass the node instead"
            )
        return found[0] if found else None

    # -- entries ------------------------------------------------------------------------------------
    def entry(
        self,
        place: Place,
        graph: LiveGraph,
        user: Any,
        model: str,
        dim: int | None,
        fresh: bool = False,
        signature: PassedSignatures | None = None,
    ) -> Entry:
        """The user's current entry for `model`: cached, grown, renewed, with vectors picked up, or built
        (`fresh`: built, whatever is cached). `signature`: the fast call shape's holder signatures.
        In a database that cannot be identified the entry is built for this call and not kept."""
        collisions = self.collisions(place, graph)
        if place.database is None:
            self._count("builds")
            return self._build(graph, user, model, dim, collisions)
        key = (place.database.key, user.id, id_text(user.properties.get(s.USER_ID)), model, dim)
        with self._building.hold(key):
            cached = None if fresh else self._get(key)
            if fresh:
                self._count("verify_failures")
            if cached is None:
                made, counter = self._build(graph, user, model, dim, collisions), "builds"
            else:
                made, counter = self._refreshed(
                    cached, graph, user, model, dim, collisions, signature, place.directory.saw
                )
            self._count(counter)
            if made is not cached:
                self._publish(key, made)
            return made

    def _refreshed(
        self,
        cached: Entry,
        graph: LiveGraph,
        user: Any,
        model: str,
        dim: int | None,
        collisions: Collisions,
        signature: PassedSignatures | None,
        saw: Callable[[int], None],
    ) -> tuple[Entry, str]:
        aged = self.clock() - cached.built_at > self.settings.max_age
        only = None if signature is None or aged else cached.structure.differing(signature)
        if only is not None and not only:
            growth: Growth | Removal = Growth(cached.structure)
        else:
            growth = compare(user, cached.structure, graph.vertex, graph.abort, only)
        if isinstance(growth, Removal):  # built afresh, the turns still held read from `cached`
            reuse = None if aged else cached
            return self._build(graph, user, model, dim, collisions, growth.user_out, reuse), "builds"
        entry, counter, renew = cached, "hits", aged
        if not growth.unchanged:
            grown = self._grow(cached, growth, graph, user, collisions, saw)
            if grown is None:
                return self._build(graph, user, model, dim, collisions), "builds"
            (entry, renew_now), counter = grown, "refreshes"
            renew = renew or renew_now
        if renew:
            renewed = self._renew_facts(entry, graph, user, collisions)
            if renewed is None:
                return self._build(graph, user, model, dim, collisions), "builds"
            if counter != "hits":
                self._count("renewals")  # a refresh that also renewed: both are counted
            entry, counter = renewed, "renewals" if counter == "hits" else counter
        picked, entry.pickup_at = pick_up(
            entry.snapshot, _properties(entry, graph), entry.pickup_at, PICKUP_LIMIT
        )
        if picked is not None:
            return replace(entry, snapshot=picked), "pickups" if counter == "hits" else counter
        return entry, counter

    def _build(
        self,
        graph: LiveGraph,
        user: Any,
        model: str,
        dim: int | None,
        collisions: Collisions,
        user_out: Iterable[tuple[Any, int]] | None = None,
        reuse: Entry | None = None,
    ) -> Entry:
        """A full read of the user, each Action read once (`user_out`: as `collect_owned` takes it;
        `reuse`: an older entry whose turns are taken for the Actions it held, see `turn_reuse`)."""
        old = None if reuse is None else TurnReuse.of(reuse.snapshot.turns, reuse.snapshot.turn_vectors)
        reader = TurnReader(model, dim, Counter(), old)
        owned = collect_owned(user, collisions, graph.vertex, graph.abort, reader.add, user_out)
        return self._entry(owned, build_snapshot(owned, model, dim, graph.abort, reader), user, graph)

    def _entry(self, owned: OwnedGraph, snapshot: UserSnapshot, user: Any, graph: LiveGraph) -> Entry:
        structure = read_structure(
            user, graph.vertex, owned.holders, owned.out_edge_ids, owned.in_edge_ids
        )
        if structure is None:
            raise RuntimeError("a session or agent vanished while the user was read")
        held = owned.actions
        actions: dict[str, int] = {}
        for action_id, vertex_id in zip(held.action_ids, held.vertex_ids, strict=True):
            actions.setdefault(action_id, vertex_id)
        sides = zip(held.action_ids, held.session_ids, strict=True)
        owned_actions = dict(zip(held.vertex_ids, sides, strict=True))
        sessions = frozenset(owned.sessions)
        entry = Entry(
            snapshot, structure, dict(owned.holders), sessions, actions, owned_actions, self.clock()
        )
        return replace(entry, nbytes=entry_bytes(entry))

    def _grow(
        self,
        cached: Entry,
        growth: Growth,
        graph: LiveGraph,
        user: Any,
        collisions: Collisions,
        saw: Callable[[int], None],
    ) -> tuple[Entry, bool] | None:
        """(`cached` with the new sessions, Agents and Actions `growth` shows, whether facts must be read
        again: a new note, ontology or fact on the User); None when only a full build can apply it (a
        session with another parent, an Agent now shared with a session that is not the user's, a
        back-filled turn)."""
        holders, sessions = dict(cached.holders), set(cached.sessions)
        to_expand: dict[int, Any] = {}
        renew = bool(growth.in_edges.get(user.id))  # an edge into the User: a fact about the user
        for edge in growth.out_edges.get(user.id, ()):
            if edge.type.name != s.HAD_SESSION:
                renew = True  # a note, an ontology or a fact
                continue
            session = edge.to_vertex
            if session.id not in sessions and session_skip(session, user.id, (edge.id,)) is None:
                sessions.add(session.id)
                to_expand[session.id] = session
        for holder, edges in growth.in_edges.items():
            if holder == user.id:
                continue
            if holder in cached.sessions and any(e.type.name == s.HAD_SESSION for e in edges):
                return None  # a second parent: the session may no longer be the user's
            if any(e.type.name == s.HAS_AGENT and e.from_vertex.id not in sessions for e in edges):
                return None
        candidates = Candidates()
        for holder, edges in growth.out_edges.items():
            if holder == user.id:
                continue
            for edge in edges:
                if edge.type.name == s.HAS_ACTION:
                    action, sid = edge.to_vertex, holders[holder]
                    agent = holder not in sessions
                    candidates.add(action, agent_action_session(action, sid) if agent else sid, edge.id)
                elif edge.type.name == s.HAS_AGENT and holder in sessions:
                    to_expand.setdefault(holder, edge.from_vertex)
        skipped: Counter = Counter()
        expand_sessions(to_expand, sessions, holders, candidates.add, skipped, graph.abort)
        new = candidates.without(cached.owned_actions)
        if len(new):
            saw(max(new.sessions))  # the directory reads up to the newest, however many ids are missing
        admitted = admit_actions(
            new, holders, collisions, skipped, graph.abort, also_owned=cached.owned_actions
        )
        snapshot = with_new_turns(cached.snapshot, admitted, graph.vertex, skipped, graph.abort)
        added = read_holders(graph.vertex, holders.keys() - cached.holders.keys())
        if snapshot is None or added is None:
            return None
        first_seen: dict[str, int] = {}  # an action id already held keeps the vertex it had
        for item in admitted:
            if item.action_id not in cached.actions:
                first_seen.setdefault(item.action_id, item.vertex_id)
        actions = Layered.over(cached.actions, first_seen)
        owned_actions = Layered.over(
            cached.owned_actions, {a.vertex_id: (a.action_id, a.session_id) for a in admitted}
        )
        grown = replace(
            cached,
            snapshot=snapshot,
            structure=growth.structure.with_holders(added),
            holders=holders,
            sessions=frozenset(sessions),
            actions=actions,
            owned_actions=owned_actions,
        )
        return replace(grown, nbytes=entry_bytes(grown)), renew

    def _renew_facts(
        self, cached: Entry, graph: LiveGraph, user: Any, collisions: Collisions
    ) -> Entry | None:
        """Facts, entities, notes and ontologies read again for the Actions held (turns kept); None when
        one of them now collides with another user's, or is gone."""
        owned = OwnedGraph(user, graph.vertex)
        for vertex_id, (action_id, session_id) in cached.owned_actions.items():
            if collisions.elsewhere(action_id, vertex_id, cached.owned_actions):
                return None
            if graph.vertex(vertex_id) is None:
                return None
            owned.actions.add(action_id, session_id, vertex_id)
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

    def _forget_evicted(self) -> None:
        """Entries of databases the database table dropped for its limit."""
        for key in self.databases.take_evicted():
            self._drop(lambda k, key=key: k[0] == key)

    def _drop(self, matches: Callable[[CacheKey], bool]) -> int:
        with self._lock:
            keys = [k for k in self._entries if matches(k)]
            for key in keys:
                self._bytes -= self._entries.pop(key).nbytes
            return len(keys)

    # -- invalidation and status --------------------------------------------------------------------
    def invalidate(
        self, database: Database | None, user_id: str | None = None, vertex_id: int | None = None
    ) -> int:
        """Drop one database's entries of a user (by user_id and/or User vertex id), or with neither
        every entry of the database and its directory; returns how many entries were dropped. Nothing
        is kept for a database that cannot be identified (None)."""
        if database is None:
            return 0
        db = database.key
        if user_id is None and vertex_id is None:
            self.databases.forget(db)
            return self._drop(lambda k: k[0] == db)
        return self._drop(
            lambda k: k[0] == db and ((user_id is not None and k[2] == user_id) or k[1] == vertex_id)
        )

    def status_rows(self, place: Place | None) -> list[dict[str, Any]]:
        """`recall.status` rows for the cache and this call's database (section "cache"/"database")."""
        age = self.settings.max_age
        with self._lock:
            entries = sum(1 for k in self._entries if place is not None and k[0] == place.key)
            figures = [
                ("entries", entries, f"users x models cached for this database; {len(self._entries)} in all"),
                ("bytes", self._bytes, f"estimated; limit {self.settings.max_bytes} (RECALL_CACHE_BYTES)"),
                ("max_age", int(age), f"{age:g} s (RECALL_CACHE_MAX_AGE)"),
                ("scans", self.counts["scans"], "full passes over a database: a directory's first build"),
                ("unidentified", self.counts["unidentified"], "calls in a database without a RecallMeta"),
                ("builds", self.counts["builds"], "full reads of a user"),
                ("renewals", self.counts["renewals"], "facts, entities and notes read again"),
                ("refreshes", self.counts["refreshes"], "new sessions or messages read incrementally"),
                ("pickups", self.counts["pickups"], "vectors written since a build, picked up"),
                ("hits", self.counts["hits"], "calls served from a current snapshot"),
                ("evictions", self.counts["evictions"], "entries dropped for the byte limit"),
                ("verify_failures", self.counts["verify_failures"], "users built afresh: a stale row"),
            ]
        rows = [_row("cache", n, c, d) for n, c, d in figures]
        if self.settings.problem:
            rows.append(_row("cache", "configuration", None, self.settings.problem))
        return rows + self._database_rows(place)

    def _database_rows(self, place: Place | None) -> list[dict[str, Any]]:
        rule = (
            "declared unique by the operator (RECALL_ACTION_IDS_UNIQUE): no collision is looked for"
            if self.settings.unique_action_ids
            else "an action_id held by two users belongs to neither (the directory's window)"
        )
        rows = [_row("database", "collision_rule", None, rule)]
        known = sum(1 for _ in self.databases)
        if place is None or place.database is None:
            detail = "not identified: no :RecallMeta node (run memgraph-recall setup); nothing is kept"
            return [*rows, _row("database", "identity", known, detail)]
        directory = place.directory
        cycle = directory.last_cycle_seconds
        return [
            *rows,
            _row("database", "identity", known, f"token {', '.join(place.database.key)}; databases known"),
            _row("database", "directory", directory.size, "vertices with a user_id, action_id or token"),
            _row("database", "directory_top", directory.top, "highest vertex id read"),
            _row(
                "database",
                "sweep",
                directory.counts.cycles,
                f"cycles done, at id {directory.sweep_at}"
                + (f", last took {cycle:.0f} s" if cycle is not None else ""),
            ),
            _row(
                "database",
                "upkeep",
                directory.counts.advanced + directory.counts.swept,
                f"ids probed since the full pass ({directory.counts.advanced} new, {directory.counts.swept} "
                f"swept) in {directory.counts.seconds:.3f} s",
            ),
        ]


def _row(section: str, name: str, count: int | None, detail: str | None) -> dict[str, Any]:
    return {"section": section, "name": name, "model": None, "count": count, "detail": detail}


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
