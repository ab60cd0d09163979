"""The rolling check's schedule: which of a cached user's check units one call reads again.

A cached entry holds a ring of check units (`recheck`: an Action, a holder, a chunk, an entity...),
each with when it was last read and an estimate of what reading it costs (procedure-API calls, its
weight). Each unit must be read again within the maximum age of its last reading (docs/cache.md,
promise 2), and the price of that should follow the time that passes, not arrive all at once:
- per call a credit grows by the ring's total weight x the time since the user's last call / the
  maximum age (at most one whole ring), and units are taken from the cursor, oldest reading first,
  while the credit pays for them, once it pays for a slice of `least` weight (or the whole ring, when
  lighter): a user called often reads a slice on some of its calls and nothing on the
  others, each unit about once per maximum age. Why slices and not a sliver on every call: a check has
  a fixed cost per call, and a sliver on every call raised every call (the median 13-19% against
  reading the whole user once per maximum age, issue #48) where a slice of ~2,000 procedure-API calls
  (~2 ms) on a few calls leaves most calls free and the slowest no slower than a written session's;
- a unit read a maximum age ago or more is taken whatever the credit: that is the promise;
- a call takes at most `cap` weight (`RECALL_CACHE_CHECK_READS`), and at least one unit when any is
  due: after a pause, a user heavier than the cap is read over its following calls, a whole ring within
  ceil(weight / cap) calls, instead of one call pausing for all of it.
Units taken are stamped with the time the call began and move behind the others, so the ring stays
oldest first from its cursor. Plain numpy data and ints; no graph access here.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .distinct import positions

#: A unit's digest before its first reading again (`recheck`: the digest is learned then).
UNLEARNED = 0


@dataclass(frozen=True)
class Units:
    """Check units as parallel columns: kind, the vertex read, two integers its check compares with
    (what they mean depends on the kind, `recheck`), its weight, and a digest of what its last reading
    found (`UNLEARNED` until one learns it; only ACTION units learn one)."""

    kinds: np.ndarray  # uint8
    ids: np.ndarray  # int64
    refs: np.ndarray  # int64
    counts: np.ndarray  # int64
    weights: np.ndarray  # int64
    digests: np.ndarray = None  # type: ignore[assignment]  # int64; None: all UNLEARNED

    def __post_init__(self) -> None:
        if self.digests is None:
            object.__setattr__(self, "digests", np.full(len(self.ids), UNLEARNED, dtype=np.int64))

    @classmethod
    def of(cls, rows: Sequence[tuple[int, int, int, int, int]]) -> "Units":
        """From (kind, vertex id, ref, count, weight) rows, none learned."""
        table = np.asarray(rows, dtype=np.int64).reshape(-1, 5)
        return cls(table[:, 0].astype(np.uint8), *(np.ascontiguousarray(table[:, i]) for i in range(1, 5)))

    def __len__(self) -> int:
        return len(self.ids)

    def __add__(self, other: "Units") -> "Units":
        return Units(*(np.concatenate(pair) for pair in zip(self._columns(), other._columns(), strict=True)))

    def take(self, positions: np.ndarray) -> "Units":
        return Units(*(column[positions] for column in self._columns()))

    def _columns(self) -> tuple[np.ndarray, ...]:
        return self.kinds, self.ids, self.refs, self.counts, self.weights, self.digests


@dataclass(frozen=True)
class Slice:
    """The units one call reads: their ring positions, and the credit left once they are paid."""

    positions: np.ndarray
    credit: float


class Rota:
    """The ring of an entry's check units and when each was last read. Changed in place by `settle`
    and `learn` only, under the cache's per-user lock (one call at a time reads an entry's units)."""

    def __init__(self, units: Units, read_at: np.ndarray, cursor: int = 0, credit: float = 0.0,
                 last: float = 0.0) -> None:
        self.units, self.read_at = units, read_at
        self.cursor, self.credit, self.last = cursor, credit, last
        self.total = int(units.weights.sum())

    @classmethod
    def fresh(cls, units: Units, now: float, last: float | None = None) -> "Rota":
        """Every unit read at `now` (a build read them all); the credit grows from `last` (when the build
        ended: what it took is no pause of the user's), by default `now`."""
        return cls(units, np.full(len(units), now), last=now if last is None else last)

    def __len__(self) -> int:
        return len(self.units)

    def due(self, now: float, max_age: float, cap: int, least: int = 0) -> Slice:
        """The units this call reads (see the module docstring): none while no unit is a maximum age
        old and the credit pays for less than `least` weight (the whole ring, or `cap`, if less)."""
        n = len(self.units)
        earned = self.total if max_age <= 0 else self.total * max(0.0, now - self.last) / max_age
        credit = min(self.credit + earned, float(self.total))
        limit, weights, read_at = now - max_age, self.units.weights, self.read_at
        if n and read_at[self.cursor] > limit and credit < min(least, self.total, cap):
            return Slice(np.zeros(0, dtype=np.int64), credit)
        taken = spent = 0
        while taken < n:
            j = (self.cursor + taken) % n
            weight = int(weights[j])
            if read_at[j] > limit and spent + weight > credit:
                break  # not due, and not paid for
            if spent and spent + weight > cap:
                break
            spent += weight
            taken += 1
        positions = (self.cursor + np.arange(taken)) % n if n else np.zeros(0, dtype=np.int64)
        return Slice(positions, max(0.0, credit - spent))

    def settle(self, taken: Slice, now: float, read: int | None = None) -> None:
        """Stamp the first `read` units of `taken` (all by default) as read at `now`, and move the cursor
        past them; the call's credit is kept for the next one."""
        positions = taken.positions if read is None else taken.positions[:read]
        self.read_at[positions] = now
        if len(self.units):
            self.cursor = (self.cursor + len(positions)) % len(self.units)
        self.credit, self.last = taken.credit, now

    def learn(self, taken: Slice, digests: dict[int, int]) -> None:
        """Keep the digests a call's readings learned: {position in `taken`: digest}."""
        if digests:
            at = np.fromiter(digests, np.int64, len(digests))
            self.units.digests[taken.positions[at]] = np.fromiter(digests.values(), np.int64, len(digests))

    def with_units(self, units: Units, now: float) -> "Rota":
        """A copy with `units` added just behind the cursor, read at `now` (a refresh read them)."""
        at = self.cursor
        joined = Units(*(np.insert(old, at, new) for old, new in zip(self.units._columns(), units._columns(),
                                                                     strict=True)))
        read_at = np.insert(self.read_at, at, np.full(len(units), now))
        return Rota(joined, read_at, (at + len(units)) % max(1, len(joined)), self.credit, self.last)

    def replaced(self, kinds: Collection[int], units: Units, now: float) -> "Rota":
        """A copy whose units of `kinds` are replaced by `units`, read at `now` (they were read again)."""
        keep = ~np.isin(self.units.kinds, list(kinds))
        cursor = int(np.count_nonzero(keep[: self.cursor]))
        kept = Rota(self.units.take(np.flatnonzero(keep)), self.read_at[keep], cursor, self.credit, self.last)
        if cursor == len(kept) and len(kept):
            kept.cursor = 0
        return kept.with_units(units, now)

    def carried(self, units: Units, kept: Collection[int], kind: int, now: float) -> "Rota":
        """A new ring of `units` (a build's), each read at `now` but for the units of `kind` whose vertex
        is in `kept` (a build took them over unread): those keep their last reading here, and what it
        learned. Oldest first; the credit, and when it last grew, kept."""
        read_at, digests = np.full(len(units), now), units.digests.copy()
        mine = np.flatnonzero(self.units.kinds == kind)
        if len(mine) and kept:
            theirs = np.flatnonzero(units.kinds == kind)
            theirs = theirs[np.isin(units.ids[theirs], np.fromiter(kept, np.int64, len(kept)))]
            at = positions(self.units.ids[mine], units.ids[theirs])
            found = at >= 0
            read_at[theirs[found]] = self.read_at[mine[at[found]]]
            digests[theirs[found]] = self.units.digests[mine[at[found]]]
        units = replace(units, digests=digests)
        order = np.argsort(read_at, kind="stable")
        return Rota(units.take(order), read_at[order], 0, self.credit, self.last)

