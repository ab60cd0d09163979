"""Our own implementation of Memgraph's Python `mgp` API, backed by the embedded graph store.

The host loads this file as a module named `mgp` and puts it in `sys.modules["mgp"]` only while it
imports or runs query modules, so module code uses plain `import mgp`. It mirrors the public surface
of current Memgraph (see ../shared/research/mgp.md §1) and its rules: registration through the
decorators with Memgraph's typing rules, graph objects valid only during their call, writes only in
write procedures, and its failures (error classes and bases, deleted objects, raw errors from
generator steps; see the exceptions section). Our own code, written from Memgraph's documented and
read behaviour (include/mgp.py, src/query/procedure/py_module.cpp), not copied from its BSL sources;
only the error texts a procedure can observe are reproduced, as they must be for parity.
"""

import datetime
import inspect
import logging
import operator
import typing
from collections import namedtuple
from types import ModuleType

from memgraph_recall.embedded import cypher_types as _ct
from memgraph_recall.embedded import marshal as _marshal
from memgraph_recall.embedded import registry as _registry
from memgraph_recall.embedded import values as _values
from memgraph_recall.embedded.errors import TypeConstraintViolation

_MISSING = object()
_read_value = _values.read_value


# -- exceptions ---------------------------------------------------------------------------------
# Memgraph's C extension `_mgp` creates one error class per mgp_error code, each with a builtin base
# (py_module.cpp, PyMgpError table), and raises it with one fixed message per code (the detail goes
# to the server log). `mgp`'s public classes subclass those, and `_wrap_exceptions` re-raises a raw
# `_mgp` error as its `mgp` subclass around every function and property of the API, but not around
# the steps of its generators (in_edges, out_edges, Vertices and Properties iteration): there the raw
# class escapes, and `except mgp.DeletedObjectError` does not catch it.
_mgp = ModuleType("_mgp", "The C extension's error classes, as module code can reach them: mgp._mgp.")


def _raw_class(name: str, base: type, message: str, log_label: str) -> type:
    cls = type(name, (base,), {"__module__": "_mgp", "__qualname__": name, "message": message,
                               "log_label": log_label})
    setattr(_mgp, name, cls)
    return cls


_raw_class("UnknownError", RuntimeError, "Unknown error happened.", "Unexpected error")
_raw_class("UnableToAllocateError", MemoryError, "Unable to allocate memory.", "Memory allocation error")
_raw_class("InsufficientBufferError", BufferError, "Insufficient buffer.", "Insufficient buffer error")
_raw_class("OutOfRangeError", BufferError, "Out of range.", "Out of range error")
_raw_class("LogicErrorError", RuntimeError, "Logic error.", "Logic error")
_raw_class("DeletedObjectError", RuntimeError, "Accessing deleted object.", "Deleted object error")
_raw_class("InvalidArgumentError", ValueError, "Invalid argument.", "Invalid argument error")
_raw_class("KeyAlreadyExistsError", RuntimeError, "Key already exists.", "Key already exists error")
_raw_class("ImmutableObjectError", RuntimeError, "Cannot modify immutable object.", "Immutable object error")
_raw_class("ValueConversionError", RuntimeError, "Value conversion failed.", "Value conversion error")
_raw_class("SerializationError", RuntimeError, "Operation cannot be serialized.", "Serialization error")
_raw_class("AuthorizationError", RuntimeError, "Authorization Error. Permission Denied.",
           "Authorization error")


class InvalidContextError(Exception):
    """A graph object, ctx or graph was used outside the call that produced it."""


class UnknownError(_mgp.UnknownError):
    """Unspecified failure."""


class UnableToAllocateError(_mgp.UnableToAllocateError):
    """Memory allocation failed."""


class InsufficientBufferError(_mgp.InsufficientBufferError):
    """A buffer is too small."""


class OutOfRangeError(_mgp.OutOfRangeError):
    """An index-like argument is out of range."""


class LogicErrorError(_mgp.LogicErrorError):
    """A precondition was violated (e.g. deleting a vertex that still has edges)."""


class DeletedObjectError(_mgp.DeletedObjectError):
    """The object was deleted earlier in this transaction."""


class InvalidArgumentError(_mgp.InvalidArgumentError):
    """An argument has an invalid value."""


class KeyAlreadyExistsError(_mgp.KeyAlreadyExistsError):
    """The key already exists."""


class ImmutableObjectError(_mgp.ImmutableObjectError):
    """A write was attempted on an immutable object (any graph object in a read procedure)."""


class ValueConversionError(_mgp.ValueConversionError):
    """A value has no property equivalent (a vertex, edge or path stored as a property)."""


class SerializationError(_mgp.SerializationError):
    """A concurrent transaction modified the object."""


class AuthorizationError(_mgp.AuthorizationError):
    """The user may not do this."""


