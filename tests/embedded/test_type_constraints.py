"""Type constraints (IS TYPED): the kinds of stored values, definitions and their errors, the check as
each write happens (undone outside a transaction, propagated inside one), write procedures, loads, the
cost of uncovered writes, and a model-based property test."""

import copy
import math
from datetime import date, datetime, time, timedelta, timezone
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memgraph_recall.embedded import (
    ConstraintViolation,
    GraphStore,
    ProcedureError,
    QueryError,
    Runtime,
    TypeConstraintViolation,
)
from memgraph_recall.embedded.interchange import build_store, encode_value
from memgraph_recall.embedded.type_constraints import TypeConstraints
from memgraph_recall.embedded.values import Thawable, freeze

VIOLATION = r"^IS TYPED {} violation on {}$"
ALL_KINDS = ("STRING", "BOOL", "INTEGER", "FLOAT", "LIST", "MAP", "DURATION", "DATE", "LOCAL TIME",
             "LOCAL DATE TIME", "ZONED DATE TIME", "ENUM", "POINT")
VECTOR = [0.5] * 16  # long enough to be stored packed
ZONED = datetime(2024, 1, 15, 10, 30, tzinfo=timezone(timedelta(hours=1)))
# (value, the one kind that accepts it), as Memgraph's PropertyValueToTypeConstraintKind has it
KIND_OF = [
    ("action-1", "STRING"), ("", "STRING"), ("7", "STRING"),
    (True, "BOOL"), (False, "BOOL"),
    (0, "INTEGER"), (7, "INTEGER"), (-(2**63), "INTEGER"),
    (7.0, "FLOAT"), (math.nan, "FLOAT"), (math.inf, "FLOAT"),
    ([], "LIST"), ([1, 2], "LIST"), (["a", 1.5], "LIST"), (VECTOR, "LIST"), ([VECTOR, VECTOR], "LIST"),
    ([{"a": 1}], "LIST"), ([[1], [2]], "LIST"),
    ({}, "MAP"), ({"a": 1}, "MAP"), ({"v": VECTOR}, "MAP"),
    (timedelta(days=1), "DURATION"), (date(2024, 1, 15), "DATE"), (time(10, 30), "LOCAL TIME"),
    (datetime(2024, 1, 15, 10, 30), "LOCAL DATE TIME"), (ZONED, "ZONED DATE TIME"),
]

WRITER = '''
import mgp


@mgp.write_proc
def action(ctx: mgp.ProcCtx, action_id: mgp.Any, catch: bool) -> mgp.Record(id=int):
    """Create a :Log, then (:Action {action_id}); with `catch`, go on when the store refuses the value."""
    ctx.graph.create_vertex().add_label("Log")
    vertex = ctx.graph.create_vertex()
    vertex.add_label("Action")
    try:
        vertex.properties["action_id"] = action_id
    except mgp.UnknownError:
        if not catch:
            raise
    return mgp.Record(id=vertex.id)


@mgp.write_proc
def label(ctx: mgp.ProcCtx, id: int, name: str) -> mgp.Record(done=bool):
    """Add label `name` to vertex `id`."""
    ctx.graph.get_vertex_by_id(id).add_label(name)
    return mgp.Record(done=True)
'''


def snapshot(store: GraphStore) -> dict:
    """Everything a rollback must restore: ids, label order, properties (types and order), edges."""
    def props(values):
        return [(k, "NaN" if isinstance(v, float) and math.isnan(v) else (type(v).__name__, repr(v)))
                for k, v in values.items()]
    with store.lock.read():
        return {
            "vertices": {v.id: (v.labels, props(v.props)) for v in store.vertices.values()},
            "edges": {e.id: (e.type, e.start.id, e.end.id, props(e.props)) for e in store.edges.values()},
        }


