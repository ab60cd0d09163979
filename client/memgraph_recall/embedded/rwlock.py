"""A reentrant, phase-fair readers-writer lock.

The standard library has no readers-writer lock, and the small PyPI ones are unmaintained or lack
reentrancy, which the store needs (a write procedure's thread also calls the store's public API).
Fairness alternates phases: a waiting writer stops new readers from entering, and when a writer
finishes, the readers that waited for it go before the next writer. So neither a steady stream of
read calls nor a writer calling in a loop can starve the other side.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReadWriteLock:
    """Many readers or one writer. The writer's thread may also take the read side; reads nest."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers: dict[int, int] = {}  # thread ident -> nesting depth
        self._writer: int | None = None
        self._writer_depth = 0
        self._writers_waiting = 0
        self._readers_waiting = 0
        self._readers_turn = False  # set when a writer leaves while readers wait for it

    def _readers_blocked(self) -> bool:
        return self._writer is not None or (self._writers_waiting > 0 and not self._readers_turn)

    def acquire_read(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me or me in self._readers:
                self._readers[me] = self._readers.get(me, 0) + 1
                return
            if self._readers_blocked():
                self._readers_waiting += 1
                try:
                    while self._readers_blocked():
                        self._cond.wait()
                finally:
                    self._readers_waiting -= 1
                    if not self._readers_waiting and self._readers_turn:
                        self._readers_turn = False
                        self._cond.notify_all()
            self._readers[me] = 1

    def release_read(self) -> None:
        me = threading.get_ident()
        with self._cond:
            depth = self._readers[me] - 1
            if depth:
                self._readers[me] = depth
            else:
                del self._readers[me]
                if not self._readers:
                    self._cond.notify_all()

    def acquire_write(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._writer_depth += 1
                return
            if me in self._readers:
                raise RuntimeError("a thread holding the read lock cannot take the write lock (deadlock)")
            self._writers_waiting += 1
            try:
                while self._writer is not None or self._readers or self._readers_turn:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = me
            self._writer_depth = 1

    def try_acquire_write(self) -> bool:
        """Take the write lock only if nobody holds it or waits for it; never blocks."""
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._writer_depth += 1
                return True
            if (self._writer is not None or self._readers or self._readers_turn or self._writers_waiting
                    or self._readers_waiting):
                return False
            self._writer = me
            self._writer_depth = 1
            return True

    def release_write(self) -> None:
        with self._cond:
            if self._writer != threading.get_ident():
                raise RuntimeError("release_write() from a thread that does not hold the write lock")
            self._writer_depth -= 1
            if not self._writer_depth:
                self._writer = None
                if self._readers_waiting:
                    self._readers_turn = True
                self._cond.notify_all()

    def holds_write(self) -> bool:
        return self._writer == threading.get_ident()

    @contextmanager
    def read(self) -> Iterator[None]:
        self.acquire_read()
        try:
            yield
        finally:
            self.release_read()

    @contextmanager
    def write(self) -> Iterator[None]:
        self.acquire_write()
        try:
            yield
        finally:
            self.release_write()
