"""An optional pause of Python's cyclic garbage collector while procedures run (`Runtime(pause_gc=True)`).

Why it exists: a benchmark can show how much of a call is the collector's. It is off by default:
the collector's work in a recall build is mostly the module's own young objects, which a real Memgraph
process (its collector on, plus a full collection every 180 s) collects too, and the switch is
process-wide, so it also stops collections for every other thread of the embedding application while
any paused call runs. Reference-counted across threads and runtimes: the collector is switched off
when the first paused call starts and back on (only if it was on) when the last one ends; collections
deferred meanwhile happen at the next allocations after that.
"""

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_active = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the cyclic collector off for the duration of the block (and of every overlapping one)."""
    global _active, _was_enabled
    with _lock:
        if _active == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _was_enabled:
                gc.enable()
