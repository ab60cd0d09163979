"""When an embedded `embed` writes its graph file: often enough to keep its work, rarely enough to be cheap.

Each `recall.embed` call commits, but in the embedded runtime only in memory: a run stopped before
the graph is written loses every vector it computed. Writing the file after every call keeps them,
but on a large graph writing costs as much as embedding (measured on 2 cores, ~21k short messages:
writing the 200 MB file with every vector takes ~5.5 s, embedding a call of 512 units ~2.8 s). So a
write is due once the embedding done since the last write took at least `1 / share - 1` times as long
as that write took: writing stays under `share` of the run (10%), small files are written after every
call, and a hard kill loses at most that much work (under a minute at 21k messages). Ctrl-C, SIGTERM
or a failure write at once (`flush`), so those lose nothing that was committed.
"""

import time
from collections.abc import Callable

SAVE_SHARE = 0.1  # at most this share of a run goes to writing the graph file


class Checkpoints:
    """Calls `save` after committed calls when it is due (see the module docstring), and on `flush`."""

    def __init__(self, save: Callable[[], object], share: float = SAVE_SHARE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"share: expected a fraction in (0, 1], got {share!r}")
        self._save, self._share, self._clock = save, share, clock
        self._since = clock()  # when the last write ended (or the run began)
        self._cost = 0.0  # how long the last write took: unknown until the first, so that one is at once
        self.pending = False  # committed work not yet written

    def committed(self) -> bool:
        """A call committed new work: write now if it is due; whether it wrote."""
        self.pending = True
        if self._clock() - self._since < self._cost * (1 - self._share) / self._share:
            return False
        self._write()
        return True

    def flush(self) -> bool:
        """Write whatever is pending (the run ended, was interrupted or failed); whether it wrote."""
        if not self.pending:
            return False
        self._write()
        return True

    def _write(self) -> None:
        started = self._clock()
        self._save()
        self._since = self._clock()
        self._cost = self._since - started
        self.pending = False
