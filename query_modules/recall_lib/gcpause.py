"""Pause Python's cyclic garbage collector while a cache entry is built.

Why: a full build at 100k messages allocates ~1M short-lived container objects (mgp wrappers, tuples)
and keeps ~100k; CPython counts them as new long-lived objects and runs one or two full collections
mid-build, each walking every object in the process (0.7 s each in the embedded runtime at 100k).
A build creates no reference cycles of its own, so pausing the collector loses nothing: temporaries
are freed by reference counting as before, and collection resumes the moment the last build ends.

The switch is process-wide (`gc.disable`): while any build runs, no procedure in the database
process collects cycles. Builds last seconds at most; `RECALL_CACHE_PAUSE_GC=0` turns this off.
A collector someone else disabled is left disabled.
"""

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class CollectorPause:
    """Counts the builds in progress; the first pauses the collector (if it ran), the last resumes it."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._active = 0
        self._paused_by_us = False

    @contextmanager
    def during(self) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        with self._lock:
            if self._active == 0 and gc.isenabled():
                gc.disable()
                self._paused_by_us = True
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                if self._active == 0 and self._paused_by_us:
                    self._paused_by_us = False
                    gc.enable()
