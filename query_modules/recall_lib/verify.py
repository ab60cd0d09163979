"""Verify cached rows against the live graph before they are returned: never stale in the dangerous way.

Every item a lane hit (turn, note, entity, fact) is fetched again by id in the calling transaction
and must still exist, carry its label, belong to this user by the rules of `ownership` (checked
upward from the item: an Action's every HAS_ACTION parent is one of the user's Sessions, or an
Agent whose every HAS_AGENT parent is; a Session's and a Memory's only parent is this User; a fact's
`source_id` names one of the user's Actions, which must pass the same check; an entity is mentioned
with one of the user's action ids), and read back exactly as cached: the item is re-read through
the same per-item readers a full build uses (`memory.turn_of`, `fact_of`, `note_of`) and compared
field by field, so an edited text, time, speaker or path fails (vectors are not compared: they only
rank, and are re-read at the next full build). The cost is O(items returned), never O(user's data).

A failed item means the snapshot is stale: the cache rebuilds and the lanes run again.
"""

from collections import Counter
from collections.abc import Iterable
from typing import Any

from .lanes import LaneResults
from .memory import UserMemory, fact_of, note_of, turn_of
from .ownership import (
    STRUCTURAL_LABELS,
    STRUCTURAL_TYPES,
    GraphIndex,
    OwnedAction,
    OwnedFact,
    id_text,
    labels_of,
)
from .snapshot import Snapshot
from .structure import VertexLookup


def _parents(vertex: Any, rel_type: str) -> list[Any]:
    return [edge.from_vertex for edge in vertex.in_edges if edge.type.name == rel_type]


