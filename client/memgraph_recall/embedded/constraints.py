"""Unique constraints of one graph store, enforced as Memgraph enforces them.

Why: `CREATE CONSTRAINT ON (n:L) ASSERT n.k IS UNIQUE` is how a Memgraph schema keeps one node per
key (one :User per user_id, say), and code written against the stand-in should fail where Memgraph
would. What Memgraph does (src/storage/v2/inmemory/unique_constraints.cpp, storage.cpp, and
query/interpreter.cpp for the messages):

- A constraint is explicit and belongs to one database. Creating it scans the existing vertices and
  fails, creating nothing, if two already hold equal values ("Unable to create unique constraint
  :L(k), because an existing node violates it."); creating one that exists, or dropping one that does
  not, only notifies. Both are refused in an explicit transaction.
- Vertices without the label or without the property are not constrained, nor are values that equal
  nothing (a NaN). Equality is that of stored property values, as for indexes (`indexes.value_key`:
  `1` equals `1.0`, `7` is not `"7"`).
- Writes are not checked as they happen: `PrepareForCommitPhase` validates the vertices the transaction
  touched, so a transaction may hold a duplicate in between, and a commit that would leave one aborts
  the whole transaction ("Unable to commit due to unique constraint violation on :L(k)"). A vertex
  deleted in the same transaction no longer conflicts.

Here each constraint keeps the vertex ids holding each value, maintained on every write and its
undo (as an index is), and every write that makes a value held twice notes it in `pending`; the store
checks those notes at commit (or right after a write outside a transaction) and clears them. Before a
transaction every value is held at most once, so a duplicate at commit was noted on the way. Only
single-property constraints are supported.
"""

from collections.abc import Hashable, Iterable
from typing import Any

from .errors import ConstraintViolation
from .indexes import matchable, value_key


class UniqueConstraint:
    """`CREATE CONSTRAINT ON (n:label) ASSERT n.key IS UNIQUE`: who holds each value. `holders` has one
    id per value; `others` the further ids of a value held more than once (only ever in the middle of
    a transaction), so a constraint costs one dict entry per constrained vertex."""

    __slots__ = ("label", "key", "holders", "others")

    def __init__(self, label: str, key: str) -> None:
        self.label = label
        self.key = key
        self.holders: dict[Hashable, int] = {}
        self.others: dict[Hashable, set[int]] = {}

    def add(self, vertex_id: int, stored: Any) -> Hashable | None:
        """Record that the vertex holds `stored`; the value's key if another vertex holds it too."""
        key = value_key(stored)
        if not matchable(key):
            return None
        holder = self.holders.setdefault(key, vertex_id)
        if holder == vertex_id:
            return None
        self.others.setdefault(key, set()).add(vertex_id)
        return key

    def discard(self, vertex_id: int, stored: Any) -> None:
        key = value_key(stored)
        if not matchable(key):
            return
        others = self.others.get(key)
        if self.holders.get(key) == vertex_id:
            if others:
                self.holders[key] = others.pop()
            else:
                del self.holders[key]
        elif others is not None:
            others.discard(vertex_id)
        if others is not None and not others:
            del self.others[key]

    def violated(self, key: Hashable) -> bool:
        return key in self.others

    def name(self) -> str:
        return f":{self.label}({self.key})"