def test_each_stored_value_satisfies_exactly_its_own_kind():
    stored_types = {type(freeze(value)) for value, _ in KIND_OF}
    assert {bytes, tuple, Thawable, datetime} <= stored_types  # packed vectors and thawed values covered
    for kind in ALL_KINDS:
        store = GraphStore()
        assert store.create_type_constraint("L", "k", kind)
        for value, accepting in KIND_OF:
            if accepting == kind:
                store.add_vertex(["L"], {"k": value})
            else:
                with pytest.raises(TypeConstraintViolation, match=VIOLATION.format(kind, r"L\(k\)")):
                    store.add_vertex(["L"], {"k": value})
        accepted = [value for value, accepting in KIND_OF if accepting == kind]
        assert store.vertex_count() == len(accepted), kind  # ENUM and POINT: the store holds neither

        over = GraphStore()  # creating over existing data: only a graph of that kind alone passes
        for value in accepted:
            over.add_vertex(["L"], {"k": value})
        assert over.create_type_constraint("L", "k", kind)
        for value, accepting in KIND_OF:
            if accepting != kind:
                other = GraphStore()
                other.add_vertex(["L"], {"k": value})
                with pytest.raises(TypeConstraintViolation):
                    other.create_type_constraint("L", "k", kind)


def test_creation_over_clean_and_violating_data():
    store = GraphStore()
    store.add_vertex(["Action"], {"action_id": "a1"})
    store.add_vertex(["Action"])  # no action_id: not constrained
    store.add_vertex(["Other"], {"action_id": 5})  # another label
    assert not store.has_type_constraint("Action", "action_id")
    assert store.create_type_constraint("Action", "action_id", "STRING") is True
    assert store.has_type_constraint("Action", "action_id")
    assert store.has_type_constraint("Action", "action_id", "STRING")
    assert not store.has_type_constraint("Action", "action_id", "INTEGER")
    assert not store.has_type_constraint("Other", "action_id")
    assert store.indexes() == []  # creates no index

    for kind in ("STRING", "INTEGER"):  # exists, whatever its kind: an error naming the kind asked for
        with pytest.raises(QueryError, match=fr"^Constraint IS TYPED {kind} on :Action\(action_id\) already "
                                             "exists$") as caught:
            store.create_type_constraint("Action", "action_id", kind)
        assert not isinstance(caught.value, ConstraintViolation)
    assert store.has_type_constraint("Action", "action_id", "STRING")

    store.add_vertex(["Doc"], {"key": "x"})
    store.add_vertex(["Doc"], {"key": 1})
    with pytest.raises(TypeConstraintViolation) as caught:
        store.create_type_constraint("Doc", "key", "STRING")
    assert str(caught.value) == ("Unable to create IS TYPED STRING constraint on :Doc(key), because an "
                                 "existing node violates it.")
    for base in (ConstraintViolation, QueryError, ValueError):
        assert isinstance(caught.value, base)
    assert not store.has_type_constraint("Doc", "key")
    store.add_vertex(["Doc"], {"key": 2.5})  # nothing was created, so nothing is enforced
    with pytest.raises(QueryError, match="already exists"):  # the existing one is found before the data
        store.create_type_constraint("Action", "action_id", "LIST")


