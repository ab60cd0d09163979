"""Data type constraints of one graph store, checked on every write as Memgraph checks them.

Why: `CREATE CONSTRAINT ON (n:L) ASSERT n.k IS TYPED STRING` is how a Memgraph schema keeps a key's
type fixed (every :Action's action_id a string, say), and code written against the stand-in should fail
where Memgraph would. What Memgraph does (src/storage/v2/constraints/type_constraints.cpp and
type_constraints_kind.hpp, storage/v2/inmemory/storage.cpp `CreateTypeConstraint`, vertex_accessor.cpp
`HandleTypeConstraintViolation`, and query/interpreter.cpp for the messages):

- A label and key have at most one type constraint, of one kind. Creating one where the label and key
  already have one, of any kind, is an error ("Constraint IS TYPED K on :L(k) already exists", K the
  kind asked for), and so is dropping one that is not there with that kind ("... doesn't exist"); both
  unlike unique constraints, which only notify. Creating scans the existing vertices and fails, creating
  nothing, if one violates it. Refused in an explicit transaction.
- Kinds are exact (`PropertyValueToTypeConstraintKind`): an int is never a FLOAT, a bool never an
  INTEGER; LIST is any list, packed vectors included; each temporal type is its own kind. The store
  holds no enums or points, so nothing it holds is an ENUM or a POINT. Null (an absent property) is
  never a violation, and vertices without the label are not constrained.
- Checked on the write itself, not at commit: setting a property (the new value against each of the
  vertex's labels), adding a label (the vertex's properties against that label's constraints), so also
  creating a vertex with labels and properties. The write has happened when "IS TYPED K violation on
  L(k)" (a QueryException) is raised, so a failing query aborts its transaction, while a procedure that
  catches the error (an `mgp.UnknownError` there) carries on with the value in place: nothing checks
  type constraints at commit.

Nothing is kept per vertex: a check reads the vertex's labels and properties, and the store calls one
only for a label or key some type constraint covers.
"""

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from typing import Any

from .errors import QueryError, TypeConstraintViolation
from .values import Thawable

# Memgraph's names, as SHOW CONSTRAINT INFO and its messages print them (TypeConstraintKindToString)
KINDS = ("STRING", "BOOL", "INTEGER", "FLOAT", "LIST", "MAP", "DURATION", "DATE", "LOCAL TIME",
         "LOCAL DATE TIME", "ZONED DATE TIME", "ENUM", "POINT")
_KIND_BY_TYPE = {
    str: "STRING", bool: "BOOL", int: "INTEGER", float: "FLOAT", tuple: "LIST", bytes: "LIST",
    timedelta: "DURATION", date: "DATE", time: "LOCAL TIME",
}


def kind_of(stored: Any) -> str | None:
    """The type constraint kind of a stored property value (module `values`: lists are tuples, packed
    vectors `bytes`, maps and lists holding them `Thawable`); None for anything else, which so
    satisfies no constraint."""
    kind = type(stored)
    found = _KIND_BY_TYPE.get(kind)
    if found is not None:
        return found
    if kind is datetime:
        return "LOCAL DATE TIME" if stored.tzinfo is None else "ZONED DATE TIME"
    if kind is Thawable:
        return "MAP" if type(stored.frozen) is dict else "LIST"
    return None


def check_kind(data_type: Any) -> str:
    if type(data_type) is not str or data_type not in KINDS:
        raise ValueError(f"data_type must be one of {', '.join(map(repr, KINDS))}; got {data_type!r}")
    return data_type


def _violation(kind: str, label: str, key: str) -> TypeConstraintViolation:
    return TypeConstraintViolation(f"IS TYPED {kind} violation on {label}({key})")


