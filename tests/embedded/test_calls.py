"""Calling procedures: positional arguments, Memgraph's arity and type errors, marshalling."""

from datetime import date, datetime, time, timedelta, timezone

import numpy
import pytest
from memgraph_recall.embedded import ArgumentError, Node, ProcedureNotFoundError


def test_unknown_procedure(runtime):
    with pytest.raises(ProcedureNotFoundError, match=r"^There is no procedure named 'sample\.nope'\.$"):
        runtime.call("sample.nope")


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("sample.count_calls", (1,), "'sample.count_calls' requires no arguments."),
        ("sample.values", ("User",), "'sample.values' requires exactly 2 arguments."),
        ("sample.by_id", (), "'sample.by_id' requires exactly 1 argument."),
        ("sample.echo", (), "'sample.echo' requires between 1 and 4 arguments."),
        ("sample.echo", (1, 2, {}, [], 5), "'sample.echo' requires between 1 and 4 arguments."),
    ],
)
def test_arity_errors_use_memgraph_wording(runtime, name, args, message):
    with pytest.raises(ArgumentError) as caught:
        runtime.call(name, *args)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("1", 0.5, True), "'sample.typed' argument named 'count' at position 0 must be of type INTEGER."),
        ((True, 0.5, True), "'sample.typed' argument named 'count' at position 0 must be of type INTEGER."),
        ((1, 1, True), "'sample.typed' argument named 'ratio' at position 1 must be of type FLOAT."),
        ((1, 0.5, 1), "'sample.typed' argument named 'flag' at position 2 must be of type BOOLEAN."),
        ((1, 0.5, True, 3), "'sample.typed' argument named 'maybe' at position 3 must be of type STRING?."),
        ((None, 0.5, True), "'sample.typed' argument named 'count' at position 0 must be of type INTEGER."),
    ],
)
def test_argument_types_are_checked_strictly_before_the_call(runtime, args, message):
    with pytest.raises(ArgumentError) as caught:
        runtime.call("sample.typed", *args)
    assert str(caught.value) == message


def test_number_accepts_int_and_float_but_not_bool(runtime):
    assert runtime.call("sample.echo", None, 2)[0]["number"] == 2
    assert runtime.call("sample.echo", None, 2.5)[0]["number"] == 2.5
    with pytest.raises(ArgumentError, match="at position 1 must be of type NUMBER"):
        runtime.call("sample.echo", None, True)


def test_list_of_string_checks_every_element(runtime):
    assert runtime.call("sample.echo", None, 1, {}, ["a", "b"])[0]["tags_type"] == "tuple"
    with pytest.raises(ArgumentError, match="named 'tags' at position 3 must be of type LIST OF STRING"):
        runtime.call("sample.echo", None, 1, {}, ["a", 2])


def test_lists_arrive_as_tuples_and_maps_as_dicts(runtime):
    row = runtime.call("sample.echo", [1, [2, 3], {"k": [4]}])[0]
    assert row["value_type"] == "tuple"
    assert row["value"] == [1, [2, 3], {"k": [4]}]  # and leave as lists, like a Bolt client sees them
    assert runtime.call("sample.echo", {"a": 1})[0]["value_type"] == "dict"


def test_temporal_arguments_pass_through(runtime):
    for value, kind in [(date(2024, 1, 2), "date"), (time(10, 30), "time"), (timedelta(days=-1), "timedelta"),
                        (datetime(2024, 1, 2, 3, 4), "datetime"),
                        (datetime(2024, 1, 2, tzinfo=timezone(timedelta(hours=1))), "datetime")]:
        row = runtime.call("sample.echo", value)[0]
        assert (row["value"], row["value_type"]) == (value, kind)


def test_defaults_are_rebuilt_for_every_call(runtime):
    first = runtime.call("sample.echo", None)[0]
    second = runtime.call("sample.echo", None)[0]
    assert first["options"] == {} and second["options"] == {}  # the procedure mutated its default
    assert first["number"] == 1 and first["tags_type"] == "tuple"


