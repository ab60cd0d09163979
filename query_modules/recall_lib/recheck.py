"""The rolling check's units: what each reads again of a cached user, and whether it reads as held.

docs/cache.md's second promise, every change seen within the maximum age, is kept by reading each unit
again within the maximum age of its last reading (`rolling` schedules that; `cache` runs it) and
comparing it with what the entry holds. A unit is what one change can touch, read as cheaply as still
sees every change to it:
- ACTION, an Action the user owns: its label; its parents: how many in-edges it has when all of them
  were its holders' edges (whose ids the structure holds and checks, so an unchanged count means no
  parent came or went), else their ids; its action_id and whether it is stored as text; its turn's
  time, speaker, type and text (the text compared whole: an edit of the same length is an edit; once
  a reading found them as held, the stored time, speaker and type are compared by a digest the unit
  keeps, `raw_digest`, instead of being parsed again); the
  own session_id of one under an Agent; and, where facts are attributed, its HAS_CHUNK edges. Not its
  vectors: a vector is a function of the text and the model, so while the text reads back the same
  the vector held is still right (one written where there was none is `pickup`'s).
- TURNED_AWAY, an Action under the user's holders that the rules turned away: does it pass now (a
  second parent removed, an action_id or the Action label set later)?
- HOLDER, the User or one of its Sessions or Agents: its label and session_id. Its edges are the
  structure's, compared on every call; the fast shape compares only signatures, which late-committing
  edges that exactly cancel removals leave unchanged, so there a due holder's edge ids are read too.
- WATCHED, a Session or Agent the rules turned away: does it pass now (a label set later)?
- CHUNK, a chunk of an owned Action: does each mention recorded still (or now) cite the user, and does
  a new one make an entity the user's?
- FACTS, the User or an entity of the user's: the entity's text and labels, and its non-structural
  edges: one sourced now from the user's action ids that was not (a fact extracted later, a source_id
  edited onto one), a fact no longer sourced, gone, or with its text, time, role or confidence edited.
- END, a fact's end that is neither the User nor an entity of the user's: its text and labels.
- NOTE, a Memory under the User: whether it is the user's, and its content, id, path and time.
- ONTOLOGY, what the User adopted, read as the relation descriptions the snapshot holds.
Edges added to or removed from the holders are seen on the next call by the structure; a refresh
(`cache`) adds the units of what it read. What a unit compares with comes from the build's `WalkLog`
(`Baseline`), the entry's maps and its snapshot. A changed unit of the turn side makes the cache build
the user again, taking over the turns it holds but the changed ones (`turn_reuse`); a changed unit of
the fact side, read facts, entities, notes and ontologies again (turns kept).
"""

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import chain, repeat
from typing import Any, NamedTuple

import numpy as np

from . import schema as s
from . import walklog as w
from .distinct import positions
from .ownership import (
    OwnedFact,
    OwnedGraph,
    action_skip,
    agent_skip,
    cites,
    fact_ends,
    has_label,
    id_text,
    labels_of,
    memory_skip,
    mention_skip,
    session_skip,
    text_id,
)
from .reading import USER_END, entity_text, fact_fields, fact_of, fields_of, note_of, relation_descriptions
from .rolling import UNLEARNED, Units
from .snapshot import UserSnapshot
from .structure import Structure
from .walklog import WalkLog


class Kind(IntEnum):
    """What a check unit is (the module docstring says what each reads)."""

    ACTION = 0
    TURNED_AWAY = 1
    HOLDER = 2
    WATCHED = 3
    CHUNK = 4
    FACTS = 5
    END = 6
    NOTE = 7
    ONTOLOGY = 8


#: A change to one of these needs a build; to one of the others, the fact part read again.
TURN_SIDE = frozenset({Kind.ACTION, Kind.TURNED_AWAY, Kind.HOLDER, Kind.WATCHED})
FACT_SIDE = frozenset(Kind) - TURN_SIDE

#: An ACTION unit's count when its in-edge ids are compared (not all were its holders' edges).
BY_IDS = -1
#: A WATCHED unit's ref: it was reached as a Session, or as an Agent.
AS_SESSION, AS_AGENT = 0, 1
#: A NOTE unit's ref when the note is not the user's, or is but cannot be read (else: its index).
NOT_THEIRS, UNREADABLE = -1, -2

