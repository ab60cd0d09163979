"""A cached user: the `UserMemory` plus what keeping it fresh and verifying its rows needs.

Four ways to a snapshot, cheapest last:
- `build_snapshot` reads the user in full (first call, `recall.invalidate`, a row that failed
  verification, an evicted entry);
- `renew_snapshot` walks ownership again in full and re-reads facts, entities, notes and ontologies,
  but keeps the turns (text, vectors, BM25 postings) of Actions it already holds with a vector; turns
  no longer owned are dropped, new ones read. Used when the structure lost an edge (a forgotten
  session), and at the maximum age when `renew_facts` cannot apply. What it does not re-read is a
  kept turn's properties: an edited text is caught by verification when the turn would be returned
  (then a full build follows); a vector rewritten in place under the same model name is kept until
  `recall.invalidate` (`recall.embed` invalidates by itself);
- `renew_facts`, at the maximum age: facts, entities, notes and ontologies read again for the
  Actions already held (facts and entities added later to existing turns appear), turns untouched;
- `grow_snapshot` applies a `Growth` (new sessions, messages, notes, agent links) by reading only
  what is new, with the same ownership rules (`ownership.expand_sessions` / `admit_actions`), and
  merges it (`merge.merge_turns`).

Plain data only (ids, strings, numpy arrays): mgp objects die with the call that produced them.
"""

import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .footprint import fixed_bytes, ids_bytes, items_bytes, notes_bytes, other_items_bytes, turns_bytes
from .memory import UserMemory, memory_from_owned, read_memories, read_turns, relation_descriptions
from .merge import merge_turns, subset_bm25, subset_vectors
from .ownership import (
    GraphIndex,
    OwnedAction,
    OwnedGraph,
    admit_actions,
    agent_action_session,
    collect_entities_and_facts,
    collect_owned,
    expand_sessions,
    owned_memories,
    owned_ontologies,
    owned_session,
)
from .structure import Growth, Structure, VertexLookup, read_structure
from .textindex import BM25Index


@dataclass(frozen=True)
class Snapshot:
    memory: UserMemory
    structure: Structure  # the edge ids the change check compares
    holders: Mapping[int, str | None]  # owned Session and Agent vertex ids -> the session id they stand for
    sessions: frozenset[int]  # which holders are Sessions (the rest are Agents)
    actions: Mapping[str, int]  # owned action_id -> its Action vertex id (sources of facts)
    owned_actions: Mapping[
        int, tuple[str, str | None]
    ]  # every owned Action vertex id -> (action_id, session)
    built_at: float  # clock time of the full build (facts and entities are as of then)
    item_bytes: int  # the items' objects and strings (`footprint.items_bytes`), kept up as turns merge
    nbytes: int  # everything: what the cache's byte limit counts

    @property
    def agents(self) -> frozenset[int]:
        return frozenset(self.holders.keys() - self.sessions)


def _owned_map(actions: Sequence[OwnedAction]) -> dict[int, tuple[str, str | None]]:
    return {item.vertex_id: (item.action_id, item.session_id) for item in actions}


def _sized(snapshot: Snapshot, item_bytes: int) -> Snapshot:
    """`snapshot` with its byte figures: `item_bytes` plus what is read in O(1) (arrays, tables, ids)."""
    ids = ids_bytes(
        snapshot.structure.edge_count + 3 * len(snapshot.owned_actions) + 2 * len(snapshot.holders)
    )
    tables = sum(
        sys.getsizeof(table) for table in (snapshot.owned_actions, snapshot.actions, snapshot.holders)
    )
    tables += sys.getsizeof((0, 0)) * len(snapshot.owned_actions)  # each owned action's (id, session) pair
    return replace(
        snapshot, item_bytes=item_bytes, nbytes=item_bytes + fixed_bytes(snapshot.memory) + ids + tables
    )


def _owned_with_index(
    user: Any, index_for: Callable[[bool], GraphIndex], abort: Callable[[], None]
) -> OwnedGraph:
    """`collect_owned` with the (cached) index; again with a fresh scan when it did not know one of the
    user's actions (`index_for(True)`), before anything else is read."""
    owned = collect_owned(user, index_for(False), abort)
    if owned.skipped["action_not_in_index"]:
        owned = collect_owned(user, index_for(True), abort)
    return owned


