"""Label and label-property indexes: Memgraph's equality, maintenance on every write and rollback,
definitions kept across loads, and lookups that say whether an index answered."""

import math
from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memgraph_recall.embedded import GraphStore, ProcedureError, Runtime
from memgraph_recall.embedded.indexes import matchable, value_key
from memgraph_recall.embedded.values import freeze

LABELS, KEYS = ("A", "B", "C"), ("k", "j")
VALUES = (0, 1, 1.0, 7, "7", True, False, math.nan, [1, 2], [1.0, 2.0], [True, 2], {"a": 1}, {"a": 1.0},
          [0.5] * 16, date(2024, 1, 1), datetime(2024, 1, 1), "")

WRITER = '''
import mgp


@mgp.write_proc
def tag(ctx: mgp.ProcCtx, label: str, key: str, value: mgp.Any, fail: bool) -> mgp.Record(id=int):
    vertex = ctx.graph.create_vertex()
    vertex.add_label(label)
    vertex.properties[key] = value
    for other in list(ctx.graph.vertices):
        if other != vertex and label in [x.name for x in other.labels]:
            other.properties[key] = None
            other.remove_label(label)
    if fail:
        raise RuntimeError("after writing")
    return mgp.Record(id=vertex.id)
'''


def scan(store: GraphStore, label: str, key: str, value) -> list[int]:
    """The oracle: every live vertex, compared by the equality key (no index involved)."""
    wanted = value_key(freeze(value))
    if not matchable(wanted):
        return []
    return sorted(v.id for v in store.vertices.values() if not v.deleted and label in v.labels
                  and key in v.props and value_key(v.props[key]) == wanted)


def test_lookups_use_an_index_only_when_one_exists():
    store = GraphStore()
    ids = [store.add_vertex(["User"], {"user_id": f"u{i % 3}"}) for i in range(9)]
    store.add_vertex(["Other"], {"user_id": "u0"})
    found = store.index_lookup("User", "user_id", "u0")
    assert found == ids[0::3] and not found.used_index
    assert store.create_label_property_index("User", "user_id") is True
    assert store.create_label_property_index("User", "user_id") is False  # exists: a notice, no error
    indexed = store.index_lookup("User", "user_id", "u0")
    assert indexed == ids[0::3] and indexed.used_index
    assert store.find_vertices("User", "user_id", "u0").used_index  # find_vertices goes through it
    assert store.label_lookup("User") == ids and not store.label_lookup("User").used_index
    assert store.create_label_index("User") and store.label_lookup("User").used_index
    assert store.indexes() == [
        {"index type": "label", "label": "User", "property": None, "count": 9},
        {"index type": "label+property", "label": "User", "property": ["user_id"], "count": 9}]
    assert store.drop_label_index("User") and not store.drop_label_index("User")
    assert store.drop_label_property_index("User", "user_id")
    assert not store.drop_label_property_index("User", "user_id")
    assert store.indexes() == [] and not store.index_lookup("User", "user_id", "u0").used_index


