"""Unique constraints: definitions, Memgraph's equality, the commit-time check inside a transaction,
single writes undone outside one, write procedures, loads, and a model-based property test."""

import copy
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memgraph_recall.embedded import ConstraintViolation, GraphStore, QueryError, Runtime

COMMIT = "Unable to commit due to unique constraint violation on :{}"

WRITER = '''
import mgp


@mgp.write_proc
def user(ctx: mgp.ProcCtx, name: str, twin: bool) -> mgp.Record(id=int):
    """Create (:User {name: name}); with `twin`, also a second one that is renamed before the end
    (a duplicate in the middle of the transaction only)."""
    vertex = ctx.graph.create_vertex()
    vertex.add_label("User")
    vertex.properties["name"] = name
    if twin:
        other = ctx.graph.create_vertex()
        other.add_label("User")
        other.properties["name"] = name
        other.properties["name"] = name + "-twin"
    return mgp.Record(id=vertex.id)


@mgp.write_proc
def rename_all(ctx: mgp.ProcCtx, name: str) -> mgp.Record(renamed=int):
    """Give every :User the same name (a violation if there are two), after creating a :Log."""
    ctx.graph.create_vertex().add_label("Log")
    renamed = 0
    for vertex in ctx.graph.vertices:
        if "User" in [label.name for label in vertex.labels]:
            vertex.properties["name"] = name
            renamed += 1
    return mgp.Record(renamed=renamed)
'''


def snapshot(store: GraphStore) -> dict:
    """Everything a rollback must restore: ids, label order, properties (NaN-safe), edges, counters."""
    def props(values):
        return {k: ("NaN" if isinstance(v, float) and math.isnan(v) else (type(v).__name__, repr(v)))
                for k, v in values.items()}
    with store.lock.read():
        return {
            "vertices": {v.id: (v.labels, props(v.props)) for v in store.vertices.values()},
            "edges": {e.id: (e.type, e.start.id, e.end.id, props(e.props)) for e in store.edges.values()},
        }


def test_creation_over_clean_and_violating_data():
    store = GraphStore()
    store.add_vertex(["User"], {"name": "ann"})
    store.add_vertex(["User"], {"name": "bob"})
    store.add_vertex(["User"])  # no name: not constrained
    store.add_vertex(["Other"], {"name": "ann"})  # another label
    store.add_vertex(["User"], {"name": math.nan})
    store.add_vertex(["User"], {"name": math.nan})  # a NaN equals nothing, not even a NaN
    assert not store.has_unique_constraint("User", "name")
    assert store.create_unique_constraint("User", "name") is True
    assert store.create_unique_constraint("User", "name") is False  # exists: a notice, no error
    assert store.has_unique_constraint("User", "name")
    assert store.constraints() == [
        {"constraint type": "unique", "label": "User", "properties": ["name"], "data_type": ""}]

    store.add_vertex(["Doc"], {"key": 1})
    store.add_vertex(["Doc"], {"key": 1.0})
    with pytest.raises(ConstraintViolation) as caught:
        store.create_unique_constraint("Doc", "key")
    assert str(caught.value) == ("Unable to create unique constraint :Doc(key), because an existing node "
                                 "violates it.")
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, QueryError)
    assert not store.has_unique_constraint("Doc", "key") and len(store.constraints()) == 1
    store.add_vertex(["Doc"], {"key": 1})  # nothing was created, so nothing is enforced
    assert store.indexes() == []  # as in Memgraph, a constraint creates no index


