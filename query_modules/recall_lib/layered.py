"""`Layered`: a read-only mapping that is a large dict with a small one laid over it.

Why: a refresh adds a session's few dozen Actions to maps holding every one of the user's (action id
-> turn, -> session, -> vertex; vertex -> action). Copying a 100k-entry dict per refresh cost ~2 ms
each and left a young 100k-entry dict, which the next collection of Python's youngest generation
walked entry by entry (~10 ms). Laying the new entries over the old dict copies only them; when the
top layer outgrows an eighth of the base, the two are merged once (amortised O(1) per entry).
`collections.ChainMap` is not used: its `len` and iteration build the union of keys on every call, and
a miss raises KeyError once per layer.
"""

from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")

_MISSING = object()

#: The top layer is merged into the base once it holds more than 1/_MERGE_AT of the base's entries.
_MERGE_AT = 8


class Layered(Mapping[K, V]):
    """`base` with `top`'s entries laid over it (top wins); neither is changed once wrapped."""

    __slots__ = ("_base", "_top", "_len")

    def __init__(self, base: Mapping[K, V], top: Mapping[K, V] | None = None) -> None:
        self._base = base
        self._top = dict(top or {})
        self._len = len(base) + sum(1 for key in self._top if key not in base)

    @classmethod
    def over(cls, mapping: Mapping[K, V], more: Mapping[K, V]) -> "Layered[K, V]":
        """`mapping` with `more` laid over it, as `{**mapping, **more}` reads, without copying `mapping`
        (unless it is time to merge the layers)."""
        if isinstance(mapping, Layered):
            base, top = mapping._base, {**mapping._top, **more}
        else:
            base, top = mapping, dict(more)
        if len(top) * _MERGE_AT > len(base):
            return cls({**base, **top})
        return cls(base, top)

    def __getitem__(self, key: K) -> V:
        value = self._top.get(key, _MISSING)
        return self._base[key] if value is _MISSING else value

    def get(self, key: K, default: Any = None) -> Any:
        value = self._top.get(key, _MISSING)
        return self._base.get(key, default) if value is _MISSING else value

    def __contains__(self, key: object) -> bool:
        return key in self._top or key in self._base

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        """The base's keys in order, then the top's new ones (the order `{**base, **top}` has)."""
        yield from self._base
        base = self._base
        yield from (key for key in self._top if key not in base)

    def __repr__(self) -> str:
        return f"Layered({len(self)} entries, {len(self._top)} on top)"
