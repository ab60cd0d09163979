"""Verify cached rows against the live graph before they are returned: never stale in the dangerous way.

Every item a lane hit (turn, note, entity, fact) is fetched again by id in the calling transaction,
must still belong to this user by `ownership`'s rules (checked upward, `ownership.Upward`), and must
read back exactly as cached through the same readers a build uses (`reading.turn_fields`,
`fact_fields`, `entity_text`, `note_of`), so an edited text, time, speaker or path fails. Vectors are
not compared: they only rank. The cost is O(items returned), never O(user's data). A failed item means
the snapshot is stale: the pipeline builds the user again and reruns the lanes. An Action the rolling
check read in this same call (`recheck.ReadBack`: its vertex, stored action_id and turn fields, read in
the calling transaction) is not read again: only its parents are walked up; a fact whose edge a FACTS
unit read, and whose ends a FACTS or END unit read, is compared with what they read (`ReadBack`): no
edge, end or field again."""

from collections import Counter
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import replace
from typing import Any

from . import schema as s
from .kinds import ENTITY, FACT, NOTE, TURN
from .lanes import LaneResults
from .ownership import Attribution, Upward, attributes, has_label, id_text, labels_of, mention_skip, text_id
from .reading import USER_END, Fact, entity_text, fact_fields, note_of, turn_fields
from .recheck import FactRead, ReadBack
from .snapshot import UserSnapshot

#: Looks up a vertex of the current transaction by id; None when it does not exist (any more).
VertexLookup = Callable[[int], Any]