# Weights: procedure-API calls of one reading (a lookup, a label, each property, each edge and id).
ACTION_READS, CHUNK_EDGE_READS, TURNED_AWAY_READS, HOLDER_READS = 8, 3, 10, 3
FACT_EDGE_READS, END_READS, NOTE_READS = 6, 3, 12


def raw_digest(timestamp: Any, speaker: Any, action_type: Any) -> int:
    """A digest of an Action's time, speaker and type as stored, never `UNLEARNED`: equal values of
    one type give one digest within this process (Python's keyed hash, so an edit that keeps the digest
    is a 64-bit collision nobody can aim at). Values hashed by identity (a NaN) or not at all (a list, a
    map) are hashed by their repr, so reading them back unchanged gives the same digest."""
    values = (type(timestamp), timestamp, type(speaker), speaker, type(action_type), action_type)
    if float in values:
        digest = hash(repr(values))
    else:
        try:
            digest = hash(values)
        except TypeError:
            digest = hash(repr(values))
    return digest if digest != UNLEARNED else UNLEARNED + 1


@dataclass(frozen=True)
class Baseline:
    """What units compare with besides the entry's snapshot, holders and owned Actions."""

    parents: Mapping[int, frozenset[int]]  # Actions counted BY_IDS -> their in-edge ids
    stored_as_integer: frozenset[int]  # owned Actions whose action_id is an integer
    chunks: Mapping[int, tuple[tuple[int, int], ...]]  # owned Action -> (HAS_CHUNK edge id, chunk id)
    agent_sessions: Mapping[int, str | None]  # an Action under an Agent -> its own session_id as text
    facts: "FactBaseline"


@dataclass(frozen=True)
class FactBaseline:
    """The fact side: what the build read from chunks, the User and the entities."""

    attributing: frozenset[str]  # the action ids that attribute (`OwnedGraph.attributing_ids`)
    entities: frozenset[int]  # the user's entities
    mentions: Mapping[int, Mapping[int, int]]  # chunk -> {in-edge id: `walklog` outcome}
    holder_edges: Mapping[int, Mapping[int, int]]  # User or entity -> {edge id: `walklog` outcome}
    facts: Mapping[int, int]  # fact edge id -> its index in the snapshot's facts
    texts: Mapping[int, str | None]  # entity or fact end -> its text as held
    adopted: tuple[int, ...]  # what the User adopted


def fact_baseline(owned: OwnedGraph, snapshot: UserSnapshot) -> tuple[FactBaseline, Units]:
    """The fact side of a build or of facts read again, and its units (read now)."""
    log, user_id = owned.log, snapshot.user_vertex_id
    entities = frozenset(log.holder_edges) - {user_id}
    texts: dict[int, str | None] = dict.fromkeys(entities)
    texts.update((e.vertex_id, e.text) for e in snapshot.entities)
    ends: set[int] = set()
    for fact in snapshot.facts:
        for vertex_id, text in ((fact.head_vertex_id, fact.head), (fact.tail_vertex_id, fact.tail)):
            if vertex_id != user_id and vertex_id not in entities:
                ends.add(vertex_id)
                texts[vertex_id] = text
    mentions = log.mentions  # a chunk per Action or more: its units made as columns
    chunk_ids = np.fromiter(mentions, np.int64, len(mentions))
    reads = np.fromiter(map(len, mentions.values()), np.int64, len(mentions))
    chunks = Units(np.full(len(mentions), Kind.CHUNK, dtype=np.uint8), chunk_ids, np.zeros_like(chunk_ids),
                   np.zeros_like(chunk_ids), 1 + CHUNK_EDGE_READS * reads)
    rows = [(Kind.FACTS, h, 0, 0, HOLDER_READS + 2 * log.degrees[h] + FACT_EDGE_READS * len(read))
            for h, read in log.holder_edges.items()]
    rows += [(Kind.END, e, 0, 0, END_READS) for e in ends]
    notes = {note.vertex_id: i for i, note in enumerate(snapshot.notes)}
    rows += [(Kind.NOTE, n, notes.get(n, UNREADABLE) if theirs else NOT_THEIRS, 0, NOTE_READS)
             for n, theirs in log.notes.items()]
    if log.adopted:
        rows.append((Kind.ONTOLOGY, user_id, 0, 0, 2 + 3 * len(log.adopted)))
    baseline = FactBaseline(
        owned.attributing_ids,
        entities,
        log.mentions,
        log.holder_edges,
        {fact.edge_id: i for i, fact in enumerate(snapshot.facts)},
        texts,
        tuple(log.adopted),
    )
    return baseline, chunks + Units.of(rows)


