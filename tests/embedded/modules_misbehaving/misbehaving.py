"""A module whose procedures register correctly but misbehave when called (bad results, writes in
read procedures, graph objects kept after their call)."""

import mgp

_STASH = {}


@mgp.read_proc
def give(ctx: mgp.ProcCtx, what: str) -> mgp.Record(text=str, number=mgp.Nullable[float],
                                                    anything=mgp.Nullable[mgp.Any]):
    vertex = next(iter(ctx.graph.vertices), None)
    if what.startswith("numpy_") or what == "ndarray":
        import numpy

        return {
            "numpy_scalar": lambda: mgp.Record(text="x", number=numpy.float32(1.5)),
            "numpy_int64": lambda: mgp.Record(text="x", anything=numpy.int64(1)),
            "numpy_float64": lambda: mgp.Record(text=numpy.str_("x"), number=numpy.float64(1.5),
                                                anything={"k": [numpy.float64(0.25), True]}),
            "ndarray": lambda: mgp.Record(text="x", anything=numpy.zeros(3)),
        }[what]()
    cases = {
        "one": lambda: mgp.Record(text="a", number=1.5),
        "list": lambda: [mgp.Record(text="a"), mgp.Record(text="b")],
        "tuple": lambda: (mgp.Record(text="a"), mgp.Record(text="b")),
        "undeclared": lambda: mgp.Record(text="a", other=1),
        "wrong_type": lambda: mgp.Record(text=1),
        "none_in_str": lambda: mgp.Record(text=None),
        "int_for_float": lambda: mgp.Record(text="a", number=1),
        "set": lambda: mgp.Record(text="a", anything={1, 2}),
        "overflow": lambda: mgp.Record(text="a", anything=2**70),
        "missing": lambda: mgp.Record(text="only"),
        "none": lambda: None,
        "generator": lambda: (mgp.Record(text=x) for x in "ab"),
        "dict": lambda: {"text": "a"},
        "list_of_dicts": lambda: [{"text": "a"}],
        "nested": lambda: mgp.Record(text="a", anything=[1, (2, 3), {"k": (4, "x")}]),
        "vertex_in_list": lambda: mgp.Record(text="a", anything=[vertex]),
        "bad_key": lambda: mgp.Record(text="a", anything={1: "x"}),
    }
    return cases[what]()


@mgp.read_proc
def tamper(ctx: mgp.ProcCtx, node: mgp.Vertex, action: str) -> mgp.Record(done=bool):
    """Attempt a write from a read procedure."""
    graph = ctx.graph
    actions = {
        "create_vertex": lambda: graph.create_vertex(),
        "set_property": lambda: node.properties.__setitem__("x", 1),
        "add_label": lambda: node.add_label("X"),
        "delete_vertex": lambda: graph.detach_delete_vertex(node),
        "create_edge": lambda: graph.create_edge(node, node, mgp.EdgeType("SELF")),
    }
    actions[action]()
    return mgp.Record(done=True)


@mgp.read_proc
def stash(ctx: mgp.ProcCtx, node: mgp.Vertex) -> mgp.Record(kept=int):
    """Keep graph objects past the call, which Memgraph forbids."""
    _STASH["ctx"] = ctx
    _STASH["vertex"] = node
    _STASH["edge"] = next(iter(node.out_edges))
    _STASH["vertices"] = ctx.graph.vertices
    return mgp.Record(kept=len(_STASH))


@mgp.read_proc
def use_stash(what: str) -> mgp.Record(value=mgp.Nullable[mgp.Any]):
    uses = {
        "ctx": lambda: _STASH["ctx"].graph,
        "vertex": lambda: _STASH["vertex"].properties.get("name"),
        "edge": lambda: _STASH["edge"].type,
        "vertices": lambda: list(_STASH["vertices"]),
    }
    uses[what]()
    return mgp.Record(value=None)


@mgp.write_proc
def store_bad_value(ctx: mgp.ProcCtx, node: mgp.Vertex, what: str) -> mgp.Record(done=bool):
    values = {"vertex": node, "set": {1}, "overflow": 2**70}
    node.properties["bad"] = values[what]
    return mgp.Record(done=True)


@mgp.write_proc
def delete_linked(ctx: mgp.ProcCtx, node: mgp.Vertex) -> mgp.Record(done=bool):
    """delete_vertex (not detach) on a vertex with edges: LogicErrorError."""
    ctx.graph.delete_vertex(node)
    return mgp.Record(done=True)
