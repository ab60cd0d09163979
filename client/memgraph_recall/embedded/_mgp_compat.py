"""Our own implementation of Memgraph's Python `mgp` API, backed by the embedded graph store.

The host loads this file as a module named `mgp` and puts it in `sys.modules["mgp"]` only while it
imports or runs query modules, so module code uses plain `import mgp`. It mirrors the public surface
of current Memgraph (see /work/shared/research/mgp.md §1) and its rules: registration through the
decorators with Memgraph's typing rules, graph objects valid only during their call, writes only in
write procedures. Written from the documented behaviour, not from Memgraph's (BSL) sources.
"""

import datetime
import inspect
import logging
import typing
from collections import namedtuple

from memgraph_recall.embedded import cypher_types as _ct
from memgraph_recall.embedded import registry as _registry
from memgraph_recall.embedded import store as _store

_MISSING = object()
_read_value = _store.read_value


# -- exceptions ---------------------------------------------------------------------------------
class InvalidContextError(Exception):
    """A graph object, ctx or graph was used outside the call that produced it."""


class UnknownError(Exception):
    """Unspecified failure."""


class UnableToAllocateError(Exception):
    """Memory allocation failed."""


class InsufficientBufferError(Exception):
    """A buffer is too small."""


class OutOfRangeError(Exception):
    """An index-like argument is out of range."""


class LogicErrorError(Exception):
    """A precondition was violated (e.g. deleting a vertex that still has edges)."""


class DeletedObjectError(Exception):
    """The object was deleted."""


class InvalidArgumentError(Exception):
    """An argument has an invalid value."""


class KeyAlreadyExistsError(Exception):
    """The key already exists."""


class ImmutableObjectError(Exception):
    """A write was attempted on an immutable object (any graph object in a read procedure)."""


class ValueConversionError(Exception):
    """A Python value has no Cypher equivalent."""


class SerializationError(Exception):
    """A concurrent transaction modified the object."""


class AuthorizationError(Exception):
    """The user may not do this."""


class AbortError(Exception):
    """The procedure was asked to abort (client termination or timeout)."""


class UnsupportedTypingError(Exception):
    """A type annotation has no Cypher type."""

    def __init__(self, type_: object) -> None:
        super().__init__(f"Unsupported typing annotation '{type_}'")


def _immutable() -> ImmutableObjectError:
    return ImmutableObjectError("Cannot modify an immutable object: a read procedure's graph is read-only.")


def _write(scope, action, *args):
    """Run a store write for a write procedure, translating store errors to mgp's."""
    if not scope.valid:
        raise InvalidContextError()
    if not scope.mutable:
        raise _immutable()
    try:
        return action(*args)
    except _store.DeletedElementError as exc:
        raise DeletedObjectError(str(exc)) from None
    except (TypeError, OverflowError) as exc:
        raise ValueConversionError(str(exc)) from None