def test_drop_constraint_info_and_argument_errors():
    store = GraphStore()
    store.create_unique_constraint("User", "name")
    store.create_type_constraint("User", "name", "STRING")
    store.create_type_constraint("Doc", "at", "ZONED DATE TIME")
    store.create_type_constraint("Doc", "tags", "LIST")
    assert store.constraints() == [  # unique rows first; a type row's properties is the key itself
        {"constraint type": "unique", "label": "User", "properties": ["name"], "data_type": ""},
        {"constraint type": "data_type", "label": "Doc", "properties": "at", "data_type": "ZONED DATE TIME"},
        {"constraint type": "data_type", "label": "Doc", "properties": "tags", "data_type": "LIST"},
        {"constraint type": "data_type", "label": "User", "properties": "name", "data_type": "STRING"},
    ]

    with pytest.raises(QueryError, match=r"^Constraint IS TYPED MAP on :Doc\(tags\) doesn't exist$"):
        store.drop_type_constraint("Doc", "tags", "MAP")  # another kind: not this one
    with pytest.raises(QueryError, match=r"^Constraint IS TYPED LIST on :Doc\(nope\) doesn't exist$"):
        store.drop_type_constraint("Doc", "nope", "LIST")
    assert store.has_type_constraint("Doc", "tags", "LIST")
    assert store.drop_type_constraint("Doc", "tags", "LIST") is True
    assert not store.has_type_constraint("Doc", "tags")
    with pytest.raises(QueryError, match="doesn't exist"):
        store.drop_type_constraint("Doc", "tags", "LIST")
    store.add_vertex(["Doc"], {"tags": "no longer a list"})
    assert store.create_type_constraint("Doc", "tags", "STRING")  # a free slot takes any kind
    assert store.has_unique_constraint("User", "name")  # the unique constraint on the same key stays

    for bad in ("TEXT", "string", "BOOLEAN", "LOCALTIME", None, 1):
        with pytest.raises(ValueError, match=r"^data_type must be one of 'STRING', 'BOOL', 'INTEGER', .*"
                                             r"'LOCAL TIME', 'LOCAL DATE TIME', .*'POINT'; got "):
            store.create_type_constraint("L", "k", bad)
    with pytest.raises(ValueError, match="data_type must be one of"):
        store.drop_type_constraint("Doc", "tags", "TEXT")
    with pytest.raises(ValueError, match="data_type must be one of"):
        store.has_type_constraint("Doc", "tags", "TEXT")
    with pytest.raises(TypeError, match="label must be a non-empty string"):
        store.create_type_constraint("", "k", "STRING")
    with pytest.raises(TypeError, match="key must be a non-empty string"):
        store.create_type_constraint("L", None, "STRING")
    assert len(store.constraints()) == 4


def test_definitions_only_outside_transactions():
    store = GraphStore()
    with pytest.raises(RuntimeError, match="^create_type_constraint: constraint definitions cannot change "
                                           "inside a transaction$"), store.transaction():
        store.create_type_constraint("Action", "action_id", "STRING")
    assert store.constraints() == []
    store.create_type_constraint("Action", "action_id", "STRING")
    with pytest.raises(RuntimeError, match="^drop_type_constraint: constraint definitions"), \
            store.transaction():
        store.drop_type_constraint("Action", "action_id", "STRING")
    assert store.has_type_constraint("Action", "action_id", "STRING")


def test_a_write_outside_a_transaction_is_undone_and_refused():
    store = GraphStore()
    store.create_type_constraint("Action", "action_id", "STRING")
    action = store.add_vertex(["Session", "Action"], {"action_id": "a1", "n": 1})
    plain = store.add_vertex(["Session"], {"n": 2, "action_id": 7})  # not an :Action
    nameless = store.add_vertex(["Action"])
    edge = store.add_edge(action, plain, "NEXT")
    before = snapshot(store)
    message = VIOLATION.format("STRING", r"Action\(action_id\)")

    with pytest.raises(TypeConstraintViolation, match=message):
        store.add_vertex(["Action"], {"action_id": 5})
    with pytest.raises(TypeConstraintViolation, match=message):
        store.add_vertex(["Other", "Action"], {"n": 1, "action_id": ["a1"]})
    with pytest.raises(TypeConstraintViolation, match=message):
        store.set_vertex_property(action, "action_id", 5)  # was "a1": restored in its place
    with pytest.raises(TypeConstraintViolation, match=message):
        store.set_vertex_property(nameless, "action_id", True)  # was absent: absent again
    with pytest.raises(TypeConstraintViolation, match=message):
        store.add_vertex_label(plain, "Action")  # adding the label is checked against its properties
    with store.lock.write(), pytest.raises(TypeConstraintViolation):  # the element-level API as well
        store.set_property(store.get_vertex(action), "action_id", 1.5)
    with store.lock.write(), pytest.raises(TypeConstraintViolation):
        store.create_vertex(["Action"], {"action_id": 1})
    assert snapshot(store) == before
    assert store.add_vertex(["Other"]) == 6  # the refused creations' ids stay used, as on any abort

    store.set_vertex_property(plain, "action_id", 8)  # without the label: not constrained
    store.set_edge_property(edge, "action_id", 9)  # edges are not constrained
    store.set_vertex_property(action, "action_id", None)  # removing is allowed
    store.set_vertex_property(action, "action_id", "a2")
    store.remove_vertex_label(action, "Action")  # so is removing the label
    store.set_vertex_property(action, "action_id", 3)
    store.set_vertex_property(plain, "action_id", None)
    store.add_vertex_label(plain, "Action")  # no action_id now: nothing to check
    store.add_vertex_label(plain, "Action")  # already has it: nothing happens
    store.delete_vertex(nameless)
    assert store.node(plain).labels == {"Session", "Action"}
    assert store.node(action).properties == {"action_id": 3, "n": 1}


