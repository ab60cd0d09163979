"""A user's turns stored column by column: `TurnTable`, a sequence of `Turn` built on demand.

Why columns: a cached user at 100k messages held 100k `Turn` objects and as many passage tuples,
every one of them tracked by Python's cyclic garbage collector, so every full collection in the
database process walked them, and a build's first collection afterwards took ~0.3 s. Columns are a
handful of lists of strings and ints. A lane or verification that needs a turn gets a `Turn` for
that index; bulk work (filters, merges) reads the columns.

Why the lists are shared and grown in place: a refresh appends a session's turns. Concatenating seven
100k-element tuples per refresh cost ~8 ms and left seven young 100k-element containers, which the
next collections of Python's young generations walked element by element (~30-40 ms in a refresh at
100k messages). A table grown from another extends the same lists (when no other table claimed the
rows after it) and reads only its own first rows, so every table already handed out stays as it was.
"""

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Any, overload

from .layered import Layered


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


def time_order_keys(timestamps: list[datetime | None], action_ids: list[str]) -> list[tuple]:
    """Keys ordering turns as their `time_order` keys do. With every turn dated (nearly always) they are
    (time, action id) pairs, made by `zip` with no Python call per turn."""
    if None in timestamps:
        return list(map(time_order, timestamps, action_ids))
    return list(zip(timestamps, action_ids, strict=True))


#: The columns, in `Turn`'s field order (passages apart).
COLUMNS = ("vertex_ids", "action_ids", "session_ids", "timestamps", "speakers", "action_types", "texts")


class _Rows:
    """The column lists shared by the tables grown from one another. `used`: how many rows some table
    holds at most; rows past it are written only by the one extension that claims them."""

    __slots__ = ("columns", "used", "lock")

    def __init__(self, columns: list[list]) -> None:
        self.columns, self.used, self.lock = columns, len(columns[-1]), threading.Lock()

    def claim(self, n: int, more: int) -> bool:
        """Whether the rows after the first `n` are the caller's to write (`more` of them)."""
        with self.lock:
            if self.used != n:
                return False
            self.used = n + more
            return True