# -- labels, types, properties ------------------------------------------------------------------
class _Name:
    """A label or edge-type name: equal to the same kind with the same name, or to that str (not hashable)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def __eq__(self, other: object) -> bool:
        if isinstance(other, type(self)):
            return self._name == other._name
        if isinstance(other, str):
            return self._name == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class Label(_Name):
    """Label of a Vertex."""

    __slots__ = ()


class EdgeType(_Name):
    """Type of an Edge."""

    __slots__ = ()


Property = namedtuple("Property", ("name", "value"))


class Properties:
    """The properties of a Vertex or Edge; lists read as tuples, maps as fresh dicts."""

    __slots__ = ("_owner",)

    def __init__(self, vertex_or_edge) -> None:
        self._owner = vertex_or_edge

    def _props(self) -> dict:
        owner = self._owner
        if not owner._scope.valid:
            raise InvalidContextError()
        if owner._data.deleted:
            raise DeletedObjectError("the object was deleted")
        return owner._data.props

    def get(self, property_name: str, default=None) -> object:
        owner = self._owner
        if not owner._scope.valid:
            raise InvalidContextError()
        data = owner._data
        if data.deleted:
            raise DeletedObjectError("the object was deleted")
        value = data.props.get(property_name, _MISSING)
        if value is _MISSING:
            return default
        return _read_value(value)

    def __getitem__(self, property_name: str) -> object:
        value = self._props().get(property_name, _MISSING)
        if value is _MISSING:
            raise KeyError(property_name)
        return _read_value(value)

    def __contains__(self, property_name: str) -> bool:
        return property_name in self._props()

    def __len__(self) -> int:
        return len(self._props())

    def __iter__(self) -> typing.Iterator[str]:
        return iter(list(self._props()))

    def keys(self) -> typing.Iterator[str]:
        return iter(list(self._props()))

    def values(self) -> typing.Iterator[object]:
        return (_store.read_value(v) for v in list(self._props().values()))

    def items(self) -> typing.Iterator[Property]:
        return (Property(k, _store.read_value(v)) for k, v in list(self._props().items()))

    def set(self, property_name: str, value: object) -> None:
        """Set a property; None removes it."""
        self[property_name] = value

    def __setitem__(self, property_name: str, value: object) -> None:
        owner = self._owner
        _write(owner._scope, owner._scope.store.set_property, owner._data, property_name, value)

    def set_properties(self, properties: dict) -> None:
        for name, value in properties.items():
            self[name] = value


# -- graph objects ------------------------------------------------------------------------------
VertexId = typing.NewType("VertexId", int)
EdgeId = typing.NewType("EdgeId", int)


class _CallBound:
    """What vertices and edges share: a store record and the call scope that makes it valid."""

    __slots__ = ("_data", "_scope")

    def __init__(self, data, scope) -> None:
        self._data = data
        self._scope = scope

    def __deepcopy__(self, memo):
        return type(self)(self._data, self._scope)

    def is_valid(self) -> bool:
        return self._scope.valid

    def underlying_graph_is_mutable(self) -> bool:
        if not self._scope.valid:
            raise InvalidContextError()
        return self._scope.mutable

    @property
    def id(self) -> int:
        if not self._scope.valid:
            raise InvalidContextError()
        return self._data.id


class Edge(_CallBound):
    """An edge, valid only during the call that produced it."""

    __slots__ = ()
    _cypher_kind = "RELATIONSHIP"

    @property
    def type(self) -> EdgeType:
        if not self._scope.valid:
            raise InvalidContextError()
        return EdgeType(self._data.type)

    @property
    def from_vertex(self) -> "Vertex":
        if not self._scope.valid:
            raise InvalidContextError()
        return Vertex(self._data.start, self._scope)

    @property
    def to_vertex(self) -> "Vertex":
        if not self._scope.valid:
            raise InvalidContextError()
        return Vertex(self._data.end, self._scope)

    @property
    def properties(self) -> Properties:
        if not self._scope.valid:
            raise InvalidContextError()
        return Properties(self)

    def __eq__(self, other: object) -> bool:
        if not self._scope.valid:
            raise InvalidContextError()
        if not isinstance(other, Edge):
            return NotImplemented
        return self._data is other._data

    def __hash__(self) -> int:
        return hash(self.id)


class Vertex(_CallBound):
    """A vertex, valid only during the call that produced it."""

    __slots__ = ()
    _cypher_kind = "NODE"

    @property
    def labels(self) -> tuple[Label, ...]:
        if not self._scope.valid:
            raise InvalidContextError()
        return tuple(Label(name) for name in self._data.labels)

    def add_label(self, label: str) -> None:
        _write(self._scope, self._scope.store.add_label, self._data, label)

    def remove_label(self, label: str) -> None:
        _write(self._scope, self._scope.store.remove_label, self._data, label)

    @property
    def properties(self) -> Properties:
        if not self._scope.valid:
            raise InvalidContextError()
        return Properties(self)

    @property
    def in_edges(self) -> typing.Iterator[Edge]:
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        edges = self._data.in_edges
        if scope.mutable:  # a copy: the procedure may add or delete edges while iterating
            edges = [e for e in edges if not e.deleted]
        return (Edge(e, scope) for e in edges)

    @property
    def out_edges(self) -> typing.Iterator[Edge]:
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        edges = self._data.out_edges
        if scope.mutable:
            edges = [e for e in edges if not e.deleted]
        return (Edge(e, scope) for e in edges)

    def __eq__(self, other: object) -> bool:
        if not self._scope.valid:
            raise InvalidContextError()
        if not isinstance(other, Vertex):
            return NotImplemented
        return self._data is other._data

    def __hash__(self) -> int:
        return hash(self.id)


class Path:
    """A path that starts at a vertex and grows edge by edge."""

    __slots__ = ("_vertices", "_edges", "_scope")
    _cypher_kind = "PATH"

    def __init__(self, starting_vertex: Vertex) -> None:
        if not isinstance(starting_vertex, Vertex):
            raise TypeError(f"Expected 'mgp.Vertex', got '{type(starting_vertex)}'")
        if not starting_vertex.is_valid():
            raise InvalidContextError()
        self._scope = starting_vertex._scope
        self._vertices = [starting_vertex._data]
        self._edges: list = []

    def __copy__(self) -> "Path":
        copy = Path.__new__(Path)
        copy._scope, copy._vertices, copy._edges = self._scope, list(self._vertices), list(self._edges)
        return copy

    def __deepcopy__(self, memo) -> "Path":
        return self.__copy__()

    def is_valid(self) -> bool:
        return self._scope.valid

    def expand(self, edge: Edge) -> None:
        """Append an edge that touches the current last vertex (in either direction)."""
        if not isinstance(edge, Edge):
            raise TypeError(f"Expected 'mgp.Edge', got '{type(edge)}'")
        if not self.is_valid() or not edge.is_valid():
            raise InvalidContextError()
        last, data = self._vertices[-1], edge._data
        if data.start is last:
            self._vertices.append(data.end)
        elif data.end is last:
            self._vertices.append(data.start)
        else:
            raise LogicErrorError("The current last vertex in the path is not part of the given edge.")
        self._edges.append(data)

    def pop(self) -> None:
        """Remove the last edge and vertex."""
        if not self.is_valid():
            raise InvalidContextError()
        if not self._edges:
            raise OutOfRangeError("Cannot pop from a path with no edges.")
        self._edges.pop()
        self._vertices.pop()

    @property
    def length(self) -> int:
        if not self.is_valid():
            raise InvalidContextError()
        return len(self._edges)

    @property
    def vertices(self) -> tuple[Vertex, ...]:
        if not self.is_valid():
            raise InvalidContextError()
        return tuple(Vertex(v, self._scope) for v in self._vertices)

    @property
    def edges(self) -> tuple[Edge, ...]:
        if not self.is_valid():
            raise InvalidContextError()
        return tuple(Edge(e, self._scope) for e in self._edges)


class Record:
    """A result row: `Record(name=value, ...)`; as a return annotation, `Record(name=type, ...)`."""

    __slots__ = ("fields",)

    def __init__(self, **kwargs) -> None:
        self.fields = kwargs


class Vertices:
    """All vertices of the graph: iterable, `in`, and `len` (a full count)."""

    __slots__ = ("_scope",)

    def __init__(self, scope) -> None:
        self._scope = scope

    def is_valid(self) -> bool:
        return self._scope.valid

    def __iter__(self) -> typing.Iterator[Vertex]:
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        values = scope.store.vertices.values()
        if scope.mutable:  # a copy: the procedure may create or delete vertices while iterating
            values = [v for v in values if not v.deleted]
        return (Vertex(v, scope) for v in values)

    def __contains__(self, vertex: Vertex) -> bool:
        if not self._scope.valid:
            raise InvalidContextError()
        data = self._scope.store.vertices.get(vertex.id)
        return data is not None and not data.deleted

    def __len__(self) -> int:
        if not self._scope.valid:
            raise InvalidContextError()
        return sum(1 for v in self._scope.store.vertices.values() if not v.deleted)


class Graph:
    """The graph as the calling query sees it."""

    __slots__ = ("_scope",)

    def __init__(self, scope) -> None:
        self._scope = scope

    def is_valid(self) -> bool:
        return self._scope.valid

    def get_vertex_by_id(self, vertex_id: int) -> Vertex:
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        data = scope.store.vertices.get(vertex_id)
        if data is None or data.deleted:
            raise IndexError(f"Unable to find vertex with id {vertex_id}.")
        return Vertex(data, scope)

    @property
    def vertices(self) -> Vertices:
        if not self._scope.valid:
            raise InvalidContextError()
        return Vertices(self._scope)

    @property
    def start_timestamp(self) -> int:
        """Stable for the whole call: usable as a per-query cache key (Memgraph 3.11+)."""
        if not self._scope.valid:
            raise InvalidContextError()
        return self._scope.start_timestamp

    def is_mutable(self) -> bool:
        if not self._scope.valid:
            raise InvalidContextError()
        return self._scope.mutable

    def create_vertex(self) -> Vertex:
        scope = self._scope
        return Vertex(_write(scope, scope.store.create_vertex), scope)

    def delete_vertex(self, vertex: Vertex) -> None:
        """Delete a vertex that has no edges (LogicErrorError otherwise)."""
        self._delete_vertex(vertex, False)

    def detach_delete_vertex(self, vertex: Vertex) -> None:
        """Delete a vertex and all its edges."""
        self._delete_vertex(vertex, True)

    def _delete_vertex(self, vertex: Vertex, detach: bool) -> None:
        scope = self._scope
        if not vertex.is_valid():
            raise InvalidContextError()
        try:
            _write(scope, scope.store.remove_vertex, vertex._data, detach)
        except ValueError as exc:
            raise LogicErrorError(str(exc)) from None

    def create_edge(self, from_vertex: Vertex, to_vertex: Vertex, edge_type: EdgeType) -> Edge:
        scope = self._scope
        if not from_vertex.is_valid() or not to_vertex.is_valid():
            raise InvalidContextError()
        name = getattr(edge_type, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"edge_type must be an mgp.EdgeType, got {type(edge_type).__name__}")
        return Edge(_write(scope, scope.store.create_edge, from_vertex._data, to_vertex._data, name), scope)

    def delete_edge(self, edge: Edge) -> None:
        scope = self._scope
        if not edge.is_valid():
            raise InvalidContextError()
        _write(scope, scope.store.remove_edge, edge._data)


class ProcCtx:
    """Context of one procedure call."""

    __slots__ = ("_graph",)

    def __init__(self, scope) -> None:
        self._graph = Graph(scope)

    def is_valid(self) -> bool:
        return self._graph.is_valid()

    @property
    def graph(self) -> Graph:
        if not self.is_valid():
            raise InvalidContextError()
        return self._graph

    def must_abort(self) -> bool:
        if not self.is_valid():
            raise InvalidContextError()
        return self._graph._scope.must_abort()

    def check_must_abort(self) -> None:
        """Raise AbortError if the call was terminated or its time limit elapsed."""
        if self.must_abort():
            raise AbortError("The procedure was asked to abort.")


class FuncCtx:
    """Context of one function call (the graph is not exposed to functions)."""

    __slots__ = ("_scope",)

    def __init__(self, scope) -> None:
        self._scope = scope

    def is_valid(self) -> bool:
        return self._scope.valid


class Message:
    """A stream message (transformations only; the embedded runtime has no streams)."""

    __slots__ = ("_message",)


class Messages:
    """A batch of stream messages (transformations only)."""

    __slots__ = ("_messages",)


class TransCtx:
    """Context of a transformation (registered, never run by the embedded runtime)."""

    __slots__ = ("_graph",)


class Logger:
    """Module log: captured by the runtime (`Runtime.logs`) and Python logging."""

    __slots__ = ("_module", "_sink")

    def __init__(self) -> None:
        ctx = _registry.current()
        self._module = ctx.module if ctx is not None else "mgp"
        self._sink = ctx.log_sink if ctx is not None else None

    def _emit(self, level: str, out: str) -> None:
        if self._sink is not None:
            self._sink(self._module, level, str(out))
        else:
            logging.getLogger(f"memgraph_recall.embedded.{self._module}").log(_LEVELS[level], "%s", out)

    def info(self, out: str) -> None:
        self._emit("info", out)

    def warning(self, out: str) -> None:
        self._emit("warning", out)

    def error(self, out: str) -> None:
        self._emit("error", out)

    def critical(self, out: str) -> None:
        self._emit("critical", out)

    def debug(self, out: str) -> None:
        self._emit("debug", out)

    def trace(self, out: str) -> None:
        self._emit("trace", out)


_LEVELS = {"trace": 5, "debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR, "critical": logging.CRITICAL}


# -- type aliases -------------------------------------------------------------------------------
Number = typing.Union[int, float]
Map = typing.Union[dict, Edge, Vertex]
Date = datetime.date
LocalTime = datetime.time
LocalDateTime = datetime.datetime
Duration = datetime.timedelta
ZonedDateTime = typing.NewType("ZonedDateTime", datetime.datetime)
Any = typing.Union[bool, str, Number, Map, Path, list, Date, LocalTime, LocalDateTime, Duration,
                   ZonedDateTime]
List = typing.List  # noqa: UP006 - mgp exposes typing.List
Nullable = typing.Optional


class Deprecated:
    """Marks a result field as deprecated: `Record(old=Deprecated(str))`."""

    __slots__ = ("field_type",)

    def __init__(self, type_) -> None:
        self.field_type = type_


_SIMPLE_TYPES = {
    typing.Any: _ct.nullable(_ct.ANY),
    object: _ct.nullable(_ct.ANY),
    list: _ct.ListType(_ct.nullable(_ct.ANY)),
    Any: _ct.ANY,
    bool: _ct.BOOLEAN,
    str: _ct.STRING,
    int: _ct.INTEGER,
    float: _ct.FLOAT,
    Number: _ct.NUMBER,
    Map: _ct.MAP,
    Vertex: _ct.NODE,
    Edge: _ct.RELATIONSHIP,
    Path: _ct.PATH,
    Date: _ct.DATE,
    LocalTime: _ct.LOCAL_TIME,
    LocalDateTime: _ct.LOCAL_DATE_TIME,
    Duration: _ct.DURATION,
    ZonedDateTime: _ct.ZONED_DATE_TIME,
}


def _cypher_type(annotation) -> _ct.CypherType:
    """Memgraph's annotation rules: typing.Optional/List and the aliases above, nothing else
    (no dict, no PEP 604 unions, no string annotations)."""
    try:
        simple = _SIMPLE_TYPES.get(annotation)
    except TypeError:  # unhashable annotation
        simple = None
    if simple is not None:
        return simple
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union and type(None) in args:
        rest = tuple(a for a in args if a is not type(None))
        return _ct.nullable(_cypher_type(rest[0] if len(rest) == 1 else typing.Union[rest]))
    if origin is list and len(args) == 1:
        return _ct.ListType(_cypher_type(args[0]))
    raise UnsupportedTypingError(annotation)


# -- registration -------------------------------------------------------------------------------
def _check_callable(func) -> None:
    if not callable(func):
        raise TypeError(f"Expected a callable object, got an instance of '{type(func)}'")
    if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
        raise TypeError("Callable must not be 'async def' function")
    if inspect.isgeneratorfunction(func):
        raise NotImplementedError("Generator functions are not supported")


def _arguments(params) -> list[_registry.Argument]:
    arguments = []
    for param in params:
        annotation = object if param.annotation is param.empty else param.annotation
        ctype = _cypher_type(annotation)
        if param.default is param.empty:
            arguments.append(_registry.Argument(param.name, ctype))
            continue
        try:
            stored = _store.freeze(param.default)
        except (TypeError, OverflowError) as exc:
            raise ValueError(f"The default value of argument '{param.name}' is not a Cypher value: "
                             f"{exc}") from None
        if not ctype.satisfies(_store.read_value(stored)):
            raise ValueError(f"The default value {param.default!r} of argument '{param.name}' "
                             f"doesn't satisfy the type {ctype.name}.")
        arguments.append(_registry.Argument(param.name, ctype, True, stored))
    return arguments


def _register(func, kind: str, ctx_type: type):
    _check_callable(func)
    module = _registry.loading_module()
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    takes_ctx = bool(params) and params[0].annotation is ctx_type
    spec = _registry.Registration(module.name, func.__name__, func, takes_ctx, kind,
                                  _arguments(params[1:] if takes_ctx else params))
    if kind != "function" and sig.return_annotation is not sig.empty:
        record = sig.return_annotation
        if not isinstance(record, Record):
            raise TypeError(f"Expected '{func.__name__}' to return 'mgp.Record', got '{type(record)}'")
        deprecated = set()
        for name, field_type in record.fields.items():
            if isinstance(field_type, Deprecated):
                deprecated.add(name)
                field_type = field_type.field_type
            spec.results[name] = _cypher_type(field_type)
        spec.deprecated = frozenset(deprecated)
    module.add(spec)
    return func


def read_proc(func):
    """Register `func` as a read-only procedure of the module being loaded."""
    return _register(func, "read", ProcCtx)


def write_proc(func):
    """Register `func` as a procedure that may modify the graph."""
    return _register(func, "write", ProcCtx)


def function(func):
    """Register `func` as a user-defined Cypher function."""
    return _register(func, "function", FuncCtx)


def transformation(func):
    """Register a stream transformation `(Messages)` or `(TransCtx, Messages)` (never run here)."""
    _check_callable(func)
    params = tuple(inspect.signature(func).parameters.values())
    shapes = [p.annotation for p in params]
    if shapes not in ([Messages], [TransCtx, Messages]):
        raise NotImplementedError(
            "Valid signatures for transformations are (TransCtx, Messages) or (Messages)")
    _registry.loading_module().transformations[func.__name__] = func
    return func
