"""Label and label-property indexes of one graph store, kept as Memgraph keeps them.

As `CREATE INDEX ON :L` and `CREATE INDEX ON :L(k)`: an index is explicit, lives in one database,
is maintained on every write (creating or deleting a vertex, setting or removing a property, adding or
removing a label) and on rollback (Memgraph's abort undoes index entries too,
src/storage/v2/inmemory/storage.cpp `Abort`, `index_abort_processor`), and answers an equality lookup
in O(result) instead of a scan. Writes to a label or property no index covers pay one dict lookup.

Equality is Memgraph's equality of stored property values (`operator<=>` in
src/storage/v2/property_value.cppm, with `AreComparableTypes`): an int and a float are compared as
numbers (`1` equals `1.0`, as the index's range search also finds: both share the Number bounds of
`LowerBoundForType`, property_value_utils.cpp), other types never equal each other (`7` is not `"7"`,
`True` is not `1`, a date is not a datetime), lists compare element-wise (so `[1, 2]` equals
`[1.0, 2.0]`, packed vectors included), maps by keys and values, a zoned datetime by instant and UTC
offset (ZonedTemporalData's defaulted `<=>`), and a NaN, anywhere in a value, equals nothing. One
difference remains: Memgraph compares an int with a float by converting the int to a double, so an
int beyond 2**53 can equal a float it is not exactly equal to; here such values compare exactly (a
hash key needs a transitive equality, which Memgraph's is not there).
"""

from collections.abc import Hashable, Iterable
from datetime import datetime, timezone
from typing import Any

from .values import Thawable, unpack

_NEVER = object()  # the key of a value holding a NaN: it equals nothing, not even itself
_TRUE, _FALSE = object(), object()  # bools never equal the ints 1 and 0
_ZONED = object()


def value_key(stored: Any) -> Hashable:
    """A stored property value as a hashable key that is equal exactly when Memgraph's values are."""
    kind = type(stored)
    if kind is str or kind is int:
        return stored
    if kind is float:
        return stored if stored == stored else _NEVER
    if kind is bool:
        return _TRUE if stored else _FALSE
    if kind is tuple or kind is list:
        return _sequence_key(stored)
    if kind is bytes:
        return _sequence_key(unpack(stored))
    if kind is Thawable:
        return value_key(stored.frozen)
    if kind is dict:
        items = []
        for name, item in stored.items():
            key = value_key(item)
            if key is _NEVER:
                return _NEVER
            items.append((name, key))
        return frozenset(items)
    if kind is datetime and stored.tzinfo is not None:
        return (_ZONED, stored.astimezone(timezone.utc), stored.utcoffset())
    return stored  # None (absent), date, time, naive datetime, timedelta: Python's equality is Memgraph's


def _sequence_key(items: Iterable[Any]) -> Hashable:
    keys = []
    for item in items:
        key = value_key(item)
        if key is _NEVER:
            return _NEVER
        keys.append(key)
    return tuple(keys)


def matchable(key: Hashable) -> bool:
    """Whether a lookup for this key can find anything (not null, no NaN)."""
    return key is not None and key is not _NEVER


class Lookup(list):
    """Vertex ids, ascending; `used_index` says whether an index answered (else a full scan did)."""

    __slots__ = ("used_index",)

    def __init__(self, ids: Iterable[int], used_index: bool) -> None:
        super().__init__(ids)
        self.used_index = used_index


class PropertyIndex:
    """`CREATE INDEX ON :label(key)`: the ids of the label's vertices that have `key`, by value key."""

    __slots__ = ("label", "key", "buckets", "unmatchable")

    def __init__(self, label: str, key: str) -> None:
        self.label = label
        self.key = key
        self.buckets: dict[Hashable, set[int]] = {}
        self.unmatchable: set[int] = set()  # values holding a NaN: counted, never found

    def add(self, vertex_id: int, stored: Any) -> None:
        key = value_key(stored)
        if key is _NEVER:
            self.unmatchable.add(vertex_id)
        else:
            self.buckets.setdefault(key, set()).add(vertex_id)

    def discard(self, vertex_id: int, stored: Any) -> None:
        key = value_key(stored)
        if key is _NEVER:
            self.unmatchable.discard(vertex_id)
            return
        bucket = self.buckets.get(key)
        if bucket is not None:
            bucket.discard(vertex_id)
            if not bucket:
                del self.buckets[key]

    def find(self, key: Hashable) -> list[int]:
        return sorted(self.buckets.get(key, ())) if matchable(key) else []

    def count(self) -> int:
        return sum(map(len, self.buckets.values())) + len(self.unmatchable)

    def clear(self) -> None:
        self.buckets.clear()
        self.unmatchable.clear()


