"""Procedure-API call counts (`Runtime.call(..., api_counts=...)`): exact on a tiny graph, argument values
converted as Memgraph's C layer converts them, and nothing counted, and plain mgp objects handed out,
when the caller does not ask."""

import threading
from collections import Counter

import pytest
from memgraph_recall.embedded import ApiCounts, Runtime

COUNTED = '''
import mgp


@mgp.read_proc
def walk(ctx: mgp.ProcCtx, user: mgp.Vertex) -> mgp.Record(texts=mgp.List[str]):
    """Per out-edge: one edge, its type, its end vertex and one property read."""
    return mgp.Record(texts=[e.to_vertex.properties.get("text") for e in user.out_edges
                             if e.type.name == "SENT"])


@mgp.read_proc
def scan(ctx: mgp.ProcCtx) -> mgp.Record(users=int):
    """Per vertex: the vertex, its labels, and (for users) its id."""
    return mgp.Record(users=len([v.id for v in ctx.graph.vertices if "User" in [x.name for x in v.labels]]))


@mgp.read_proc
def props(ctx: mgp.ProcCtx, vertex_id: int) -> mgp.Record(names=mgp.List[str]):
    """One vertex; every way of reading its properties."""
    properties = ctx.graph.get_vertex_by_id(vertex_id).properties
    names = [item.name for item in properties.items()]  # one read per property
    assert "name" in properties and properties["name"] and properties.get("missing") is None
    assert len(properties) == len(names)
    return mgp.Record(names=names)


@mgp.read_proc
def inbound(ctx: mgp.ProcCtx, message: mgp.Vertex) -> mgp.Record(senders=mgp.List[int], same=bool):
    senders = [(e.from_vertex.id, e.properties.get("weight")) for e in message.in_edges]
    return mgp.Record(senders=[s for s, _ in senders], same=message == ctx.graph.get_vertex_by_id(message.id))


@mgp.write_proc
def link(ctx: mgp.ProcCtx, user: mgp.Vertex) -> mgp.Record(id=int):
    vertex = ctx.graph.create_vertex()
    ctx.graph.create_edge(user, vertex, mgp.EdgeType("SENT"))
    return mgp.Record(id=vertex.id)


@mgp.read_proc
def takes(ctx: mgp.ProcCtx, n: int, items: list, options: mgp.Map = {"k": [1, 2]},  # noqa: B006
          who: mgp.Nullable[mgp.Vertex] = None) -> mgp.Record(ok=bool):
    """Reads nothing: only its arguments are counted."""
    return mgp.Record(ok=True)


@mgp.read_proc
def kinds(ctx: mgp.ProcCtx, user: mgp.Vertex) -> mgp.Record(kinds=mgp.List[str], plain=bool):
    """The classes handed out, and whether they are still mgp's own to isinstance."""
    edge = next(iter(user.out_edges))
    objects = (ctx, ctx.graph, user, edge, edge.to_vertex, user.properties)
    return mgp.Record(kinds=[type(o).__name__ for o in objects],
                      plain=isinstance(user, mgp.Vertex) and isinstance(edge, mgp.Edge))
'''


@pytest.fixture
def counted(tmp_path) -> tuple[Runtime, dict[str, int]]:
    """alice (2 properties) -SENT-> m1, m2; bob -SENT-> m3; every vertex has one label."""
    (tmp_path / "counted.py").write_text(COUNTED)
    runtime = Runtime(tmp_path)
    assert runtime.load_errors == {}
    store = runtime.store
    ids = {"alice": store.add_vertex(["User"], {"name": "alice", "vector": [0.5, 0.25]}),
           "bob": store.add_vertex(["User"], {"name": "bob"})}
    for name, user, text in (("m1", "alice", "hello"), ("m2", "alice", "again"), ("m3", "bob", "hi")):
        ids[name] = store.add_vertex(["Message"], {"text": text})
        store.add_edge(ids[user], ids[name], "SENT", {"weight": 1.0})
    return runtime, ids


def counts_of(runtime: Runtime, name: str, *args) -> dict[str, int]:
    counts = ApiCounts()
    runtime.call(name, *args, api_counts=counts)
    return counts.as_dict()


def test_out_edges_and_end_vertices(counted):
    runtime, ids = counted
    assert counts_of(runtime, "counted.walk", runtime.vertex(ids["alice"])) == {
        "vertices": 2, "edges": 2, "properties": 2, "labels": 0, "types": 2, "ids": 0, "arguments": 1,
        "total": 9}


def test_full_scan_counts_every_vertex_and_label(counted):
    runtime, _ = counted
    # 5 vertices with one label each; ids read for the 2 users only
    assert counts_of(runtime, "counted.scan") == {
        "vertices": 5, "edges": 0, "properties": 0, "labels": 5, "types": 0, "ids": 2, "arguments": 0,
        "total": 12}


def test_every_property_read_counts_once(counted):
    runtime, ids = counted
    # alice has 2 properties: items() 2, `in` 1, [] 1, get 1, len 2 (mgp.py counts by iterating)
    assert counts_of(runtime, "counted.props", ids["alice"]) == {
        "vertices": 1, "edges": 0, "properties": 7, "labels": 0, "types": 0, "ids": 0, "arguments": 1,
        "total": 9}


