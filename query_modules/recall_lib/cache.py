"""The per-user cache: recall at 100k messages without serving forgotten, edited or foreign data.

One `RecallCache` lives in `recall.py` (module state; this package holds none, so each embedded
Runtime has its own). Memgraph shares that state between all the databases of an instance, so every
call first finds **where** it runs (`place`): its database, by RecallMeta token (`databases`), whether
entities and facts may be attributed there (the collision rule's evidence, read from the live
RecallMeta: `ownership`), and for the string form only, the database's `Directory` of user_ids. A
database that cannot be identified (no RecallMeta) keeps nothing: its calls build the user afresh.

Per user and model the cache keeps an `Entry`: the immutable `UserSnapshot` plus what keeping it fresh
needs (the user's structure as edge ids, the owned Actions, the rolling check's units). Freshness, per
call (`entry`):
- the structure (edge ids out of and into the User, its Sessions and Agents, and the Sessions and
  Agents the walk turned away; no properties) is compared with the cached one. The bare call forms
  read all of it; the fast call shape passes each holder's signature and only holders whose signature
  differs from the one recall derived from its own last read are read (`structure`). Unchanged ->
  warm; only grown (new sessions, messages, agent links) -> the new Actions are read and appended; new
  notes, ontologies or facts on the User -> facts re-read; anything else changed (an edge removed, a
  session with a new parent, a turned-away holder changed, a new one turned away, a back-filled older
  turn) -> a full build (after a removal, one that takes over the turns the entry held, `turn_reuse`);
- the rolling check (`rolling`, `recheck`): what the structure cannot see (edited properties and
  labels, parents from elsewhere, what was turned away, chunks, mentions and facts extracted later,
  notes) is read again unit by unit, each within `max_age` (`RECALL_CACHE_MAX_AGE`, 60 s) of its last
  reading, in proportion to the time since the user's last call, in slices of at least `check_slice`
  (`RECALL_CACHE_CHECK_SLICE`) and at most `check_reads` (`RECALL_CACHE_CHECK_READS`) procedure-API
  calls' worth: a user called often pays a slice on some calls and nothing on the others, one called
  after a pause one reading of every unit (never a cold build: the cap), and a user heavier than the
  cap per maximum age is read over its next calls. A changed unit of
  the turn side builds the user again, taking over the turns but the changed ones, each keeping its
  last reading (`Rota.carried`); of the fact side, re-reads the facts. Why it costs what a renewal
  needs, not a build: it reads no vector (a function of the text) and no structure the call's
  structure check already compared (docs/cache.md, "What keeping a user fresh costs");
- vectors written since the build are picked up on the next call (`pickup`), bounded per call;
- every row a call returns, and every fact `explain` names, is verified against the live graph
  (`verify`); a failure makes the pipeline build the user afresh for that call (`entry(...,
  fresh=True)`), which also replaces the entry.

Key: (database, User vertex id, user_id, model, dimension, whether entities and facts are attributed):
setup recording the constraint, or its record removed, makes new entries.

After a storage rebuild (`RECOVER SNAPSHOT`, a replica's resync) ids start again below ones recall has
read: rows are still read back before they are shown, every unit of a user is read again within
`max_age` (a changed one renews it), and
the string form's directory re-reads every id within a sweep cycle; `CALL recall.invalidate()` drops
the database's entries at once (never its directory: any reader may call it, and a rebuilt directory
would cost a full pass).

Concurrency: builds run under a per-key lock (a caller that waited uses what the other built); the
entry table has its own short lock; snapshots are published whole and never changed. Bounded by
`RECALL_CACHE_BYTES` (total over all entries, a coarse estimate), least recently used evicted first.
"""