def action_units(
    log: WalkLog, actions: Sequence[int], turn_vertex_ids: Sequence[int], offset: int = 0
) -> tuple[dict[int, frozenset[int]], dict[int, str | None], Units]:
    """For the Actions a walk admitted (`actions`): the parents compared by id, the own session_id of
    those under an Agent, and their ACTION units, then the TURNED_AWAY units of what it turned away.
    `turn_vertex_ids[i]` is the Action of turn `offset + i` (an Action without a turn: ref -1). Built as
    columns: a build of 100k Actions makes them in one pass, not a tuple per Action."""
    ids = list(actions)
    id_column = np.asarray(ids, dtype=np.int64)
    parents_of, chunks_of, agent_edges = log.parents, log.chunks, log.agent_edges
    counts = np.fromiter(map(len, map(parents_of.__getitem__, ids)), np.int64, len(ids))
    weights = ACTION_READS + counts
    if chunks_of:
        at = positions(id_column, np.fromiter(chunks_of, np.int64, len(chunks_of)))
        mine = at >= 0
        weights[at[mine]] += CHUNK_EDGE_READS * np.fromiter(map(len, chunks_of.values()), np.int64,
                                                            len(chunks_of))[mine]
    parents: dict[int, frozenset[int]] = {}
    for position in np.flatnonzero(np.isin(id_column, list(log.other_parents))).tolist():
        parents[ids[position]], counts[position] = frozenset(parents_of[ids[position]]), BY_IDS
    sessions: dict[int, str | None] = {}
    if agent_edges:  # an Action under an Agent also reads its own session_id
        for position, vertex_id in enumerate(ids):
            edge_id = next((e for e in parents_of[vertex_id] if e in agent_edges), None)
            if edge_id is not None:
                sessions[vertex_id] = agent_edges[edge_id]
                weights[position] += 1
    refs = positions(np.asarray(turn_vertex_ids, dtype=np.int64), id_column)
    refs[refs >= 0] += offset
    actions_read = Units(np.full(len(ids), Kind.ACTION, dtype=np.uint8), id_column, refs, counts, weights)
    away = Units.of([(Kind.TURNED_AWAY, v, 0, 0, TURNED_AWAY_READS) for v in dict.fromkeys(log.turned_away)])
    return parents, sessions, actions_read + away


def holder_units(
    structure: Structure, holders: Iterable[int], watched_agents: Collection[int]
) -> list[tuple[int, int, int, int, int]]:
    """HOLDER rows for `holders` (WATCHED ones for those the structure watches), weighed by their edges
    (what the fast shape reads of them)."""
    rows = []
    for holder in holders:
        degree = len(structure.out_edges[holder]) + len(structure.in_edges[holder])
        kind = Kind.WATCHED if holder in structure.watched else Kind.HOLDER
        ref = AS_AGENT if holder in watched_agents else AS_SESSION
        rows.append((kind, holder, ref, 0, HOLDER_READS + 2 * degree))
    return rows


# -- reading units again ----------------------------------------------------------------------------
TURNS, FACTS = 1, 2  # what a reading found changed (bits)


class FactRead(NamedTuple):
    """A held fact's live edge as a FACTS unit read it: from which holder and side, and what it read."""

    edge: Any
    holder_id: int
    holder_is_head: bool
    type: str
    source_id: str
    fields: tuple  # `reading.fact_fields`