def _snapshot(
    owned: OwnedGraph, memory: UserMemory, user: Any, lookup: VertexLookup, now: float, item_bytes: int
) -> Snapshot:
    sessions = frozenset(owned.sessions)
    structure = read_structure(user, lookup, owned.holders, owned.holders.keys() - sessions)
    if structure is None:
        raise RuntimeError("a session or agent vanished while the user was read")
    actions: dict[str, int] = {}
    for item in owned.actions:
        actions.setdefault(item.action_id, item.vertex_id)
    snapshot = Snapshot(
        memory,
        structure,
        dict(owned.holders),
        sessions,
        actions,
        _owned_map(owned.actions),
        now,
        0,
        0,
    )
    return _sized(snapshot, item_bytes)


def build_snapshot(
    user: Any,
    index_for: Callable[[bool], GraphIndex],
    model: str,
    dim: int | None,
    lookup: VertexLookup,
    abort: Callable[[], None],
    now: float,
) -> Snapshot:
    """A full read of `user` (a User vertex). `index_for(False)` gives the (cached) GraphIndex,
    `index_for(True)` a fresh scan."""
    owned = _owned_with_index(user, index_for, abort)
    memory = memory_from_owned(owned, model, dim, abort)
    return _snapshot(owned, memory, user, lookup, now, items_bytes(memory))


def renew_snapshot(
    snapshot: Snapshot,
    user: Any,
    index_for: Callable[[bool], GraphIndex],
    lookup: VertexLookup,
    abort: Callable[[], None],
    now: float,
) -> Snapshot:
    """Ownership, facts, entities, notes and ontologies read again; turns kept where they can be (see
    the module docstring); the result equals a full build but for kept turns' unread properties."""
    old = snapshot.memory
    owned = _owned_with_index(user, index_for, abort)
    held = old.turns
    position = {vertex_id: i for i, vertex_id in enumerate(held.vertex_ids)}
    with_vector = np.zeros(len(held), dtype=bool)
    if old.dimension is not None:
        with_vector[old.turn_vectors.owner] = True  # a turn without one may have been embedded since
    keep = np.zeros(len(held), dtype=bool)
    unread = []
    for item in owned.actions:
        i = position.get(item.vertex_id)
        if (
            i is not None
            and with_vector[i]
            and (held.action_ids[i], held.session_ids[i]) == (item.action_id, item.session_id)
        ):
            keep[i] = True
        else:
            unread.append(item)
    # Facts, entities, notes, ontologies: read as a full build reads them (no turns: those follow).
    memory = memory_from_owned(replace(owned, actions=[]), old.model, old.dimension, abort)
    kept = held.take(np.flatnonzero(keep))
    memory = replace(
        memory,
        turns=kept,
        turn_vectors=old.turn_vectors if keep.all() else subset_vectors(old.turn_vectors, keep),
        text_index=old.text_index if keep.all() else subset_bm25(old.text_index, keep),
        turn_by_action={action_id: i for i, action_id in enumerate(kept.action_ids)},
        turns_without_vectors=0,
    )
    malformed: Counter = Counter()
    turns, vectors, without = read_turns(unread, old.model, old.dimension, malformed, abort)
    sessions = {item.action_id: item.session_id for item in owned.actions}
    memory = merge_turns(memory, turns, vectors, without, sessions, malformed)
    dropped = held.take(np.flatnonzero(~keep))
    item_bytes = (
        snapshot.item_bytes
        - turns_bytes(dropped)
        + turns_bytes(turns)
        - other_items_bytes(old)
        + other_items_bytes(memory)
    )
    return _snapshot(owned, memory, user, lookup, now, item_bytes)


def renew_facts(
    snapshot: Snapshot,
    user: Any,
    index: GraphIndex,
    lookup: VertexLookup,
    abort: Callable[[], None],
    now: float,
) -> Snapshot | None:
    """At the maximum age, over an unchanged structure: facts, entities, notes and ontologies read
    again for the actions already held, turns and their indexes kept as they are. None when `index`
    (at most max age old) shows one of those actions colliding with another user's now, one of them
    is gone, or a turn held without a vector now has one from the model: then `renew_snapshot`."""
    old = snapshot.memory
    if old.dimension is not None and old.turns_without_vectors:
        with_vector = np.zeros(len(old.turns), dtype=bool)
        with_vector[old.turn_vectors.owner] = True
        for i in np.flatnonzero(~with_vector):  # embedded since? then its turn must be read again
            vertex = lookup(old.turns.vertex_ids[i])
            if vertex is None or vertex.properties.get("embedding_model") == old.model:
                return None
    owned = OwnedGraph(user)
    for vertex_id, (action_id, session_id) in snapshot.owned_actions.items():
        if any(h not in snapshot.owned_actions for h in index.action_holders.get(action_id, ())):
            return None
        vertex = lookup(vertex_id)
        if vertex is None:
            return None
        owned.actions.append(OwnedAction(vertex, action_id, session_id, vertex_id))
    owned.action_ids = frozenset(action_id for action_id, _ in snapshot.owned_actions.values())
    collect_entities_and_facts(owned, abort)
    owned.memories = owned_memories(user, owned.skipped)
    owned.ontologies = owned_ontologies(user)
    memory = memory_from_owned(replace(owned, actions=[]), old.model, old.dimension, abort)
    memory = replace(
        memory,
        turns=old.turns,
        turn_vectors=old.turn_vectors,
        text_index=old.text_index,
        turn_by_action=old.turn_by_action,
        action_sessions=old.action_sessions,
        turns_without_vectors=old.turns_without_vectors,
    )
    if "turn_filter" in old.__dict__:  # turns unchanged: what was derived from them holds
        memory.__dict__["turn_filter"] = old.__dict__["turn_filter"]
    item_bytes = snapshot.item_bytes - other_items_bytes(old) + other_items_bytes(memory)
    return _sized(replace(snapshot, memory=memory, built_at=now), item_bytes)


