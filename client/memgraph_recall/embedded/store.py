"""In-memory property graph: the data embedded procedures read and write.

Vertices and edges have separate integer id spaces (as in Memgraph), labels, property maps and
per-vertex in/out adjacency lists, so walking a vertex's edges costs O(degree). Property values are
kept in their stored form (module `values`); setting a property to None removes it. A vertex without
edges shares the empty tuple instead of owning empty lists (fewer objects for the cyclic GC to walk).

Writes inside `transaction()` are all-or-nothing: each change records how to undo itself, deletions
are tombstones until commit, and `rollback()` replays the undo log, so an aborted write procedure
leaves the store's contents exactly as before without copying the graph. Ids are not given back: as
Memgraph allocates gids with `fetch_add` and never returns them on abort
(src/storage/v2/inmemory/storage.cpp, `CreateVertex`/`CreateEdge` and `Abort`), ids only grow within
a store, and an aborted creation leaves a gap. Label and label-property indexes (module `indexes`)
and unique constraints (module `constraints`) are explicit, per store, and maintained by every write
and its undo. As in Memgraph, unique constraints are checked when a transaction commits (a violating
commit rolls the whole transaction back and raises ConstraintViolation); a write outside a
transaction is a transaction of its own, undone and refused if it would leave a duplicate. Type
constraints (module `type_constraints`) keep no state and are checked as each write happens (inside a
transaction the write stays logged and the error propagates; outside one the write is undone).
"""

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from operator import attrgetter
from typing import Any

from .constraints import Constraints
from .indexes import Indexes, Lookup, matchable, value_key
from .rwlock import ReadWriteLock
from .snapshots import Node, Relationship
from .type_constraints import TypeConstraints, check_kind
from .values import check_int64, freeze, plain_value

_MISSING = object()
_NO_EDGES: tuple = ()  # shared until a vertex's first edge; then a list of its own


class DeletedElementError(LookupError):
    """The vertex or edge was deleted earlier in this transaction."""


class VertexData:
    """A stored vertex. `labels` is an immutable tuple, replaced (not mutated) on change.
    `edge_id_sum` is the sum of its out- and in-edges' ids, kept with the lists (what the fast call
    shape's Cypher computes per holder: Memgraph does it in C++, summing here would cost Python)."""

    __slots__ = ("id", "labels", "props", "out_edges", "in_edges", "deleted", "edge_id_sum")

    def __init__(self, vertex_id: int, labels: tuple[str, ...], props: dict[str, Any]) -> None:
        self.id = vertex_id
        self.labels = labels
        self.props = props
        self.out_edges: list[EdgeData] | tuple = _NO_EDGES
        self.in_edges: list[EdgeData] | tuple = _NO_EDGES
        self.deleted = False
        self.edge_id_sum = 0


class EdgeData:
    """A stored edge between two stored vertices."""

    __slots__ = ("id", "type", "start", "end", "props", "deleted")

    def __init__(self, edge_id: int, edge_type: str, start: VertexData, end: VertexData,
                 props: dict[str, Any]) -> None:
        self.id = edge_id
        self.type = edge_type
        self.start = start
        self.end = end
        self.props = props
        self.deleted = False


def _check_name(name: Any, what: str) -> str:
    if type(name) is not str or not name:
        raise TypeError(f"{what} must be a non-empty string, got {name!r}")
    return name


def _check_id(element_id: Any, what: str) -> int:
    if type(element_id) is not int or element_id < 0:
        raise TypeError(f"{what} must be a non-negative int, got {element_id!r}")
    return check_int64(element_id)


class _Transaction:
    __slots__ = ("undo", "deleted_vertices", "deleted_edges")

    def __init__(self) -> None:
        self.undo: list[tuple] = []
        self.deleted_vertices: list[VertexData] = []
        self.deleted_edges: list[EdgeData] = []