@dataclass
class ReadBack:
    """What a call's rolling check read in the calling transaction, so that call's verification need not
    read it again: Actions by vertex id (the vertex, its stored action_id, its turn fields or None), the
    held facts' live edges by edge id (`FactRead`), and the texts of the entities and fact ends a FACTS or
    END unit read without a structural label (the verification compares these with its own items: what
    was read, not the unit's verdict, so a rebuild in the same call is verified as rightly)."""

    actions: dict[int, tuple[Any, Any, tuple | None]] = field(default_factory=dict)
    facts: dict[int, FactRead] = field(default_factory=dict)
    ends: dict[int, str | None] = field(default_factory=dict)

    def end_text(self, vertex_id: int, user_id: int) -> str | None:
        """What a fact end reads as ("user" for the User); KeyError when no unit read it in this call."""
        return USER_END if vertex_id == user_id else self.ends[vertex_id]


@dataclass
class Findings:
    """What one call's readings found: which side changed, and the Actions that changed (their turns
    are read again, not taken over) or whose chunks did."""

    changed: int = 0  # TURNS | FACTS bits
    actions: set[int] = field(default_factory=set)
    chunked: set[int] = field(default_factory=set)
    learned: dict[int, int] = field(default_factory=dict)  # position in the units read -> a new digest


