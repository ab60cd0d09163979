"""The graph store: id spaces, adjacency, frozen values, and undo-log transactions."""

import gc

import pytest
from memgraph_recall.embedded import GraphStore
from memgraph_recall.embedded.values import read_value


def test_separate_id_spaces_and_adjacency():
    store = GraphStore()
    a, b = store.add_vertex(["A"]), store.add_vertex(["B"])
    e0, e1 = store.add_edge(a, b, "R"), store.add_edge(b, a, "R")
    assert (a, b, e0, e1) == (0, 1, 0, 1)
    assert [e.id for e in store.vertices[a].out_edges] == [0]
    assert [e.id for e in store.vertices[a].in_edges] == [1]
    store.delete_edge(e0)
    assert not store.vertices[a].out_edges and not store.vertices[b].in_edges
    assert store.add_vertex(id=10) == 10 and store.add_vertex() == 11
    with pytest.raises(ValueError, match="vertex id 10 already exists"):
        store.add_vertex(id=10)


def test_a_deleted_edges_id_is_never_given_out_again():
    """As in Memgraph: an edge id names one edge, so one pair of ends (recall's verification relies on it)."""
    store = GraphStore()
    a, b, c = (store.add_vertex() for _ in range(3))
    edge = store.add_edge(a, b, "R", id=7)
    store.delete_edge(edge)
    with pytest.raises(ValueError, match="edge id 7 belonged to a deleted edge"):
        store.add_edge(a, c, "R", id=7)
    assert store.add_edge(a, c, "R") == 8


def test_values_are_frozen_and_maps_are_fresh_on_every_read():
    store = GraphStore()
    v = store.add_vertex(properties={"list": [1, [2, 3]], "map": {"k": [1]}, "gone": None})
    props = store.vertices[v].props
    assert props["list"] == (1, (2, 3)) and "gone" not in props
    first, second = read_value(props["map"]), read_value(props["map"])
    assert first == {"k": (1,)} and first is not second
    first["k"] = "changed"
    assert read_value(props["map"]) == {"k": (1,)}
    with pytest.raises(TypeError, match="got builtins.set"):
        store.set_vertex_property(v, "bad", {1})
    with pytest.raises(TypeError, match="map keys must be strings"):
        store.set_vertex_property(v, "bad", {1: 2})


def test_float_vectors_are_packed_and_read_as_fresh_tuples():
    store = GraphStore()
    vector = [i / 7 for i in range(384)]
    v = store.add_vertex(properties={"embedding": vector, "short": [0.5, 1.5], "mixed": [1, 2.0] * 10})
    props = store.vertices[v].props
    first, second = read_value(props["embedding"]), read_value(props["embedding"])
    assert type(first) is tuple and first == tuple(vector) and first is not second
    assert props["short"] == (0.5, 1.5) and props["mixed"] == (1, 2.0) * 10  # not packed
    assert store.node(v).properties["embedding"] == vector


def test_vector_lists_are_packed_and_stay_off_the_cyclic_gc():
    store = GraphStore()
    rows = [[i / 3 + r for i in range(16)] for r in range(3)]
    ragged = [[0.5] * 16, [0.25] * 17]
    v = store.add_vertex(properties={"rows": rows, "ragged": ragged, "text": "x", "when": 3,
                                     "in_map": {"rows": rows}, "empty": []})
    props = store.vertices[v].props
    first, second = read_value(props["rows"]), read_value(props["rows"])
    assert first == tuple(map(tuple, rows)) and first is not second and first[0] is not second[0]
    assert all(type(x) is float for row in first for x in row)
    assert read_value(props["ragged"]) == tuple(map(tuple, ragged))
    assert read_value(props["in_map"]) == {"rows": tuple(map(tuple, rows))}
    assert read_value(props["empty"]) == ()
    store.set_vertex_property(v, "mixed", [[0.5] * 16, "a"])
    assert read_value(props["mixed"]) == ((0.5,) * 16, "a")
    assert store.node(v).properties["mixed"] == [[0.5] * 16, "a"]
    assert store.node(v).properties["rows"] == rows and store.node(v).properties["ragged"] == ragged
    twin = store.add_vertex(["T"], {"rows": rows})
    assert store.find_vertices("T", "rows", rows) == [twin] and store.find_vertices("T", "rows", ragged) == []
    plain = store.vertices[store.add_vertex(properties={"e": [0.5] * 16, "rows": rows, "s": ("a", "b")})]
    gc.collect()
    assert not gc.is_tracked(plain.props)  # packed values are plain bytes: nothing for GC to walk
    assert plain.out_edges == () and plain.in_edges == ()  # shared until a first edge


def test_delete_vertex_requires_detach_when_it_has_edges():
    store = GraphStore()
    a, b = store.add_vertex(), store.add_vertex()
    store.add_edge(a, b, "R")
    store.add_edge(a, a, "LOOP")
    with pytest.raises(ValueError, match="still has 2 relationships"):
        store.delete_vertex(a)
    store.delete_vertex(a, detach=True)
    assert store.vertex_count() == 1 and store.edge_count() == 0 and not store.vertices[b].in_edges


def _snapshot(store: GraphStore) -> tuple:
    vertices = [(v.id, v.labels, list(v.props.items()),  # in order: a rollback keeps the property order
                 [x.id for x in v.out_edges], [x.id for x in v.in_edges]) for v in store.vertices.values()]
    return vertices, dict(store.edges)


def test_transaction_rollback_restores_order_and_values_but_not_the_id_counters():
    store = GraphStore()
    a, b, c = (store.add_vertex(["L"], {"n": i, "m": i}) for i in range(3))
    e = store.add_edge(a, b, "R", {"w": 1})
    store.add_edge(c, b, "R")
    snapshot = _snapshot(store)
    with pytest.raises(RuntimeError), store.transaction():
        new = store.create_vertex(["New"])
        store.create_edge(new, store.vertices[b], "R")
        store.set_property(store.vertices[a], "n", 99)
        store.set_property(store.vertices[a], "extra", "x")
        store.set_property(store.edges[e], "w", None)
        store.add_label(store.vertices[b], "M")
        store.remove_label(store.vertices[c], "L")
        store.remove_vertex(store.vertices[b], detach=True)
        raise RuntimeError("abort")
    assert _snapshot(store) == snapshot
    assert not any(v.deleted for v in store.vertices.values())
    assert not any(x.deleted for x in store.edges.values())
    assert (store.next_vertex_id, store.next_edge_id) == (4, 3)  # Memgraph never gives gids back


def test_ids_are_never_reused_after_a_rollback():
    store = GraphStore()
    a = store.add_vertex()
    with pytest.raises(RuntimeError), store.transaction():
        lost = store.create_vertex()
        store.create_edge(store.vertices[a], lost, "R")
        raise RuntimeError("abort")
    assert lost.id not in store.vertices and store.edge_count() == 0
    b = store.add_vertex()
    assert (lost.id, b) == (1, 2)  # a gap where the aborted vertex was
    assert store.add_edge(a, b, "R") == 1  # and where the aborted edge was
    with store.transaction():
        store.remove_vertex(store.vertices[b], detach=True)
    assert store.add_vertex() == 3  # a deleted id is not reused either


def test_transaction_commit_purges_deleted_elements():
    store = GraphStore()
    a, b = store.add_vertex(), store.add_vertex()
    store.add_edge(a, b, "R")
    with store.transaction():
        store.remove_vertex(store.vertices[b], detach=True)
        assert store.vertices[b].deleted  # a tombstone until commit
    assert b not in store.vertices and store.edge_count() == 0 and not store.vertices[a].out_edges