import os
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from . import schema as s
from .databases import Database, DatabaseKey, Databases, recorded_rule
from .directory import Directory
from .environment import env_number
from .kinds import ENTITY, FACT, PROSE, TURN
from .layered import Layered
from .ownership import (
    Attribution,
    Candidates,
    OwnedGraph,
    admit_actions,
    agent_action_session,
    collect_entities_and_facts,
    collect_owned,
    expand_sessions,
    id_text,
    labels_of,
    out_edges_of,
    owned_notes,
    owned_ontologies,
    session_skip,
)
from .pickup import pick_up
from .reading import TurnReader
from .recheck import (
    FACT_SIDE,
    FACTS,
    TURNS,
    Baseline,
    Kind,
    ReadBack,
    Recheck,
    action_units,
    fact_baseline,
    holder_units,
)
from .rolling import Rota, Units
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
from .walklog import WalkLog

DEFAULT_BYTES = 1 << 30
DEFAULT_MAX_AGE = 60.0
#: What the rolling check may read per call, in procedure-API calls (`rolling`).
DEFAULT_CHECK_READS = 30_000
#: The least it reads once it reads at all, in procedure-API calls (`rolling`: ~2 ms in the stand-in).
DEFAULT_CHECK_SLICE = 2_000
#: Awaited vectors looked for per call (see `pickup`).
PICKUP_LIMIT = 2000

#: (database key, User vertex id, user_id, model, dimension, how entities and facts are attributed)
CacheKey = tuple[DatabaseKey, int, str | None, str, int | None, Attribution]

#: Why entities and facts are not collected (`Place.attribute_off`).
NOT_UNIQUE = (
    "action_ids are not known to be unique in this database, so no fact or entity can be told to be "
    "this user's; run memgraph-recall setup (it creates the uniqueness constraint on :Action(action_id))"
)
ATTRIBUTED = "facts and entities attributed"
#: What a database that does not type its action_ids loses (`ownership.attributes`).
NOT_TYPED = (
    "not through action_ids that read as integers (another user's integer id cited as text looks the "
    "same): memgraph-recall setup adds IS TYPED STRING on :Action(action_id), after which they are"
)
NO_META = "this database has no :RecallMeta, so recall cannot tell whether action_ids are unique; " + (
    "run memgraph-recall setup"
)


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
    check_reads: int = DEFAULT_CHECK_READS  # the rolling check's reads per call at most
    check_slice: int = DEFAULT_CHECK_SLICE  # ... and at least, once it reads (0: a share on every call)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "CacheSettings":
        env = os.environ if env is None else env
        problems = []
        max_bytes = env_number(env, "RECALL_CACHE_BYTES", int, DEFAULT_BYTES, 0, problems)
        max_age = env_number(env, "RECALL_CACHE_MAX_AGE", float, DEFAULT_MAX_AGE, 0, problems)
        check_reads = env_number(env, "RECALL_CACHE_CHECK_READS", int, DEFAULT_CHECK_READS, 1, problems)
        check_slice = env_number(env, "RECALL_CACHE_CHECK_SLICE", int, DEFAULT_CHECK_SLICE, 0, problems)
        unique = env.get("RECALL_ACTION_IDS_UNIQUE", "").strip().lower()
        if unique not in ("", "true", "false"):
            problems.append(f"RECALL_ACTION_IDS_UNIQUE must be true or false, got {unique!r}")
        return cls(max_bytes, max_age, unique == "true", "; ".join(problems) or None, check_reads,
                   check_slice)


@dataclass(frozen=True)
class Place:
    """Where one call runs: its database (None when it cannot be told), its directory (the string form
    only), and whether entities and facts may be attributed through action ids there (`ownership`)."""

    database: Database | None
    directory: Directory | None
    attribute: Attribution
    attribute_off: str | None = None  # why not, for the rendered header and recall.status

    @property
    def key(self) -> DatabaseKey | None:
        return None if self.database is None else self.database.key