class Indexes:
    """Every index of one store. `on_label` and `on_key` (one dict each, never replaced) are what a
    write checks: a label or property key that no index covers is absent from them."""

    __slots__ = ("labels", "properties", "on_label", "on_key")

    def __init__(self) -> None:
        self.labels: dict[str, set[int]] = {}  # label index: label -> vertex ids
        self.properties: dict[tuple[str, str], PropertyIndex] = {}
        self.on_label: dict[str, tuple[set[int] | None, tuple[PropertyIndex, ...]]] = {}
        self.on_key: dict[str, tuple[PropertyIndex, ...]] = {}

    # -- definitions (the caller holds the store's write lock) ----------------------------------
    def create_label(self, label: str, vertices: Iterable[Any]) -> bool:
        """False if it exists (Memgraph only notifies: "Index ... already exists.")."""
        if label in self.labels:
            return False
        self.labels[label] = {v.id for v in vertices if label in v.labels and not v.deleted}
        self._refresh()
        return True

    def create_property(self, label: str, key: str, vertices: Iterable[Any]) -> bool:
        if (label, key) in self.properties:
            return False
        index = self.properties[(label, key)] = PropertyIndex(label, key)
        for vertex in vertices:
            if label in vertex.labels and not vertex.deleted and key in vertex.props:
                index.add(vertex.id, vertex.props[key])
        self._refresh()
        return True

    def drop_label(self, label: str) -> bool:
        """False if there is no such index (Memgraph only notifies: "... doesn't exist.")."""
        if self.labels.pop(label, None) is None:
            return False
        self._refresh()
        return True

    def drop_property(self, label: str, key: str) -> bool:
        if self.properties.pop((label, key), None) is None:
            return False
        self._refresh()
        return True

    def rebuild(self, vertices: Iterable[Any]) -> None:
        """Keep the definitions, index `vertices` afresh (after the graph was replaced)."""
        for ids in self.labels.values():
            ids.clear()
        for index in self.properties.values():
            index.clear()
        if self.on_label:
            for vertex in vertices:
                self.add_vertex(vertex)

    def _refresh(self) -> None:
        covered = set(self.labels) | {label for label, _ in self.properties}
        self.on_label.clear()
        self.on_label.update(
            (label, (self.labels.get(label), tuple(i for i in self.properties.values() if i.label == label)))
            for label in covered)
        self.on_key.clear()
        for index in self.properties.values():
            self.on_key[index.key] = (*self.on_key.get(index.key, ()), index)

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
        ids, covering = self.on_label[label]
        if ids is not None:
            ids.add(vertex.id)
        props = vertex.props
        for index in covering:
            if index.key in props:
                index.add(vertex.id, props[index.key])

    def leave(self, vertex: Any, label: str) -> None:
        """`vertex` lost `label` (or was deleted)."""
        ids, covering = self.on_label[label]
        if ids is not None:
            ids.discard(vertex.id)
        props = vertex.props
        for index in covering:
            if index.key in props:
                index.discard(vertex.id, props[index.key])

    def relabel(self, vertex: Any, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        for label in old:
            if label not in new and label in self.on_label:
                self.leave(vertex, label)
        for label in new:
            if label not in old and label in self.on_label:
                self.enter(vertex, label)

    def property_changed(self, vertex: Any, key: str, old: Any, new: Any) -> None:
        """`vertex`'s property `key` went from `old` to `new` (stored forms; None: absent)."""
        for index in self.on_key[key]:
            if index.label in vertex.labels:
                if old is not None:
                    index.discard(vertex.id, old)
                if new is not None:
                    index.add(vertex.id, new)

    # -- what SHOW INDEX INFO lists -------------------------------------------------------------
    def info(self) -> list[dict[str, Any]]:
        """Rows of `SHOW INDEX INFO` (src/query/interpreter.cpp: "index type", "label", "property",
        "count"; the property is a list, as for composite indexes)."""
        rows = [{"index type": "label", "label": label, "property": None, "count": len(ids)}
                for label, ids in sorted(self.labels.items())]
        rows += [{"index type": "label+property", "label": label, "property": [key], "count": index.count()}
                 for (label, key), index in sorted(self.properties.items())]
        return rows