class Verifier:
    """Checks items of one snapshot against the live graph of one call; shared checks are memoised."""

    def __init__(self, snapshot: Snapshot, user: Any, lookup: VertexLookup, index: GraphIndex) -> None:
        self.snapshot = snapshot
        self.memory: UserMemory = snapshot.memory
        self.user = user
        self.lookup = lookup
        self.index = index
        self._sessions: dict[int, str | None | bool] = {}  # Session vertex id -> its session id, or False
        self._agents: dict[int, list[str | None] | None] = {}  # Agent vertex id -> its sessions' ids, or None
        self._actions: dict[int, list[str | None] | None] = {}  # Action vertex id -> session ids, or None
        self._edges: dict[tuple[int, str], dict[int, Any]] = {}  # (vertex id, direction) -> edges by id

    # -- ownership, upward ---------------------------------------------------------------------
    def _session(self, vertex: Any) -> str | None | bool:
        """The session_id of one of the user's Sessions (None when it has none); False when not the user's."""
        if vertex.id not in self._sessions:
            parents = _parents(vertex, "HAD_SESSION")
            mine = (
                "Session" in labels_of(vertex)
                and bool(parents)
                and all(p.id == self.user.id for p in parents)
            )
            self._sessions[vertex.id] = id_text(vertex.properties.get("session_id")) if mine else False
        return self._sessions[vertex.id]

    def _agent(self, vertex: Any) -> list[str | None] | None:
        if vertex.id not in self._agents:
            sessions = _parents(vertex, "HAS_AGENT")
            ids = [self._session(s) for s in sessions]
            mine = "Agent" in labels_of(vertex) and bool(sessions) and all(i is not False for i in ids)
            self._agents[vertex.id] = ids if mine else None
        return self._agents[vertex.id]

    def action(self, vertex_id: int, action_id: str) -> list[str | None] | None:
        """The session ids the user's Action `vertex_id` stands for; None unless it is still theirs."""
        if vertex_id in self._actions:
            return self._actions[vertex_id]
        self._actions[vertex_id] = None
        vertex = self.lookup(vertex_id)
        if vertex is None or "Action" not in labels_of(vertex):
            return None
        if id_text(vertex.properties.get("action_id")) != action_id:
            return None
        # A holder of the same action_id outside what this user owns makes it no one's (as the
        # cached index knows them; see cache.py for what the index can miss).
        owned = self.snapshot.owned_actions
        if any(h != vertex_id and h not in owned for h in self.index.action_holders.get(action_id, ())):
            return None
        sessions: list[str | None] = []
        parents = _parents(vertex, "HAS_ACTION")
        if not parents:
            return None
        for parent in parents:
            names = labels_of(parent)
            if "Session" in names:
                sid = self._session(parent)
                if sid is False:
                    return None
                sessions.append(sid)
            elif "Agent" in names:
                ids = self._agent(parent)
                if ids is None:
                    return None
                sessions.extend([id_text(vertex.properties.get("session_id")), *ids])
            else:
                return None
        self._actions[vertex_id] = sessions
        return sessions

    def _source(self, action_id: str) -> Any:
        """The user's live Action holding `action_id`, or None."""
        vertex_id = self.snapshot.actions.get(action_id)
        if vertex_id is None or self.action(vertex_id, action_id) is None:
            return None
        return self.lookup(vertex_id)

    # -- items -----------------------------------------------------------------------------------
    def failing(self, items: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        """The (kind, index) items that no longer match the live graph."""
        return {(kind, index) for kind, index in set(items) if not self.holds(kind, index)}

    def holds(self, kind: str, index: int) -> bool:
        """Whether cached item `index` of `kind` is still exactly what the live graph says, and the user's."""
        unread: Counter = Counter()  # malformed counts of the re-read: not needed here
        if kind == "turn":
            turn = self.memory.turns[index]
            sessions = self.action(turn.vertex_id, turn.action_id)
            if sessions is None or turn.session_id not in sessions:
                return False
            live = OwnedAction(self.lookup(turn.vertex_id), turn.action_id, turn.session_id, turn.vertex_id)
            return turn_of(live, unread) == turn
        if kind == "memory":
            note = self.memory.memories[index]
            vertex = self._note_vertex(note.vertex_id)
            return vertex is not None and note_of(vertex, unread) == note
        if kind == "fact":
            fact = self.memory.facts[index]
            edge = self._fact_edge(fact.edge_id, fact.head_vertex_id, fact.tail_vertex_id)
            if edge is None or self._source(fact.source_id) is None:
                return False
            user_id = self.user.id
            live = OwnedFact(
                edge, fact.source_id, fact.head_vertex_id == user_id, fact.tail_vertex_id == user_id
            )
            return fact_of(live, unread) == fact
        if kind == "entity":
            entity = self.memory.entities[index]
            return self._entity(entity.vertex_id, entity.text)
        raise ValueError(f"unknown item kind {kind!r}")

    def _note_vertex(self, vertex_id: int) -> Any:
        vertex = self.lookup(vertex_id)
        if vertex is None or "Memory" not in labels_of(vertex):
            return None
        parents = _parents(vertex, "HAS_MEMORY")
        if not parents or any(p.id != self.user.id for p in parents):
            return None
        return vertex

    def _fact_edge(self, edge_id: int, head_id: int, tail_id: int) -> Any:
        """The live fact edge, found through an endpoint's edges (the one that is not the User: fewer
        edges); None when gone, retyped structurally or attached to something that is not an entity."""
        if head_id != self.user.id:
            holder, edges = self.lookup(head_id), "out_edges"
        else:
            holder, edges = self.lookup(tail_id), "in_edges"
        if holder is None:
            return None
        by_id = self._edges.get((holder.id, edges))
        if by_id is None:  # an entity's facts share it: list its edges once per call
            by_id = self._edges[(holder.id, edges)] = {e.id: e for e in getattr(holder, edges)}
        edge = by_id.get(edge_id)
        if edge is None:
            return None
        if (
            edge.type.name in STRUCTURAL_TYPES
            or edge.from_vertex.id != head_id
            or edge.to_vertex.id != tail_id
        ):
            return None
        for end in (edge.from_vertex, edge.to_vertex):
            if end.id != self.user.id and labels_of(end) & STRUCTURAL_LABELS:
                return None
        return edge

    def _entity(self, vertex_id: int, text: str) -> bool:
        """Still an entity with this text, mentioned with one of the user's (still owned) action ids."""
        vertex = self.lookup(vertex_id)
        if vertex is None or labels_of(vertex) & STRUCTURAL_LABELS or vertex.properties.get("text") != text:
            return False
        for edge in vertex.out_edges:
            if edge.type.name != "MENTIONED_IN":
                continue
            sources = edge.properties.get("sources")
            if not isinstance(sources, (list, tuple)):
                continue
            for source in sources:
                action_id = id_text(source)
                if action_id in self.snapshot.actions and self._source(action_id) is not None:
                    return True
        return False


def hit_items(results: LaneResults) -> set[tuple[str, int]]:
    """Every (kind, index) some lane found."""
    return {(hit.kind, hit.index) for hits in results.hits.values() for hit in hits}


def without_items(results: LaneResults, items: set[tuple[str, int]]) -> LaneResults:
    """`results` minus the hits on `items` (the last line of defence when a rebuild did not help)."""
    hits = {
        lane: tuple(h for h in lane_hits if (h.kind, h.index) not in items)
        for lane, lane_hits in results.hits.items()
    }
    return LaneResults(hits, results.vector_off, results.terms)


def verify_results(
    results: LaneResults, snapshot: Snapshot, user: Any, lookup: VertexLookup, index: GraphIndex
) -> set[tuple[str, int]]:
    """The items of `results` that fail verification (empty when every row may be returned)."""
    return Verifier(snapshot, user, lookup, index).failing(hit_items(results))
