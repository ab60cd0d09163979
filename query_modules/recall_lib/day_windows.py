"""Calendar days a question names, as UTC day windows, and which of them a user's history can mean.

Why apart from the reading (`question`): the reading knows only the question; whether "03.02.2025" is
3 February or 2 March is settled by the days this user's messages were said on, which only the ranking
sees. Plain dates and numpy, no text.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

import numpy as np

#: A window is widened by this many days on each side: a turn said "within a day of" a date counts.
DATE_SLACK_DAYS = 1


@dataclass(frozen=True)
class DayWindow:
    """Whole UTC days from `first` to `last`, both inclusive."""

    first: date
    last: date

    @property
    def start(self) -> float:
        return datetime(self.first.year, self.first.month, self.first.day, tzinfo=timezone.utc).timestamp()

    @property
    def end(self) -> float:
        """The first instant after the window."""
        after = self.last + timedelta(days=1)
        return datetime(after.year, after.month, after.day, tzinfo=timezone.utc).timestamp()

    def widened(self, days: int) -> "DayWindow":
        """The window with `days` more on each side (clamped to the calendar)."""
        try:
            return DayWindow(self.first - timedelta(days=days), self.last + timedelta(days=days))
        except OverflowError:
            return self

    def __str__(self) -> str:
        return self.first.isoformat() if self.first == self.last else f"{self.first} to {self.last}"


@dataclass(frozen=True)
class NamedDate:
    """Words of a question that name a date, and the windows they can mean: one, or two for a numeric
    date whose day and month could be swapped ("03.02.2025")."""

    words: str
    windows: tuple[DayWindow, ...]

    @property
    def ambiguous(self) -> bool:
        return len(self.windows) > 1


def in_windows(epoch: np.ndarray, windows: Sequence[DayWindow]) -> np.ndarray:
    """Which of the times lie within `DATE_SLACK_DAYS` of any window (NaN never does)."""
    inside = np.zeros(len(epoch), dtype=bool)
    for window in windows:
        wide = window.widened(DATE_SLACK_DAYS)
        inside |= (epoch >= wide.start) & (epoch < wide.end)
    return inside


def history_windows(dates: Sequence[NamedDate], epoch: np.ndarray) -> tuple[tuple[DayWindow, ...], list[str]]:
    """The windows the ranking favours, and a note per ambiguous date saying how it was read.

    A date with one meaning is kept whatever the history holds (a date that names no day of it is no
    error: it favours nothing). Of an ambiguous one, the meanings whose days hold a message of this
    user's are kept; when both or neither do, it stays unresolved: both are kept, and the note says so.
    """
    windows: list[DayWindow] = []
    notes: list[str] = []
    for named in dates:
        if not named.ambiguous:
            windows.extend(named.windows)
            continue
        held = [w for w in named.windows if in_windows(epoch, (w,)).any()]
        meanings = " or ".join(map(str, named.windows))
        if len(held) == 1:
            windows.extend(held)
            notes.append(f'"{named.words}" read as {held[0]}: of {meanings}, only that day holds messages')
        else:
            windows.extend(named.windows)
            holds = "both days hold" if held else "neither day holds"
            notes.append(f'"{named.words}" left unresolved ({meanings}): {holds} messages; both favoured')
    return tuple(windows), notes