class AbortError(Exception):
    """The procedure was asked to abort (client termination or timeout)."""


class UnsupportedTypingError(Exception):
    """A type annotation has no Cypher type."""

    def __init__(self, type_: object) -> None:
        super().__init__(f"Unsupported typing annotation '{type_}'")


_WRAPPED = {cls.__bases__[0]: cls for cls in (
    UnknownError, UnableToAllocateError, InsufficientBufferError, OutOfRangeError, LogicErrorError,
    DeletedObjectError, InvalidArgumentError, KeyAlreadyExistsError, ImmutableObjectError,
    ValueConversionError, SerializationError, AuthorizationError)}


def _raw(raw_class: type, detail: str) -> Exception:
    """The error the C layer raises: Memgraph logs `detail`, Python gets the code's fixed message."""
    ctx = _registry.current()
    line = f"{raw_class.log_label} during mg API call: {detail}"
    if ctx is not None and ctx.log_sink is not None:
        ctx.log_sink(ctx.module, "error", line)
    else:
        logging.getLogger("memgraph_recall.embedded.mgp").error("%s", line)
    return raw_class(raw_class.message)


def _raise_wrapped(raw_class: type, detail: str) -> typing.NoReturn:
    """Raise as a function or property of mgp does: the raw error re-raised as its mgp subclass
    (chained, so the traceback shows both, as Memgraph's does)."""
    try:
        raise _raw(raw_class, detail)
    except tuple(_WRAPPED) as exc:
        raise _WRAPPED[type(exc)](exc)  # noqa: B904 - mgp chains implicitly, and so do we


# A type constraint's violation is a QueryException thrown by the storage write (vertex_accessor.cpp
# HandleTypeConstraintViolation) after the value or label is in place; WrapExceptions
# (mg_procedure_impl.cpp) turns it into MGP_ERROR_UNKNOWN_ERROR, so a procedure sees UnknownError, the
# log has "Unexpected error during mg API call: IS TYPED ... violation on L(k)", and a procedure that
# catches it goes on with the write done. Vertex writes raise UnknownError outside the `except` of
# the store's TypeConstraintViolation, so that the traceback shows only the C layer's error, as
# Memgraph's does.


def _check_write(scope, immutable_detail: str) -> None:
    if not scope.valid:
        raise InvalidContextError()
    if not scope.mutable:
        _raise_wrapped(_mgp.ImmutableObjectError, immutable_detail)


def _property_value(value: object) -> tuple[object, str | None]:
    """A property value as the C layer converts it (ValueError / OverflowError here), and the
    ValueConversionError detail if it holds a graph object, which only storing refuses."""
    found: list[str] = []

    def graph_object(obj: object) -> None:
        found.append(_GRAPH_VALUE_ERRORS[obj._cypher_kind])

    converted = _marshal.cypher_value(value, graph_object, (Vertex, Edge, Path))
    return converted, (found[0] if found else None)


