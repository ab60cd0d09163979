"""The rows a fit has kept, in display order, each TURN row short when it continues the row above.

A TURN row names its session and minute: `TURN [session s1, 2024-03-01T09:04, user]: ...`. The row
below it, said in the same session on the same day, reads `TURN [same session, 09:10, assistant]: ...`.
Why: turns are shown in time order, and the rows of a question that gathers or sweeps a topic come a
few sessions at a time; the session id and the date repeated (35 characters, a UUID session id 60)
would take half the room of a 60-character piece. A row's form depends on the row kept above it, so
keeping a row can change the form of the row below it too: `cost` and `remove` count that change.
"""

from bisect import bisect_left, insort

from .kinds import TURN
from .rows import Row
from .snapshot import UserSnapshot
from .timeparse import format_minute

#: What a continued TURN row says in place of its session and day.
SAME_SESSION = "same session"

Place = tuple[str, str]  # a TURN row's session id and day (YYYY-MM-DD)


class ShownRows:
    """Kept row positions (into a fit's rows, which are in display order) with their lines."""

    def __init__(self, snapshot: UserSnapshot, rows: list[Row]) -> None:
        self._snapshot, self._rows = snapshot, rows
        self.order: list[int] = []  # kept positions, ascending: display order
        self.lines: dict[int, str] = {}  # kept position -> its line as shown (short when continued)
        self._whole: dict[int, str] = {}  # kept position -> its line in full
        self._places: dict[int, Place | None] = {}

    def cost(self, at: int, line: str) -> int:
        """How many characters the text grows by when the row at `at` joins with `line` (its full
        form): its own line and newline, and the change in the next kept row's form."""
        where = bisect_left(self.order, at)
        above = self.order[where - 1] if where else None
        grow = len(self._form(at, line, above)) + (1 if self.order else 0)
        if where < len(self.order):
            below = self.order[where]
            grow += len(self._form(below, self._whole[below], at)) - len(self.lines[below])
        return grow

    def add(self, at: int, line: str) -> None:
        """Keep the row at `at`, whose full line is `line` (what `cost` measured)."""
        where = bisect_left(self.order, at)
        above = self.order[where - 1] if where else None
        self._whole[at], self.lines[at] = line, self._form(at, line, above)
        insort(self.order, at)
        if where + 1 < len(self.order):
            below = self.order[where + 1]
            self.lines[below] = self._form(below, self._whole[below], at)

    def remove(self, at: int) -> int:
        """Drop the kept row at `at`; the characters given back (the next row's form may grow)."""
        where = bisect_left(self.order, at)
        del self.order[where]
        given = len(self.lines.pop(at)) + (1 if self.order else 0)
        del self._whole[at]
        if where < len(self.order):
            below, above = self.order[where], (self.order[where - 1] if where else None)
            before = self.lines[below]
            self.lines[below] = self._form(below, self._whole[below], above)
            given -= len(self.lines[below]) - len(before)
        return given

    def _form(self, at: int, line: str, above: int | None) -> str:
        """`line` as the row at `at` shows it below the row at `above`."""
        place = self._place(at)
        if place is None or above is None or self._place(above) != place:
            return line
        head = f"TURN [session {place[0]}, {place[1]}T"  # as `render` writes a TURN row's session and minute
        return f"TURN [{SAME_SESSION}, {line[len(head):]}" if line.startswith(head) else line

    def _place(self, at: int) -> Place | None:
        """A TURN row's session and day (None for other rows and for turns without either)."""
        if at not in self._places:
            row, place = self._rows[at], None
            if row.kind == TURN:
                fields = self._snapshot.turns.fields(row.index)  # (.., action id, session, timestamp, ..)
                if fields[2] is not None and fields[3] is not None:
                    place = (fields[2], format_minute(fields[3])[:10])
            self._places[at] = place
        return self._places[at]