def grow_snapshot(
    snapshot: Snapshot,
    growth: Growth,
    user: Any,
    index: GraphIndex,
    lookup: VertexLookup,
    abort: Callable[[], None],
) -> Snapshot | None:
    """`snapshot` with what `growth` added, reading only the new parts; None when the growth changed
    ownership in a way only a full build can apply (an Agent now shared with another user's session)."""
    holders = dict(snapshot.holders)
    sessions = set(snapshot.sessions)
    to_expand: dict[int, Any] = {}
    notes_changed = ontology_changed = False
    for edge in growth.user_edges:
        kind = edge.type.name
        if kind == "HAD_SESSION":
            session = edge.to_vertex
            if session.id not in sessions and owned_session(session, user.id):
                sessions.add(session.id)
                to_expand[session.id] = session
        elif kind == "HAS_MEMORY":
            notes_changed = True
        elif kind == "ADOPTED":
            ontology_changed = True
    for edges in growth.agent_in_edges.values():
        for edge in edges:
            if edge.type.name == "HAS_AGENT" and edge.from_vertex.id not in sessions:
                return None
    candidates: dict[int, tuple[Any, str | None]] = {}
    for holder, edges in growth.out_edges.items():
        for edge in edges:
            kind = edge.type.name
            if kind == "HAS_ACTION":
                action = edge.to_vertex
                if holder in sessions:
                    candidates.setdefault(action.id, (action, holders[holder]))
                else:
                    candidates.setdefault(action.id, (action, agent_action_session(action, holders[holder])))
            elif kind == "HAS_AGENT" and holder in sessions:
                to_expand.setdefault(holder, edge.from_vertex)
    skipped: Counter = Counter()
    expand_sessions(to_expand, sessions, holders, candidates, skipped, abort)
    fresh = {key: value for key, value in candidates.items() if key not in snapshot.owned_actions}
    admitted = admit_actions(
        fresh, holders, index, skipped, abort, also_owned=snapshot.owned_actions, unindexed_ok=True
    )
    memory = snapshot.memory
    malformed: Counter = Counter()
    turns, vectors, without = read_turns(admitted, memory.model, memory.dimension, malformed, abort)
    changes: dict[str, Any] = {}
    if notes_changed:
        notes, note_vectors = read_memories(owned_memories(user), memory.model, memory.dimension, Counter())
        changes.update(
            memories=notes,
            memory_vectors=note_vectors,
            memory_text_index=BM25Index.build([n.content for n in notes]),
        )
    if ontology_changed:
        changes["relation_descriptions"] = relation_descriptions(owned_ontologies(user), Counter())
    memory = merge_turns(
        memory, turns, vectors, without, {a.action_id: a.session_id for a in admitted}, malformed, **changes
    )
    new_holders = holders.keys() - snapshot.holders.keys()
    added = read_structure(user, lookup, new_holders, new_holders - sessions)
    if added is None:
        return None
    structure = Structure(
        growth.structure.user_edges,
        {**growth.structure.out_edges, **added.out_edges},
        {**growth.structure.agent_in_edges, **added.agent_in_edges},
    )
    actions = dict(snapshot.actions)
    for item in admitted:
        actions.setdefault(item.action_id, item.vertex_id)
    grown = replace(
        snapshot,
        memory=memory,
        structure=structure,
        holders=holders,
        sessions=frozenset(sessions),
        actions=actions,
        owned_actions={**snapshot.owned_actions, **_owned_map(admitted)},
    )
    item_bytes = snapshot.item_bytes + turns_bytes(turns)
    if notes_changed:
        item_bytes += notes_bytes(memory.memories) - notes_bytes(snapshot.memory.memories)
    return _sized(grown, item_bytes)
