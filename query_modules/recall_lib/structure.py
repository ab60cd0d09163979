"""The user's structure as edge ids: what the cache re-checks on every call, cheaply, to stay fresh.

A `Structure` records the ids of the edges out of the User vertex, out of each of the user's Sessions
and Agents, and into each of the user's Agents. Reading it touches edge ids only (no property, no
vector), so at 100k messages it is ~100k edge ids per call. Comparing it with the cached one says:
- nothing changed: the cached snapshot is current for sessions and messages;
- it only grew: new sessions, messages, notes or agent links, read incrementally (`Growth`);
- something was removed (or a Session/Agent vanished): the caller rebuilds.

What it cannot see (by design, it reads no properties and only these vertices' edges): edited
properties (text, vectors, timestamps), edges into the user's Sessions and Actions from elsewhere
(another user's session claiming one of them), and anything past the Actions (chunks, mentions,
facts on entities). The cache's verification of every returned row covers the dangerous direction of
all of these; facts and entities added later are read on the next full build (max age or
`recall.invalidate`).
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Looks up a vertex of the current transaction by id; None when it does not exist (any more).
VertexLookup = Callable[[int], Any]


@dataclass(frozen=True)
class Structure:
    user_edges: tuple[int, ...]  # out-edge ids of the User vertex, in graph order
    out_edges: Mapping[int, tuple[int, ...]]  # each owned Session/Agent vertex id -> its out-edge ids
    agent_in_edges: Mapping[int, tuple[int, ...]]  # each owned Agent vertex id -> its in-edge ids

    @property
    def edge_count(self) -> int:
        """How many edge ids the structure holds (for the cache's byte estimate)."""
        return (
            len(self.user_edges)
            + sum(map(len, self.out_edges.values()))
            + sum(map(len, self.agent_in_edges.values()))
        )


@dataclass(frozen=True)
class Growth:
    """Edges that appeared since the cached structure (live objects, valid during this call only)."""

    structure: Structure  # the structure as read now, for the Sessions and Agents already known
    user_edges: tuple[Any, ...] = ()
    out_edges: Mapping[int, tuple[Any, ...]] = field(default_factory=dict)
    agent_in_edges: Mapping[int, tuple[Any, ...]] = field(default_factory=dict)

    @property
    def unchanged(self) -> bool:
        return not (self.user_edges or self.out_edges or self.agent_in_edges)


def _ids(edges: Iterable[Any]) -> tuple[int, ...]:
    return tuple([edge.id for edge in edges])


def read_structure(
    user: Any, lookup: VertexLookup, holders: Iterable[int], agents: Iterable[int]
) -> Structure | None:
    """The structure of `user` with its owned Sessions and Agents (`holders`, of which `agents` are
    Agents); None when one of them no longer exists."""
    out_edges: dict[int, tuple[int, ...]] = {}
    for holder in holders:
        vertex = lookup(holder)
        if vertex is None:
            return None
        out_edges[holder] = _ids(vertex.out_edges)
    agent_in: dict[int, tuple[int, ...]] = {}
    for agent in agents:
        vertex = lookup(agent)
        if vertex is None:
            return None
        agent_in[agent] = _ids(vertex.in_edges)
    return Structure(_ids(user.out_edges), out_edges, agent_in)


def _new_edges(known: tuple[int, ...], now: tuple[int, ...], edges: Callable[[], Iterable[Any]]):
    """(unchanged, added live edges); None when an edge of `known` is gone."""
    if now == known:
        return ()
    old = set(known)
    if not old.issubset(now):
        return None
    return tuple(edge for edge in edges() if edge.id not in old)


def _grown(
    known_edges: dict[int, tuple[int, ...]], lookup: VertexLookup, abort: Callable[[], None], direction: str
) -> tuple[dict[int, tuple[int, ...]], dict[int, tuple[Any, ...]]] | None:
    """Per holder, its edge ids now and the edges added in `direction`; None when anything was removed."""
    now_by_holder: dict[int, tuple[int, ...]] = {}
    added_by_holder: dict[int, tuple[Any, ...]] = {}
    for count, (holder, known) in enumerate(known_edges.items()):
        if count % 512 == 0:
            abort()
        vertex = lookup(holder)
        if vertex is None:
            return None
        now = _ids(getattr(vertex, direction))
        added = _new_edges(known, now, lambda v=vertex: getattr(v, direction))
        if added is None:
            return None
        now_by_holder[holder] = now
        if added:
            added_by_holder[holder] = added
    return now_by_holder, added_by_holder


def compare(user: Any, baseline: Structure, lookup: VertexLookup, abort: Callable[[], None]) -> Growth | None:
    """How `user`'s structure differs from `baseline`: a Growth, or None when anything was removed.

    Order is not compared (Memgraph may reorder a vertex's edges when one is deleted), only id sets,
    with an exact tuple comparison as the fast path.
    """
    user_ids = _ids(user.out_edges)
    user_added = _new_edges(baseline.user_edges, user_ids, lambda: user.out_edges)
    if user_added is None:
        return None
    out = _grown(baseline.out_edges, lookup, abort, "out_edges")
    if out is None:
        return None
    inward = _grown(baseline.agent_in_edges, lookup, abort, "in_edges")
    if inward is None:
        return None
    (out_now, out_added), (in_now, in_added) = out, inward
    return Growth(Structure(user_ids, out_now, in_now), user_added, out_added, in_added)