def test_in_edges_ids_and_equality(counted):
    runtime, ids = counted
    # one in-edge: the edge, its start vertex and id, a property; then message.id, a lookup by id
    assert counts_of(runtime, "counted.inbound", runtime.vertex(ids["m1"])) == {
        "vertices": 2, "edges": 1, "properties": 1, "labels": 0, "types": 0, "ids": 2, "arguments": 1,
        "total": 7}


def test_created_elements_count_as_handed_out(counted):
    runtime, ids = counted
    assert counts_of(runtime, "counted.link", runtime.vertex(ids["bob"])) == {
        "vertices": 1, "edges": 1, "properties": 0, "labels": 0, "types": 0, "ids": 1, "arguments": 1,
        "total": 4}


def test_arguments_count_every_value_converted_defaults_included(counted):
    runtime, ids = counted
    # n: 1; items: the list and its 2 elements; the default map: map, key, list, 2 elements; who: null
    assert counts_of(runtime, "counted.takes", 1, [1, "x"]) == {
        "vertices": 0, "edges": 0, "properties": 0, "labels": 0, "types": 0, "ids": 0, "arguments": 10,
        "total": 10}
    # an empty map is one value, a vertex handed in is one argument (and no `vertices` handout)
    assert counts_of(runtime, "counted.takes", 1, [], {}, runtime.vertex(ids["bob"]))["arguments"] == 4
    nested = {"a": [{"b": None}, 2.5], "c": "d"}  # 9: map, 2 keys, list, map, key, null, 2.5, "d"
    # n, the items list, the nested map, the default map (5) and the null `who`
    assert counts_of(runtime, "counted.takes", 1, [nested])["arguments"] == 1 + 1 + 9 + 5 + 1


def test_handouts_tally_each_vertex_handed_out_by_id(counted):
    runtime, ids = counted
    counts = ApiCounts(handouts=Counter())
    runtime.call("counted.walk", runtime.vertex(ids["alice"]), api_counts=counts)
    runtime.call("counted.walk", runtime.vertex(ids["alice"]), api_counts=counts)
    runtime.call("counted.inbound", runtime.vertex(ids["m1"]), api_counts=counts)
    # walk hands out m1 and m2 each call; inbound hands out alice (the edge's start) and m1 (the lookup)
    assert counts.handouts == Counter({ids["m1"]: 3, ids["m2"]: 2, ids["alice"]: 1})
    assert counts.vertices == sum(counts.handouts.values())
    assert "handouts" not in counts.as_dict() and ApiCounts().handouts is None


def test_counts_accumulate_over_calls(counted):
    runtime, ids = counted
    counts = ApiCounts()
    for _ in range(3):
        runtime.call("counted.walk", runtime.vertex(ids["alice"]), api_counts=counts)
    assert (counts.vertices, counts.edges, counts.arguments, counts.total) == (6, 6, 3, 27)


def test_counting_objects_are_mgp_objects(counted):
    runtime, ids = counted
    [row] = runtime.call("counted.kinds", runtime.vertex(ids["alice"]), api_counts=ApiCounts())
    assert row == {"kinds": ["CountingProcCtx", "CountingGraph", "CountingVertex", "CountingEdge",
                             "CountingVertex", "CountingProperties"], "plain": True}
    assert runtime.call("counted.inbound", runtime.vertex(ids["m1"]),
                        api_counts=ApiCounts())[0] == {"senders": [ids["alice"]], "same": True}


def test_off_hands_out_plain_objects_and_counts_nothing(counted):
    runtime, ids = counted
    [row] = runtime.call("counted.kinds", runtime.vertex(ids["alice"]))
    assert row == {"kinds": ["ProcCtx", "Graph", "Vertex", "Edge", "Vertex", "Properties"], "plain": True}
    idle = ApiCounts()
    runtime.call("counted.walk", runtime.vertex(ids["alice"]), api_counts=idle)
    before = idle.as_dict()
    runtime.call("counted.walk", runtime.vertex(ids["alice"]))  # not counting: leaves `idle` alone
    assert idle.as_dict() == before


def test_a_counting_call_beside_plain_calls_counts_only_itself(counted):
    runtime, ids = counted
    counts, barrier = ApiCounts(), threading.Barrier(3)

    def plain() -> None:
        barrier.wait()
        for _ in range(50):
            runtime.call("counted.scan")

    threads = [threading.Thread(target=plain) for _ in range(2)]
    for thread in threads:
        thread.start()
    barrier.wait()
    for _ in range(50):
        runtime.call("counted.walk", runtime.vertex(ids["alice"]), api_counts=counts)
    for thread in threads:
        thread.join()
    assert counts.as_dict() == {"vertices": 100, "edges": 100, "properties": 100, "labels": 0, "types": 100,
                                "ids": 0, "arguments": 50, "total": 450}


def test_api_counts_must_be_an_api_counts(counted):
    runtime, _ = counted
    with pytest.raises(TypeError, match="api_counts must be an ApiCounts or None, got dict"):
        runtime.call("counted.scan", api_counts={})