class Constraints:
    """Every unique constraint of one store. `on_label` and `on_key` (one dict each, never replaced)
    say which constraints a write to that label or property key concerns; `pending` (one list, never
    replaced) holds (constraint, value key) for each value a write made held twice since the last check.
    The maintenance methods mirror `indexes.Indexes` and are called only for a covered label or key."""

    __slots__ = ("unique", "on_label", "on_key", "pending")

    def __init__(self) -> None:
        self.unique: dict[tuple[str, str], UniqueConstraint] = {}
        self.on_label: dict[str, tuple[UniqueConstraint, ...]] = {}
        self.on_key: dict[str, tuple[UniqueConstraint, ...]] = {}
        self.pending: list[tuple[UniqueConstraint, Hashable]] = []

    # -- definitions (the caller holds the store's write lock, outside any transaction) ----------
    def create_unique(self, label: str, key: str, vertices: Iterable[Any]) -> bool:
        """False if it exists (Memgraph only notifies); ConstraintViolation, creating nothing, if two
        existing vertices hold equal values."""
        if (label, key) in self.unique:
            return False
        constraint = UniqueConstraint(label, key)
        if _fill(constraint, vertices) is not None:
            raise ConstraintViolation(f"Unable to create unique constraint {constraint.name()}, because an "
                                      "existing node violates it.")
        self.unique[(label, key)] = constraint
        self._refresh()
        return True

    def drop_unique(self, label: str, key: str) -> bool:
        """False if there is no such constraint (Memgraph only notifies)."""
        if self.unique.pop((label, key), None) is None:
            return False
        self._refresh()
        return True

    def has_unique(self, label: str, key: str) -> bool:
        return (label, key) in self.unique

    def rebuild(self, vertices: Iterable[Any]) -> None:
        """Keep the definitions and hold `vertices` afresh (the graph is being replaced). Checks every
        constraint first: on a violation raises ConstraintViolation and changes nothing."""
        vertices = list(vertices)
        fresh = []
        for constraint in self.unique.values():
            rebuilt = UniqueConstraint(constraint.label, constraint.key)
            clash = _fill(rebuilt, vertices)
            if clash is not None:
                ids = sorted((rebuilt.holders[clash], *rebuilt.others[clash]))
                raise ConstraintViolation(
                    f"Unable to commit due to unique constraint violation on {constraint.name()}: nodes "
                    f"{ids[0]} and {ids[1]} of the graph being loaded hold the same {constraint.key}; "
                    "nothing was loaded.")
            fresh.append((constraint, rebuilt))
        for constraint, rebuilt in fresh:
            constraint.holders, constraint.others = rebuilt.holders, rebuilt.others
        self.pending.clear()

    def _refresh(self) -> None:
        self.on_label.clear()
        self.on_key.clear()
        for constraint in self.unique.values():
            self.on_label[constraint.label] = (*self.on_label.get(constraint.label, ()), constraint)
            self.on_key[constraint.key] = (*self.on_key.get(constraint.key, ()), constraint)

    # -- checks ---------------------------------------------------------------------------------
    def violation(self) -> ConstraintViolation | None:
        """The error for the first value still held twice among those noted since the last check
        (None if there is none); clears the notes."""
        found = next((constraint for constraint, key in self.pending if constraint.violated(key)), None)
        self.pending.clear()
        if found is None:
            return None
        return ConstraintViolation(f"Unable to commit due to unique constraint violation on {found.name()}")

    # -- maintenance (called only for a covered label or key) -----------------------------------
    def add_vertex(self, vertex: Any) -> None:
        for label in vertex.labels:
            if label in self.on_label:
                self.enter(vertex, label)

    def remove_vertex(self, vertex: Any) -> None:
        for label in vertex.labels:
            if label in self.on_label:
                self.leave(vertex, label)

    def enter(self, vertex: Any, label: str) -> None:
        """`vertex` gained `label` (or appeared with it)."""
        props = vertex.props
        for constraint in self.on_label[label]:
            if constraint.key in props:
                clash = constraint.add(vertex.id, props[constraint.key])
                if clash is not None:
                    self.pending.append((constraint, clash))

    def leave(self, vertex: Any, label: str) -> None:
        """`vertex` lost `label` (or was deleted)."""
        props = vertex.props
        for constraint in self.on_label[label]:
            if constraint.key in props:
                constraint.discard(vertex.id, props[constraint.key])

    def relabel(self, vertex: Any, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        for label in old:
            if label not in new and label in self.on_label:
                self.leave(vertex, label)
        for label in new:
            if label not in old and label in self.on_label:
                self.enter(vertex, label)

    def property_changed(self, vertex: Any, key: str, old: Any, new: Any) -> None:
        """`vertex`'s property `key` went from `old` to `new` (stored forms; None: absent)."""
        for constraint in self.on_key[key]:
            if constraint.label in vertex.labels:
                if old is not None:
                    constraint.discard(vertex.id, old)
                if new is not None:
                    clash = constraint.add(vertex.id, new)
                    if clash is not None:
                        self.pending.append((constraint, clash))

    # -- what SHOW CONSTRAINT INFO lists --------------------------------------------------------
    def info(self) -> list[dict[str, Any]]:
        """Rows of `SHOW CONSTRAINT INFO` (src/query/interpreter.cpp: "constraint type", "label",
        "properties", "data_type"; a unique constraint's properties are a list of names and its
        data_type is the empty string)."""
        return [{"constraint type": "unique", "label": label, "properties": [key], "data_type": ""}
                for (label, key) in sorted(self.unique)]


def _fill(constraint: UniqueConstraint, vertices: Iterable[Any]) -> Hashable | None:
    """Hold the live vertices' values in an empty constraint; the first value held twice, if any."""
    label, key = constraint.label, constraint.key
    for vertex in vertices:
        if label in vertex.labels and not vertex.deleted and key in vertex.props:
            clash = constraint.add(vertex.id, vertex.props[key])
            if clash is not None:
                return clash
    return None
