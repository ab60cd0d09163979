"""A user's turns stored column by column: `TurnTable`, a sequence of `Turn` built on demand.

Why columns: a cached user at 100k messages held 100k `Turn` objects and as many passage tuples,
every one of them tracked by Python's cyclic garbage collector, so every full collection in the
database process walked them, and a build's first collection afterwards took ~0.3 s. Columns are a
handful of tuples of strings and ints (which the collector soon stops tracking). A lane or
verification that needs a turn gets a `Turn` for that index; bulk work (filters, byte counts,
merges) reads the columns.
"""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, overload


@dataclass(frozen=True, slots=True)
class Turn:
    vertex_id: int
    action_id: str
    session_id: str | None
    timestamp: datetime | None  # aware, UTC
    speaker: str
    action_type: str
    text: str
    passages: tuple[str, ...]


def time_order(timestamp: datetime | None, action_id: str) -> tuple:
    """The sort key turns are kept in: by time, undated last, then by action id."""
    return (timestamp is None, timestamp or datetime.min, action_id)


class TurnTable(Sequence[Turn]):
    """Turns as parallel tuples; `table[i]` is the i-th `Turn`. Immutable like the snapshot holding it."""

    __slots__ = (
        "vertex_ids",
        "action_ids",
        "session_ids",
        "timestamps",
        "speakers",
        "action_types",
        "texts",
        "split",
    )

    def __init__(
        self,
        vertex_ids: tuple[int, ...] = (),
        action_ids: tuple[str, ...] = (),
        session_ids: tuple[str | None, ...] = (),
        timestamps: tuple[datetime | None, ...] = (),
        speakers: tuple[str, ...] = (),
        action_types: tuple[str, ...] = (),
        texts: tuple[str, ...] = (),
        split: Mapping[int, tuple[str, ...]] | None = None,
    ) -> None:
        self.vertex_ids = vertex_ids
        self.action_ids = action_ids
        self.session_ids = session_ids
        self.timestamps = timestamps
        self.speakers = speakers
        self.action_types = action_types
        self.texts = texts
        self.split = split or {}  # position -> passages, only where they are not (text,)

    @classmethod
    def of(cls, turns: Iterable[Turn]) -> "TurnTable":
        turns = list(turns)
        if not turns:
            return cls()
        return cls(
            *(
                tuple(column)
                for column in zip(
                    *(
                        (
                            t.vertex_id,
                            t.action_id,
                            t.session_id,
                            t.timestamp,
                            t.speaker,
                            t.action_type,
                            t.text,
                        )
                        for t in turns
                    ),
                    strict=True,
                )
            ),
            split={i: t.passages for i, t in enumerate(turns) if t.passages != (t.text,)},
        )

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> Turn: ...

    @overload
    def __getitem__(self, index: slice) -> "TurnTable": ...

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.take(range(len(self))[index])
        if index < 0:
            index += len(self)
        text = self.texts[index]  # raises IndexError past the end, as a sequence must
        return Turn(
            self.vertex_ids[index],
            self.action_ids[index],
            self.session_ids[index],
            self.timestamps[index],
            self.speakers[index],
            self.action_types[index],
            text,
            self.passages(index),
        )

    def __iter__(self) -> Iterator[Turn]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TurnTable):
            return NotImplemented
        return self._columns() == other._columns() and dict(self.split) == dict(other.split)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking API, no hashing

    def __repr__(self) -> str:
        return f"TurnTable({len(self)} turns)"

    def _columns(self) -> tuple[tuple, ...]:
        return (
            self.vertex_ids,
            self.action_ids,
            self.session_ids,
            self.timestamps,
            self.speakers,
            self.action_types,
            self.texts,
        )

    def passages(self, index: int) -> tuple[str, ...]:
        return self.split.get(index) or (self.texts[index],)

    def order_keys(self) -> list[tuple]:
        """Each turn's `time_order` key."""
        return list(map(time_order, self.timestamps, self.action_ids))

    def take(self, positions: Iterable[int]) -> "TurnTable":
        """The turns at `positions`, in that order."""
        positions = [int(p) for p in positions]
        split = {new: self.split[old] for new, old in enumerate(positions) if old in self.split}
        return TurnTable(*(tuple(column[p] for p in positions) for column in self._columns()), split=split)

    def __add__(self, other: "TurnTable") -> "TurnTable":
        if not isinstance(other, TurnTable):
            return NotImplemented
        shift = len(self)
        split = {**self.split, **{shift + i: passages for i, passages in other.split.items()}}
        columns = zip(self._columns(), other._columns(), strict=True)
        return TurnTable(*(mine + theirs for mine, theirs in columns), split=split)
