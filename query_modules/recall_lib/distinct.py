"""Distinct values of the small integer arrays one call handles (lane candidates and their neighbours),
by a stable sort and a run scan: numpy 2.4's `np.unique` costs about ten times a sort on a few
thousand int64 (~250 µs against ~25 µs), and a call used it several times."""

import numpy as np


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A stable sort of `values`: its order, the sorted values and where each run of equal ones starts."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    return order, ordered, starts


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending (`np.unique(values)`)."""
    ordered = np.sort(values, kind="stable")
    keep = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def distinct_with_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values, ascending, and each value's place among them
    (`np.unique(values, return_inverse=True)`)."""
    order, ordered, starts = _runs(values)
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


def first_positions(values: np.ndarray) -> np.ndarray:
    """Where each distinct value first occurs, ascending
    (`np.sort(np.unique(values, return_index=True)[1])`)."""
    order, _, starts = _runs(values)
    return np.sort(order[starts])


def distinct_max(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct `keys`, ascending, and the largest of `values` (same length) at each."""
    if not len(keys):
        return keys, values
    order, ordered, starts = _runs(keys)
    at = np.flatnonzero(starts)
    return ordered[at], np.maximum.reduceat(values[order], at)


def positions(haystack: np.ndarray, needles: np.ndarray, ascending: bool = False) -> np.ndarray:
    """The position of each needle in `haystack` (distinct values), -1 where it is absent: many ids
    looked up at once without a dict of the haystack. `ascending`: the haystack is sorted already."""
    if not len(haystack):
        return np.full(len(needles), -1, dtype=np.int64)
    order = None if ascending else np.argsort(haystack, kind="stable")
    ordered = haystack if order is None else haystack[order]
    at = np.minimum(np.searchsorted(ordered, needles), len(haystack) - 1)
    if order is not None:
        at = order[at]
    return np.where(haystack[at] == needles, at, -1).astype(np.int64, copy=False)
