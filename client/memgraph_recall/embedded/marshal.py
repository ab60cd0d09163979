"""Values crossing the procedure boundary, converted the way Memgraph marshals them.

In: caller values become what a Python procedure receives (lists as tuples, maps as fresh dicts,
vertex/edge refs as live `mgp` objects bound to the call). Out: procedure results (and property
values a procedure stores) are read the way Memgraph's C layer reads a Python object
(`PyObjectToMgpValue`): its type checks accept subclasses of int, float, str, list, tuple and dict
(`numpy.float64` is a float; `numpy.float32` and `numpy.int64` are not), the temporal types only
exactly; anything else is refused. Results become what a Bolt client receives (lists, dicts,
detached `Node`/`Relationship`/`GraphPath` snapshots).
"""

from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from types import ModuleType, SimpleNamespace
from typing import Any

from .scope import CallScope
from .snapshots import EdgeRef, GraphPath, Node, Relationship, VertexRef
from .store import node_snapshot, relationship_snapshot
from .values import INT64_MAX, INT64_MIN, check_int64

_PASS_THROUGH = frozenset({bool, float, str, type(None), date, time, datetime, timedelta})
_INT = {int}


def _type_name(kind: type) -> str:
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def to_proc_value(value: Any, scope: CallScope, mgp: ModuleType | SimpleNamespace) -> Any:
    """A caller's argument as the procedure receives it, graph elements as `mgp.Vertex`, `.Edge` and
    `.Path` (our mgp's classes, or the counting ones of `api_counts`). Raises TypeError (not a Cypher
    value), OverflowError (int outside int64) or LookupError (the referenced element does not exist)."""
    kind = type(value)
    if kind in _PASS_THROUGH:
        return value
    if kind is int:
        return check_int64(value)
    if kind is list or kind is tuple:
        kinds = set(map(type, value))
        if kinds <= _PASS_THROUGH:
            return tuple(value)
        if kinds == _INT and INT64_MIN <= min(value) and max(value) <= INT64_MAX:
            return tuple(value)  # e.g. the fast call shape's signature lists: checked in C loops
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


def _path_argument(path: GraphPath, scope: CallScope, mgp: ModuleType | SimpleNamespace) -> Any:
    if not path.nodes:
        raise TypeError("a path needs at least one node")
    live = mgp.Path(mgp.Vertex(scope.store.get_vertex(path.nodes[0].id), scope))
    for rel in path.relationships:
        live.expand(mgp.Edge(scope.store.get_edge(rel.id), scope))
    return live


def cypher_value(value: Any, graph_object: Callable[[Any], Any], graph_types: tuple[type, ...]) -> Any:
    """`value` as plain Python types (lists, str-keyed dicts, exact scalars), with instances of
    `graph_types` (mgp Vertex/Edge/Path) replaced by `graph_object(obj)`. Raises ValueError
    ("Unsupported PyObject conversion", a non-string map key) or OverflowError (an int outside
    int64), as Memgraph's conversion does."""
    kind = type(value)
    if kind in _PASS_THROUGH:
        return value
    if kind is int:
        return _int64(value)
    if kind is list or kind is tuple:
        kinds = set(map(type, value))
        if kinds <= _PASS_THROUGH:
            return list(value)
        return [cypher_value(item, graph_object, graph_types) for item in value]
    if kind is dict:
        return _map(value, graph_object, graph_types)
    return _subclass_value(value, graph_object, graph_types)


def _subclass_value(value: Any, graph_object: Callable[[Any], Any], graph_types: tuple[type, ...]) -> Any:
    """The C layer's checks in its order (PyLong_Check, PyFloat_Check, ...), which subclasses pass;
    the value is read as the base type reads it, ignoring overridden dunders."""
    if isinstance(value, int):
        return _int64(int.__int__(value))
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, list):
        return [cypher_value(item, graph_object, graph_types) for item in list.__iter__(value)]
    if isinstance(value, tuple):
        return [cypher_value(item, graph_object, graph_types) for item in tuple.__iter__(value)]
    if isinstance(value, dict):
        return _map(value, graph_object, graph_types)
    if isinstance(value, graph_types):
        return graph_object(value)
    raise ValueError(f"Unsupported PyObject conversion: {_type_name(type(value))} is not a Cypher value")


def _map(value: dict, graph_object: Callable[[Any], Any], graph_types: tuple[type, ...]) -> dict:
    out = {}
    for key, item in dict.items(value):
        if not isinstance(key, str):
            raise ValueError(f"Dictionary keys must be strings, got {_type_name(type(key))} {key!r}")
        out[str.__str__(key)] = cypher_value(item, graph_object, graph_types)
    return out


def _int64(value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise OverflowError(f"Python integer is out of range: {value} does not fit in 64 bits")
    return value


def to_output(value: Any, mgp: ModuleType) -> Any:
    """A procedure's result value as a client receives it (see `cypher_value` for what is refused)."""
    return cypher_value(value, _snapshot, (mgp.Vertex, mgp.Edge, mgp.Path))


def _snapshot(obj: Any) -> Any:
    if not obj.is_valid():
        raise ValueError("Unsupported PyObject conversion: the graph object is no longer valid")
    kind = obj._cypher_kind
    if kind == "NODE":
        return node_snapshot(obj._data)
    if kind == "RELATIONSHIP":
        return relationship_snapshot(obj._data)
    return GraphPath(tuple(node_snapshot(v) for v in obj._vertices),
                     tuple(relationship_snapshot(e) for e in obj._edges))
