"""A query module that follows every rule of Memgraph's mgp; the embedded runtime's tests run it.

Positional Nullable/Map/List/Number signatures, no dict or PEP 604 annotations, no generators,
`mgp.Nullable[T] = None` for optional arguments, records returned as a list, helper logic in a
package next to the module, module-level state (a call counter) and a module-level Logger.
"""

import time

import mgp
import sample_lib

_LOG = mgp.Logger()
_CALLS = {"count": 0}
_LOG.info("sample loaded")


@mgp.read_proc
def echo(
    ctx: mgp.ProcCtx,
    value: mgp.Nullable[mgp.Any],
    number: mgp.Number = 1,
    options: mgp.Map = {},  # noqa: B006 - Memgraph rebuilds defaults per call
    tags: mgp.List[str] = [],  # noqa: B006
) -> mgp.Record(value=mgp.Nullable[mgp.Any], value_type=str, number=mgp.Number, options=mgp.Map,
                tags_type=str):
    """Return the arguments and the Python types they arrived as."""
    result = mgp.Record(value=value, value_type=type(value).__name__, number=number, options=dict(options),
                        tags_type=type(tags).__name__)
    options["mutated"] = True  # must not leak into the next call's default
    return result


@mgp.read_proc
def typed(ctx: mgp.ProcCtx, count: int, ratio: float, flag: bool, maybe: mgp.Nullable[str] = None
          ) -> mgp.Record(count=int, ratio=float, flag=bool, maybe=mgp.Nullable[str]):
    return mgp.Record(count=count, ratio=ratio, flag=flag, maybe=maybe)


@mgp.read_proc
def count_calls() -> mgp.Record(calls=int):
    """Module-level state: each Runtime has its own counter."""
    _CALLS["count"] += 1
    return mgp.Record(calls=_CALLS["count"])


@mgp.read_proc
def values(ctx: mgp.ProcCtx, label: str, key: str) -> mgp.Record(id=int, value=mgp.Nullable[mgp.Any]):
    """Every vertex with `label`, and its property `key` (full scan)."""
    rows = []
    for vertex in ctx.graph.vertices:
        if label in [lab.name for lab in vertex.labels]:
            rows.append(mgp.Record(id=vertex.id, value=vertex.properties.get(key)))
    return rows


@mgp.read_proc
def neighbours(ctx: mgp.ProcCtx, node: mgp.Vertex
               ) -> mgp.Record(direction=str, rel_type=str, neighbour=mgp.Vertex, edge=mgp.Edge):
    rows = [mgp.Record(direction="out", rel_type=e.type.name, neighbour=e.to_vertex, edge=e)
            for e in node.out_edges]
    rows += [mgp.Record(direction="in", rel_type=e.type.name, neighbour=e.from_vertex, edge=e)
             for e in node.in_edges]
    return rows


@mgp.read_proc
def first_path(ctx: mgp.ProcCtx, start: mgp.Vertex, hops: int) -> mgp.Record(path=mgp.Path, length=int):
    """Follow the first outgoing edge `hops` times."""
    path = mgp.Path(start)
    current = start
    for _ in range(hops):
        edges = list(current.out_edges)
        if not edges:
            break
        path.expand(edges[0])
        current = edges[0].to_vertex
    return mgp.Record(path=path, length=path.length)


@mgp.read_proc
def describe(ctx: mgp.ProcCtx, node: mgp.Vertex) -> mgp.Record(
        labels=mgp.List[str], keys=mgp.List[str], vector_type=mgp.Nullable[str], shouted=mgp.Nullable[str]):
    props = node.properties
    vector = props.get("vector")
    text = props.get("text")
    return mgp.Record(labels=[label.name for label in node.labels], keys=sorted(props.keys()),
                      vector_type=None if vector is None else type(vector).__name__,
                      shouted=None if text is None else sample_lib.shout(text))


@mgp.read_proc
def by_id(ctx: mgp.ProcCtx, vertex_id: int) -> mgp.Record(found=bool):
    try:
        ctx.graph.get_vertex_by_id(vertex_id)
    except IndexError:
        return mgp.Record(found=False)
    return mgp.Record(found=True)


@mgp.read_proc
def slow(ctx: mgp.ProcCtx, seconds: mgp.Number) -> mgp.Record(steps=int):
    """Sleep in small steps, checking for abort as long loops should."""
    steps = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ctx.check_must_abort()
        time.sleep(0.002)
        steps += 1
    return mgp.Record(steps=steps)


@mgp.read_proc
def say(ctx: mgp.ProcCtx, level: str, message: str) -> mgp.Record():
    """Log through a module-level Logger; a void procedure returns None."""
    getattr(_LOG, level)(message)


@mgp.write_proc
def add_message(ctx: mgp.ProcCtx, user: mgp.Vertex, text: str, fail: bool = False
                ) -> mgp.Record(message=mgp.Vertex, edge=mgp.Edge):
    """Create a Message linked from `user`; with `fail`, raise after writing."""
    message = ctx.graph.create_vertex()
    message.add_label("Message")
    message.properties["text"] = text
    message.properties.set_properties({"tags": ["a", "b"], "meta": {"n": 1}})
    edge = ctx.graph.create_edge(user, message, mgp.EdgeType("SENT"))
    edge.properties["weight"] = 0.5
    if fail:
        raise RuntimeError("failed after writing")
    return [mgp.Record(message=message, edge=edge)]


@mgp.write_proc
def churn(ctx: mgp.ProcCtx, target: mgp.Vertex, fail: bool) -> mgp.Record(deleted=int):
    """Every kind of write, then optionally fail: the store must end exactly as before a failure."""
    graph = ctx.graph
    extra = graph.create_vertex()
    extra.add_label("Extra")
    graph.create_edge(target, extra, mgp.EdgeType("LINK"))
    target.properties["name"] = "renamed"
    target.properties["new"] = [1, 2, 3]
    target.properties["vector"] = None
    target.add_label("Touched")
    target.remove_label("User")
    deleted = 0
    for edge in list(target.out_edges):
        if edge.type.name == "SENT":
            graph.delete_edge(edge)
            deleted += 1
    for vertex in list(graph.vertices):
        if "Message" in [label.name for label in vertex.labels]:
            graph.detach_delete_vertex(vertex)
            deleted += 1
    if fail:
        raise ValueError("churn failed")
    return mgp.Record(deleted=deleted)


@mgp.write_proc
def bump(ctx: mgp.ProcCtx, label: str, key: str) -> mgp.Record(version=int):
    """Set `key` to one more than before on every vertex with `label`, one vertex at a time."""
    version = None
    for vertex in ctx.graph.vertices:
        if label in [lab.name for lab in vertex.labels]:
            if version is None:
                version = vertex.properties.get(key, 0) + 1
            vertex.properties[key] = version
            time.sleep(0)  # let readers try to run in the middle of the write
    return mgp.Record(version=version or 0)


@mgp.function
def shout(text: str) -> str:
    return sample_lib.shout(text)