class Column(Sequence):
    """One column of a table: the first `len(table)` values of a list that may have grown since."""

    __slots__ = ("_values", "_n")

    def __init__(self, values: list, n: int) -> None:
        self._values, self._n = values, n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):  # the slice of this column's rows, not a copy of them first
            rows = range(self._n)[index]
            if rows.step == 1:
                return self._values[rows.start : rows.stop]
            return [self._values[i] for i in rows]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("column index out of range")
        return self._values[index]

    def __iter__(self) -> Iterator:
        return islice(self._values, self._n)

    def values_at(self, indices: list[int]) -> list:
        """The values at `indices`, checked once for the lot (the ranking reads hundreds a call)."""
        if indices and not (0 <= min(indices) and max(indices) < self._n):
            raise IndexError("column index out of range")
        values = self._values
        return [values[i] for i in indices]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Column, tuple, list)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class TurnTable(Sequence[Turn]):
    """Turns as parallel columns; `table[i]` is the i-th `Turn`. Immutable like the snapshot holding it."""

    __slots__ = ("_rows", "_n", "split", "text_chars")

    def __init__(
        self,
        vertex_ids: Sequence[int] = (),
        action_ids: Sequence[str] = (),
        session_ids: Sequence[str | None] = (),
        timestamps: Sequence[datetime | None] = (),
        speakers: Sequence[str] = (),
        action_types: Sequence[str] = (),
        texts: Sequence[str] = (),
        split: Mapping[int, tuple[str, ...]] | None = None,
    ) -> None:
        columns = [list(c) for c in (vertex_ids, action_ids, session_ids, timestamps, speakers, action_types)]
        columns.append(list(texts))
        if len({len(c) for c in columns}) > 1:
            raise ValueError(f"columns must be of one length, got {[len(c) for c in columns]}")
        self._rows, self._n = _Rows(columns), len(columns[-1])
        self.split = split or {}  # position -> passages, only where they are not (text,)
        self.text_chars = sum(map(len, columns[-1]))  # for the cache's byte estimate

    @classmethod
    def _grown(
        cls, rows: _Rows, n: int, split: Mapping[int, tuple[str, ...]], text_chars: int
    ) -> "TurnTable":
        table = cls.__new__(cls)
        table._rows, table._n, table.split, table.text_chars = rows, n, split, text_chars
        return table

    @classmethod
    def of(cls, turns: Iterable[Turn]) -> "TurnTable":
        turns = list(turns)
        return cls(
            [t.vertex_id for t in turns],
            [t.action_id for t in turns],
            [t.session_id for t in turns],
            [t.timestamp for t in turns],
            [t.speaker for t in turns],
            [t.action_type for t in turns],
            [t.text for t in turns],
            split={i: t.passages for i, t in enumerate(turns) if t.passages != (t.text,)},
        )

    # The columns, each as long as the table.
    vertex_ids = property(lambda self: self.column(0))
    action_ids = property(lambda self: self.column(1))
    session_ids = property(lambda self: self.column(2))
    timestamps = property(lambda self: self.column(3))
    speakers = property(lambda self: self.column(4))
    action_types = property(lambda self: self.column(5))
    texts = property(lambda self: self.column(6))

    def column(self, number: int) -> Column:
        return Column(self._rows.columns[number], self._n)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> Turn: ...

    @overload
    def __getitem__(self, index: slice) -> "TurnTable": ...

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.take(range(len(self))[index])
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("turn index out of range")  # as a sequence must
        vertex_ids, action_ids, session_ids, timestamps, speakers, action_types, texts = self._rows.columns
        return Turn(
            vertex_ids[index],
            action_ids[index],
            session_ids[index],
            timestamps[index],
            speakers[index],
            action_types[index],
            texts[index],
            self.split.get(index) or (texts[index],),
        )

    def __iter__(self) -> Iterator[Turn]:
        return (self[i] for i in range(len(self)))

    def fields(self, index: int) -> tuple:
        """The i-th turn's columns as a plain tuple, in `COLUMNS` order (no `Turn` made: bulk reads)."""
        if not 0 <= index < self._n:
            raise IndexError("turn index out of range")
        return tuple([column[index] for column in self._rows.columns])

    def text_at(self, index: int) -> str:
        """The i-th turn's text (what `read_fields` ends with)."""
        if not 0 <= index < self._n:
            raise IndexError("turn index out of range")
        return self._rows.columns[6][index]

    def read_fields(self, index: int) -> tuple:
        """The i-th turn's (timestamp, speaker, action_type, text): what `reading.turn_fields` reads
        of its Action, as held (the rolling check compares the two for every Action it reads)."""
        if not 0 <= index < self._n:
            raise IndexError("turn index out of range")
        columns = self._rows.columns
        return columns[3][index], columns[4][index], columns[5][index], columns[6][index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TurnTable):
            return NotImplemented
        return self._columns() == other._columns() and dict(self.split) == dict(other.split)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking API, no hashing

    def __repr__(self) -> str:
        return f"TurnTable({len(self)} turns)"

    def _columns(self) -> tuple[tuple, ...]:
        return tuple(tuple(self.column(number)) for number in range(len(COLUMNS)))

    def passages(self, index: int) -> tuple[str, ...]:
        if not 0 <= index < self._n:
            raise IndexError("turn index out of range")
        return self.split.get(index) or (self._rows.columns[6][index],)

    def take(self, positions: Iterable[int]) -> "TurnTable":
        """The turns at `positions`, in that order."""
        positions = [int(p) for p in positions]
        if any(not 0 <= p < self._n for p in positions):
            raise IndexError("turn index out of range")
        split = {new: self.split[old] for new, old in enumerate(positions) if old in self.split}
        return TurnTable(*([column[p] for p in positions] for column in self._rows.columns), split=split)

    def __add__(self, other: "TurnTable") -> "TurnTable":
        """These turns, then `other`'s: the shared lists extended in place when this is the longest table
        over them, else copied."""
        if not isinstance(other, TurnTable):
            return NotImplemented
        n, more = self._n, len(other)
        split = Layered.over(self.split, {n + i: passages for i, passages in other.split.items()})
        pairs = list(zip(self._rows.columns, other._rows.columns, strict=True))
        if self._rows.claim(n, more):
            for mine, new in pairs:
                mine.extend(new[: other._n])
            rows = self._rows
        else:  # another table (or an abandoned extension) holds the rows after this one's
            rows = _Rows([mine[:n] + new[: other._n] for mine, new in pairs])
        return TurnTable._grown(rows, n + more, split, self.text_chars + other.text_chars)