def test_numbers_are_equal_across_int_and_float_but_not_to_strings_or_bools():
    store = GraphStore()
    store.create_unique_constraint("L", "k")
    store.add_vertex(["L"], {"k": 7})
    with pytest.raises(ConstraintViolation, match=r"^Unable to commit due to unique constraint violation "
                                                  r"on :L\(k\)$"):
        store.add_vertex(["L"], {"k": 7.0})
    store.add_vertex(["L"], {"k": "7"})  # a string is not the number
    store.add_vertex(["L"], {"k": 1})
    store.add_vertex(["L"], {"k": True})  # a bool is not an int
    store.add_vertex(["L"], {"k": [1, 2]})
    with pytest.raises(ConstraintViolation):
        store.add_vertex(["L"], {"k": [1.0, 2.0]})  # lists element-wise
    store.add_vertex(["L"], {"k": [math.nan]})
    store.add_vertex(["L"], {"k": [math.nan]})  # a value holding a NaN never collides
    store.add_vertex(["L"], {"k": None})
    store.add_vertex(["L"])  # absent never collides
    assert sorted(map(repr, (store.node(i).properties.get("k") for i in store.vertices))) == sorted(
        map(repr, [7, "7", 1, True, [1, 2], [math.nan], [math.nan], None, None]))


def test_a_write_outside_a_transaction_is_undone_and_refused():
    store = GraphStore()
    store.create_unique_constraint("User", "name")
    ann = store.add_vertex(["User"], {"name": "ann"})
    bob = store.add_vertex(["Person", "User"], {"name": "bob", "age": 3})
    carl = store.add_vertex(["Person"], {"name": "ann"})
    edge = store.add_edge(ann, bob, "KNOWS")
    before = snapshot(store)

    with pytest.raises(ConstraintViolation, match=COMMIT.format(r"User\(name\)")):
        store.add_vertex(["User"], {"name": "ann"})
    with pytest.raises(ConstraintViolation):
        store.set_vertex_property(bob, "name", "ann")
    with pytest.raises(ConstraintViolation):
        store.add_vertex_label(carl, "User")  # adding the label makes the duplicate
    assert snapshot(store) == before  # bob keeps "bob" in its place, carl its one label
    with store.lock.write(), pytest.raises(ConstraintViolation):  # the element-level API as well
        store.set_property(store.get_vertex(bob), "name", "ann")
    assert snapshot(store) == before
    assert store.add_vertex(["Other"]) == 4  # the refused creation's id stays used, as on any abort

    store.set_vertex_property(bob, "name", "bob")  # re-setting its own value is no duplicate
    store.set_edge_property(edge, "name", "ann")  # edges are not constrained
    nameless = store.add_vertex(["User"])
    with pytest.raises(ConstraintViolation):
        store.set_vertex_property(nameless, "name", "bob")
    assert "name" not in store.node(nameless).properties  # the property was absent, and is again


def test_a_removed_property_label_or_vertex_frees_its_value():
    store = GraphStore()
    store.create_unique_constraint("User", "name")
    first = store.add_vertex(["User"], {"name": "ann"})
    store.set_vertex_property(first, "name", None)
    second = store.add_vertex(["User"], {"name": "ann"})
    store.remove_vertex_label(second, "User")
    third = store.add_vertex(["User"], {"name": "ann"})
    store.delete_vertex(third)
    fourth = store.add_vertex(["User"], {"name": "ann"})
    store.set_vertex_property(fourth, "name", "bea")
    store.add_vertex(["User"], {"name": "ann"})
    with pytest.raises(ConstraintViolation):
        store.add_vertex_label(second, "User")  # second still has "ann"
    with pytest.raises(ConstraintViolation):
        store.set_vertex_property(first, "name", "bea")
    with store.transaction():  # deleting the holder and taking its value in one transaction commits
        store.delete_vertex(fourth)
        store.set_vertex_property(first, "name", "bea")
    assert store.node(first).properties == {"name": "bea"}