def test_the_message_names_the_constraint_the_write_breaks():
    store = GraphStore()
    store.create_type_constraint("A", "k", "INTEGER")
    store.create_type_constraint("B", "k", "FLOAT")
    store.create_type_constraint("B", "j", "DATE")
    both = store.add_vertex(["A"], {"k": 1})
    with pytest.raises(TypeConstraintViolation, match=VIOLATION.format("FLOAT", r"B\(k\)")):
        store.add_vertex_label(both, "B")  # 1 is an INTEGER, never a FLOAT
    with pytest.raises(TypeConstraintViolation, match=VIOLATION.format("DATE", r"B\(j\)")):
        store.add_vertex(["B"], {"k": 1.0, "j": datetime(2024, 1, 1)})  # a datetime is not a DATE
    second = store.add_vertex(["B"], {"k": 1.0, "j": date(2024, 1, 1)})
    with pytest.raises(TypeConstraintViolation, match=VIOLATION.format("INTEGER", r"A\(k\)")):
        store.add_vertex_label(second, "A")
    with pytest.raises(TypeConstraintViolation, match=VIOLATION.format("INTEGER", r"A\(k\)")):
        store.set_vertex_property(both, "k", True)  # a bool is not an INTEGER


def test_with_a_unique_constraint_on_the_same_key_both_stay_consistent():
    store = GraphStore()
    store.create_unique_constraint("Doc", "n")
    store.create_type_constraint("Doc", "n", "INTEGER")
    store.create_label_property_index("Doc", "n")
    one = store.add_vertex(["Doc"], {"n": 1})
    two = store.add_vertex(["Doc"], {"n": 2})
    before = snapshot(store)
    with pytest.raises(TypeConstraintViolation):  # 1.0 would duplicate 1 too: the type check, as the
        store.set_vertex_property(two, "n", 1.0)  # write happens, comes before the commit's
    with pytest.raises(TypeConstraintViolation):
        store.add_vertex(["Doc"], {"n": 2.0})
    with pytest.raises(ConstraintViolation, match="unique constraint"):
        store.set_vertex_property(two, "n", 1)
    assert snapshot(store) == before
    store.set_vertex_property(one, "n", 3)  # 1 is free again, and 2 still held
    store.set_vertex_property(two, "n", 1)
    store.add_vertex(["Doc"], {"n": 2})
    with pytest.raises(ConstraintViolation, match="unique constraint"):
        store.add_vertex(["Doc"], {"n": 3})
    assert store.index_lookup("Doc", "n", 1) == [two] and store.index_lookup("Doc", "n", 1.0) == [two]

    before = snapshot(store)
    with pytest.raises(ConstraintViolation, match=r"^Unable to commit due to unique constraint violation on "
                                                  r":Doc\(n\)$"), store.transaction():
        with pytest.raises(TypeConstraintViolation):  # caught: the duplicate it made is checked at commit
            store.set_vertex_property(one, "n", 1.0)
    assert snapshot(store) == before


