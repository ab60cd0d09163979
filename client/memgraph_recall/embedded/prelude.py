"""The fast call shape's Cypher prelude (`memgraph_recall.shape`), computed over an embedded store.

What Memgraph does for the prelude, done the same way here so the embedded runtime runs the same call
shape: the User by the `:User(user_id)` label-property index and the RecallMeta vertices by the
`:RecallMeta` label index (each a full scan when its index is missing, as Memgraph's planner would
fall back to ScanAll), then each holder's edges expanded to count them and sum their ids. This is the
query's Cypher part, not procedure-API work: it is counted apart (`PreludeCounts`). It reads the store
directly, so it must run under the same read lock as the procedure it feeds (`Runtime.call(prelude=)`).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .snapshots import VertexRef
from .store import GraphStore


@dataclass
class PreludeCounts:
    """The Cypher side of one fast-shape query: index lookups (and vertices a missing index made the
    lookup scan), holders expanded and the edges the expands read (finding the holders included)."""

    lookups: int = 0
    scanned: int = 0
    holders: int = 0
    edges: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


def fast_shape(store: GraphStore, user_id: Any, counts: PreludeCounts | None = None) -> dict | None:
    """The `shape` map the prelude builds for `user_id`, or None when `MATCH (u:User {user_id})` finds
    no vertex (the query then has no row and calls nothing). The caller holds the store's read lock."""
    counts = counts if counts is not None else PreludeCounts()
    users = store.index_lookup("User", "user_id", user_id)
    metas = store.label_lookup("RecallMeta")
    counts.lookups += 2
    counts.scanned += (0 if users.used_index else store.vertex_count()) + (
        0 if metas.used_index else store.vertex_count()
    )
    if not users:
        return None
    user = store.get_vertex(users[0])
    holders, degrees, sums, expanded = store.memoised(("prelude", user.id), lambda: _signatures(store, user))
    counts.holders += len(holders)
    counts.edges += expanded
    return {
        "users": [VertexRef(i) for i in users],
        "metas": [VertexRef(i) for i in metas],
        "holders": list(holders),
        "degrees": list(degrees),
        "id_sums": list(sums),
    }


def _signatures(store: GraphStore, user: Any) -> tuple[list[int], list[int], list[int], int]:
    """The prelude's edge-derived part for one User: its holders (the User, its Sessions, their Agents,
    each once, as `UNWIND` then grouping by h), their degrees and edge-id sums (`sum(id(e))`, kept by
    the store with the edges), and how many edges the Cypher's expands and counts read."""
    sessions = _targets(user, "HAD_SESSION")
    expanded = len(user.out_edges)
    agents: dict[int, Any] = {}
    for session in sessions.values():
        expanded += len(session.out_edges)
        agents.update(_targets(session, "HAS_AGENT"))
    holders = {user.id: user, **sessions, **agents}
    degrees = [len(h.out_edges) + len(h.in_edges) for h in holders.values()]
    return list(holders), degrees, [h.edge_id_sum for h in holders.values()], expanded + sum(degrees)


def _targets(vertex: Any, edge_type: str) -> dict[int, Any]:
    """The distinct ends of a vertex's live out-edges of one type, by id in edge order (a Cypher
    expand's `collect(DISTINCT ...)`)."""
    found: dict[int, Any] = {}
    for edge in vertex.out_edges:
        if edge.type == edge_type and not edge.deleted:
            found.setdefault(edge.end.id, edge.end)
    return found


def call_prelude(user_id: Any, rest: tuple) -> Callable[[GraphStore], tuple | None]:
    """The fast shape's Cypher before the CALL, for `Runtime.call(prelude=...)`: the shape map in place of
    `user_id`, then the call's other arguments; None (no row, so no call) when the user is not found."""

    def prelude(store: GraphStore) -> tuple | None:
        shape = fast_shape(store, user_id)
        return None if shape is None else (shape, *rest)

    return prelude
