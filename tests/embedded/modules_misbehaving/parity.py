"""Procedures that probe where the embedded runtime must fail exactly as Memgraph does: the error
classes and their bases, deleted objects in a write transaction, raw errors from mgp's generators,
vertex ids that are not integers, and results Memgraph empties after reading them."""

import mgp
import numpy

_KEPT = []


def _outcome(action) -> str:
    """What `action()` raised, as module code could tell: a wrapped mgp class, a raw _mgp class
    (only `except RuntimeError` and the like catch it), another exception, or nothing."""
    try:
        action()
    except mgp.DeletedObjectError:
        return "mgp.DeletedObjectError"
    except Exception as exc:  # noqa: BLE001 - the point is to name whatever escaped
        return f"{type(exc).__module__}.{type(exc).__name__}"
    return "no error"


@mgp.read_proc
def catch_write(ctx: mgp.ProcCtx, node: mgp.Vertex) -> mgp.Record(caught=str, message=str):
    """Module code may catch mgp's errors by their builtin base, as it can in Memgraph."""
    try:
        node.properties["x"] = 1
    except RuntimeError as exc:
        return mgp.Record(caught=type(exc).__name__, message=str(exc))
    return mgp.Record(caught="nothing", message="")


_VERTEX_ACCESSORS = {
    "id": lambda v: v.id,
    "labels": lambda v: v.labels,
    "properties.get": lambda v: v.properties.get("name"),
    "properties[]": lambda v: v.properties["name"],
    "in": lambda v: "name" in v.properties,
    "len": lambda v: len(v.properties),
    "items": lambda v: list(v.properties.items()),
    "keys": lambda v: list(v.properties.keys()),
    "values": lambda v: list(v.properties.values()),
    "iter": lambda v: [name for name in v.properties],
    "out_edges": lambda v: list(v.out_edges),
    "in_edges": lambda v: list(v.in_edges),
    "add_label": lambda v: v.add_label("Again"),
    "remove_label": lambda v: v.remove_label("User"),
    "set": lambda v: v.properties.set("name", "x"),
    "set_properties": lambda v: v.properties.set_properties({"name": "x"}),
}


@mgp.write_proc
def deleted_vertex(ctx: mgp.ProcCtx, node: mgp.Vertex, accessor: str) -> mgp.Record(outcome=str):
    """Detach-delete `node`, then use it in the same transaction."""
    ctx.graph.detach_delete_vertex(node)
    return mgp.Record(outcome=_outcome(lambda: _VERTEX_ACCESSORS[accessor](node)))


_EDGE_ACCESSORS = {
    "id": lambda e: e.id,
    "type": lambda e: e.type.name,
    "from_vertex": lambda e: e.from_vertex.id,
    "to_vertex": lambda e: e.to_vertex.id,
    "properties.get": lambda e: e.properties.get("weight"),
    "items": lambda e: list(e.properties.items()),
    "set": lambda e: e.properties.set("weight", 2.0),
}


@mgp.write_proc
def deleted_edge(ctx: mgp.ProcCtx, node: mgp.Vertex, accessor: str) -> mgp.Record(outcome=str):
    """Delete the first edge out of `node`, then use it in the same transaction."""
    edge = next(iter(node.out_edges))
    ctx.graph.delete_edge(edge)
    return mgp.Record(outcome=_outcome(lambda: _EDGE_ACCESSORS[accessor](edge)))


@mgp.write_proc
def delete_twice(ctx: mgp.ProcCtx, node: mgp.Vertex) -> mgp.Record(vertices=int):
    """Deleting what this transaction already deleted is a no-op in Memgraph's storage."""
    edge = next(iter(node.out_edges))
    ctx.graph.delete_edge(edge)
    ctx.graph.delete_edge(edge)
    ctx.graph.detach_delete_vertex(node)
    ctx.graph.detach_delete_vertex(node)
    ctx.graph.delete_vertex(node)
    return mgp.Record(vertices=len(ctx.graph.vertices))


@mgp.write_proc
def edges_of_deleted(ctx: mgp.ProcCtx, node: mgp.Vertex) -> mgp.Record(count=int):
    """Guards a generator step with `except mgp.DeletedObjectError`, which does not catch the raw
    error that escapes it in Memgraph: the call fails."""
    ctx.graph.detach_delete_vertex(node)
    try:
        count = sum(1 for _ in node.out_edges)
    except mgp.DeletedObjectError:
        count = -1
    return mgp.Record(count=count)


def _numpy_int(value: int):
    return numpy.int64(value)


_IDS = {
    "string": lambda: "0",
    "float": lambda: 0.0,
    "bool": lambda: False,
    "numpy_int64": lambda: _numpy_int(0),
    "missing": lambda: 10**9,
    "negative": lambda: -1,
    "beyond_int64": lambda: 2**70,
}


@mgp.read_proc
def lookup(ctx: mgp.ProcCtx, kind: str) -> mgp.Record(outcome=str, found=mgp.Nullable[int]):
    """get_vertex_by_id with ids of several Python types."""
    try:
        vertex = ctx.graph.get_vertex_by_id(_IDS[kind]())
    except Exception as exc:  # noqa: BLE001
        return mgp.Record(outcome=f"{type(exc).__name__}: {exc}", found=None)
    return mgp.Record(outcome="found", found=vertex.id)


@mgp.write_proc
def store_value(ctx: mgp.ProcCtx, node: mgp.Vertex, what: str) -> mgp.Record(outcome=str):
    """Store a property value the C layer converts, or refuses, before storage sees it."""
    values = {
        "set": lambda: {1},
        "overflow": lambda: 2**70,
        "bad_key": lambda: {1: "x"},
        "vertex": lambda: node,
        "vertex_in_list": lambda: [1, node],
        "numpy_float32_in_list": lambda: [numpy.float32(0.5)],
        "numpy_float64_in_list": lambda: [numpy.float64(0.5), 1.0],
        "str_subclass": lambda: numpy.str_("text"),
    }
    try:
        node.properties["stored"] = values[what]()
    except Exception as exc:  # noqa: BLE001
        return mgp.Record(outcome=f"{type(exc).__module__}.{type(exc).__name__}: {exc}")
    return mgp.Record(outcome="stored")


@mgp.read_proc
def kept_records(ctx: mgp.ProcCtx, count: int) -> mgp.Record(n=int):
    """Returns the same module-level list on every call: Memgraph empties it after reading it."""
    while len(_KEPT) < count:
        _KEPT.append(mgp.Record(n=len(_KEPT)))
    return _KEPT


@mgp.read_proc
def kept_size() -> mgp.Record(size=int):
    return mgp.Record(size=len(_KEPT))


@mgp.read_proc
def subclass_default(ratio: float = numpy.float64(0.5)) -> mgp.Record(ratio=float, kind=str):
    """A default is converted like a value: a float subclass registers, and arrives as a float."""
    return mgp.Record(ratio=ratio, kind=type(ratio).__name__)
