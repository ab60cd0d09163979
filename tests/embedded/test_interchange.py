"""export_util.json: Memgraph's encodings decoded, exact round trips, and malformed files refused."""

import json
import math
from datetime import date, datetime, time, timedelta, timezone

import pytest
from memgraph_recall.embedded import GraphFileError, GraphStore, Runtime
from memgraph_recall.embedded.interchange import build_store

# An export as Memgraph writes it (export_util.py: indent=4, default=str, bare NaN, node and edge ids
# from separate spaces, temporals only prefixed at the top level).
MEMGRAPH_EXPORT = """[
    {"id": 7, "labels": ["User", "Person"], "properties": {"user_id": "u1", "score": NaN,
      "born": "date(1990-05-17)", "wake": "localTime(07:30:00)", "seen": "localTime(07:30:00.250000)",
      "at": "localDateTime(2024-01-15T10:30:00)", "zoned": "localDateTime(2024-01-15T10:30:00+01:00)",
      "short": "duration(0:05:00)", "long": "duration(1 day, 2:00:00.500000)",
      "negative": "duration(-1 day, 23:59:59)", "days": "duration(3 days, 0:00:00)",
      "not_a_date": "date(tomorrow)", "vector": [0.1, 0.2, 0.3], "nested": [[1, 2], ["a", "b"]],
      "meta": {"k": [1, 2], "when": "2024-01-01 00:00:00"}}, "type": "node"},
    {"id": "8", "labels": [], "properties": {}, "type": "node"},
    {"end": 8, "id": 7, "label": "KNOWS", "properties": {"since": "date(2020-01-01)"}, "start": "7",
     "type": "relationship"}
]"""


@pytest.fixture
def empty_runtime(tmp_path) -> Runtime:
    return Runtime(tmp_path)


def test_memgraph_export_is_decoded(empty_runtime, tmp_path):
    path = tmp_path / "export.json"
    path.write_text(MEMGRAPH_EXPORT)
    empty_runtime.load_graph(path)
    store = empty_runtime.store
    props = store.vertices[7].props
    assert store.vertices[7].labels == ("User", "Person")
    assert math.isnan(props["score"])
    assert props["born"] == date(1990, 5, 17)
    assert props["wake"] == time(7, 30) and props["seen"] == time(7, 30, 0, 250000)
    assert props["at"] == datetime(2024, 1, 15, 10, 30) and props["at"].tzinfo is None
    assert props["zoned"] == datetime(2024, 1, 15, 10, 30, tzinfo=timezone(timedelta(hours=1)))
    assert props["short"] == timedelta(minutes=5)
    assert props["long"] == timedelta(days=1, hours=2, milliseconds=500)
    assert props["negative"] == timedelta(seconds=-1)
    assert props["days"] == timedelta(days=3)
    assert props["not_a_date"] == "date(tomorrow)"  # looks like a prefix, does not parse: stays text
    assert props["vector"] == (0.1, 0.2, 0.3)  # lists are tuples, as Memgraph hands them to Python
    assert props["nested"] == ((1, 2), ("a", "b"))
    assert store.node(7).properties["meta"] == {"k": [1, 2], "when": "2024-01-01 00:00:00"}
    edge = store.edges[7]  # edge id 7 and vertex id 7 coexist: separate id spaces
    assert (edge.start.id, edge.end.id, edge.type) == (7, 8, "KNOWS")
    assert edge.props["since"] == date(2020, 1, 1)
    assert store.vertices[8].in_edges == [edge] and store.vertices[7].out_edges == [edge]


def _rich_store() -> GraphStore:
    store = GraphStore()
    a = store.add_vertex(["User"], {
        "when": datetime(2024, 2, 29, 23, 59, 59, 123456), "day": date(2024, 2, 29), "at": time(1, 2, 3),
        "zoned": datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
        "gap": timedelta(days=-2, seconds=5, microseconds=7), "nan": float("nan"), "inf": float("inf"),
        "nested": [[1, [2, [3]]], [date(2024, 1, 1), timedelta(hours=1)]], "map": {"a": [1, {"b": "c"}]},
        "text": "plain", "flag": False, "big": 2**62, "unicode": "héllo ✓",
        "embedding": [i / 3 for i in range(384)], "vectors": [[0.25] * 16, [0.5] * 16],
        "vector_and_text": [[0.75] * 16, "a"],
    }, id=40)
    b = store.add_vertex(["Message", "Extra"], {"text": "x"}, id=3)
    store.add_edge(a, b, "SENT", {"at": date(2024, 1, 2), "weights": [0.5, 1.5]}, id=40)
    store.add_edge(b, b, "SELF", id=0)
    return store


def _elements(store: GraphStore) -> str:
    from memgraph_recall.embedded.interchange import store_elements

    return json.dumps(list(store_elements(store)), sort_keys=True)


