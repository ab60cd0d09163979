"""Bounded retries with backoff, for the calls that are safe to repeat.

Memgraph answers a write that collides with a concurrent transaction with a serialization error
and asks the client to retry. Only idempotent work is retried: `recall.embed` (it writes only what
is still missing) and `load` batches (merged on a per-load id, see `bolt_io`). Written here rather
than with a retry library (tenacity): the loop is a dozen lines, the base install stays small, and
the one-line message on giving up (how many attempts, how long, the last reason) is the part that
matters.
"""

import itertools
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from memgraph_recall.errors import RecallError

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """`attempts` tries in all; waits grow from `first` by `factor` up to `longest`, each with jitter."""

    attempts: int = 5
    first: float = 0.2
    factor: float = 2.0
    longest: float = 3.0

    def __post_init__(self) -> None:
        if not isinstance(self.attempts, int) or self.attempts < 1:
            raise ValueError(f"attempts: expected an integer >= 1, got {self.attempts!r}")

    def delay(self, retry: int) -> float:
        """The wait before retry number `retry` (1-based): between half and all of the nominal wait."""
        nominal = min(self.longest, self.first * self.factor ** (retry - 1))
        return nominal * random.uniform(0.5, 1.0)


NO_RETRY = Backoff(attempts=1)


def retrying(call: Callable[[], T], what: str, retry_on: tuple[type[RecallError], ...], backoff: Backoff,
             sleep: Callable[[float], None] = time.sleep) -> T:
    """`call()`, repeated while it raises one of `retry_on`; the last failure names the attempts made."""
    started = time.monotonic()
    for attempt in itertools.count(1):
        try:
            return call()
        except retry_on as exc:
            if attempt == backoff.attempts:
                if attempt == 1:
                    raise
                elapsed = time.monotonic() - started
                raise type(exc)(f"{what}: gave up after {attempt} attempts in {elapsed:.1f} s, the last "
                                f"failing with: {exc}") from exc
            sleep(backoff.delay(attempt))