def test_inside_a_transaction_the_write_raises_and_the_transaction_rolls_back():
    store = GraphStore()
    store.create_type_constraint("Action", "action_id", "STRING")
    store.create_label_property_index("Action", "action_id")
    action = store.add_vertex(["Action"], {"action_id": "a1"})
    before = snapshot(store)
    reached = []
    with pytest.raises(TypeConstraintViolation, match=VIOLATION.format("STRING", r"Action\(action_id\)")):
        with store.transaction():
            other = store.add_vertex(["Other"], {"x": 1})
            store.add_edge(action, other, "R")
            store.set_vertex_property(action, "action_id", "a2")
            store.add_vertex(["Action"], {"action_id": "a3"})
            store.set_vertex_property(action, "action_id", 5)  # raises here, not at commit
            reached.append(True)
    assert reached == [] and snapshot(store) == before
    assert store.index_lookup("Action", "action_id", "a1") == [action]
    assert store.index_lookup("Action", "action_id", "a3") == []

    # Memgraph raises once the write is done and checks nothing at commit: a caller that catches the
    # error inside the transaction carries on with the value in place (a failing query would abort)
    with store.transaction():
        with pytest.raises(TypeConstraintViolation):
            store.set_vertex_property(action, "action_id", 5)
        assert store.get_vertex(action).props["action_id"] == 5
        with pytest.raises(TypeConstraintViolation):
            store.add_vertex(["Action"], {"action_id": 6})
    assert store.node(action).properties == {"action_id": 5}
    assert store.index_lookup("Action", "action_id", 6) == [store.next_vertex_id - 1]

    with pytest.raises(InterruptedError), store.transaction():  # and a later rollback undoes such writes
        with pytest.raises(TypeConstraintViolation):
            store.set_vertex_property(action, "action_id", 1.5)
        raise InterruptedError
    assert store.node(action).properties == {"action_id": 5}


def test_a_violating_write_procedure_fails_as_in_memgraph(tmp_path):
    (tmp_path / "writer.py").write_text(WRITER)
    runtime = Runtime(tmp_path)
    assert runtime.load_errors == {}
    store = runtime.store
    store.create_type_constraint("Action", "action_id", "STRING")
    first = runtime.call("writer.action", "a1", False)[0]["id"]
    before = snapshot(store)
    with pytest.raises(ProcedureError) as caught:
        runtime.call("writer.action", 5, False)
    assert str(caught.value).startswith("writer.action: Traceback (most recent call last):")
    assert str(caught.value).endswith("\nmgp.UnknownError: Unknown error happened.\n")
    assert "TypeConstraintViolation" not in str(caught.value)  # the C layer's error only
    assert list(runtime.logs)[-1] == (
        "error", "Unexpected error during mg API call: IS TYPED STRING violation on Action(action_id)")
    assert snapshot(store) == before  # the :Log and the :Action undone with the call

    caught_id = runtime.call("writer.action", 5, True)[0]["id"]  # caught: the write stays, as in Memgraph
    assert store.node(caught_id).properties == {"action_id": 5}

    plain = store.add_vertex(["Session"], {"action_id": 9})
    with pytest.raises(ProcedureError, match="mgp.UnknownError: Unknown error happened."):
        runtime.call("writer.label", plain, "Action")
    assert store.node(plain).labels == {"Session"}
    assert runtime.call("writer.label", first, "Session") == [{"done": True}]