class Verifier:
    """Checks items of one snapshot against the live graph of one call; shared checks are memoised."""

    def __init__(
        self,
        snapshot: UserSnapshot,
        actions: Mapping[str, int],
        numeric: Container[str],
        attribute: Attribution,
        user: Any,
        lookup: VertexLookup,
        read_back: ReadBack | None = None,
    ) -> None:
        """`actions`: the user's action_id -> Action vertex id (what facts cite); `numeric`: action ids
        some owned Action stores as an integer; `attribute`: the rule the entry was built under
        (`ownership.attributes` decides which ids attribute); `read_back`: Actions this call read."""
        self.snapshot, self.actions, self.user, self.lookup = snapshot, actions, user, lookup
        self.read_back = ReadBack() if read_back is None else read_back
        self.numeric, self.attribute = numeric, attribute
        self.upward = Upward(user)
        self.user_id = user.id
        self._sources: dict[str, bool] = {}
        self._edges: dict[tuple[int, str], dict[int, Any]] = {}
        self._vertices: dict[int, Any] = {}
        self._ends: dict[int, str | None] = {}

    def failing(
        self, items: Iterable[tuple[str, int]], abort: Callable[[], None] = lambda: None
    ) -> set[tuple[str, int]]:
        """The (kind, index) items that no longer match the live graph (`abort` checked as it goes: a
        raised ceiling can show thousands of rows)."""
        failed = set()
        for count, (kind, index) in enumerate(set(items)):
            if count % 256 == 0:
                abort()
            if not self.holds(kind, index):
                failed.add((kind, index))
        return failed

    def holds(self, kind: str, index: int) -> bool:
        """Whether cached item `index` of `kind` is still exactly what the live graph says, and the user's."""
        unread: Counter = Counter()  # malformed counts of the re-read: not needed here
        if kind == TURN:
            turn = self.snapshot.turns[index]
            read = self.read_back.actions.get(turn.vertex_id)
            if read is not None:  # label, action_id and fields read in this transaction already
                vertex, stored, fields = read
                if id_text(stored) != turn.action_id or fields != (
                    turn.timestamp, turn.speaker, turn.action_type, turn.text
                ):
                    return False
                sessions = self.upward.stands_for(vertex)
                return sessions is not None and turn.session_id in sessions
            vertex = self._vertex(turn.vertex_id)
            sessions = None if vertex is None else self.upward.action(vertex, turn.action_id)
            if sessions is None or turn.session_id not in sessions:
                return False
            # what a build reads of it (its passages follow from the text)
            return turn_fields(vertex.properties, unread) == (
                turn.timestamp, turn.speaker, turn.action_type, turn.text
            )
        if kind == NOTE:
            note = self.snapshot.notes[index]
            vertex = self._vertex(note.vertex_id)
            return vertex is not None and self.upward.note(vertex) and note_of(vertex, unread) == note
        if kind == FACT:
            fact = self.snapshot.facts[index]
            read = self.read_back.facts.get(fact.edge_id)
            if read is None:
                return self._live_fact(fact)
            try:
                ends = (self.read_back.end_text(fact.head_vertex_id, self.user_id),
                        self.read_back.end_text(fact.tail_vertex_id, self.user_id))
            except KeyError:  # an end no unit read in this call: read as a build does
                return self._fact_reads_as(fact, read.edge)
            return self._fact_read_back(fact, read, ends)
        if kind == ENTITY:
            entity = self.snapshot.entities[index]
            return self._entity(entity.vertex_id, entity.text)
        raise ValueError(f"unknown item kind {kind!r}")

    def _live_fact(self, fact: Fact) -> bool:
        """Whether `fact` still reads as held, its edge found among its holder's edges: the tail's
        in-edges unless the tail is the User (then the head's out-edges). An entity's mention edges all
        leave it, so its in-edges are only facts (100k synthetic user: 491 edges handed out per warm
        call against 901 through the head)."""
        holder_is_head = fact.tail_vertex_id == self.user_id
        holder_id = fact.head_vertex_id if holder_is_head else fact.tail_vertex_id
        edge = self._edges_of(holder_id, "out_edges" if holder_is_head else "in_edges").get(fact.edge_id)
        return edge is not None and self._fact_reads_as(fact, edge)

    def _fact_reads_as(self, fact: Fact, edge: Any) -> bool:
        """Whether a live fact edge, found by id among its holder's edges, reads as `fact` through the
        build's readers (`fact_fields`, `entity_text`, the structural-label rule of `fact_ends`). Neither
        its ends nor its type are read: Memgraph changes neither of an edge and reuses no edge id. Each
        end is read once per call (the facts shown often share an entity)."""
        props = edge.properties
        if text_id(props.get(s.SOURCE_ID)) != fact.source_id or fact_fields(props, Counter()) != (
            fact.text, fact.valid_at, fact.role, fact.confidence
        ):
            return False
        ends = (self._end_text(fact.head_vertex_id), self._end_text(fact.tail_vertex_id))
        return ends == (fact.head, fact.tail) and self._source(fact.source_id)

    def _end_text(self, vertex_id: int) -> str | None:
        """A fact end's text as `fact_of` reads it (`USER_END` for the User); None when it is gone,
        carries a structural label (`fact_ends`'s rule) or has no text."""
        if vertex_id not in self._ends:
            if vertex_id == self.user_id:
                self._ends[vertex_id] = USER_END
            else:
                vertex = self._vertex(vertex_id)
                gone = vertex is None or labels_of(vertex) & s.STRUCTURAL_LABELS
                self._ends[vertex_id] = None if gone else entity_text(vertex.properties)
        return self._ends[vertex_id]

    def _fact_read_back(self, fact: Fact, read: FactRead, ends: tuple[str | None, str | None]) -> bool:
        """`_fact_reads_as` from what this call's units read: the edge, found among its holder's edges on
        the side the fact has it (an edge's ends never change: Memgraph re-points none and reuses no
        id), its type, source and fields, and its ends' texts and labels (a FACTS or END unit each)."""
        holder = fact.head_vertex_id if read.holder_is_head else fact.tail_vertex_id
        fields = (fact.text, fact.valid_at, fact.role, fact.confidence)
        same = (read.holder_id, read.type, read.source_id, read.fields, ends) == (
            holder, fact.type, fact.source_id, fields, (fact.head, fact.tail)
        )
        return same and self._source(fact.source_id)

    def _source(self, action_id: str) -> bool:
        """Whether the user's Action holding `action_id` is still theirs and holds it as text (facts and
        mentions cite it; see `ownership` for why only text ids attribute)."""
        if action_id not in self._sources:
            attributing = attributes(action_id, self.numeric, self.attribute)
            vertex_id = self.actions.get(action_id) if attributing else None
            read = None if vertex_id is None else self.read_back.actions.get(vertex_id)
            if read is not None:  # label and action_id read in this transaction already
                vertex, stored, _ = read
                self._sources[action_id] = text_id(stored) == action_id and (
                    self.upward.stands_for(vertex) is not None
                )
                return self._sources[action_id]
            vertex = None if vertex_id is None else self._vertex(vertex_id)
            self._sources[action_id] = (  # `Upward.action` with the action_id read once, as text
                vertex is not None
                and text_id(vertex.properties.get(s.ACTION_ID)) == action_id
                and has_label(vertex, s.ACTION)
                and self.upward.stands_for(vertex) is not None
            )
        return self._sources[action_id]

    def _vertex(self, vertex_id: int) -> Any:
        """The vertex by id, handed out once per call (a shown message is often a shown fact's source)."""
        if vertex_id not in self._vertices:
            self._vertices[vertex_id] = self.lookup(vertex_id)
        return self._vertices[vertex_id]

    def _edges_of(self, holder_id: int, side: str) -> dict[int, Any]:
        """A vertex's edges on one side by id, read once per call: the facts shown often share an
        entity, and the API has no edge lookup by id (one call reads one transaction's graph)."""
        key = (holder_id, side)
        if key not in self._edges:
            holder = self._vertex(holder_id)
            self._edges[key] = {} if holder is None else {edge.id: edge for edge in getattr(holder, side)}
        return self._edges[key]

    def _entity(self, vertex_id: int, text: str) -> bool:
        """Still an entity with this text, mentioned with one of the user's (still owned) action ids."""
        vertex = self._vertex(vertex_id)
        if vertex is None or vertex.properties.get(s.TEXT) != text:
            return False
        for edge in vertex.out_edges:
            if edge.type.name != s.MENTIONED_IN:
                continue
            if mention_skip(edge, self.actions) is None:
                sources = edge.properties.get(s.SOURCES)
                if any(self._source(a) for a in map(text_id, sources) if a in self.actions):
                    return True
        return False


def hit_items(
    results: LaneResults, shown_only: bool = False, explained: bool = False
) -> set[tuple[str, int]]:
    """Every (kind, index) some lane found, or (`shown_only`) those `render` shows, and (`explained`)
    the facts an `explain` names as what found a shown turn: a deleted fact must not be named either,
    but without `explain` nothing names them, so they cost no reads."""
    hits = results.shown() if shown_only else (hit for hits in results.hits.values() for hit in hits)
    items = set()
    for hit in hits:
        items.add((hit.kind, hit.index))
        if hit.fact is not None:
            items.add((FACT, hit.fact))
        if explained:
            items.update((FACT, by.fact) for by in hit.found_by if by.fact is not None)
    return items


def without_items(results: LaneResults, items: set[tuple[str, int]]) -> LaneResults:
    """`results` minus the hits on `items` (the last line of defence when a rebuild did not help)."""
    hits = {
        lane: tuple(h for h in lane_hits if (h.kind, h.index) not in items)
        for lane, lane_hits in results.hits.items()
    }
    return replace(results, hits=hits)
