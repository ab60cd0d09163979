"""Compare two recall answers by their rows (kinds, ids, order), not their text.

Two runs of the same module over the same graph may still order equal-scored rows differently: the
server reads a vertex's edges in its own order, the embedded runtime in file order, and recall breaks
score ties by that read order. So rows are compared in runs: consecutive rows of one group (a lane,
or a kind of rendered row) whose tie values are equal (scores within `tolerance`) form a run, and a
run must hold the same rows on both sides, in any order. Everything else must match in order.
"""

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

TOLERANCE = 1e-5  # float32 scores from two numpy/BLAS builds differ in the last bits, never by this


@dataclass(frozen=True)
class Row:
    group: str  # a lane ("turns", "facts", ...) or a rendered kind ("turn", "fact", "memory")
    key: str  # what identifies the row inside its group
    tie: Any  # rows of one group with equal tie values may come in either order


def lane_rows(hits: Iterable[Any]) -> list[Row]:
    """`recall.lanes` hits (LaneHit): ranked by score within each lane. The `fused` lane is compared as
    one run (the same turns, in any order): its scores come from the other lanes' ranks, so a tie
    inside any lane, broken by read order, moves fused scores too."""
    return [Row(h.lane, f"{h.key} #{h.passage}" if h.passage is not None else h.key,
                None if h.lane == "fused" else h.score) for h in hits]


def rendered_rows(recalled: dict) -> list[Row]:
    """`recall.render`'s `recalled` map. Rows are shown memories first (by rank), then facts by
    `valid_at`, then turns by time; among rows with the same shown key the order comes from ranks,
    which equal scores can swap, so the shown key is the tie value."""
    return ([Row("memory", m["path"], None) for m in recalled["memories"]]
            + [Row("fact", f'{f["head"]} -[{f["type"]}]-> {f["tail"]} @{f["turn"]}', f["valid_at"])
               for f in recalled["facts"]]
            + [Row("turn", t["action_id"], t["timestamp"]) for t in recalled["turns"]])


def _tied(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=0.0, abs_tol=tolerance)
    return a == b


def runs(rows: Sequence[Row], tolerance: float = TOLERANCE) -> list[tuple[str, Any, Counter]]:
    """(group, tie value of the run's first row, keys) for each run of tied rows."""
    found: list[tuple[str, Any, Counter]] = []
    previous: Row | None = None
    for row in rows:
        if previous is not None and row.group == previous.group and _tied(row.tie, previous.tie, tolerance):
            found[-1][2][row.key] += 1
        else:
            found.append((row.group, row.tie, Counter([row.key])))
        previous = row
    return found


def mismatches(expected: Sequence[Row], actual: Sequence[Row], tolerance: float = TOLERANCE) -> list[str]:
    """What differs between two answers, beyond tied rows swapping places (empty when they match)."""
    left, right = runs(expected, tolerance), runs(actual, tolerance)
    problems = []
    for number, (one, other) in enumerate(zip(left, right, strict=False), start=1):
        if one[0] != other[0] or not _tied(one[1], other[1], tolerance) or one[2] != other[2]:
            problems.append(f"run {number}: expected {one[0]} {one[1]!r} {sorted(one[2].elements())}, "
                            f"got {other[0]} {other[1]!r} {sorted(other[2].elements())}")
    if len(left) != len(right):
        problems.append(f"expected {len(left)} runs of rows, got {len(right)}")
    return problems


def assert_same_rows(expected: Sequence[Row], actual: Sequence[Row], tolerance: float = TOLERANCE) -> None:
    problems = mismatches(expected, actual, tolerance)
    assert not problems, "rows differ:\n" + "\n".join(problems)