def test_a_loaded_graph_keeps_the_definitions_and_is_checked(tmp_path):
    runtime = Runtime(tmp_path)
    store = runtime.store
    store.add_vertex(["Action"], {"action_id": "old"})
    store.create_type_constraint("Action", "action_id", "STRING")
    store.create_unique_constraint("Action", "action_id")
    runtime.load_elements([
        {"id": 5, "labels": ["Action"], "properties": {"action_id": "a5"}, "type": "node"},
        {"id": 9, "labels": ["Session"], "properties": {"action_id": 9}, "type": "node"}])
    assert store.has_type_constraint("Action", "action_id", "STRING")
    with pytest.raises(TypeConstraintViolation):
        store.add_vertex(["Action"], {"action_id": 1})
    with pytest.raises(TypeConstraintViolation):
        store.add_vertex_label(9, "Action")
    runtime.save_graph(tmp_path / "clean.json")

    before = snapshot(store)
    with pytest.raises(TypeConstraintViolation, match=r"^IS TYPED STRING violation on Action\(action_id\): "
                                                      r"node 2 of the graph being loaded holds a value of "
                                                      r"type INTEGER; nothing was loaded\.$"):
        runtime.load_elements([
            {"id": 1, "labels": ["Action"], "properties": {"action_id": "x"}, "type": "node"},
            {"id": 2, "labels": ["Action"], "properties": {"action_id": 2}, "type": "node"},
            {"id": 3, "labels": ["Action"], "properties": {"action_id": "a5"}, "type": "node"}])
    assert snapshot(store) == before and store.has_type_constraint("Action", "action_id", "STRING")
    with pytest.raises(ConstraintViolation, match="unique"):
        store.add_vertex(["Action"], {"action_id": "a5"})  # the unique constraint still holds the old graph

    store.add_vertex(["Action"], {"action_id": "x"})  # nor the refused graph's values
    runtime.load_graph(tmp_path / "clean.json")
    assert snapshot(store) == before


def test_writes_no_constraint_covers_check_nothing(monkeypatch):
    """Property and label writes no constraint covers pay the store's one dict lookup: the type checks
    are never reached."""
    store = GraphStore()
    store.create_type_constraint("Action", "action_id", "STRING")
    store.create_label_property_index("Doc", "key")
    assert set(store._on_label) == {"Action", "Doc"} and set(store._on_key) == {"action_id", "key"}
    calls = []
    for name in ("property_violation", "label_violation"):
        original = getattr(TypeConstraints, name)
        monkeypatch.setattr(TypeConstraints, name, lambda *args, _name=name, _original=original: (
            calls.append(_name), _original(*args))[1])
    vertex = store.add_vertex(["User"], {"name": "ann", "key": 1})
    store.set_vertex_property(vertex, "name", 5)
    store.add_vertex_label(vertex, "Doc")
    store.set_vertex_property(vertex, "key", 2)  # covered by the index only: no type check
    assert calls == []
    store.set_vertex_property(vertex, "action_id", 1)  # covered, without the label: checked, allowed
    store.add_vertex_label(vertex, "Session")
    assert calls == ["property_violation"]
    with pytest.raises(TypeConstraintViolation):
        store.add_vertex_label(vertex, "Action")
    assert calls == ["property_violation", "label_violation"]

    store.drop_type_constraint("Action", "action_id", "STRING")
    assert set(store._on_label) == {"Doc"} and set(store._on_key) == {"key"}
    store.add_vertex_label(vertex, "Action")
    store.add_vertex(["Action"], {"action_id": 2})
    assert len(calls) == 2


# -- model-based property test -----------------------------------------------------------------
LABELS, KEYS = ("A", "B"), ("k", "j")
KINDS = ("STRING", "INTEGER", "FLOAT", "BOOL", "LIST", "MAP", "DATE", "LOCAL DATE TIME", "ZONED DATE TIME")
VALUES = ("a", 1, 0, 1.5, math.nan, True, [1, 2], VECTOR, [{"x": 1}], {"x": 1}, date(2024, 1, 1),
          datetime(2024, 1, 1, 9), ZONED, None)


