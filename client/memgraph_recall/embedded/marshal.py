"""Values crossing the procedure boundary, converted the way Memgraph marshals them.

In: caller values become what a Python procedure receives (lists as tuples, maps as fresh dicts,
vertex/edge refs as live `mgp` objects bound to the call). Out: procedure results become what a
Bolt client receives (lists, dicts, detached `Node`/`Relationship`/`GraphPath` snapshots); anything
that is not exactly a Cypher-representable Python type is refused, as Memgraph refuses it.
"""

from datetime import date, datetime, time, timedelta
from types import ModuleType
from typing import Any

from .scope import CallScope
from .snapshots import EdgeRef, GraphPath, Node, Relationship, VertexRef
from .store import check_int64, node_snapshot, relationship_snapshot

_PASS_THROUGH = frozenset({bool, float, str, type(None), date, time, datetime, timedelta})
_FLAT = _PASS_THROUGH | {int}


def _type_name(kind: type) -> str:
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def to_proc_value(value: Any, scope: CallScope, mgp: ModuleType) -> Any:
    """A caller's argument as the procedure receives it. Raises TypeError (not a Cypher value),
    OverflowError (int outside int64) or LookupError (the referenced element does not exist)."""
    kind = type(value)
    if kind in _PASS_THROUGH:
        return value
    if kind is int:
        return check_int64(value)
    if kind is list or kind is tuple:
        kinds = set(map(type, value))
        if kinds <= _PASS_THROUGH:
            return tuple(value)
        return tuple([to_proc_value(item, scope, mgp) for item in value])
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError(f"map keys must be strings, got {_type_name(type(key))} {key!r}")
            out[key] = to_proc_value(item, scope, mgp)
        return out
    if kind is VertexRef or kind is Node:
        return mgp.Vertex(scope.store.get_vertex(value.id), scope)
    if kind is EdgeRef or kind is Relationship:
        return mgp.Edge(scope.store.get_edge(value.id), scope)
    if kind is GraphPath:
        return _path_argument(value, scope, mgp)
    raise TypeError(f"{_type_name(kind)} is not a Cypher value")


def _path_argument(path: GraphPath, scope: CallScope, mgp: ModuleType) -> Any:
    if not path.nodes:
        raise TypeError("a path needs at least one node")
    live = mgp.Path(mgp.Vertex(scope.store.get_vertex(path.nodes[0].id), scope))
    for rel in path.relationships:
        live.expand(mgp.Edge(scope.store.get_edge(rel.id), scope))
    return live


def to_output(value: Any, mgp: ModuleType) -> Any:
    """A procedure's result value as a client receives it. Raises TypeError for values Memgraph
    cannot convert ("Unsupported PyObject conversion") and OverflowError for ints outside int64."""
    kind = type(value)
    if kind in _PASS_THROUGH:
        return value
    if kind is int:
        return check_int64(value)
    if kind is list or kind is tuple:
        kinds = set(map(type, value))
        if kinds <= _FLAT and int not in kinds:
            return list(value)
        return [to_output(item, mgp) for item in value]
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError(f"map key {key!r} is a {_type_name(type(key))}, not a string")
            out[key] = to_output(item, mgp)
        return out
    if kind is mgp.Vertex:
        return node_snapshot(_live(value)._data)
    if kind is mgp.Edge:
        return relationship_snapshot(_live(value)._data)
    if kind is mgp.Path:
        _live(value)
        return GraphPath(tuple(node_snapshot(v) for v in value._vertices),
                         tuple(relationship_snapshot(e) for e in value._edges))
    raise TypeError(f"Unsupported PyObject conversion: {_type_name(kind)} is not a Cypher value")


def _live(obj: Any) -> Any:
    if not obj.is_valid():
        raise TypeError("Unsupported PyObject conversion: the graph object is no longer valid")
    return obj