class Recheck:
    """Reads one entry's units again in the calling transaction (`lookup`: its vertex by id)."""

    def __init__(
        self,
        snapshot: UserSnapshot,
        baseline: Baseline,
        holders: Mapping[int, str | None],
        sessions: Collection[int],
        owned_actions: Mapping[int, tuple[str, str | None]],
        attribute: bool,
        lookup: Callable[[int], Any],
        read_back: ReadBack | None = None,
    ) -> None:
        """`read_back` (when given) gets each Action read whose label is Action (`ReadBack`)."""
        self.snapshot, self.baseline, self.holders, self.sessions = snapshot, baseline, holders, sessions
        self.owned_actions, self.attribute, self.lookup = owned_actions, attribute, lookup
        self.read_back = read_back
        self.user_id = snapshot.user_vertex_id
        self._unread: Counter = Counter()  # malformed counts of the re-reads: a build counts those

    def run(self, units: Units, abort: Callable[[], None]) -> Findings:
        """Read every unit of `units`; what changed."""
        found = Findings()
        # Each kind's reader, made per run: kept on `self`, its bound methods would make a reference
        # cycle that only the cyclic collector frees, holding the entry's snapshot and the call's mgp
        # objects past the call (a replaced snapshot of a 100k-message user is hundreds of MB).
        read = {
            Kind.TURNED_AWAY: self.turned_away,
            Kind.HOLDER: self.holder,
            Kind.WATCHED: self.watched,
            Kind.CHUNK: self.chunk,
            Kind.FACTS: self.facts,
            Kind.END: self.end,
            Kind.NOTE: self.note,
            Kind.ONTOLOGY: self.ontology,
        }
        columns = (units.kinds.tolist(), units.ids.tolist(), units.refs.tolist(), units.counts.tolist(),
                   units.digests.tolist())
        for number, (kind, vertex_id, ref, count, digest) in enumerate(zip(*columns, strict=True)):
            if number % 512 == 0:
                abort()
            if kind == Kind.ACTION:
                changed, seen = self.action(vertex_id, ref, count, digest)
                if not changed and seen != digest:
                    found.learned[number] = seen
            else:
                changed = read[kind](vertex_id, ref, count)
            if changed:
                found.changed |= changed
                if kind == Kind.ACTION:
                    (found.actions if changed & TURNS else found.chunked).add(vertex_id)
        return found

    # The turn side.
    def action(self, vertex_id: int, ref: int, count: int, digest: int) -> tuple[int, int]:
        """What changed, and the digest of the Action's time, speaker and type as read (`raw_digest`).
        While those read back as they were when the turn's fields last parsed to the ones held (the
        unit's `digest`) and the text is the one held, the fields held are what parsing would give:
        the time is not parsed again (~8% of reading an Action, lab)."""
        vertex = self.lookup(vertex_id)
        if vertex is None or not has_label(vertex, s.ACTION):
            return TURNS, digest
        if count == BY_IDS:
            if frozenset(edge.id for edge in vertex.in_edges) != self.baseline.parents.get(vertex_id):
                return TURNS, digest
        else:
            parents = 0
            for _ in vertex.in_edges:  # a loop, not sum(<generator>): this runs once per Action
                parents += 1
            if parents != count:
                return TURNS, digest
        props = vertex.properties
        stored = props.get(s.ACTION_ID)
        timestamp, speaker = props.get(s.TIMESTAMP), props.get(s.SPEAKER)
        action_type, text = props.get(s.ACTION_TYPE), props.get(s.TEXT)
        seen = raw_digest(timestamp, speaker, action_type)
        turns = self.snapshot.turns
        if ref >= 0 and seen == digest and type(text) is str and text == turns.text_at(ref):
            fields = held = turns.read_fields(ref)
        else:
            fields = fields_of(timestamp, speaker, action_type, text, self._unread)
            held = None if ref < 0 else turns.read_fields(ref)
        if self.read_back is not None:
            self.read_back.actions[vertex_id] = (vertex, stored, fields)
        if id_text(stored) != self.owned_actions[vertex_id][0] or (
            (type(stored) is not str) != (vertex_id in self.baseline.stored_as_integer)
        ):
            return TURNS, digest
        if fields != held:
            return TURNS, digest
        sessions = self.baseline.agent_sessions
        if vertex_id in sessions and id_text(props.get(s.SESSION_ID)) != sessions[vertex_id]:
            return TURNS, digest
        if self.attribute:
            edges = {edge.id for edge in vertex.out_edges if edge.type.name == s.HAS_CHUNK}
            if edges != {edge_id for edge_id, _ in self.baseline.chunks.get(vertex_id, ())}:
                return FACTS, seen
        return 0, seen

    def turned_away(self, vertex_id: int, ref: int, count: int) -> int:
        vertex = self.lookup(vertex_id)  # gone: its holder's edge went too, which the structure sees
        return TURNS if vertex is not None and action_skip(vertex, self.holders) is None else 0

    def holder(self, vertex_id: int, ref: int, count: int) -> int:
        vertex = self.lookup(vertex_id)
        if vertex is None:
            return TURNS
        if vertex_id == self.user_id:
            return 0
        if vertex_id not in self.sessions:
            return 0 if has_label(vertex, s.AGENT) else TURNS
        same = has_label(vertex, s.SESSION) and id_text(vertex.properties.get(s.SESSION_ID)) == (
            self.holders[vertex_id]
        )
        return 0 if same else TURNS

    def watched(self, vertex_id: int, ref: int, count: int) -> int:
        vertex = self.lookup(vertex_id)
        if vertex is None:
            return 0  # its edge from the user's went too: the structure sees it
        if ref == AS_AGENT:
            return TURNS if agent_skip(vertex, self.sessions) is None else 0
        return TURNS if session_skip(vertex, self.user_id) is None else 0

    # The fact side.
    def chunk(self, vertex_id: int, ref: int, count: int) -> int:
        side = self.baseline.facts
        vertex = self.lookup(vertex_id)
        if vertex is None:
            return FACTS
        read, present = side.mentions.get(vertex_id, {}), set()
        for edge in vertex.in_edges:
            edge_id = edge.id
            present.add(edge_id)
            outcome = read.get(edge_id)
            if outcome in (w.OTHER_EDGE, w.EARLIER):
                continue
            if outcome is None or outcome == w.STRUCTURAL:  # new, or read in full
                if (outcome is not None or edge.type.name == s.MENTIONED_IN) and self._attributes(edge):
                    return FACTS
                continue
            if cites(edge.properties.get(s.SOURCES), side.attributing) != (outcome == w.ATTRIBUTES):
                if outcome == w.ATTRIBUTES or self._attributes(edge):
                    return FACTS
        if any(o == w.ATTRIBUTES and e not in present for e, o in read.items()):
            return FACTS
        return 0

    def _attributes(self, edge: Any) -> bool:
        """Whether a mention now makes an entity the user's that was not."""
        entity = edge.from_vertex
        side = self.baseline.facts
        return entity.id not in side.entities and mention_skip(edge, side.attributing, entity) is None

    def facts(self, vertex_id: int, ref: int, count: int) -> int:
        side = self.baseline.facts
        vertex = self.lookup(vertex_id)
        if vertex is None:
            return FACTS
        if vertex_id != self.user_id and self._end_changed(vertex, vertex_id):
            return FACTS
        read, present = side.holder_edges.get(vertex_id, {}), set()
        edges = chain(zip(vertex.out_edges, repeat(True)), zip(vertex.in_edges, repeat(False)))
        for edge, holder_is_head in edges:
            relation = edge.type.name
            if relation in s.STRUCTURAL_TYPES:
                continue
            edge_id = edge.id
            present.add(edge_id)
            outcome = read.get(edge_id)
            if outcome == w.ELSEWHERE:
                continue
            source = text_id(edge.properties.get(s.SOURCE_ID))
            sourced = source is not None and source in side.attributing
            if outcome is None or outcome == w.NOT_SOURCED:
                if sourced:
                    return FACTS
            elif not sourced:
                return FACTS
            elif outcome == w.FACT and edge_id in side.facts:
                fields = fact_fields(edge.properties, self._unread)
                held = FactRead(edge, vertex_id, holder_is_head, relation, source, fields)
                if self._held_fact_changed(edge_id, held):
                    return FACTS
            elif self._fact_changed(edge, source, vertex, holder_is_head, outcome):
                return FACTS
        if any(o in (w.FACT, w.FOREIGN_END) and e not in present for e, o in read.items()):
            return FACTS
        return 0

    def _held_fact_changed(self, edge_id: int, read: FactRead) -> bool:
        """Whether a fact held reads otherwise: its own fields (its ends' texts are their units')."""
        if self.read_back is not None:
            self.read_back.facts[edge_id] = read
        fact = self.snapshot.facts[self.baseline.facts.facts[edge_id]]
        return read.source_id != fact.source_id or read.fields != (
            fact.text, fact.valid_at, fact.role, fact.confidence
        )

    def _fact_changed(self, edge: Any, source: str, holder: Any, holder_is_head: bool, outcome: int) -> bool:
        """Whether a sourced edge read from `holder` that is no fact held differs from what the build made
        of it (a fact, a foreign end, an unreadable one)."""
        side = self.baseline.facts
        ends = fact_ends(edge, self.user_id, holder, holder_is_head, side.entities)
        if outcome == w.FOREIGN_END:
            return ends is not None
        return ends is None or fact_of(OwnedFact(edge, source, *ends), self._unread) is not None  # unreadable

    def end(self, vertex_id: int, ref: int, count: int) -> int:
        vertex = self.lookup(vertex_id)
        return FACTS if vertex is None or self._end_changed(vertex, vertex_id) else 0

    def _end_changed(self, vertex: Any, vertex_id: int) -> bool:
        """Whether an entity or fact end now has a structural label or another text than held."""
        if labels_of(vertex) & s.STRUCTURAL_LABELS:
            return True
        text = entity_text(vertex.properties)
        if self.read_back is not None:
            self.read_back.ends[vertex_id] = text
        return text != self.baseline.facts.texts.get(vertex_id)

    def note(self, vertex_id: int, ref: int, count: int) -> int:
        vertex = self.lookup(vertex_id)
        if vertex is None:
            return FACTS
        if memory_skip(vertex, self.user_id) is not None:
            return 0 if ref == NOT_THEIRS else FACTS
        if ref == NOT_THEIRS:
            return FACTS
        held = None if ref == UNREADABLE else self.snapshot.notes[ref]
        return 0 if note_of(vertex, self._unread) == held else FACTS

    def ontology(self, vertex_id: int, ref: int, count: int) -> int:
        adopted = [v for v in map(self.lookup, self.baseline.facts.adopted) if v is not None]
        ontologies = [v for v in adopted if has_label(v, s.ONTOLOGY)]
        same = relation_descriptions(ontologies, self._unread) == dict(self.snapshot.relation_descriptions)
        return 0 if same else FACTS