def _kind(value) -> str:
    """The kind of a Python value above, from its Python type, independently of the store's forms."""
    if isinstance(value, bool):
        return "BOOL"
    if isinstance(value, datetime):
        return "LOCAL DATE TIME" if value.tzinfo is None else "ZONED DATE TIME"
    names = ((str, "STRING"), (int, "INTEGER"), (float, "FLOAT"), (list, "LIST"), (dict, "MAP"),
             (date, "DATE"))
    return next(name for cls, name in names if isinstance(value, cls))


def _breaks(labels, props, constraints, only_label=None, only_key=None) -> bool:
    """Whether a vertex breaks a constraint (on `only_label` or `only_key` if given: what a write checks)."""
    return any(label in labels and key in props and _kind(props[key]) != kind
               for (label, key), kind in constraints.items()
               if only_label in (None, label) and only_key in (None, key))


def _plain(values: dict) -> dict:
    return {k: "NaN" if isinstance(v, float) and math.isnan(v) else (type(v), repr(v))
            for k, v in values.items()}


def _stored(store: GraphStore) -> dict:
    nodes = [store.node(i) for i in list(store.vertices)]
    return {node.id: (set(node.labels), _plain(node.properties)) for node in nodes}


_value = st.sampled_from(VALUES)
_props = st.dictionaries(st.sampled_from(KEYS), _value)
_pick = st.integers(0, 20)
_write = st.one_of(
    st.tuples(st.just("create"), st.sets(st.sampled_from(LABELS)), _props),
    st.tuples(st.just("set"), _pick, st.sampled_from(KEYS), _value),
    st.tuples(st.just("set"), _pick, st.sampled_from(KEYS), _value),
    st.tuples(st.just("add_label"), _pick, st.sampled_from(LABELS)),
    st.tuples(st.just("remove_label"), _pick, st.sampled_from(LABELS)),
    st.tuples(st.just("delete"), _pick),
)
# a transaction: its writes, whether it then fails, and whether a refused write is caught (the
# transaction goes on) or propagates (the transaction rolls back)
_transaction = st.tuples(st.just("transaction"), st.lists(_write, min_size=1, max_size=8), st.booleans(),
                         st.booleans())
_step = st.one_of(
    _write, _write, _write, _transaction, _transaction,
    st.tuples(st.just("constraint"), st.sampled_from(LABELS), st.sampled_from(KEYS), st.sampled_from(KINDS),
              st.booleans()),
    st.tuples(st.just("index"), st.sampled_from(LABELS), st.sampled_from(KEYS), st.booleans()),
    st.tuples(st.just("load"), st.lists(st.tuples(st.sets(st.sampled_from(LABELS)), _props), max_size=4)),
)


def _write_both(store: GraphStore, model: dict, constraints: dict, write: tuple) -> None:
    """Apply one write to the model (in place) and to the store, which must raise TypeConstraintViolation
    (let through) exactly when the model says a type constraint refuses the write."""
    kind, *args = write
    refused = False
    if kind == "create":
        labels, props = sorted(args[0]), {k: v for k, v in args[1].items() if v is not None}
        model[store.next_vertex_id] = (set(labels), props)
        refused = _breaks(labels, props, constraints)
        call = partial(store.add_vertex, labels, args[1])
    elif not model:
        return
    else:
        pick = sorted(model)[args[0] % len(model)]
        labels, props = model[pick]
        if kind == "set":
            key, value = args[1], args[2]
            if value is None:
                props.pop(key, None)
            else:
                props[key] = value
                refused = _breaks(labels, props, constraints, only_key=key)
            call = partial(store.set_vertex_property, pick, key, value)
        elif kind == "add_label":
            refused = args[1] not in labels and _breaks({args[1]}, props, constraints, only_label=args[1])
            labels.add(args[1])
            call = partial(store.add_vertex_label, pick, args[1])
        elif kind == "remove_label":
            labels.discard(args[1])
            call = partial(store.remove_vertex_label, pick, args[1])
        else:
            del model[pick]
            call = partial(store.delete_vertex, pick, detach=True)
    try:
        call()
    except TypeConstraintViolation:
        assert refused, write
        raise
    assert not refused, write


