"""The life of one procedure call, shared by every mgp object the call hands out."""

import time
from dataclasses import dataclass

from .api_counts import ApiCounts
from .store import GraphStore


@dataclass(slots=True)
class CallScope:
    """`valid` turns False when the call returns (objects then raise InvalidContextError);
    `mutable` is True only for write procedures; `deadline` is a `time.monotonic()` instant; `counts`
    collects the call's procedure-API calls when the caller asked for them (see `api_counts`)."""

    store: GraphStore
    mutable: bool
    deadline: float | None = None
    start_timestamp: int = 0
    valid: bool = True
    abort_requested: bool = False
    counts: ApiCounts | None = None

    def must_abort(self) -> bool:
        if self.abort_requested:
            return True
        return self.deadline is not None and time.monotonic() >= self.deadline