_GRAPH_VALUE_ERRORS = {"NODE": "A vertex is not a valid property value!",
                       "RELATIONSHIP": "An edge is not a valid property value!",
                       "PATH": "A path is not a valid property value!"}


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
    """The properties of a Vertex or Edge; lists read as tuples, maps as fresh dicts. Reading a
    deleted object raises DeletedObjectError; iterating one raises the raw `_mgp` class (mgp's
    iterators are generators, which `_wrap_exceptions` does not reach)."""

    __slots__ = ("_owner",)

    def __init__(self, vertex_or_edge) -> None:
        self._owner = vertex_or_edge

    def _props(self) -> dict:
        """The live property dict, for the wrapped (non-generator) accessors."""
        owner = self._owner
        if not owner._scope.valid:
            raise InvalidContextError()
        if owner._data.deleted:
            _raise_wrapped(_mgp.DeletedObjectError, f"Cannot get a property of a deleted {owner._noun}!")
        return owner._data.props

    def get(self, property_name: str, default=None) -> object:
        owner = self._owner
        if not owner._scope.valid:
            raise InvalidContextError()
        data = owner._data
        if data.deleted:
            _raise_wrapped(_mgp.DeletedObjectError, f"Cannot get a property of a deleted {owner._noun}!")
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
        owner = self._owner
        if not owner._scope.valid:
            raise InvalidContextError()
        if owner._data.deleted:
            _raise_wrapped(_mgp.DeletedObjectError, f"Cannot get the properties of a deleted {owner._noun}!")
        return len(owner._data.props)

    def _snapshot(self) -> typing.Iterator[tuple[str, object]]:
        """Generator body of every iteration: checks run at the first step, as mgp's do."""
        owner = self._owner
        scope = owner._scope
        if not scope.valid:
            raise InvalidContextError()
        if owner._data.deleted:
            raise _raw(_mgp.DeletedObjectError, f"Cannot get the properties of a deleted {owner._noun}!")
        for item in list(owner._data.props.items()):  # a copy, as Memgraph's iterator holds one
            yield item
            if not scope.valid:
                raise InvalidContextError()

    def __iter__(self) -> typing.Iterator[str]:
        return (name for name, _ in self._snapshot())

    def keys(self) -> typing.Iterator[str]:
        return (name for name, _ in self._snapshot())

    def values(self) -> typing.Iterator[object]:
        return (_read_value(stored) for _, stored in self._snapshot())

    def items(self) -> typing.Iterator[Property]:
        return (Property(name, _read_value(stored)) for name, stored in self._snapshot())

    def set(self, property_name: str, value: object) -> None:
        """Set a property; None removes it."""
        self[property_name] = value

    def __setitem__(self, property_name: str, value: object) -> None:
        """In Memgraph's order: context, value conversion (ValueError, OverflowError), mutability,
        graph objects as values (ValueConversionError), deletion."""
        owner = self._owner
        if not owner._scope.valid:
            raise InvalidContextError()
        name = _c_str(property_name)
        converted, conversion_error = _property_value(value)
        self._store({name: converted}, conversion_error,
                    f"Cannot set a property on an immutable {owner._noun}!")

    def set_properties(self, properties: dict) -> None:
        """Set several properties in one step: all are converted before any is written."""
        owner = self._owner
        if not owner._scope.valid:
            raise InvalidContextError()
        if not isinstance(properties, dict):
            raise TypeError(f"properties must be a dict, got {type(properties).__name__}")
        converted, conversion_error = {}, None
        for name, value in dict.items(properties):
            if not isinstance(name, str):
                raise ValueError("Dictionary keys must be strings")
            converted[str.__str__(name)], error = _property_value(value)
            conversion_error = conversion_error or error
        self._store(converted, conversion_error, f"Cannot set properties of an immutable {owner._noun}!")

    def _store(self, values: dict, conversion_error: str | None, immutable_detail: str) -> None:
        owner = self._owner
        scope = owner._scope
        _check_write(scope, immutable_detail)
        if conversion_error is not None:
            _raise_wrapped(_mgp.ValueConversionError, conversion_error)
        if owner._data.deleted:
            _raise_wrapped(_mgp.DeletedObjectError, f"Cannot set the properties of a deleted {owner._noun}!")
        try:
            for name, value in values.items():
                scope.store.set_property(owner._data, name, value)
        except TypeConstraintViolation as exc:
            detail = str(exc)
        else:
            return
        _raise_wrapped(_mgp.UnknownError, detail)  # a type constraint refused it