def test_round_trip_preserves_everything(empty_runtime, tmp_path):
    original = _rich_store()
    empty_runtime.store.replace_with(original)
    path = tmp_path / "graph.json"
    empty_runtime.save_graph(path)
    again = Runtime(tmp_path)
    again.load_graph(path)
    assert _elements(again.store) == _elements(_rich_store())
    props = again.store.vertices[40].props
    assert props["zoned"].utcoffset() == timedelta(hours=-5, minutes=-30)
    assert props["nested"] == ((1, (2, (3,))), (date(2024, 1, 1), timedelta(hours=1)))
    assert props["gap"] == timedelta(days=-2, seconds=5, microseconds=7)
    assert math.isnan(props["nan"]) and props["inf"] == float("inf")
    assert again.store.node(40).properties["embedding"] == [i / 3 for i in range(384)]
    assert again.store.node(40).properties["vectors"] == [[0.25] * 16, [0.5] * 16]
    assert again.store.node(40).properties["vector_and_text"] == [[0.75] * 16, "a"]
    assert again.store.node(40).properties["map"] == {"a": [1, {"b": "c"}]}
    assert again.store.next_vertex_id == 41 and again.store.next_edge_id == 41
    assert again.store.vertices[3].labels == ("Message", "Extra")
    assert [e.type for e in again.store.vertices[3].out_edges] == ["SELF"]


def test_saved_file_is_a_json_array_of_export_elements(tmp_path):
    rt = Runtime(tmp_path)
    rt.store.replace_with(_rich_store())
    rt.save_graph(tmp_path / "g.json")
    elements = json.loads((tmp_path / "g.json").read_text())
    assert [e["type"] for e in elements] == ["node", "node", "relationship", "relationship"]
    assert elements[0]["properties"]["day"] == "date(2024-02-29)"
    assert elements[0]["properties"]["gap"] == "duration(-2 days, 0:00:05.000007)"
    assert elements[2] == {"id": 40, "start": 40, "end": 3, "label": "SENT", "type": "relationship",
                           "properties": {"at": "date(2024-01-02)", "weights": [0.5, 1.5]}}


@pytest.mark.parametrize(
    ("elements", "message"),
    [
        ({"id": 1}, "expected a JSON array of elements, got dict"),
        ([["x"]], "element 0: expected a JSON object, got list"),
        ([{"id": 1, "labels": [], "properties": {}}],
         "element 0: 'type' must be \"node\" or \"relationship\", got None"),
        ([{"id": 1.5, "labels": [], "properties": {}, "type": "node"}],
         "element 0: 'id' must be an integer or a numeric string, got 1.5"),
        ([{"id": True, "labels": [], "properties": {}, "type": "node"}],
         "element 0: 'id' must be an integer or a numeric string, got True"),
        ([{"id": 1, "labels": "User", "properties": {}, "type": "node"}],
         "element 0: 'labels' must be a list of strings, got 'User'"),
        ([{"id": 1, "labels": [3], "properties": {}, "type": "node"}],
         "element 0: a label must be a non-empty string, got 3"),
        ([{"id": 1, "labels": [], "type": "node"}],
         "element 0: 'properties' must be a JSON object, got NoneType"),
        ([{"id": 1, "labels": [], "properties": {}, "type": "node"},
          {"id": 1, "labels": [], "properties": {}, "type": "node"}], "element 1: node id 1 appears twice"),
        ([{"id": 1, "labels": [], "properties": {}, "type": "node"},
          {"id": 0, "start": 1, "end": 9, "label": "R", "properties": {}, "type": "relationship"}],
         "element 1: 'end' 9 is not the id of a node in this file"),
        ([{"id": 1, "labels": [], "properties": {}, "type": "node"},
          {"id": 0, "start": 1, "end": 1, "label": "", "properties": {}, "type": "relationship"}],
         "element 1: an edge type must be a non-empty string, got ''"),
        ([{"id": 1, "labels": [], "properties": {"x": 2**64}, "type": "node"}],
         "element 0: integer 18446744073709551616 is outside the 64-bit range Memgraph stores"),
    ],
)
def test_malformed_elements_name_the_element_and_load_nothing(empty_runtime, elements, message):
    empty_runtime.store.add_vertex(["Keep"])
    with pytest.raises(GraphFileError) as caught:
        empty_runtime.load_elements(elements) if isinstance(elements, list) else build_store(elements)
    assert str(caught.value) == message
    assert [v.labels for v in empty_runtime.store.vertices.values()] == [("Keep",)]


def test_malformed_file_names_the_file(empty_runtime, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('[{"id": 1, "labels": [], "properties": {}, "type": "node"},')
    with pytest.raises(GraphFileError, match=r"broken\.json: not valid JSON"):
        empty_runtime.load_graph(path)
    path.write_text('[{"id": 1, "labels": [], "properties": {}, "type": "vertex"}]')
    with pytest.raises(GraphFileError, match=r"broken\.json: element 0: 'type' must be"):
        empty_runtime.load_graph(path)
    assert empty_runtime.store.vertex_count() == 0


def test_memory_graph_elements_load(empty_runtime):
    from memgraph_recall.datasets.memory_graph import MemoryGraph

    graph = MemoryGraph()
    user = graph.user("u1")
    graph.session(user, "s1")
    empty_runtime.load_elements(graph.elements())
    assert empty_runtime.find_vertex("User", "user_id", "u1").id == user.id
