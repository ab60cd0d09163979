"""Classify a unit's stored vectors against one model: current, missing, another model's, or malformed.

One rule for recall (which rows enter the matrices), `recall.embed` (what needs embedding) and
`recall.status` (what is counted), so the three never disagree. Vectors of another dimension are
another model's, as the issue says; a ragged, empty, non-numeric or non-finite list is malformed.
"""

import math
from collections.abc import Sequence
from typing import Any

CURRENT = "current"
MISSING = "missing"
OTHER_MODEL = "other_model"
MALFORMED = "malformed: "
NOT_FINITE = "vector not finite, not numeric or zero"


def classify(
    stored_model: Any,
    vectors: Any,
    model: str,
    dim: int | None,
    passages: int | None,
    check_values: bool = True,
) -> tuple[str, Sequence[Sequence[float]] | None]:
    """(status, rows): status is CURRENT, MISSING, OTHER_MODEL or MALFORMED + reason.

    `passages` is how many vectors a passage-embedded unit must have; None for a single `embedding`.
    `check_values=False` leaves the numeric/finite check to the caller (done in bulk with numpy).
    """
    if vectors is None:
        return MISSING, None
    if stored_model != model:
        return OTHER_MODEL, None
    rows = [vectors] if passages is None else vectors
    if not isinstance(rows, (list, tuple)) or not rows:
        return MALFORMED + "vectors are not a list of numbers", None
    if len(rows) == 1:  # most units: one passage (checked without the generators below: once per unit)
        if not isinstance(rows[0], (list, tuple)):
            return MALFORMED + "vectors are not a list of numbers", None
        lengths = {len(rows[0])}
    elif not all(isinstance(r, (list, tuple)) for r in rows):
        return MALFORMED + "vectors are not a list of numbers", None
    else:
        lengths = {len(r) for r in rows}
    if len(lengths) != 1:
        return MALFORMED + "vectors of mixed length", None
    if dim is not None and lengths != {dim}:
        return OTHER_MODEL, None
    if passages is not None and len(rows) != passages:
        return MALFORMED + "vector count differs from passages", None
    if check_values and not all(_finite_nonzero(r) for r in rows):
        return MALFORMED + NOT_FINITE, None
    return CURRENT, rows


def _finite_nonzero(row: Sequence[Any]) -> bool:
    try:
        return (
            all(math.isfinite(x) for x in row)
            and any(x != 0 for x in row)
            and not any(isinstance(x, bool) for x in row)
        )
    except TypeError:
        return False