@settings(max_examples=300, deadline=None)
@given(st.lists(_step, min_size=10, max_size=40),
       st.dictionaries(st.tuples(st.sampled_from(LABELS), st.sampled_from(KEYS)), st.sampled_from(KINDS),
                       min_size=1))
def test_every_write_is_checked_as_it_happens_and_accepted_writes_stay(steps, initial):
    store = GraphStore()
    constraints = dict(initial)
    for (label, key), kind in initial.items():
        store.create_type_constraint(label, key, kind)
    model: dict[int, tuple[set, dict]] = {}
    caught_any = False  # a caught violation inside a committed transaction leaves its value in place
    for step in steps:
        kind = step[0]
        if kind == "constraint":
            _, label, key, data_type, create = step
            if create:
                exists = (label, key) in constraints
                violated = any(_breaks(labels, props, {(label, key): data_type})
                               for labels, props in model.values())
                try:
                    assert store.create_type_constraint(label, key, data_type) is True
                    assert not exists and not violated
                    constraints[(label, key)] = data_type
                except TypeConstraintViolation:
                    assert violated and not exists
                except QueryError as exc:
                    assert exists and "already exists" in str(exc)
            else:
                try:
                    assert store.drop_type_constraint(label, key, data_type) is True
                    assert constraints.pop((label, key)) == data_type
                except QueryError:
                    assert constraints.get((label, key)) != data_type
        elif kind == "index":
            _, label, key, create = step
            if create:
                store.create_label_property_index(label, key)
            else:
                store.drop_label_property_index(label, key)
        elif kind == "load":
            loaded = {i: (set(labels), {k: v for k, v in props.items() if v is not None})
                      for i, (labels, props) in enumerate(step[1])}
            elements = [{"id": i, "labels": sorted(labels), "type": "node",
                         "properties": {k: encode_value(freeze(v)) for k, v in props.items()}}
                        for i, (labels, props) in loaded.items()]
            violated = any(_breaks(labels, props, constraints) for labels, props in loaded.values())
            try:
                store.replace_with(build_store(elements))
                assert not violated
                model, caught_any = loaded, False
            except TypeConstraintViolation:
                assert violated
        elif kind == "transaction":
            _, writes, fail, catch = step
            scratch = copy.deepcopy(model)
            try:
                with store.transaction():
                    for write in writes:
                        if not catch:  # a refused write fails the transaction part-way
                            _write_both(store, scratch, constraints, write)
                            continue
                        try:  # the caller goes on: the refused write stays, in the model too
                            _write_both(store, scratch, constraints, write)
                        except TypeConstraintViolation:
                            caught_any = caught_any or not fail
                    if fail:
                        raise InterruptedError
            except (InterruptedError, TypeConstraintViolation):
                pass
            else:
                model = scratch
        else:
            after = copy.deepcopy(model)
            try:
                _write_both(store, after, constraints, step)
            except TypeConstraintViolation:
                pass  # undone: the model stays as it was
            else:
                model = after
        # the store holds exactly the accepted writes, and the definitions the model has
        assert _stored(store) == {i: (labels, _plain(props)) for i, (labels, props) in model.items()}
        rows = store.constraints()
        assert {(row["label"], row["properties"]): row["data_type"] for row in rows} == constraints
        if not caught_any:
            assert not any(_breaks(labels, props, constraints) for labels, props in model.values())
    for row in store.indexes():  # indexes sharing labels and keys with type constraints stay right
        label, key = row["label"], row["property"][0]
        for value in ("a", 1, True, date(2024, 1, 1)):
            expected = sorted(i for i, (labels, props) in model.items()
                              if label in labels and key in props and type(props[key]) is type(value)
                              and props[key] == value)
            assert store.index_lookup(label, key, value) == expected, (label, key, value)
