"""A query module for the multi-database tests: module-level state every database shares, reads that
report what the calling database holds, and a slow write."""

import time

import mgp

_STATE = {"calls": 0}


@mgp.read_proc
def count_calls() -> mgp.Record(calls=int):
    """One counter for the whole runtime, whichever database calls."""
    _STATE["calls"] += 1
    return mgp.Record(calls=_STATE["calls"])


@mgp.read_proc
def names(ctx: mgp.ProcCtx) -> mgp.Record(id=int, name=mgp.Nullable[str]):
    return [mgp.Record(id=v.id, name=v.properties.get("name")) for v in ctx.graph.vertices]


@mgp.read_proc
def name_by_id(ctx: mgp.ProcCtx, vertex_id: int) -> mgp.Record(name=mgp.Nullable[str], found=bool):
    try:
        vertex = ctx.graph.get_vertex_by_id(vertex_id)
    except IndexError:
        return mgp.Record(name=None, found=False)
    return mgp.Record(name=vertex.properties.get("name"), found=True)


@mgp.read_proc
def name_of(ctx: mgp.ProcCtx, vertex: mgp.Vertex) -> mgp.Record(name=mgp.Nullable[str]):
    return mgp.Record(name=vertex.properties.get("name"))


@mgp.write_proc
def slow_create(ctx: mgp.ProcCtx, name: str, seconds: mgp.Number) -> mgp.Record(id=int):
    """Create a vertex, then hold the write for `seconds` (setting the test's event
    `_STATE["writing"][name]`, if there is one, once the write has begun)."""
    vertex = ctx.graph.create_vertex()
    vertex.properties["name"] = name
    if name in _STATE.get("writing", {}):
        _STATE["writing"][name].set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ctx.check_must_abort()
        time.sleep(0.005)
    return mgp.Record(id=vertex.id)


@mgp.function
def shout(text: str) -> str:
    return text.upper()