def test_inside_a_transaction_the_check_runs_at_commit():
    store = GraphStore()
    store.create_unique_constraint("User", "name")
    store.create_label_property_index("User", "name")  # an index on the same label and key
    ann = store.add_vertex(["User"], {"name": "ann"})
    with store.transaction():  # a duplicate in between is allowed
        twin = store.add_vertex(["User"], {"name": "ann"})
        store.set_vertex_property(twin, "name", "ann2")
        store.set_vertex_property(ann, "name", "ann2")
        store.set_vertex_property(twin, "name", "ann")  # swapped by the end
    assert store.node(ann).properties["name"] == "ann2" and store.node(twin).properties["name"] == "ann"
    for taken in ("ann", "ann2"):  # both values are held after the swap (twin held "ann2" first)
        with pytest.raises(ConstraintViolation):
            store.add_vertex(["User"], {"name": taken})

    before = snapshot(store)
    next_id = store.next_vertex_id
    with pytest.raises(ConstraintViolation, match=COMMIT.format(r"User\(name\)")), store.transaction():
        other = store.add_vertex(["Other"], {"x": 1})
        store.add_edge(ann, other, "R")
        store.set_vertex_property(ann, "extra", [1, 2])
        store.remove_vertex_label(twin, "User")
        store.add_vertex(["User"], {"name": "carl"})
        store.add_vertex(["User"], {"name": "carl"})  # left in place at commit
        store.delete_vertex(twin)
    assert snapshot(store) == before  # all or nothing
    assert store.next_vertex_id == next_id + 3  # ids used stay used
    assert store.index_lookup("User", "name", "carl") == []
    assert store.index_lookup("User", "name", "ann") == [twin]
    store.add_vertex(["User"], {"name": "carl"})  # the rolled-back values hold nothing any more
    with pytest.raises(ConstraintViolation):
        store.add_vertex(["User"], {"name": "carl"})

    with pytest.raises(InterruptedError), store.transaction():  # an ordinary rollback keeps it consistent
        store.add_vertex(["User"], {"name": "dan"})
        store.add_vertex(["User"], {"name": "dan"})
        raise InterruptedError
    store.add_vertex(["User"], {"name": "dan"})
    assert store.index_lookup("User", "name", "dan") == [store.next_vertex_id - 1]


def test_drop_and_definitions_only_outside_transactions():
    store = GraphStore()
    with pytest.raises(RuntimeError, match="create_unique_constraint: constraint definitions cannot change "
                                           "inside a transaction"), store.transaction():
        store.create_unique_constraint("User", "name")
    assert store.constraints() == []
    assert store.create_unique_constraint("User", "name")
    assert store.create_unique_constraint("Doc", "key") and store.create_unique_constraint("Doc", "id")
    assert [(row["label"], row["properties"]) for row in store.constraints()] == [
        ("Doc", ["id"]), ("Doc", ["key"]), ("User", ["name"])]
    with pytest.raises(RuntimeError, match="drop_unique_constraint"), store.transaction():
        store.drop_unique_constraint("User", "name")
    assert store.drop_unique_constraint("User", "name") is True
    assert store.drop_unique_constraint("User", "name") is False  # missing: a notice, no error
    store.add_vertex(["User"], {"name": "ann"})
    store.add_vertex(["User"], {"name": "ann"})  # no longer enforced
    store.add_vertex(["Doc"], {"key": 1, "id": 1})
    with pytest.raises(ConstraintViolation, match=r"Doc\(id\)"):
        store.add_vertex(["Doc"], {"key": 2, "id": 1})
    with pytest.raises(TypeError, match="label must be a non-empty string"):
        store.create_unique_constraint("", "k")
    with pytest.raises(TypeError, match="key must be a non-empty string"):
        store.create_unique_constraint("L", None)