def test_non_cypher_values_are_refused_with_the_argument_named(runtime):
    with pytest.raises(ArgumentError, match=r"'sample\.echo' argument named 'value' at position 0 is not a "
                                            r"value Cypher can pass: numpy\.float32 is not a Cypher value"):
        runtime.call("sample.echo", numpy.float32(1))
    with pytest.raises(ArgumentError, match="set is not a Cypher value"):
        runtime.call("sample.echo", {1, 2})
    with pytest.raises(ArgumentError, match="outside the 64-bit range"):
        runtime.call("sample.echo", 2**63)
    with pytest.raises(ArgumentError, match="map keys must be strings"):
        runtime.call("sample.echo", {1: "x"})


def test_vertex_arguments_become_live_vertices(runtime, ids):
    rows = runtime.call("sample.neighbours", runtime.vertex(ids["alice"]))
    assert sorted((r["direction"], r["rel_type"], r["neighbour"].properties["text"]) for r in rows) == [
        ("out", "SENT", "again"), ("out", "SENT", "hello")]
    assert all(isinstance(r["neighbour"], Node) for r in rows)
    found = runtime.find_vertex("User", "name", "bob")
    rows = runtime.call("sample.neighbours", found)
    assert [r["neighbour"].get("text") for r in rows] == ["hi"]
    back = runtime.call("sample.neighbours", rows[0]["neighbour"])  # a returned Node can be passed back
    assert [(r["direction"], r["neighbour"].properties["name"]) for r in back] == [("in", "bob")]


def test_vertex_argument_type_and_existence(runtime, ids):
    with pytest.raises(ArgumentError, match="argument named 'node' at position 0 must be of type NODE"):
        runtime.call("sample.neighbours", ids["alice"])
    ref = runtime.vertex(ids["m3"])
    runtime.store.delete_vertex(ids["m3"], detach=True)
    with pytest.raises(ArgumentError, match="refers to a missing graph element: there is no vertex with id"):
        runtime.call("sample.neighbours", ref)
    with pytest.raises(LookupError, match="there is no vertex with id 999"):
        runtime.vertex(999)
    with pytest.raises(LookupError, match="no vertex"):
        runtime.find_vertex("User", "name", "carol")
    runtime.store.add_vertex(["User"], {"name": "bob"})
    with pytest.raises(ValueError, match="2 vertices match"):
        runtime.find_vertex("User", "name", "bob")


def test_edge_and_path_values(runtime, ids):
    rows = runtime.call("sample.neighbours", runtime.vertex(ids["bob"]))
    edge = rows[0]["edge"]
    assert (edge.type, edge.start_id, edge.end_id, edge.properties) == ("SENT", ids["bob"], ids["m3"],
                                                                        {"weight": 1.0})
    path_row = runtime.call("sample.first_path", runtime.vertex(ids["alice"]), 3)[0]
    assert path_row["length"] == 1
    assert [n.id for n in path_row["path"].nodes] == [ids["alice"], ids["m1"]]
    assert [r.type for r in path_row["path"].relationships] == ["SENT"]


def test_properties_read_as_memgraph_delivers_them(runtime, ids):
    row = runtime.call("sample.describe", runtime.vertex(ids["alice"]))[0]
    assert row == {"labels": ["User"], "keys": ["name", "vector"], "vector_type": "tuple", "shouted": None}
    assert runtime.call("sample.describe", runtime.vertex(ids["m1"]))[0]["shouted"] == "HELLO!"


def test_get_vertex_by_id(runtime, ids):
    assert runtime.call("sample.by_id", ids["bob"]) == [{"found": True}]
    assert runtime.call("sample.by_id", 12345) == [{"found": False}]


def test_functions_are_called_with_the_same_rules(runtime):
    assert runtime.call_function("sample.shout", "hey") == "HEY!"
    with pytest.raises(ArgumentError, match="'sample.shout' argument named 'text' at position 0 must be"):
        runtime.call_function("sample.shout", 1)
    with pytest.raises(ProcedureNotFoundError, match="Function 'sample.nope' doesn't exist."):
        runtime.call_function("sample.nope")
