"""Stored vectors read into numpy: `VectorSet` (the matrix a lane searches) and `VectorCollector`.

A stored vector reaches a procedure as a tuple of Python floats (~10 us to create and free per 384-d
row, the unavoidable part of a cold build). The collector packs each row into one growing buffer the
moment it is read, so those floats die while still in the CPU cache and the garbage collector never
finds thousands of 384-element tuples alive: holding them in blocks made a 100k-message build ~3x
slower per row than the same work in a tight loop.
"""

import struct
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from .vectors import MALFORMED, NOT_FINITE, classify


class _Buffer:
    """Row storage with room to grow: `VectorSet`s are views of its first rows, and rows past the
    longest view are written only by the one `extended` call that claims them (`used`), so a snapshot
    already published never sees a row change. Appending a session's vectors then copies those
    vectors, not the user's whole matrix."""

    __slots__ = ("rows", "used", "lock")

    def __init__(self, rows: np.ndarray, used: int) -> None:
        self.rows, self.used, self.lock = rows, used, threading.Lock()

    def append(self, view: np.ndarray, more: np.ndarray) -> np.ndarray | None:
        """The view with `more` rows after it, written in place; None when there is no room, or rows
        after this view were already claimed by another extension."""
        n, m = len(view), len(more)
        with self.lock:
            if self.used != n or n + m > len(self.rows) or not np.shares_memory(view, self.rows):
                return None
            self.used = n + m
        self.rows[n : n + m] = more
        return self.rows[: n + m]