class GraphStore:
    """The graph. Public methods take ids and the store's write lock; `_`-free element methods
    (`create_vertex`, `set_property`, ...) take stored objects and expect the caller to hold it."""

    def __init__(self) -> None:
        self.vertices: dict[int, VertexData] = {}
        self.edges: dict[int, EdgeData] = {}
        self.next_vertex_id = 0
        self.next_edge_id = 0
        #: Ids of edges deleted for good: Memgraph never gives an edge id out again (recall relies on it:
        #: an edge id names one pair of ends), so an explicit id among these is refused.
        self.retired_edge_ids: set[int] = set()
        self.lock = ReadWriteLock()
        self._txn: _Transaction | None = None
        self._indexes = Indexes()
        self._constraints = Constraints()
        self._pending = self._constraints.pending  # values a write made held twice, not yet checked
        self._typed = TypeConstraints()
        # what a write checks: one dict lookup when no index or constraint covers its label or property
        # key (the labels and keys any of them covers; refreshed by every definition)
        self._on_label: dict[str, None] = {}
        self._on_key: dict[str, None] = {}
        # `memoised`'s values and the edge generation they were made at (any edge write moves it on)
        self.edge_generation = 0
        self._memo: dict[Any, Any] = {}
        self._memo_generation = 0

    # -- transactions ---------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing writes: commit if the block ends normally, roll back if it raises."""
        with self.lock.write():
            if self._txn is not None:
                raise RuntimeError("transactions do not nest")
            self._txn = _Transaction()
            try:
                yield
            except BaseException:
                self._rollback()
                raise
            else:
                self._commit()
            finally:
                self._txn = None

    def _commit(self) -> None:
        """Memgraph's PrepareForCommitPhase: a duplicate a unique constraint forbids aborts the whole
        transaction (rolled back, then ConstraintViolation)."""
        txn = self._txn
        if self._pending:
            violation = self._constraints.violation()
            if violation is not None:
                self._rollback()
                raise violation
        self._purge(txn.deleted_edges, txn.deleted_vertices)

    def _rollback(self) -> None:
        txn = self._txn
        for entry in reversed(txn.undo):
            _UNDO[entry[0]](self, *entry[1:])
        self._pending.clear()  # every value is held at most once again, as before the transaction

    def _purge(self, edges: Iterable[EdgeData], vertices: Iterable[VertexData]) -> None:
        """Physically remove deleted elements; adjacency lists are rebuilt once per touched vertex."""
        touched: dict[int, VertexData] = {}
        for edge in edges:
            self.edges.pop(edge.id, None)
            self.retired_edge_ids.add(edge.id)
            touched[id(edge.start)] = edge.start
            touched[id(edge.end)] = edge.end
        for vertex in touched.values():
            vertex.out_edges = [e for e in vertex.out_edges if not e.deleted] or _NO_EDGES
            vertex.in_edges = [e for e in vertex.in_edges if not e.deleted] or _NO_EDGES
            vertex.edge_id_sum = sum(map(_EDGE_ID, vertex.out_edges)) + sum(map(_EDGE_ID, vertex.in_edges))
        for vertex in vertices:
            self.vertices.pop(vertex.id, None)

    def _record(self, *entry: Any) -> None:
        """Log how to undo a write that just happened. Outside a transaction the write was its own
        transaction: if it left a value held twice under a unique constraint, undo it and raise."""
        if self._txn is not None:
            self._txn.undo.append(entry)
        elif self._pending:
            self._refuse(entry)

    def _refuse(self, entry: tuple) -> None:
        violation = self._constraints.violation()
        if violation is not None:
            _UNDO[entry[0]](self, *entry[1:])
            self._pending.clear()
            raise violation

    def _reject(self, violation: Exception | None, *entry: Any) -> None:
        """A write a type constraint forbids, if `violation`. Memgraph raises once the write is done,
        so inside a transaction it stays logged (the failing query aborts the transaction; a caller
        that catches the error carries on with it); outside one it is undone."""
        if violation is None:
            return
        if self._txn is not None:
            self._txn.undo.append(entry)
        else:
            _UNDO[entry[0]](self, *entry[1:])
            self._pending.clear()
        raise violation

    # -- what indexes and constraints see of a write (only for a covered label or key) ------------
    def _schema_add(self, vertex: VertexData) -> None:
        if self._indexes.on_label:
            self._indexes.add_vertex(vertex)
        if self._constraints.on_label:
            self._constraints.add_vertex(vertex)

    def _schema_remove(self, vertex: VertexData) -> None:
        if self._indexes.on_label:
            self._indexes.remove_vertex(vertex)
        if self._constraints.on_label:
            self._constraints.remove_vertex(vertex)

    def _schema_enter(self, vertex: VertexData, label: str) -> None:
        if label in self._indexes.on_label:
            self._indexes.enter(vertex, label)
        if label in self._constraints.on_label:
            self._constraints.enter(vertex, label)

    def _schema_leave(self, vertex: VertexData, label: str) -> None:
        if label in self._indexes.on_label:
            self._indexes.leave(vertex, label)
        if label in self._constraints.on_label:
            self._constraints.leave(vertex, label)

    def _schema_relabel(self, vertex: VertexData, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        self._indexes.relabel(vertex, old, new)
        self._constraints.relabel(vertex, old, new)

    def _schema_property(self, vertex: VertexData, key: str, old: Any, new: Any) -> None:
        if key in self._indexes.on_key:
            self._indexes.property_changed(vertex, key, old, new)
        if key in self._constraints.on_key:
            self._constraints.property_changed(vertex, key, old, new)

    def _refresh_coverage(self) -> None:
        self._on_label.clear()
        self._on_label.update(dict.fromkeys((*self._indexes.on_label, *self._constraints.on_label,
                                             *self._typed.on_label)))
        self._on_key.clear()
        self._on_key.update(dict.fromkeys((*self._indexes.on_key, *self._constraints.on_key,
                                           *self._typed.on_key)))

    # -- element-level writes (caller holds the write lock) ------------------------------------
    def create_vertex(self, labels: Iterable[str] = (), properties: Mapping[str, Any] | None = None,
                      vertex_id: int | None = None) -> VertexData:
        if vertex_id is None:
            vertex_id = self.next_vertex_id
        elif _check_id(vertex_id, "vertex id") in self.vertices:
            raise ValueError(f"vertex id {vertex_id} already exists")
        label_tuple = tuple(dict.fromkeys(_check_name(label, "a label") for label in labels))
        props = _frozen_props(properties)
        vertex = VertexData(vertex_id, label_tuple, props)
        self.vertices[vertex_id] = vertex
        self.next_vertex_id = max(self.next_vertex_id, vertex_id + 1)
        if self._on_label:
            self._schema_add(vertex)
            if self._typed.on_label:
                self._reject(self._typed.vertex_violation(vertex), "create_vertex", vertex)
        self._record("create_vertex", vertex)
        return vertex

    def create_edge(self, start: VertexData, end: VertexData, edge_type: str,
                    properties: Mapping[str, Any] | None = None, edge_id: int | None = None) -> EdgeData:
        _check_live(start)
        _check_live(end)
        if edge_id is None:
            edge_id = self.next_edge_id
        elif _check_id(edge_id, "edge id") in self.edges:
            raise ValueError(f"edge id {edge_id} already exists")
        elif edge_id in self.retired_edge_ids:
            raise ValueError(f"edge id {edge_id} belonged to a deleted edge: Memgraph never reuses one")
        edge_type = _check_name(edge_type, "an edge type")
        edge = EdgeData(edge_id, edge_type, start, end, _frozen_props(properties))
        self.edges[edge_id] = edge
        _attach(start, end, edge)
        self.edge_generation += 1
        self.next_edge_id = max(self.next_edge_id, edge_id + 1)
        self._record("create_edge", edge)
        return edge

    def set_property(self, element: VertexData | EdgeData, key: str, value: Any) -> None:
        _check_live(element)
        _check_name(key, "a property name")
        props = element.props
        old = props.get(key, _MISSING)
        if value is None:
            if old is _MISSING:
                return
            del props[key]
        else:
            props[key] = freeze(value)
        if key in self._on_key and type(element) is VertexData:
            new = props.get(key)
            self._schema_property(element, key, None if old is _MISSING else old, new)
            if new is not None and key in self._typed.on_key:
                self._reject(self._typed.property_violation(element, key, new), "property", element, key, old)
        self._record("property", element, key, old)

    def add_label(self, vertex: VertexData, label: str) -> None:
        _check_live(vertex)
        old = vertex.labels
        if _check_name(label, "a label") not in old:
            vertex.labels = (*old, label)
            if label in self._on_label:
                self._schema_enter(vertex, label)
                if label in self._typed.on_label:
                    self._reject(self._typed.label_violation(vertex, label), "labels", vertex, old)
            self._record("labels", vertex, old)

    def remove_label(self, vertex: VertexData, label: str) -> None:
        _check_live(vertex)
        if label in vertex.labels:
            self._record("labels", vertex, vertex.labels)
            vertex.labels = tuple(name for name in vertex.labels if name != label)
            if label in self._on_label:
                self._schema_leave(vertex, label)

    def remove_edge(self, edge: EdgeData) -> None:
        _check_live(edge)
        edge.deleted = True
        self.edge_generation += 1
        if self._txn is None:
            self._purge([edge], ())
        else:
            self._txn.deleted_edges.append(edge)
            self._record("deleted", edge)

    def remove_vertex(self, vertex: VertexData, detach: bool = False) -> None:
        _check_live(vertex)
        # dict.fromkeys: a self-loop is in both lists but is one relationship
        incident = list(dict.fromkeys(e for e in (*vertex.out_edges, *vertex.in_edges) if not e.deleted))
        if incident and not detach:
            raise ValueError(f"vertex {vertex.id} still has {len(incident)} relationships; "
                             "delete them first or detach-delete the vertex")
        for edge in incident:
            self.remove_edge(edge)
        if self._on_label:
            self._schema_remove(vertex)
        vertex.deleted = True
        if self._txn is None:
            self._purge((), [vertex])
        else:
            self._txn.deleted_vertices.append(vertex)
            self._record("deleted", vertex)

    def load_vertex(self, vertex_id: int, labels: tuple[str, ...], props: dict[str, Any]) -> None:
        """Insert a vertex whose id, labels and frozen properties the loader already checked (into a
        store with constraints: refused, as a single write, if it would make a duplicate or break a
        type constraint)."""
        vertex = self.vertices[vertex_id] = VertexData(vertex_id, labels, props)
        if self._on_label:
            self._schema_add(vertex)
            if self._typed.on_label:
                self._reject(self._typed.vertex_violation(vertex), "create_vertex", vertex)
            if self._pending and self._txn is None:
                self._refuse(("create_vertex", vertex))
        if vertex_id >= self.next_vertex_id:
            self.next_vertex_id = vertex_id + 1

    def load_edge(self, edge_id: int, edge_type: str, start: VertexData, end: VertexData,
                  props: dict[str, Any]) -> None:
        """Insert an edge whose id, type, ends and frozen properties the loader already checked."""
        edge = EdgeData(edge_id, edge_type, start, end, props)
        self.edges[edge_id] = edge
        _attach(start, end, edge)
        self.edge_generation += 1
        if edge_id >= self.next_edge_id:
            self.next_edge_id = edge_id + 1

    # -- public id-based API (tests, loaders) ----------------------------------------------------
    def add_vertex(self, labels: Iterable[str] = (), properties: Mapping[str, Any] | None = None, *,
                   id: int | None = None) -> int:
        with self.lock.write():
            return self.create_vertex(labels, properties, id).id

    def add_edge(self, start: int, end: int, edge_type: str, properties: Mapping[str, Any] | None = None,
                 *, id: int | None = None) -> int:
        with self.lock.write():
            return self.create_edge(self.get_vertex(start), self.get_vertex(end), edge_type, properties,
                                    id).id

    def set_vertex_property(self, vertex_id: int, key: str, value: Any) -> None:
        with self.lock.write():
            self.set_property(self.get_vertex(vertex_id), key, value)

    def set_edge_property(self, edge_id: int, key: str, value: Any) -> None:
        with self.lock.write():
            self.set_property(self.get_edge(edge_id), key, value)

    def add_vertex_label(self, vertex_id: int, label: str) -> None:
        with self.lock.write():
            self.add_label(self.get_vertex(vertex_id), label)

    def remove_vertex_label(self, vertex_id: int, label: str) -> None:
        with self.lock.write():
            self.remove_label(self.get_vertex(vertex_id), label)

    def delete_vertex(self, vertex_id: int, *, detach: bool = False) -> None:
        with self.lock.write():
            self.remove_vertex(self.get_vertex(vertex_id), detach)

    def delete_edge(self, edge_id: int) -> None:
        with self.lock.write():
            self.remove_edge(self.get_edge(edge_id))

    def get_vertex(self, vertex_id: int) -> VertexData:
        vertex = self.vertices.get(vertex_id)
        if vertex is None or vertex.deleted:
            raise LookupError(f"there is no vertex with id {vertex_id!r}")
        return vertex

    def get_edge(self, edge_id: int) -> EdgeData:
        edge = self.edges.get(edge_id)
        if edge is None or edge.deleted:
            raise LookupError(f"there is no edge with id {edge_id!r}")
        return edge

    def node(self, vertex_id: int) -> Node:
        """A detached snapshot of a vertex (labels, plain property values)."""
        with self.lock.read():
            return node_snapshot(self.get_vertex(vertex_id))

    def relationship(self, edge_id: int) -> Relationship:
        """A detached snapshot of an edge."""
        with self.lock.read():
            return relationship_snapshot(self.get_edge(edge_id))

    def memoised(self, key: Any, compute: Callable[[], Any]) -> Any:
        """`compute()`, kept under `key` until the next edge write: for what depends on edges alone (the
        prelude's expands, which Memgraph runs in C++ and the Python stand-in would otherwise cost the
        call far more than Cypher does). The caller holds the read lock, so no write runs meanwhile;
        treat the result as read-only."""
        if self._memo_generation != self.edge_generation:
            self._memo, self._memo_generation = {}, self.edge_generation
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def vertex_count(self) -> int:
        return len(self.vertices)

    def edge_count(self) -> int:
        return len(self.edges)

    def find_vertices(self, label: str, key: str, value: Any) -> Lookup:
        """Ids of vertices `(:label {key: value})`, ascending (see `index_lookup`)."""
        return self.index_lookup(label, key, value)

    # -- indexes --------------------------------------------------------------------------------
    def create_label_index(self, label: str) -> bool:
        """`CREATE INDEX ON :label`; False if it already exists (Memgraph notifies, no error)."""
        with self._definition("create_label_index"):
            return self._indexes.create_label(_check_name(label, "label"), self.vertices.values())

    def create_label_property_index(self, label: str, key: str) -> bool:
        """`CREATE INDEX ON :label(key)`; False if it already exists."""
        with self._definition("create_label_property_index"):
            return self._indexes.create_property(_check_name(label, "label"), _check_name(key, "key"),
                                                 self.vertices.values())

    def drop_label_index(self, label: str) -> bool:
        """`DROP INDEX ON :label`; False if there was none (Memgraph notifies, no error)."""
        with self._definition("drop_label_index"):
            return self._indexes.drop_label(label)

    def drop_label_property_index(self, label: str, key: str) -> bool:
        """`DROP INDEX ON :label(key)`; False if there was none."""
        with self._definition("drop_label_property_index"):
            return self._indexes.drop_property(label, key)

    def indexes(self) -> list[dict[str, Any]]:
        """What `SHOW INDEX INFO` lists: "index type" ("label" or "label+property"), "label",
        "property" (None, or a one-name list), "count" (indexed vertices)."""
        with self.lock.read():
            return self._indexes.info()

    # -- unique constraints ---------------------------------------------------------------------
    def create_unique_constraint(self, label: str, key: str) -> bool:
        """`CREATE CONSTRAINT ON (n:label) ASSERT n.key IS UNIQUE`; False if it already exists
        (Memgraph notifies, no error). ConstraintViolation, creating nothing, if two existing vertices
        `(:label)` hold equal values of `key`. Creates no index (nor does Memgraph)."""
        with self._definition("create_unique_constraint", "constraint"):
            return self._constraints.create_unique(_check_name(label, "label"), _check_name(key, "key"),
                                                   self.vertices.values())

    def drop_unique_constraint(self, label: str, key: str) -> bool:
        """`DROP CONSTRAINT ON (n:label) ASSERT n.key IS UNIQUE`; False if there was none."""
        with self._definition("drop_unique_constraint", "constraint"):
            return self._constraints.drop_unique(label, key)

    def has_unique_constraint(self, label: str, key: str) -> bool:
        with self.lock.read():
            return self._constraints.has_unique(label, key)

    # -- type constraints -----------------------------------------------------------------------
    def create_type_constraint(self, label: str, key: str, data_type: str) -> bool:
        """`CREATE CONSTRAINT ON (n:label) ASSERT n.key IS TYPED <data_type>`, `data_type` a name as
        Memgraph prints it ("STRING", "BOOL", "LOCAL DATE TIME", ...; ValueError listing them
        otherwise); True. Unlike a unique constraint's, an existing one is an error: QueryError if
        label and key already have one, of any kind. TypeConstraintViolation, creating nothing, if an
        existing vertex `(:label)` holds a `key` of another type."""
        kind = check_kind(data_type)
        with self._definition("create_type_constraint", "constraint"):
            return self._typed.create(_check_name(label, "label"), _check_name(key, "key"), kind,
                                      self.vertices.values())

    def drop_type_constraint(self, label: str, key: str, data_type: str) -> bool:
        """`DROP CONSTRAINT ON (n:label) ASSERT n.key IS TYPED <data_type>`; True, or QueryError if
        there is no such constraint of that kind (Memgraph's is an error, not a notice)."""
        kind = check_kind(data_type)
        with self._definition("drop_type_constraint", "constraint"):
            return self._typed.drop(label, key, kind)

    def has_type_constraint(self, label: str, key: str, data_type: str | None = None) -> bool:
        """Whether label and key have a type constraint of `data_type` (of any kind if None)."""
        kind = None if data_type is None else check_kind(data_type)
        with self.lock.read():
            return self._typed.has(label, key, kind)

    def constraints(self) -> list[dict[str, Any]]:
        """What `SHOW CONSTRAINT INFO` lists, unique constraints first, then type constraints (in that
        order in Memgraph): "constraint type" ("unique" or "data_type"), "label", "properties" (a
        one-name list for a unique constraint, the key as a plain string for a type constraint, as
        Memgraph's source builds them), "data_type" ("" for a unique constraint, else the kind's name)."""
        with self.lock.read():
            return self._constraints.info() + self._typed.info()

    @contextmanager
    def _definition(self, what: str, kind: str = "index") -> Iterator[None]:
        """Index and constraint DDL takes the whole store and never runs inside a transaction
        (Memgraph refuses both in an explicit transaction: IndexInMulticommandTxException,
        ConstraintInMulticommandTxException)."""
        with self.lock.write():
            if self._txn is not None:
                raise RuntimeError(f"{what}: {kind} definitions cannot change inside a transaction")
            yield
            self._refresh_coverage()

    def label_lookup(self, label: str) -> Lookup:
        """Ids of the vertices with `label`, ascending: from the label index in O(result), else by a
        full scan (as Memgraph's planner would ScanAll and filter); `.used_index` says which."""
        with self.lock.read():
            ids = self._indexes.labels.get(label)
            if ids is not None:
                return Lookup(sorted(ids), True)
            return Lookup(sorted(v.id for v in self.vertices.values() if label in v.labels and not v.deleted),
                          False)

    def index_lookup(self, label: str, key: str, value: Any) -> Lookup:
        """Ids of the vertices `(:label {key: value})`, ascending, values compared as Memgraph
        compares them (see `indexes`: 1 equals 1.0, 7 is not "7", null and NaN match nothing): from
        the label-property index in O(result), else by a full scan; `.used_index` says which."""
        wanted = value_key(freeze(value))
        with self.lock.read():
            index = self._indexes.properties.get((label, key))
            if index is not None:
                return Lookup(index.find(wanted), True)
            if not matchable(wanted):
                return Lookup([], False)
            return Lookup(sorted(v.id for v in self.vertices.values()
                                 if label in v.labels and not v.deleted and key in v.props
                                 and value_key(v.props[key]) == wanted), False)

    def replace_with(self, other: "GraphStore") -> None:
        """Take over `other`'s contents (used to load a file atomically). Index and constraint
        definitions stay and are rebuilt over the new vertices (an export_util.json file carries none,
        but in Memgraph the definitions belong to the database, not to the data imported into it). If
        the new vertices violate a unique or a type constraint, ConstraintViolation (TypeConstraintViolation
        for a type constraint) and nothing changes."""
        with self.lock.write():
            if self._txn is not None:
                raise RuntimeError("cannot replace the graph inside a transaction")
            self._typed.check_graph(other.vertices.values())  # first: these may refuse the graph
            self._constraints.rebuild(other.vertices.values())
            self.vertices, self.edges = other.vertices, other.edges
            self.next_vertex_id, self.next_edge_id = other.next_vertex_id, other.next_edge_id
            self.retired_edge_ids = set(other.retired_edge_ids)
            self.edge_generation += 1
            self._indexes.rebuild(self.vertices.values())


_EDGE_ID = attrgetter("id")


def _frozen_props(properties: Mapping[str, Any] | None) -> dict[str, Any]:
    if not properties:
        return {}
    return {_check_name(k, "a property name"): freeze(v) for k, v in properties.items() if v is not None}


def _attach(start: VertexData, end: VertexData, edge: EdgeData) -> None:
    start.edge_id_sum += edge.id
    end.edge_id_sum += edge.id
    if start.out_edges:
        start.out_edges.append(edge)
    else:
        start.out_edges = [edge]
    if end.in_edges:
        end.in_edges.append(edge)
    else:
        end.in_edges = [edge]


def _check_live(element: VertexData | EdgeData) -> None:
    if element.deleted:
        kind = "vertex" if type(element) is VertexData else "edge"
        raise DeletedElementError(f"the {kind} {element.id} was deleted in this transaction")


def node_snapshot(vertex: VertexData) -> Node:
    return Node(vertex.id, frozenset(vertex.labels), {k: plain_value(v) for k, v in vertex.props.items()})


def relationship_snapshot(edge: EdgeData) -> Relationship:
    return Relationship(edge.id, edge.type, edge.start.id, edge.end.id,
                        {k: plain_value(v) for k, v in edge.props.items()})


def _undo_create_vertex(store: GraphStore, vertex: VertexData) -> None:
    del store.vertices[vertex.id]
    if store._on_label:
        store._schema_remove(vertex)


def _undo_create_edge(store: GraphStore, edge: EdgeData) -> None:
    del store.edges[edge.id]
    if edge.start.out_edges[-1] is not edge or edge.end.in_edges[-1] is not edge:
        raise AssertionError("undo log out of order")  # replay is strictly reverse, so never
    edge.start.out_edges.pop()
    edge.end.in_edges.pop()
    edge.start.edge_id_sum -= edge.id
    edge.end.edge_id_sum -= edge.id
    store.edge_generation += 1


def _undo_property(store: GraphStore, element: VertexData | EdgeData, key: str, old: Any) -> None:
    props = element.props
    current = props.get(key)
    if old is _MISSING:
        props.pop(key, None)
    else:
        props[key] = old  # in place: the property order stays as it was
    if key in store._on_key and type(element) is VertexData:
        store._schema_property(element, key, current, props.get(key))


def _undo_labels(store: GraphStore, vertex: VertexData, labels: tuple[str, ...]) -> None:
    current, vertex.labels = vertex.labels, labels
    if store._on_label:
        store._schema_relabel(vertex, current, labels)


def _undo_deleted(store: GraphStore, element: VertexData | EdgeData) -> None:
    element.deleted = False
    store.edge_generation += 1
    if store._on_label and type(element) is VertexData:
        store._schema_add(element)


_UNDO = {
    "create_vertex": _undo_create_vertex,
    "create_edge": _undo_create_edge,
    "property": _undo_property,
    "labels": _undo_labels,
    "deleted": _undo_deleted,
}