def test_a_violating_write_procedure_fails_and_is_rolled_back(tmp_path):
    (tmp_path / "writer.py").write_text(WRITER)
    runtime = Runtime(tmp_path)
    assert runtime.load_errors == {}
    store = runtime.store
    store.create_unique_constraint("User", "name")
    ann = runtime.call("writer.user", "ann", False)[0]["id"]
    before = snapshot(store)
    with pytest.raises(QueryError, match=COMMIT.format(r"User\(name\)")) as caught:
        runtime.call("writer.user", "ann", False)
    assert isinstance(caught.value, ConstraintViolation)
    assert snapshot(store) == before
    bob = runtime.call("writer.user", "bob", True)[0]["id"]  # a duplicate in between only: commits
    assert bob == ann + 2 and store.node(bob + 1).properties == {"name": "bob-twin"}
    before = snapshot(store)
    with pytest.raises(ConstraintViolation):
        runtime.call("writer.rename_all", "same")
    assert snapshot(store) == before  # the :Log vertex and every rename undone
    store.drop_unique_constraint("User", "name")
    assert runtime.call("writer.rename_all", "same") == [{"renamed": 3}]


def test_a_loaded_graph_keeps_the_definitions_and_is_checked(tmp_path):
    runtime = Runtime(tmp_path)
    store = runtime.store
    store.add_vertex(["User"], {"name": "old"})
    store.create_unique_constraint("User", "name")
    runtime.load_elements([
        {"id": 5, "labels": ["User"], "properties": {"name": "ann"}, "type": "node"},
        {"id": 9, "labels": ["User"], "properties": {"name": "bob"}, "type": "node"}])
    assert store.has_unique_constraint("User", "name")
    store.add_vertex(["User"], {"name": "old"})  # the old graph's values are gone
    with pytest.raises(ConstraintViolation):
        store.add_vertex(["User"], {"name": "ann"})  # the new graph's values are held
    runtime.save_graph(tmp_path / "clean.json")

    before = snapshot(store)
    with pytest.raises(ConstraintViolation, match=r"^Unable to commit due to unique constraint violation on "
                                                  r":User\(name\): nodes 1 and 2 of the graph being "
                                                  r"loaded hold the same name; nothing was loaded\.$"):
        runtime.load_elements([
            {"id": 1, "labels": ["User"], "properties": {"name": "x"}, "type": "node"},
            {"id": 2, "labels": ["User"], "properties": {"name": "x"}, "type": "node"}])
    assert snapshot(store) == before and store.has_unique_constraint("User", "name")
    with pytest.raises(ConstraintViolation):
        store.add_vertex(["User"], {"name": "ann"})  # still held: the refused load changed nothing

    runtime.load_graph(tmp_path / "clean.json")
    assert snapshot(store) == before
    with pytest.raises(ConstraintViolation):
        store.add_vertex(["User"], {"name": "bob"})


# -- model-based property test -----------------------------------------------------------------
LABELS, KEYS = ("A", "B"), ("k", "j")
VALUES = (1, 1.0, "1", True, 2, math.nan, None)  # few, so that writes often collide


def _same(a, b) -> bool:
    """Memgraph's equality for the scalars above, written independently of `indexes.value_key`."""
    if isinstance(a, bool | str) or isinstance(b, bool | str):
        return type(a) is type(b) and a == b
    return a == b  # int and float as numbers; a NaN equals nothing


def _duplicated(vertices: dict, constraints) -> bool:
    for label, key in constraints:
        held = [props[key] for labels, props in vertices.values() if label in labels and key in props]
        if any(_same(a, b) for i, a in enumerate(held) for b in held[i + 1:]):
            return True
    return False


def _plain(values: dict) -> dict:
    return {k: ("NaN" if isinstance(v, float) and math.isnan(v) else (type(v), v)) for k, v in values.items()}


_pick = st.integers(0, 20)
_write = st.one_of(
    st.tuples(st.just("create"), st.sets(st.sampled_from(LABELS)),
              st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES))),
    st.tuples(st.just("create"), st.just({"A"}), st.fixed_dictionaries({"k": st.sampled_from(VALUES)})),
    st.tuples(st.just("set"), _pick, st.sampled_from(KEYS), st.sampled_from(VALUES)),
    st.tuples(st.just("add_label"), _pick, st.sampled_from(LABELS)),
    st.tuples(st.just("remove_label"), _pick, st.sampled_from(LABELS)),
    st.tuples(st.just("delete"), _pick),
)
_transaction = st.tuples(st.just("transaction"), st.lists(_write, min_size=1, max_size=8), st.booleans())
_step = st.one_of(
    _write, _write, _write, _write, _transaction, _transaction,
    st.tuples(st.just("constraint"), st.sampled_from(LABELS), st.sampled_from(KEYS), st.booleans()),
    st.tuples(st.just("index"), st.sampled_from(LABELS), st.sampled_from(KEYS), st.booleans()),
)


