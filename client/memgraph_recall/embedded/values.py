"""Stored property values: how a value is kept in the store and what a reader gets back.

Values are stored frozen: lists become tuples once (as Memgraph hands lists to Python), and values
holding maps are wrapped in `Thawable`, which builds fresh dicts on every read, so no caller can
mutate the store through a value it read. Float lists of VECTOR_MIN_LEN or more (embeddings), and
lists of such vectors of one length, are kept as packed doubles in a plain `bytes` and read as fresh
tuples: 8 bytes per float instead of ~32 for a tuple of Python floats (a 384-d vector: 3 KiB instead
of 12 KiB), at a few microseconds per read, much as Memgraph builds Python floats from its stored
doubles on every read. `bytes` is not a storable property type, so it marks a packed value without a
wrapper; being untracked by Python's cyclic GC, it also leaves the property dict untracked, so full
collections do not walk the stored graph's values (real Memgraph keeps the graph off the Python heap).
"""

import struct
from array import array
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_SCALAR_TYPES = frozenset({bool, float, str, date, time, datetime, timedelta})
_PLAIN_TYPES = _SCALAR_TYPES | {int, type(None)}
_FLOATS_ONLY = {float}
VECTOR_MIN_LEN = 16
_HEADER = 8  # packed value prefix: 0 for one vector, else the row length of a list of vectors
_ONE_VECTOR = bytes(_HEADER)


class Thawable:
    """A stored value that contains maps or packed vectors; `thaw()` rebuilds what a reader gets."""

    __slots__ = ("frozen",)

    def __init__(self, frozen: Any) -> None:
        self.frozen = frozen

    def thaw(self) -> Any:
        return _thaw(self.frozen)


def _pack_vector(floats: Any) -> bytes:
    return _ONE_VECTOR + array("d", floats).tobytes()


def _pack_rows(vectors: list[bytes]) -> bytes | None:
    """Packed vectors of one length as one packed list of rows, or None if they differ in length."""
    size = len(vectors[0])
    if any(len(v) != size for v in vectors):
        return None
    row = (size - _HEADER) // 8
    return row.to_bytes(_HEADER, "little") + b"".join([v[_HEADER:] for v in vectors])


def unpack(packed: bytes) -> list:
    """A packed value as Python floats: a list, or a list of row lists."""
    floats = memoryview(packed)[_HEADER:].cast("d").tolist()
    row = int.from_bytes(packed[:_HEADER], "little")
    if not row:
        return floats
    return [floats[i:i + row] for i in range(0, len(floats), row)]


def _thaw_packed(packed: bytes) -> tuple:
    """The tuple (of row tuples) a procedure reads; `struct` builds the float tuples directly, with no
    intermediate list (this runs once per vector a cold recall build reads)."""
    row = int.from_bytes(packed[:_HEADER], "little")
    if not row:
        return _doubles((len(packed) - _HEADER) // 8).unpack_from(packed, _HEADER)
    if len(packed) - _HEADER == 8 * row:
        return (_doubles(row).unpack_from(packed, _HEADER),)
    return tuple(_doubles(row).iter_unpack(memoryview(packed)[_HEADER:]))


@lru_cache(maxsize=64)
def _doubles(count: int) -> struct.Struct:
    return struct.Struct(f"<{count}d")


def _thaw(value: Any) -> Any:
    kind = type(value)
    if kind is bytes:
        return _thaw_packed(value)
    if kind is dict:
        return {k: _thaw(v) for k, v in value.items()}
    if kind is tuple:
        return tuple([_thaw(v) for v in value])
    return value


def check_int64(value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise OverflowError(f"integer {value} is outside the 64-bit range Memgraph stores")
    return value


def freeze(value: Any) -> Any:
    """Convert a Python value to its stored form, or raise TypeError naming what is not storable."""
    frozen, needs_thaw = _freeze(value)
    return Thawable(frozen) if needs_thaw and type(frozen) is not bytes else frozen


def _freeze(value: Any) -> tuple[Any, bool]:
    """(stored form, whether reads must thaw it)."""
    kind = type(value)
    if kind in _SCALAR_TYPES or value is None:
        return value, False
    if kind is int:
        return check_int64(value), False
    if kind is list or kind is tuple:
        kinds = set(map(type, value))
        if kinds == _FLOATS_ONLY and len(value) >= VECTOR_MIN_LEN:
            return _pack_vector(value), True
        if kinds <= _SCALAR_TYPES:  # fast path: short lists, string lists
            return tuple(value), False
        items, needs_thaw = [], False
        for item in value:
            frozen, item_needs_thaw = _freeze(item)
            items.append(frozen)
            needs_thaw = needs_thaw or item_needs_thaw
        if items and all(type(item) is bytes and item.startswith(_ONE_VECTOR) for item in items):
            rows = _pack_rows(items)
            if rows is not None:
                return rows, True
        return tuple(items), needs_thaw
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError(f"map keys must be strings, got {type(key).__name__} {key!r}")
            out[key] = _freeze(item)[0]
        return out, True
    raise TypeError(
        f"a property value must be a bool, int, float, str, list, map or temporal value, "
        f"got {kind.__module__}.{kind.__qualname__}"
    )


def read_value(stored: Any) -> Any:
    """The value a procedure sees for a stored property (fresh dicts when it holds maps)."""
    kind = type(stored)
    if kind is bytes:
        return _thaw_packed(stored)
    return stored.thaw() if kind is Thawable else stored


def plain_value(stored: Any) -> Any:
    """A stored value as a Bolt driver returns it: lists instead of tuples, fresh dicts."""
    if type(stored) is Thawable:
        stored = stored.frozen
    kind = type(stored)
    if kind is bytes:
        return unpack(stored)
    if kind is tuple:
        if set(map(type, stored)) <= _PLAIN_TYPES:
            return list(stored)
        return [plain_value(v) for v in stored]
    if kind is dict:
        return {k: plain_value(v) for k, v in stored.items()}
    return stored
