"""The fast call shape's prelude over an embedded store computes what its Cypher computes, and the
store's per-vertex edge-id sums and memoised expands it reads stay exact through writes and rollbacks."""

from hypothesis import given, settings
from hypothesis import strategies as st
from memgraph_recall.embedded.prelude import PreludeCounts, fast_shape
from memgraph_recall.embedded.store import GraphStore

TYPES = ("HAD_SESSION", "HAS_AGENT", "HAS_ACTION", "OTHER")


def cypher(store: GraphStore, user_id: str) -> dict | None:
    """The prelude's Cypher, evaluated naively: no index, no kept sums."""
    users = sorted(v.id for v in store.vertices.values()
                   if "User" in v.labels and v.props.get("user_id") == user_id)
    if not users:
        return None
    user = store.vertices[users[0]]
    sessions = list(dict.fromkeys(e.end.id for e in user.out_edges if e.type == "HAD_SESSION"))
    agents = list(dict.fromkeys(e.end.id for s in sessions for e in store.vertices[s].out_edges
                                if e.type == "HAS_AGENT"))
    holders = list(dict.fromkeys([user.id, *sessions, *agents]))
    edges = {h: [*store.vertices[h].out_edges, *store.vertices[h].in_edges] for h in holders}
    metas = sorted(v.id for v in store.vertices.values() if "RecallMeta" in v.labels)
    return {"users": users, "metas": metas, "holders": holders, "degrees": [len(edges[h]) for h in holders],
            "id_sums": [sum(e.id for e in edges[h]) for h in holders]}


OPS = ["vertex", "edge", "delete_edge", "delete_vertex", "abort"]
operations = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 30), st.integers(0, 30),
                                st.sampled_from(TYPES)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(operations)
def test_the_prelude_matches_its_cypher_and_the_kept_sums_match_the_edges(ops):
    store = GraphStore()
    store.add_vertex(["User"], {"user_id": "u"})
    store.add_vertex(["RecallMeta"], {"token": "t"})
    for op, a, b, kind in ops:
        ids = sorted(store.vertices)
        if op == "vertex":
            label = ("Session", "Agent", "Action", "User")[a % 4]
            store.add_vertex([label], {"user_id": "u" if a % 9 == 0 else "x"})
        elif op == "edge" and ids:
            store.add_edge(ids[a % len(ids)], ids[b % len(ids)], kind)
        elif op == "delete_edge" and store.edges:
            store.delete_edge(sorted(store.edges)[a % len(store.edges)])
        elif op == "delete_vertex" and len(ids) > 2:
            store.delete_vertex(ids[2 + a % (len(ids) - 2)], detach=True)
        elif op == "abort" and ids:
            one, other = store.vertices[ids[a % len(ids)]], store.vertices[ids[b % len(ids)]]
            try:
                with store.transaction():
                    store.remove_edge(store.create_edge(one, other, kind))
                    store.create_edge(other, one, kind)
                    raise RuntimeError("abort")
            except RuntimeError:
                pass
        assert_prelude_is_its_cypher(store)  # after every write: the store's memo must follow it


def assert_prelude_is_its_cypher(store: GraphStore) -> None:
    for vertex in store.vertices.values():
        assert vertex.edge_id_sum == sum(e.id for e in (*vertex.out_edges, *vertex.in_edges))
    counts = PreludeCounts()
    shape = fast_shape(store, "u", counts)
    expected = cypher(store, "u")
    if expected is None:
        assert shape is None
        return
    assert [ref.id for ref in shape["users"]] == expected["users"]
    assert [ref.id for ref in shape["metas"]] == expected["metas"]
    assert {k: shape[k] for k in ("holders", "degrees", "id_sums")} == {
        k: expected[k] for k in ("holders", "degrees", "id_sums")}
    assert counts.lookups == 2 and counts.scanned == 2 * len(store.vertices)  # no index: two full scans


def test_with_the_indexes_the_lookups_scan_nothing():
    store = GraphStore()
    store.add_vertex(["User"], {"user_id": "u"})
    store.create_label_property_index("User", "user_id")
    store.create_label_index("RecallMeta")
    counts = PreludeCounts()
    assert fast_shape(store, "u", counts) is not None and counts.scanned == 0
    assert fast_shape(store, "nobody", counts) is None