def _write_both(store: GraphStore, model: dict, write: tuple) -> None:
    """Apply one write to the model (in place) and to the store (which may raise)."""
    kind, *args = write
    if kind == "create":
        labels, props = sorted(args[0]), {k: v for k, v in args[1].items() if v is not None}
        model[store.next_vertex_id] = (set(labels), props)
        store.add_vertex(labels, args[1])
        return
    if not model:
        return
    pick = sorted(model)[args[0] % len(model)]
    labels, props = model[pick]
    if kind == "set":
        if args[2] is None:
            props.pop(args[1], None)
        else:
            props[args[1]] = args[2]
        store.set_vertex_property(pick, args[1], args[2])
    elif kind == "add_label":
        labels.add(args[1])
        store.add_vertex_label(pick, args[1])
    elif kind == "remove_label":
        labels.discard(args[1])
        store.remove_vertex_label(pick, args[1])
    else:
        del model[pick]
        store.delete_vertex(pick, detach=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(_step, min_size=10, max_size=40),
       st.sets(st.tuples(st.sampled_from(LABELS), st.sampled_from(KEYS)), min_size=1))
def test_no_duplicate_ever_commits_and_every_accepted_write_stays(steps, initial):
    store = GraphStore()
    constraints = set(initial)
    for label, key in initial:
        store.create_unique_constraint(label, key)
    model: dict[int, tuple[set, dict]] = {}
    for step in steps:
        kind = step[0]
        if kind == "constraint":
            _, label, key, create = step
            if create:
                violated = (label, key) not in constraints and _duplicated(model, {(label, key)})
                try:
                    assert store.create_unique_constraint(label, key) is ((label, key) not in constraints)
                    assert not violated
                    constraints.add((label, key))
                except ConstraintViolation:
                    assert violated
            else:
                assert store.drop_unique_constraint(label, key) is ((label, key) in constraints)
                constraints.discard((label, key))
        elif kind == "index":
            _, label, key, create = step
            if create:
                store.create_label_property_index(label, key)
            else:
                store.drop_label_property_index(label, key)
        elif kind == "transaction":
            _, writes, fail = step
            scratch = copy.deepcopy(model)
            refused = False
            try:
                with store.transaction():
                    for write in writes:
                        _write_both(store, scratch, write)  # never refused before the commit
                    if fail:
                        raise InterruptedError
            except InterruptedError:
                pass
            except ConstraintViolation:
                refused = True
            else:
                model = scratch
            assert refused == (not fail and _duplicated(scratch, constraints))
        else:
            after = copy.deepcopy(model)
            try:
                _write_both(store, after, step)
            except ConstraintViolation:
                assert _duplicated(after, constraints)
            else:
                assert not _duplicated(after, constraints)
                model = after
        # the store holds exactly the accepted writes, and so no duplicate
        with store.lock.read():
            live = {v.id: (set(v.labels), _plain(v.props)) for v in store.vertices.values()}
        assert live == {i: (labels, _plain(props)) for i, (labels, props) in model.items()}
        assert {(row["label"], row["properties"][0]) for row in store.constraints()} == constraints
    for row in store.indexes():  # indexes sharing labels and keys with constraints stay right
        label, key = row["label"], row["property"][0]
        for value in VALUES:
            if value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            expected = sorted(i for i, (labels, props) in model.items()
                              if label in labels and key in props and _same(props[key], value))
            assert store.index_lookup(label, key, value) == expected, (label, key, value)