@pytest.mark.parametrize("indexed", [False, True])
def test_values_compare_as_memgraph_compares_them(indexed):
    store = GraphStore()
    if indexed:
        store.create_label_property_index("L", "v")
    by_value = {}
    for value in VALUES:
        by_value[repr(value)] = store.add_vertex(["L"], {"v": value})
    zoned = store.add_vertex(["L"], {"v": datetime(2024, 1, 1, 10, tzinfo=timezone(timedelta(hours=1)))})
    packed = store.add_vertex(["L"], {"v": [1.0] * 16})

    def find(value):
        found = store.index_lookup("L", "v", value)
        assert found.used_index is indexed
        return found

    one, one_float = by_value["1"], by_value["1.0"]
    assert find(1) == find(1.0) == [one, one_float]  # numbers compare as numbers
    assert find(7) == [by_value["7"]] and find("7") == [by_value["'7'"]]
    assert find(True) == [by_value["True"]] and find(0) == [by_value["0"]]  # a bool is not an int
    assert find([1, 2]) == find([1.0, 2]) == [by_value["[1, 2]"], by_value["[1.0, 2.0]"]]
    assert find([1, 2, 3]) == [] and find([True, 2]) == [by_value["[True, 2]"]]
    assert find({"a": 1}) == [by_value["{'a': 1}"], by_value["{'a': 1.0}"]]  # maps by keys and values
    assert find([0.5] * 16) == [by_value[repr([0.5] * 16)]]  # a packed vector equals its list
    assert find([1] * 16) == [packed]  # and a list of ints of the same numbers
    assert find(date(2024, 1, 1)) == [by_value[repr(date(2024, 1, 1))]]  # a date is not a datetime
    assert find(datetime(2024, 1, 1)) == [by_value[repr(datetime(2024, 1, 1))]]
    assert find(datetime(2024, 1, 1, 10, tzinfo=timezone(timedelta(hours=1)))) == [zoned]
    assert find(datetime(2024, 1, 1, 9, tzinfo=timezone.utc)) == []  # same instant, other offset
    assert find(math.nan) == [] and find(None) == [] and find("") == [by_value["''"]]
    assert find([math.nan]) == []


def test_every_write_keeps_the_indexes_current():
    store = GraphStore()
    store.create_label_index("A")
    store.create_label_property_index("A", "k")
    v = store.add_vertex(["A"], {"k": 1})
    w = store.add_vertex(["B"], {"k": 1})
    assert store.index_lookup("A", "k", 1) == [v] and store.label_lookup("A") == [v]
    store.set_vertex_property(v, "k", 2)
    assert store.index_lookup("A", "k", 1) == [] and store.index_lookup("A", "k", 2) == [v]
    store.add_vertex_label(w, "A")
    assert store.index_lookup("A", "k", 1) == [w] and store.label_lookup("A") == [v, w]
    store.set_vertex_property(w, "k", None)
    assert store.index_lookup("A", "k", 1) == [] and store.label_lookup("A") == [v, w]
    edge = store.add_edge(v, w, "R", {"k": 2})  # an edge property of an indexed name is not indexed
    store.set_edge_property(edge, "k", 2)
    assert store.index_lookup("A", "k", 2) == [v]
    store.remove_vertex_label(v, "A")
    assert store.index_lookup("A", "k", 2) == [] and store.label_lookup("A") == [w]
    store.delete_vertex(w, detach=True)
    assert store.label_lookup("A") == [] and store.indexes()[0]["count"] == 0


def test_a_rolled_back_write_procedure_leaves_the_indexes_as_before(tmp_path):
    (tmp_path / "writer.py").write_text(WRITER)
    runtime = Runtime(tmp_path)
    store = runtime.store
    store.create_label_property_index("Doc", "key")
    store.create_label_index("Doc")
    first = runtime.call("writer.tag", "Doc", "key", "x", False)[0]["id"]
    with pytest.raises(ProcedureError, match="after writing"):
        runtime.call("writer.tag", "Doc", "key", "y", True)
    assert store.index_lookup("Doc", "key", "x") == [first] and store.index_lookup("Doc", "key", "y") == []
    assert store.label_lookup("Doc") == [first]
    second = runtime.call("writer.tag", "Doc", "key", "y", False)[0]["id"]
    assert second == first + 2  # the aborted call's vertex id was not given back
    assert store.index_lookup("Doc", "key", "x") == [] and store.index_lookup("Doc", "key", "y") == [second]
    assert store.label_lookup("Doc") == [second]


def test_definitions_survive_a_load_and_are_rebuilt_over_the_new_graph(tmp_path):
    runtime = Runtime(tmp_path)
    runtime.store.add_vertex(["User"], {"user_id": "old"})
    runtime.store.create_label_property_index("User", "user_id")
    runtime.load_elements([
        {"id": 5, "labels": ["User"], "properties": {"user_id": "new"}, "type": "node"},
        {"id": 9, "labels": ["User"], "properties": {"user_id": "new"}, "type": "node"}])
    found = runtime.store.index_lookup("User", "user_id", "new")
    assert found == [5, 9] and found.used_index
    assert runtime.store.index_lookup("User", "user_id", "old") == []
    assert runtime.store.indexes()[0]["count"] == 2


