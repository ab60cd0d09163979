"""Counting the procedure-API calls a procedure makes, so a real server's cost can be estimated.

The embedded runtime is not Memgraph: reading through Memgraph's `mgp.py` costs about twice as much
per vertex, and its objects live off the Python heap. A benchmark therefore reports how many API calls
a procedure made (`runtime.call(..., api_counts=ApiCounts())`); multiplied by per-call costs measured
on a real server, they estimate that server's time.

What counts is what Memgraph's `mgp.py` turns into one call of its C extension each: a Vertex or Edge
handed out, one property value read, one label read, an edge's type, an id. Counting costs nothing
when it is off: the plain `mgp` classes are untouched, and only a call that asks for counts gets a
`ProcCtx` of the counting subclasses below, whose every handout is a counting object again. Paths a
procedure builds itself (`mgp.Path(vertex)`) are plain objects: what is reached through them is not
counted (recall builds none).

Arguments are a separate count, `arguments`: before the call Memgraph converts the whole argument list,
the defaults of omitted arguments included (src/query/procedure/module.cpp, `ConstructArguments`), to
Python objects in C (src/query/procedure/py_module.cpp, `MgpListToPyTupleImpl` and
`MgpValueToPyObjectImpl`, called from `CallPythonProcedure`). One count per value that conversion
builds: each argument, and within lists and maps each element, recursively, whatever its type (null,
bool, int, float, string, temporal, list, map, vertex, edge, path; a path counts once, its contents are
wrapped lazily), plus one per map key (`PyDict_SetItemString` builds a `str` for it). So `f(1)` is 1,
`f([1, 2])` 3, `f({"a": [1]})` 4 (map, key, list, element). Vertices and edges handed in count here,
not in `vertices`/`edges`.
"""

from collections import Counter
from dataclasses import dataclass, field, fields
from types import ModuleType, SimpleNamespace
from typing import Any


@dataclass(slots=True)
class ApiCounts:
    """Procedure-API calls, accumulated over every call it is passed to (one object per thread)."""

    vertices: int = 0  # Vertices handed out: get_vertex_by_id (a missing id too), graph.vertices, ends
    edges: int = 0  # Edge objects handed out: each step of in_edges/out_edges, create_edge
    properties: int = 0  # property values read: get, [], in, each property an iteration yields
    labels: int = 0  # labels read: each Label of `vertex.labels` (Memgraph reads them one by one)
    types: int = 0  # `edge.type` reads
    ids: int = 0  # `.id` reads of vertices and edges (hashing one reads its id)
    arguments: int = 0  # argument values converted for the call, defaults included (see module doc)
    #: When a Counter is given: how often each vertex (by id) was handed out, to check that a walk
    #: reads each vertex of a kind once. Not an API call of its own; not in `as_dict` or `total`.
    handouts: Counter | None = field(default=None, compare=False)

    @property
    def total(self) -> int:
        return (self.vertices + self.edges + self.properties + self.labels + self.types + self.ids
                + self.arguments)

    def as_dict(self) -> dict[str, int]:
        """The counts by kind, `arguments` included, plus `total`."""
        kinds = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "handouts"}
        return {**kinds, "total": self.total}


def count_arguments(values: list[Any]) -> int:
    """How many values Memgraph's C layer converts to hand these (already converted) arguments in:
    one per value at any depth (tuples are lists, dicts maps) and one per map key."""
    count, pending = 0, list(values)
    while pending:
        value = pending.pop()
        count += 1
        kind = type(value)
        if kind is tuple:
            pending.extend(value)
        elif kind is dict:
            count += len(value)
            pending.extend(value.values())
    return count


_families: dict[ModuleType, SimpleNamespace] = {}


def counting_api(mgp: ModuleType) -> SimpleNamespace:
    """The counting classes for our `mgp` module (made once per module object): `ProcCtx`, `Vertex`,
    `Edge` and `Path`, the names the host and argument conversion use."""
    family = _families.get(mgp)
    if family is None:
        family = _families[mgp] = _make_family(mgp)
    return family