@dataclass(frozen=True)
class VectorSet:
    """L2-normalised float32 rows and, per row, the item (and passage) it belongs to."""

    matrix: np.ndarray
    owner: np.ndarray
    passage: np.ndarray
    buffer: _Buffer | None = field(default=None, compare=False, repr=False)  # see `extended`

    @classmethod
    def empty(cls, dim: int | None) -> "VectorSet":
        return cls(np.zeros((0, dim or 0), dtype=np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64))

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def nbytes(self) -> int:
        held = self.buffer.rows.nbytes if self.buffer is not None else self.matrix.nbytes
        return int(held + self.owner.nbytes + self.passage.nbytes)

    def renumbered(self, order: np.ndarray, count: int | None = None) -> "VectorSet":
        """The rows with items renumbered: item `order[i]` becomes item `i`; rows regrouped by new item.
        With `count` (the items there were), rows of items not in `order` are dropped."""
        position = np.full(len(order) if count is None else count, -1, dtype=np.int64)
        position[order] = np.arange(len(order))
        owner = position[self.owner]
        rows = np.flatnonzero(owner >= 0)
        rows = rows[np.argsort(owner[rows], kind="stable")]
        return VectorSet(self.matrix[rows], owner[rows], self.passage[rows])

    def without_rows(self, count: int) -> np.ndarray:
        """Which of `count` items (indices) have no row here."""
        return np.setdiff1d(np.arange(count), self.owner)

    def extended(self, other: "VectorSet", offset: int) -> "VectorSet":
        """These rows, then `other`'s with owners shifted by `offset` (items appended after these).

        The rows go into the spare room of this set's buffer when it has some (see `_Buffer`); else
        into a new buffer with a quarter more room than needed (at least 64 rows), so a user's growth
        copies the whole matrix only now and then."""
        if len(other) == 0:
            return self
        owner = np.concatenate([self.owner, other.owner + offset])
        passage = np.concatenate([self.passage, other.passage])
        matrix = self.buffer.append(self.matrix, other.matrix) if self.buffer is not None else None
        if matrix is not None:
            return VectorSet(matrix, owner, passage, self.buffer)
        n = len(self) + len(other)
        rows = np.empty((n + max(n // 4, 64), other.matrix.shape[1]), dtype=np.float32)
        rows[: len(self)], rows[len(self) : n] = self.matrix, other.matrix
        return VectorSet(rows[:n], owner, passage, _Buffer(rows, n))

    def with_rows(self, other: "VectorSet") -> "VectorSet":
        """These rows and `other`'s (of items these have none for), grouped again by ascending item."""
        if len(other) == 0:
            return self
        owner = np.concatenate([self.owner, other.owner])
        order = np.argsort(owner, kind="stable")
        matrix = np.concatenate([self.matrix, other.matrix]) if len(self) else other.matrix
        return VectorSet(matrix[order], owner[order], np.concatenate([self.passage, other.passage])[order])


class VectorCollector:
    """Collects the stored vectors of one unit kind for one model, checks them, builds the VectorSet.

    Units are added in their final order (owners ascending), so rows come out grouped by item with no
    reordering copy.
    """

    def __init__(self, kind: str, model: str, dim: int | None, malformed: Counter) -> None:
        self.kind, self.model, self.dim, self.malformed = kind, model, dim, malformed
        self.buffer = bytearray()
        self.owner: list[int] = []
        self.passage: list[int] = []
        self.pack = _row_struct(dim).pack if dim else None
        self._normalised: bytearray | None = None  # per row, 1 when taken over already normalised
        # Once rows are taken over (`add_taken`), where all come from, in order: [source, start, end]
        # runs of an earlier matrix, and of the rows packed into `buffer` (source None).
        self._runs: list[list] | None = None

    def add_taken(self, owner: int, source: np.ndarray, start: int, end: int) -> bool:
        """Add a unit's rows `source[start:end]` as an earlier build normalised them (float32, `dim` wide):
        kept bit for bit, and copied once, at `build`, with the rows next to them in `source`. A rebuild
        after a deletion takes over nearly all of a 100k-message user's rows, in a few runs: appending
        them unit by unit to the buffer cost ~0.8 s of growing it."""
        if self._runs is None:
            self._normalised = bytearray(len(self.owner))
            self._runs = [[None, 0, len(self.owner)]] if self.owner else []
        self._extend_run(source, start, end)
        count = end - start
        self._normalised += b"\x01" * count
        self.owner.extend([owner] * count)
        self.passage.extend(range(count))
        return True

    def add(self, owner: int, stored_model: Any, vectors: Any, passages: int | None) -> bool:
        """Add a unit's vectors (`passages` rows, or one `embedding` row when None).

        False when the unit has no usable vector from this model; malformed vectors are counted.
        A row of non-numbers is kept as NaN here and dropped with its unit by `build`.
        """
        if self.pack is None:
            return False
        status, rows = classify(stored_model, vectors, self.model, self.dim, passages, check_values=False)
        if rows is None:
            if status.startswith(MALFORMED):
                self.malformed[f"{self.kind}: {status.removeprefix(MALFORMED)}"] += 1
            return False
        for number, row in enumerate(rows):
            try:
                self.buffer += self.pack(*row)
            except (struct.error, TypeError, OverflowError):
                self.buffer += _row_or_nan(row, len(row)).tobytes()
            self.owner.append(owner)
            self.passage.append(number)
        if self._runs is not None:
            self._normalised += bytes(len(rows))
            packed = len(self.buffer) // (4 * self.dim)
            self._extend_run(None, packed - len(rows), packed)
        return True

    def _extend_run(self, source: np.ndarray | None, start: int, end: int) -> None:
        """Note rows `start:end` of `source` (None: the packed buffer) as the next ones added."""
        last = self._runs[-1] if self._runs else None
        if last is not None and last[0] is source and last[2] == start:
            last[2] = end
        else:
            self._runs.append([source, start, end])

    def _matrix(self) -> np.ndarray:
        """Every row added, in order: the buffer itself when none was taken over, else one copy of the
        packed rows and the taken runs, run by run."""
        packed = np.frombuffer(self.buffer, dtype=np.float32).reshape(-1, self.dim)
        self.buffer = bytearray()  # the matrix now holds the only reference
        runs, self._runs = self._runs, None
        if runs is None:
            return packed
        matrix = np.empty((len(self.owner), self.dim), dtype=np.float32)
        at = 0
        for source, start, end in runs:
            matrix[at : at + end - start] = (packed if source is None else source)[start:end]
            at += end - start
        return matrix

    def build(self) -> tuple[VectorSet, set[int]]:
        """The VectorSet, and the owners dropped for non-numeric, non-finite or zero vectors."""
        if not self.owner:
            return VectorSet.empty(self.dim), set()
        matrix = self._matrix()
        owner = np.asarray(self.owner, dtype=np.int64)
        passage = np.asarray(self.passage, dtype=np.int64)
        # Rows added normalised are kept as they were: only the others are measured and divided (a
        # rebuild that takes over 100k rows, ~150 MB, then reads and writes only those it read anew).
        fresh = None if self._normalised is None else ~np.frombuffer(self._normalised, dtype=bool)
        self._normalised = None
        if fresh is None:
            norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))  # norm without an n x dim temporary
        else:
            norms = np.ones(len(owner), dtype=np.float32)
            rows = matrix[fresh]
            norms[fresh] = np.sqrt(np.einsum("ij,ij->i", rows, rows))
        bad_rows = ~np.isfinite(norms) | (norms == 0)
        bad = set(owner[bad_rows].tolist())
        if bad:
            self.malformed[f"{self.kind}: {NOT_FINITE}"] += len(bad)
            keep = ~np.isin(owner, list(bad))
            matrix, norms, owner, passage = matrix[keep], norms[keep], owner[keep], passage[keep]
            fresh = None if fresh is None else fresh[keep]
        if fresh is None:
            matrix /= norms[:, None]
        elif fresh.any():
            matrix[fresh] /= norms[fresh, None]
        return VectorSet(matrix, owner, passage), bad


def unit_query(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    """The question vector as float32 of length 1, for cosine against the normalised rows."""
    vector = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        raise ValueError("config['query_vector'] must not be all zeros")
    return vector / norm


@lru_cache(maxsize=8)
def _row_struct(dim: int) -> struct.Struct:
    """Packs one row of `dim` Python numbers as float32 in one C loop (~3x faster than numpy's
    per-element conversion of a tuple)."""
    return struct.Struct(f"<{dim}f")


def _row_or_nan(row: Sequence[Any], dim: int) -> np.ndarray:
    """A row `struct` refused (a string, an int too large for float32) as numpy reads it, else NaNs."""
    try:
        with np.errstate(over="ignore"):
            return np.asarray(row, dtype=np.float64).astype(np.float32)
    except (TypeError, ValueError):
        return np.full(dim, np.nan, dtype=np.float32)
