"""Result checks: what a procedure may return, and the errors Memgraph gives otherwise."""

import pytest
from memgraph_recall.embedded import Node, ResultError


@pytest.mark.parametrize(
    ("case", "rows"),
    [
        ("one", [{"text": "a", "number": 1.5, "anything": None}]),
        ("list", [{"text": "a", "number": None, "anything": None},
                  {"text": "b", "number": None, "anything": None}]),
        ("missing", [{"text": "only", "number": None, "anything": None}]),
        ("nested", [{"text": "a", "number": None, "anything": [1, [2, 3], {"k": [4, "x"]}]}]),
    ],
)
def test_accepted_results(misbehaving, case, rows):
    assert misbehaving.call("misbehaving.give", case) == rows


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("undeclared", "The result doesn't have any field named 'other'."),
        ("wrong_type", "The type of value doesn't satisfy the type 'STRING'! (field 'text', got int)"),
        ("none_in_str",
         "The type of value doesn't satisfy the type 'STRING'! (field 'text', got NoneType)"),
        ("int_for_float",
         "The type of value doesn't satisfy the type 'FLOAT?'! (field 'number', got int)"),
        ("numpy_scalar", "field 'number': Unsupported PyObject conversion: numpy.float32 is not a "
                         "Cypher value."),
        ("ndarray", "field 'anything': Unsupported PyObject conversion: numpy.ndarray is not a "
                    "Cypher value."),
        ("set", "field 'anything': Unsupported PyObject conversion: set is not a Cypher value."),
        ("overflow", "field 'anything': Python integer is out of range: 1180591620717411303424 does not "
                     "fit in 64 bits."),
        ("bad_key", "field 'anything': Dictionary keys must be strings, got int 1."),
        ("none", "the procedure returned None, but its signature declares result fields (text, "
                 "number, anything); return mgp.Record(...) or a list of them."),
        ("generator", "the returned value is not an instance of 'mgp.Record' or a list of them (got "
                      "generator)."),
        ("dict", "the returned value is not an instance of 'mgp.Record' or a list of them "
                 "(got dict)."),
        ("list_of_dicts", "the returned value is not an instance of 'mgp.Record' (got dict)."),
    ],
)
def test_refused_results(misbehaving, case, message):
    with pytest.raises(ResultError) as caught:
        misbehaving.call("misbehaving.give", case)
    assert str(caught.value) == f"misbehaving.give: {message}"


def test_vertices_in_results_are_detached_snapshots(misbehaving):
    [row] = misbehaving.call("misbehaving.give", "vertex_in_list")
    [node] = row["anything"]
    assert isinstance(node, Node)
    assert node.labels == frozenset({"User"})
    assert node.properties == {"name": "alice", "vector": [0.5, 0.25]}
    node.properties["name"] = "mallory"  # a snapshot: changing it does not touch the store
    assert misbehaving.store.node(node.id).properties["name"] == "alice"


def test_void_procedure_returns_no_rows(runtime):
    assert runtime.call("sample.say", "warning", "hi") == []