def _c_str(name: object) -> str:
    if not isinstance(name, str):  # the C layer parses it with PyArg_ParseTuple("s")
        raise TypeError(f"argument 1 must be str, not {type(name).__name__}")
    return str.__str__(name)


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
    _noun = "edge"

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
    _noun = "vertex"

    @property
    def labels(self) -> tuple[Label, ...]:
        if not self._scope.valid:
            raise InvalidContextError()
        data = self._data
        if data.deleted:
            _raise_wrapped(_mgp.DeletedObjectError, "Cannot get the labels of a deleted vertex!")
        return tuple(Label(name) for name in data.labels)

    def add_label(self, label: str) -> None:
        self._relabel(label, "add a label to", self._scope.store.add_label)

    def remove_label(self, label: str) -> None:
        self._relabel(label, "remove a label from", self._scope.store.remove_label)

    def _relabel(self, label: str, what: str, action) -> None:
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        name = _c_str(label)
        _check_write(scope, f"Cannot {what} an immutable vertex!")
        if self._data.deleted:
            _raise_wrapped(_mgp.DeletedObjectError, f"Cannot {what} a deleted vertex!")
        try:
            action(self._data, name)
        except TypeConstraintViolation as exc:
            detail = str(exc)
        else:
            return
        _raise_wrapped(_mgp.UnknownError, detail)  # a type constraint refused it

    @property
    def properties(self) -> Properties:
        if not self._scope.valid:
            raise InvalidContextError()
        return Properties(self)

    @property
    def in_edges(self) -> typing.Iterator[Edge]:
        return self._edges("in_edges", "inbound")

    @property
    def out_edges(self) -> typing.Iterator[Edge]:
        return self._edges("out_edges", "outbound")

    def _edges(self, side: str, direction: str) -> typing.Iterator[Edge]:
        """A generator, as mgp's: its checks run at the first step, and errors there escape raw."""
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        data = self._data
        if data.deleted:
            raise _raw(_mgp.DeletedObjectError, f"Cannot get the {direction} edges of a deleted vertex!")
        edges = getattr(data, side)
        if scope.mutable:  # a copy: the procedure may add or delete edges while iterating
            edges = [e for e in edges if not e.deleted]
        for edge in edges:
            yield Edge(edge, scope)
            if not scope.valid:
                raise InvalidContextError()

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
            _raise_wrapped(_mgp.LogicErrorError,
                           "The current last vertex in the path is not part of the given edge.")
        self._edges.append(data)

    def pop(self) -> None:
        """Remove the last edge and vertex."""
        if not self.is_valid():
            raise InvalidContextError()
        if not self._edges:
            _raise_wrapped(_mgp.OutOfRangeError, "Path contains no relationships.")
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
        """A generator, as mgp's: its checks run at the first step."""
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        values = scope.store.vertices.values()
        if scope.mutable:  # a copy: the procedure may create or delete vertices while iterating
            values = [v for v in values if not v.deleted]
        for vertex in values:
            yield Vertex(vertex, scope)
            if not scope.valid:
                raise InvalidContextError()

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
        """TypeError for a non-integer id (the C layer parses it as a C long: ints, bools and
        anything with __index__ pass, "0" and 1.0 do not); IndexError if there is no such vertex."""
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        vertex_id = operator.index(vertex_id)
        if not _values.INT64_MIN <= vertex_id <= _values.INT64_MAX:
            raise OverflowError("Python int too large to convert to C long")
        data = scope.store.vertices.get(vertex_id)
        if data is None or data.deleted:
            raise IndexError("Unable to find the vertex with given ID.")
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
        _check_write(scope, "Cannot create a vertex in an immutable graph!")
        return Vertex(scope.store.create_vertex(), scope)

    def delete_vertex(self, vertex: Vertex) -> None:
        """Delete a vertex that has no edges (LogicErrorError otherwise); deleting it again is a no-op."""
        self._delete_vertex(vertex, False)

    def detach_delete_vertex(self, vertex: Vertex) -> None:
        """Delete a vertex and all its edges; deleting it again is a no-op."""
        self._delete_vertex(vertex, True)

    def _delete_vertex(self, vertex: Vertex, detach: bool) -> None:
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        _check_vertex(vertex)
        _check_write(scope, "Cannot remove a vertex from an immutable graph!")
        data = vertex._data
        if data.deleted:  # Memgraph's storage skips vertices already deleted in the transaction
            return
        if not detach and any(not e.deleted for e in (*data.out_edges, *data.in_edges)):
            _raise_wrapped(_mgp.LogicErrorError, "Cannot remove a vertex that has edges!")
        scope.store.remove_vertex(data, detach)

    def create_edge(self, from_vertex: Vertex, to_vertex: Vertex, edge_type: EdgeType) -> Edge:
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        _check_vertex(from_vertex)
        _check_vertex(to_vertex)
        name = _c_str(edge_type.name)
        _check_write(scope, "Cannot create an edge in an immutable graph!")
        if from_vertex._data.deleted or to_vertex._data.deleted:
            _raise_wrapped(_mgp.DeletedObjectError, "Cannot add an edge to a deleted vertex!")
        return Edge(scope.store.create_edge(from_vertex._data, to_vertex._data, name), scope)

    def delete_edge(self, edge: Edge) -> None:
        """Delete an edge; deleting it again is a no-op."""
        scope = self._scope
        if not scope.valid:
            raise InvalidContextError()
        if not isinstance(edge, Edge):
            raise TypeError(f"argument 1 must be _mgp.Edge, not {type(edge).__name__}")
        if not edge.is_valid():
            raise InvalidContextError()
        _check_write(scope, "Cannot remove an edge from an immutable graph!")
        if not edge._data.deleted:
            scope.store.remove_edge(edge._data)


def _check_vertex(vertex: object) -> None:
    if not isinstance(vertex, Vertex):  # the C layer takes only its own vertex type
        raise TypeError(f"argument 1 must be _mgp.Vertex, not {type(vertex).__name__}")
    if not vertex.is_valid():
        raise InvalidContextError()


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
        """Raise AbortError (no message, as mgp's) if the call was terminated or timed out."""
        if self.must_abort():
            raise AbortError


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
        try:  # converted as the C layer converts it (numpy.float64 passes as a float)
            converted = _marshal.cypher_value(param.default, _graph_default, (Vertex, Edge, Path))
            stored = _values.freeze(converted)
        except (ValueError, OverflowError) as exc:
            raise ValueError(f"The default value of argument '{param.name}' is not a Cypher value: "
                             f"{exc}") from None
        if not ctype.satisfies(_values.read_value(stored)):
            raise ValueError(f"The default value {param.default!r} of argument '{param.name}' "
                             f"doesn't satisfy the type {ctype.name}.")
        arguments.append(_registry.Argument(param.name, ctype, True, stored))
    return arguments


def _graph_default(obj: object) -> None:
    raise ValueError("a graph element cannot be a default value")


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