@dataclass
class Entry:
    """A cached user: the snapshot and what keeping it fresh needs. Replaced whole, never changed, but
    for `pickup_at` (where the next look for awaited vectors starts) and its rolling check's `rota`
    (when each check unit was last read), both changed under the user's lock only."""

    snapshot: UserSnapshot
    structure: Structure
    holders: Mapping[int, str | None]  # owned Session and Agent vertex ids -> their session id
    sessions: frozenset[int]  # which holders are Sessions
    actions: Mapping[str, int]  # owned action_id -> its Action vertex id (what facts cite)
    owned_actions: Mapping[int, tuple[str, str | None]]  # owned Action vertex id -> (action_id, session)
    numeric: frozenset[str]  # action ids some owned Action stores as an integer (never attribute)
    attribute: Attribution  # how entities and facts were collected (the place's rule when built)
    baseline: Baseline  # what the rolling check's units compare with (`recheck`)
    rota: Rota = field(compare=False)  # the check units and when each was last read (`rolling`)
    nbytes: int = 0
    pickup_at: int = field(default=0, compare=False)


def entry_bytes(entry: Entry) -> int:
    """A coarse estimate: the arrays' bytes, the texts' lengths, and ~100 bytes per item and id held
    (the rolling check's baseline included)."""
    snap = entry.snapshot
    vectors = (snap.turn_vectors, snap.prose_vectors, snap.entity_vectors, snap.fact_vectors)
    arrays = sum(v.nbytes for v in (*vectors, snap.note_vectors))
    arrays += snap.text_index.nbytes + snap.note_text_index.nbytes
    arrays += 40 * len(entry.rota)  # the check units' columns
    texts = snap.turns.text_chars + sum(len(f.text) for f in snap.facts)
    texts += sum(len(n.content) for n in snap.notes)
    items = len(snap.turns) + len(snap.facts) + len(snap.entities) + len(snap.notes)
    base, facts = entry.baseline, entry.baseline.facts
    held = items + len(entry.owned_actions) + entry.structure.edge_count
    held += len(base.chunks) + len(base.agent_sessions) + len(facts.texts) + len(facts.facts)
    held += sum(map(len, facts.mentions.values())) + sum(map(len, facts.holder_edges.values()))
    return int(arrays + texts + 100 * held)


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
        self.counts = dict.fromkeys(COUNTERS, 0)  # what each call did to its user's entry
        self.units_read = 0  # check units the rolling check read, over all calls

    # -- where a call runs -------------------------------------------------------------------------
    def database(self, graph: LiveGraph, metas: Iterable[Any] | None = None) -> Database | None:
        """The database the call runs in, from the fast shape's `metas` or (None) by probing the
        RecallMeta ids of databases seen before; None when it cannot be told without a full pass."""
        if metas is not None:
            return self.databases.named(list(metas))
        found = self.databases.identify(graph.vertex)
        return None if found is None else found[0]

    def place(self, graph: LiveGraph, metas: Iterable[Any] | None = None, by_user_id: bool = False) -> Place:
        """This call's database, its directory when `by_user_id` (the string form finds its User there),
        and the collision rule read from the live RecallMeta vertices.

        `metas`: the RecallMeta vertices the fast call shape passed (None for the bare forms, which are
        identified by probing). Only the string form ever reads a whole graph: once per database, the
        first time it needs the directory (and on every call in a database without a RecallMeta)."""
        if metas is not None:
            metas = list(metas)
            db = self.databases.named(metas)
            return self._placed(db, metas, None)
        found = self.databases.identify(graph.vertex)
        if not by_user_id:
            found = found or self.databases.probe_low(graph.vertex)
            return self._placed(*found, None) if found is not None else self._placed(None, [], None)
        if found is not None:
            db, live_metas = found
            directory = self._directory(db, graph)
            directory.advance(graph.vertex, graph.abort)
            directory.sweep(graph.vertex, graph.abort)
            return self._placed(db, live_metas, directory)
        directory = self._scan(graph)
        db = self.databases.found(directory)
        if db is None:
            return self._placed(None, [], directory)
        live_metas = [v for v in map(graph.vertex, db.meta_ids) if v is not None]
        return self._placed(db, live_metas, db.directory)

    def _placed(self, db: Database | None, metas: list[Any], directory: Directory | None) -> Place:
        self._forget_evicted()
        if db is None:
            self._count("unidentified")
        rule = recorded_rule(metas)
        if self.settings.unique_action_ids:
            rule = max(rule, Attribution.UNIQUE)
        if rule:
            return Place(db, directory, rule)
        return Place(db, directory, rule, NOT_UNIQUE if db is not None else NO_META)

    def _directory(self, db: Database, graph: LiveGraph) -> Directory:
        with db.lock:
            if db.directory is None:
                db.directory = self._scan(graph)
            return db.directory

    def _scan(self, graph: LiveGraph) -> Directory:
        directory = Directory.scan(graph.vertices, graph.abort, self.clock)
        self._count("scans")
        return directory

    @staticmethod
    def live_users(place: Place, graph: LiveGraph, user_id: str) -> list[Any]:
        """The live User vertices with `user_id`: the directory's ids, each checked in this transaction
        (the directory is a superset; `place` must be a string-form one, `by_user_id`)."""
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
        read_back: ReadBack | None = None,
    ) -> Entry:
        """The user's current entry for `model`: cached, grown, renewed, with vectors picked up, or built
        (`fresh`: built, whatever is cached). `signature`: the fast call shape's holder signatures;
        `read_back` gets the Actions the rolling check read (for the call's verification).
        In a database that cannot be identified the entry is built for this call and not kept."""
        call = _Call(graph, user, model, dim, place.attribute, self.clock(), read_back)
        if place.database is None:
            self._count("builds")
            return self._build(call)
        user_id = id_text(user.properties.get(s.USER_ID))
        key = (place.database.key, user.id, user_id, model, dim, place.attribute)
        with self._building.hold(key):
            cached = None if fresh else self._get(key)
            if fresh:
                self._count("verify_failures")
            if cached is None:
                made, counter = self._build(call), "builds"
            else:
                saw = None if place.directory is None else place.directory.saw
                call = replace(call, attribute=cached.attribute)
                made, counter = self._refreshed(cached, call, signature, saw)
            self._count(counter)
            if made is not cached:
                self._publish(key, made)
            return made

    def _refreshed(
        self,
        cached: Entry,
        call: "_Call",
        signature: PassedSignatures | None,
        saw: Callable[[int], None] | None,
    ) -> tuple[Entry, str]:
        """`cached` brought up to date: the structure compared (every call), then the rolling check."""
        graph, user = call.graph, call.user
        only = None if signature is None else cached.structure.differing(signature)
        if only is not None and not only:
            growth: Growth | Removal = Growth(cached.structure)
        else:
            growth = compare(user, cached.structure, graph.vertex, graph.abort, only)
        holders_read = signature is None
        if isinstance(growth, Removal):  # built afresh, the turns still held taken from `cached`
            built = self._build(call, growth.user_out, cached)
            # They keep their last reading: those due are read in this call too.
            return self._recheck(built, call, holders_read) or built, "builds"
        entry, counter = cached, "hits"
        if not growth.unchanged:
            grown = self._grow(cached, growth, call, saw)
            if grown is None:
                return self._build(call), "builds"
            (entry, renew), counter = grown, "refreshes"
            if renew:
                entry = self._renew_facts(entry, call)
        checked = self._recheck(entry, call, holders_read)
        if checked is not None:
            entry, counter = checked, "renewals" if counter == "hits" else counter
        picked, entry.pickup_at = pick_up(
            entry.snapshot, _properties(entry, graph), entry.pickup_at, PICKUP_LIMIT
        )
        if picked is not None:
            return replace(entry, snapshot=picked), "pickups" if counter == "hits" else counter
        return entry, counter

    def _recheck(self, entry: Entry, call: "_Call", holders_read: bool) -> Entry | None:
        """The rolling check: the units due this call read again (`rolling`, `recheck`); the entry renewed
        when one differs (None when none does). `holders_read`: the call's structure check read every
        holder's edge ids (the bare forms); else the due holders' are read here."""
        rota, settings = entry.rota, self.settings
        due = rota.due(call.now, settings.max_age, settings.check_reads, settings.check_slice)
        units = rota.units.take(due.positions)
        if not len(units):
            rota.settle(due, call.now)
            return None
        graph = call.graph
        check = Recheck(entry.snapshot, entry.baseline, entry.holders, entry.sessions, entry.owned_actions,
                        bool(entry.attribute), graph.vertex, call.read_back)
        found = check.run(units, graph.abort)
        rota.learn(due, found.learned)
        holders = units.ids[np.isin(units.kinds, (Kind.HOLDER, Kind.WATCHED))].tolist()
        if holders and not holders_read:  # the fast shape: the due holders' edge ids, exactly
            growth = compare(call.user, entry.structure, graph.vertex, graph.abort, holders)
            if isinstance(growth, Removal) or not growth.unchanged:
                found.changed |= TURNS
        rota.settle(due, call.now)
        with self._lock:
            self.units_read += len(units)
        if found.changed & TURNS:  # built again; the turns held taken over but the changed ones
            return self._build(call, reuse=entry, excluded=frozenset(found.actions))
        if found.changed & FACTS:
            return self._renew_facts(entry, call, found.chunked)
        return None

    def _build(
        self,
        call: "_Call",
        user_out: Iterable[tuple[Any, int]] | None = None,
        reuse: Entry | None = None,
        excluded: frozenset[int] = frozenset(),
    ) -> Entry:
        """A full read of the user, each Action read once (`user_out`: as `collect_owned` takes it;
        `reuse`: an older entry whose turns are taken for the Actions it held, but the `excluded` ones,
        see `turn_reuse`; they keep their place in its rolling check)."""
        old = None
        if reuse is not None:
            old = TurnReuse.of(reuse.snapshot.turns, reuse.snapshot.turn_vectors, excluded)
        reader = TurnReader(call.model, call.dim, Counter(), old)
        graph = call.graph
        owned = collect_owned(call.user, call.attribute, graph.vertex, graph.abort, reader.add, user_out)
        snapshot = build_snapshot(owned, call.model, call.dim, graph.abort, reader)
        return self._entry(owned, snapshot, call, None if reuse is None else reuse.rota, reader.reused)

    def _entry(
        self, owned: OwnedGraph, snapshot: UserSnapshot, call: "_Call", rota: Rota | None, reused: set[int]
    ) -> Entry:
        """The entry of what a build read; its check units read now, but the turns it took over unread
        (`reused`), which keep their last reading in `rota`, the old entry's."""
        structure = read_structure(
            call.user, call.graph.vertex, owned.holders, owned.out_edge_ids, owned.in_edge_ids, owned.watched
        )
        if structure is None:
            raise RuntimeError("a session or agent vanished while the user was read")
        held, log = owned.actions, owned.log
        actions: dict[str, int] = {}
        for action_id, vertex_id in zip(held.action_ids, held.vertex_ids, strict=True):
            actions.setdefault(action_id, vertex_id)
        sides = zip(held.action_ids, held.session_ids, strict=True)
        owned_actions = dict(zip(held.vertex_ids, sides, strict=True))
        parents, agent_sessions, units = action_units(log, held.vertex_ids, snapshot.turns.vertex_ids)
        holders = Units.of(holder_units(structure, structure.out_edges, log.watched_agents))
        facts, fact_units = fact_baseline(owned, snapshot)
        units = units + holders + fact_units
        baseline = Baseline(parents, frozenset(log.integer_ids), log.chunks, agent_sessions, facts)
        # Read at the call's start; a new ring's share runs from the build's end (its time is no pause).
        now, built = call.now, self.clock()
        entry = Entry(
            snapshot,
            structure,
            dict(owned.holders),
            frozenset(owned.sessions),
            actions,
            owned_actions,
            frozenset(held.numeric),
            owned.attribute,
            baseline,
            Rota.fresh(units, now, built) if rota is None else rota.carried(units, reused, Kind.ACTION, now),
        )
        return replace(entry, nbytes=entry_bytes(entry))

    def _grow(
        self, cached: Entry, growth: Growth, call: "_Call", saw: Callable[[int], None] | None
    ) -> tuple[Entry, bool] | None:
        """(`cached` with the new sessions, Agents and Actions `growth` shows, whether facts must be read
        again: a new note, ontology or fact on the User); None when only a full build can apply it (a
        session with another parent, an Agent now shared with a session that is not the user's, a new
        Session or Agent the rules turn away, which a build starts to watch, a back-filled turn). What
        it reads joins the rolling check, read now."""
        graph, user = call.graph, call.user
        holders, sessions = dict(cached.holders), set(cached.sessions)
        log = WalkLog()
        to_expand: dict[int, Any] = {}
        renew = bool(growth.in_edges.get(user.id))  # an edge into the User: a fact about the user
        for edge in growth.out_edges.get(user.id, ()):
            if edge.type.name != s.HAD_SESSION:
                renew = True  # a note, an ontology or a fact
                continue
            session = edge.to_vertex
            if session.id in sessions:
                continue
            if session_skip(session, user.id, (edge.id,)) is not None:
                return None
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
                    action, sid, edge_id = edge.to_vertex, holders[holder], edge.id
                    if holder not in sessions:
                        sid = agent_action_session(action, sid, edge_id, log)
                    candidates.add(action, sid, edge_id)
                elif edge.type.name == s.HAS_AGENT and holder in sessions:
                    to_expand.setdefault(holder, edge.from_vertex)
        skipped: Counter = Counter()
        expand_sessions(to_expand, sessions, holders, candidates.add, skipped, graph.abort, log=log)
        if skipped:
            return None  # an Agent turned away: a build watches it
        new = candidates.without(cached.owned_actions)
        if len(new) and saw is not None:
            saw(max(new.sessions))  # the directory reads up to the newest, however many ids are missing
        chunks: dict[int, tuple[tuple[int, Any], ...]] | None = {} if cached.attribute else None
        admitted = admit_actions(new, holders, skipped, graph.abort, chunks=chunks, log=log)
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
        structure = growth.structure.with_holders(added)
        offset = len(cached.snapshot.turns)
        parents, agent_sessions, units = action_units(
            log, admitted.vertex_ids, snapshot.turns.vertex_ids[offset:], offset
        )
        units = units + Units.of(holder_units(structure, added.out_edges, log.watched_agents))
        old = cached.baseline
        baseline = replace(
            old,
            parents=Layered.over(old.parents, parents),
            stored_as_integer=old.stored_as_integer | frozenset(log.integer_ids),
            chunks=Layered.over(old.chunks, log.chunks),
            agent_sessions=Layered.over(old.agent_sessions, agent_sessions),
        )
        grown = replace(
            cached,
            snapshot=snapshot,
            structure=structure,
            holders=holders,
            sessions=frozenset(sessions),
            actions=actions,
            owned_actions=owned_actions,
            numeric=cached.numeric | admitted.numeric,
            baseline=baseline,
            rota=cached.rota.with_units(units, call.now),
        )
        return replace(grown, nbytes=entry_bytes(grown)), renew

    def _renew_facts(self, cached: Entry, call: "_Call", chunked: Collection[int] = ()) -> Entry:
        """Facts, entities, notes and ontologies read again for the Actions held (turns kept), from the
        chunks the entry knows of them but `chunked`'s, read again; their check units read now."""
        graph, user = call.graph, call.user
        owned = OwnedGraph(user, graph.vertex, attribute=cached.attribute)
        for vertex_id, (action_id, session_id) in cached.owned_actions.items():
            owned.actions.add(action_id, session_id, vertex_id)
        owned.actions.numeric.update(cached.numeric)
        known = dict(cached.baseline.chunks)
        for vertex_id in chunked:
            action = graph.vertex(vertex_id)
            found = out_edges_of(action, (s.HAS_CHUNK,)) if action is not None else []
            known[vertex_id] = tuple((edge_id, chunk.id) for _, edge_id, chunk in found)
        chunks = {vertex_id: pairs for vertex_id, pairs in known.items() if pairs}
        collect_entities_and_facts(owned, _chunk_vertices(chunks, graph.vertex), graph.abort)
        owned.notes = owned_notes(user, owned.skipped, owned.log)
        owned.ontologies = owned_ontologies(user, owned.log)
        snapshot = cached.snapshot
        part, awaiting = read_fact_part(owned, snapshot.model, snapshot.dimension, Counter())
        snapshot = with_fact_part(snapshot, part, awaiting)
        facts, units = fact_baseline(owned, snapshot)
        renewed = replace(
            cached,
            snapshot=snapshot,
            baseline=replace(cached.baseline, chunks=chunks, facts=facts),
            rota=cached.rota.replaced(FACT_SIDE, units, call.now),
        )
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
        every entry of the database (its directory stays: see the module docstring); returns how many
        entries were dropped. Nothing is kept for a database that cannot be identified (None)."""
        if database is None:
            return 0
        db = database.key
        if user_id is None and vertex_id is None:
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
                ("checked", self.units_read, "check units read again, each within the max age"),
                ("renewals", self.counts["renewals"], "users renewed: the rolling check saw a change"),
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
        attribute = Attribution.OFF if place is None else place.attribute
        if attribute == Attribution.TYPED:
            rule = "unique and typed STRING, enforced by Memgraph (recorded by setup): " + ATTRIBUTED
        elif attribute:
            rule = (
                "unique, the operator's word (RECALL_ACTION_IDS_UNIQUE)" if self.settings.unique_action_ids
                else "unique, enforced by Memgraph (recorded by setup)"
            ) + f": {ATTRIBUTED}; {NOT_TYPED}"
        else:
            rule = "not known unique: " + (place.attribute_off if place is not None else NOT_UNIQUE)
        rows = [_row("database", "collision_rule", int(bool(attribute)), rule)]
        known = sum(1 for _ in self.databases)
        if place is None or place.database is None:
            detail = "not identified: no :RecallMeta node (run memgraph-recall setup); nothing is kept"
            return [*rows, _row("database", "identity", known, detail)]
        directory = place.directory
        tokens = ", ".join(place.database.key)
        identity = _row("database", "identity", known, f"token {tokens}; databases known")
        if directory is None:
            return [*rows, identity]
        cycle = directory.last_cycle_seconds
        return [
            *rows,
            identity,
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
        if kind in (TURN, PROSE):
            vertex_id = snapshot.turns.vertex_ids[index]
        else:
            vertex_id = (snapshot.entities if kind == ENTITY else snapshot.notes)[index].vertex_id
        vertex = graph.vertex(vertex_id)
        return None if vertex is None else vertex.properties

    return properties_of


@dataclass(frozen=True)
class _Call:
    """One call's part in reading a user: its transaction's graph, the User, the model and dimension,
    how entities and facts are attributed, and when it began (what the rolling check stamps)."""

    graph: LiveGraph
    user: Any
    model: str
    dim: int | None
    attribute: Attribution
    now: float
    read_back: ReadBack | None = None  # what the rolling check read, for the call's verification


def _chunk_vertices(
    chunks: Mapping[int, tuple[tuple[int, int], ...]], lookup: Callable[[int], Any]
) -> dict[int, tuple[tuple[int, Any], ...]]:
    """Each Action's (chunk id, chunk vertex) pairs, each chunk looked up once (gone: left out)."""
    vertices: dict[int, Any] = {}
    found = {}
    for vertex_id, pairs in chunks.items():
        for _, chunk_id in pairs:
            if chunk_id not in vertices:
                vertices[chunk_id] = lookup(chunk_id)
        found[vertex_id] = tuple((c, vertices[c]) for _, c in pairs if vertices[c] is not None)
    return found