def test_index_definitions_change_only_outside_transactions():
    store = GraphStore()
    with pytest.raises(RuntimeError, match="create_label_index: index definitions cannot change inside a "
                                           "transaction"), store.transaction():
        store.create_label_index("A")
    assert store.indexes() == []
    with pytest.raises(TypeError, match="label must be a non-empty string"):
        store.create_label_index("")
    with pytest.raises(TypeError, match="key must be a non-empty string"):
        store.create_label_property_index("A", None)


_values = st.sampled_from(VALUES + (None,))
_vertex = st.integers(0, 30)
_write = st.one_of(
    st.tuples(st.just("create"), st.sets(st.sampled_from(LABELS)),
              st.dictionaries(st.sampled_from(KEYS), _values)),
    st.tuples(st.just("set"), _vertex, st.sampled_from(KEYS), _values),
    st.tuples(st.just("add_label"), _vertex, st.sampled_from(LABELS)),
    st.tuples(st.just("remove_label"), _vertex, st.sampled_from(LABELS)),
    st.tuples(st.just("edge"), _vertex, _vertex, st.sampled_from(KEYS), _values),
    st.tuples(st.just("delete"), _vertex),
)
_step = st.one_of(
    _write,
    st.tuples(st.just("transaction"), st.lists(_write, max_size=8), st.booleans()),
    st.tuples(st.just("index"), st.sampled_from(LABELS), st.sampled_from((None, *KEYS))),
)


def _apply(store: GraphStore, write: tuple) -> None:
    """One write through the element-level API (the caller holds the write lock)."""
    kind, *args = write
    live = [v for v in store.vertices.values() if not v.deleted]
    if kind == "create":
        store.create_vertex(sorted(args[0]), args[1])
        return
    if not live:
        return
    pick = live[args[0] % len(live)]
    if kind == "set":
        store.set_property(pick, args[1], args[2])
    elif kind == "add_label":
        store.add_label(pick, args[1])
    elif kind == "remove_label":
        store.remove_label(pick, args[1])
    elif kind == "edge":
        edge = store.create_edge(pick, live[args[1] % len(live)], "R")
        store.set_property(edge, args[2], args[3])
    else:
        store.remove_vertex(pick, detach=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(_step, max_size=30))
def test_indexes_match_a_scan_after_any_writes_and_rollbacks(steps):
    store = GraphStore()
    store.create_label_index("A")
    store.create_label_property_index("A", "k")
    store.create_label_property_index("B", "k")
    for step in steps:
        if step[0] == "transaction":
            try:
                with store.transaction():
                    for write in step[1]:
                        _apply(store, write)
                    if step[2]:
                        raise InterruptedError
            except InterruptedError:
                pass
        elif step[0] == "index":
            if step[2] is None:
                store.create_label_index(step[1])
            else:
                store.create_label_property_index(step[1], step[2])
        else:
            with store.lock.write():
                _apply(store, step)
    counts = {(row["label"], row["property"] and row["property"][0]): row["count"] for row in store.indexes()}
    for row in store.indexes():
        label = row["label"]
        if row["property"] is None:
            found = store.label_lookup(label)
            assert found.used_index
            assert found == sorted(v.id for v in store.vertices.values() if label in v.labels)
            assert counts[(label, None)] == len(found)
            continue
        key = row["property"][0]
        for value in VALUES:
            found = store.index_lookup(label, key, value)
            assert found.used_index and found == scan(store, label, key, value), (label, key, value)
        having = [v for v in store.vertices.values() if label in v.labels and key in v.props]
        assert counts[(label, key)] == len(having)