def _make_family(mgp: ModuleType) -> SimpleNamespace:
    """One counting subclass per mgp class that hands out objects or reads values."""

    def counts(bound: Any) -> ApiCounts:
        return bound._scope.counts

    def check(bound: Any) -> None:
        if not bound._scope.valid:
            raise mgp.InvalidContextError()

    class CountingProperties(mgp.Properties):
        __slots__ = ()

        def get(self, property_name: str, default: object = None) -> object:
            counts(self._owner).properties += 1
            return mgp.Properties.get(self, property_name, default)

        def __getitem__(self, property_name: str) -> object:
            counts(self._owner).properties += 1
            return mgp.Properties.__getitem__(self, property_name)

        def __contains__(self, property_name: str) -> bool:
            counts(self._owner).properties += 1
            return mgp.Properties.__contains__(self, property_name)

        def __len__(self) -> int:  # mgp.py counts by iterating every property
            size = mgp.Properties.__len__(self)
            counts(self._owner).properties += size
            return size

        def _snapshot(self):
            tally = counts(self._owner)
            for item in mgp.Properties._snapshot(self):
                tally.properties += 1
                yield item

    class CountingBound:
        """What counting vertices and edges share: their id reads and their properties."""

        __slots__ = ()

        @property
        def id(self) -> int:
            counts(self).ids += 1
            return mgp.Vertex.id.fget(self)

        @property
        def properties(self) -> CountingProperties:
            check(self)
            return CountingProperties(self)

    def vertex(plain: Any) -> "CountingVertex":
        tally = counts(plain)
        tally.vertices += 1
        if tally.handouts is not None:
            tally.handouts[plain._data.id] += 1
        return CountingVertex(plain._data, plain._scope)

    def edge(plain: Any) -> "CountingEdge":
        counts(plain).edges += 1
        return CountingEdge(plain._data, plain._scope)

    class CountingVertex(CountingBound, mgp.Vertex):
        __slots__ = ()

        @property
        def labels(self) -> tuple:
            labels = mgp.Vertex.labels.fget(self)
            counts(self).labels += len(labels)
            return labels

        def _edges(self, side: str, direction: str):
            for plain in mgp.Vertex._edges(self, side, direction):
                yield edge(plain)

    class CountingEdge(CountingBound, mgp.Edge):
        __slots__ = ()

        @property
        def type(self) -> Any:
            counts(self).types += 1
            return mgp.Edge.type.fget(self)

        @property
        def from_vertex(self) -> CountingVertex:
            return vertex(mgp.Edge.from_vertex.fget(self))

        @property
        def to_vertex(self) -> CountingVertex:
            return vertex(mgp.Edge.to_vertex.fget(self))

    class CountingVertices(mgp.Vertices):
        __slots__ = ()

        def __iter__(self):
            for plain in mgp.Vertices.__iter__(self):
                yield vertex(plain)

        def __contains__(self, item: Any) -> bool:  # mgp.py looks the vertex up by id
            self._scope.counts.vertices += 1
            return mgp.Vertices.__contains__(self, item)

        def __len__(self) -> int:  # mgp.py counts by iterating every vertex
            size = mgp.Vertices.__len__(self)
            self._scope.counts.vertices += size
            return size

    class CountingGraph(mgp.Graph):
        __slots__ = ()

        def get_vertex_by_id(self, vertex_id: int) -> CountingVertex:
            try:
                found = mgp.Graph.get_vertex_by_id(self, vertex_id)
            except IndexError:  # a missing id is one C call too (mgp_graph_get_vertex_by_id)
                counts(self).vertices += 1
                raise
            return vertex(found)

        @property
        def vertices(self) -> CountingVertices:
            check(self)
            return CountingVertices(self._scope)

        def create_vertex(self) -> CountingVertex:
            return vertex(mgp.Graph.create_vertex(self))

        def create_edge(self, from_vertex: Any, to_vertex: Any, edge_type: Any) -> CountingEdge:
            return edge(mgp.Graph.create_edge(self, from_vertex, to_vertex, edge_type))

    class CountingProcCtx(mgp.ProcCtx):
        __slots__ = ()

        def __init__(self, scope: Any) -> None:
            self._graph = CountingGraph(scope)

    return SimpleNamespace(ProcCtx=CountingProcCtx, Vertex=CountingVertex, Edge=CountingEdge,
                           Path=mgp.Path)