class TypeConstraints:
    """Every type constraint of one store: `kinds` by (label, key), and the same by label (`on_label`,
    key -> kind) and by key (`on_key`, label -> kind), which say what a write to that label or key must
    check. The three dicts are never replaced; the store's coverage maps read the last two."""

    __slots__ = ("kinds", "on_label", "on_key")

    def __init__(self) -> None:
        self.kinds: dict[tuple[str, str], str] = {}
        self.on_label: dict[str, dict[str, str]] = {}
        self.on_key: dict[str, dict[str, str]] = {}

    # -- definitions (the caller holds the store's write lock, outside any transaction) ----------
    def create(self, label: str, key: str, kind: str, vertices: Iterable[Any]) -> bool:
        if (label, key) in self.kinds:
            raise QueryError(f"Constraint IS TYPED {kind} on :{label}({key}) already exists")
        for vertex in vertices:
            if label in vertex.labels and not vertex.deleted and not _fits(vertex.props.get(key), kind):
                raise TypeConstraintViolation(f"Unable to create IS TYPED {kind} constraint on "
                                              f":{label}({key}), because an existing node violates it.")
        self.kinds[(label, key)] = kind
        self.on_label.setdefault(label, {})[key] = kind
        self.on_key.setdefault(key, {})[label] = kind
        return True

    def drop(self, label: str, key: str, kind: str) -> bool:
        if self.kinds.get((label, key)) != kind:
            raise QueryError(f"Constraint IS TYPED {kind} on :{label}({key}) doesn't exist")
        del self.kinds[(label, key)]
        _forget(self.on_label, label, key)
        _forget(self.on_key, key, label)
        return True

    def has(self, label: str, key: str, kind: str | None) -> bool:
        found = self.kinds.get((label, key))
        return found is not None and kind in (None, found)

    def check_graph(self, vertices: Iterable[Any]) -> None:
        """Raise TypeConstraintViolation naming the first vertex of a graph being loaded that violates a
        constraint (the caller then loads nothing)."""
        if not self.kinds:
            return
        for vertex in vertices:
            for label in vertex.labels:
                for key, kind in self.on_label.get(label, {}).items():
                    value = vertex.props.get(key)
                    if not _fits(value, kind):
                        raise TypeConstraintViolation(
                            f"{_violation(kind, label, key)}: node {vertex.id} of the graph being loaded "
                            f"holds a value of type {kind_of(value)}; nothing was loaded.")

    # -- checks of one write (called only for a covered label or key) ----------------------------
    def property_violation(self, vertex: Any, key: str, stored: Any) -> TypeConstraintViolation | None:
        """`vertex`'s property `key` was set to `stored` (not None)."""
        by_label = self.on_key[key]
        for label in vertex.labels:
            kind = by_label.get(label)
            if kind is not None and kind_of(stored) != kind:
                return _violation(kind, label, key)
        return None

    def label_violation(self, vertex: Any, label: str) -> TypeConstraintViolation | None:
        """`vertex` gained `label` (or appeared with it)."""
        props = vertex.props
        for key, kind in self.on_label[label].items():
            if not _fits(props.get(key), kind):
                return _violation(kind, label, key)
        return None

    def vertex_violation(self, vertex: Any) -> TypeConstraintViolation | None:
        """`vertex` was created with its labels and properties."""
        for label in vertex.labels:
            if label in self.on_label:
                violation = self.label_violation(vertex, label)
                if violation is not None:
                    return violation
        return None

    # -- what SHOW CONSTRAINT INFO lists --------------------------------------------------------
    def info(self) -> list[dict[str, Any]]:
        """Rows of `SHOW CONSTRAINT INFO` for type constraints, as src/query/interpreter.cpp builds them:
        "constraint type" "data_type", "properties" the key as a plain string (not a one-name list as
        for a unique constraint), "data_type" the kind's name. Sorted by label and key names (Memgraph
        sorts by label and property ids, which follow the order names were first used)."""
        return [{"constraint type": "data_type", "label": label, "properties": key, "data_type": kind}
                for (label, key), kind in sorted(self.kinds.items())]


def _fits(stored: Any, kind: str) -> bool:
    return stored is None or kind_of(stored) == kind


def _forget(nested: dict[str, dict[str, str]], outer: str, inner: str) -> None:
    entries = nested[outer]
    del entries[inner]
    if not entries:
        del nested[outer]
