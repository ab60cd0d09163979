"""Calendar dates a question names, as UTC day windows: "on 8 May 2023", "in May 2023", "last week".

Why: a question that names a date is usually about what was said then, and neither BM25 nor a
sentence vector sees "8 May 2023" in a turn stamped 2023-05-08. The ranking favours turns inside
these windows (see `ranking.date_factor`). Parsed with `re` and `datetime` only (the module may
import nothing outside the standard library and numpy).

Explicit dates (day month year, month day year, ISO, month and year, a month alone when `today`
gives its year) need no reference day. Relative phrases ("yesterday", "last week", "3 days ago")
count from `today` and are read only when it is given (`recall.render`, not `recall.lanes`). A
year alone names no window: it would favour most of a long memory.
"""

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
#: Most specific first: a span one pattern matched is not read again by a later one.
_EXPLICIT = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b",
        rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b",
        rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b",
        rf"\b{_MONTH},?\s+{_YEAR}\b",
        rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b",
        rf"\b{_MONTH}\s+{_DAY}\b(?!\s*(?:am|pm|:))",
        rf"\b(?:in|during|since|last|this|of)\s+{_MONTH}\b",
    )
)
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_AGO = re.compile(
    r"\b(?P<count>\d{1,3}|a|an|one|two|three|four|five|six)\s+(?P<unit>day|week|month|year)s?\s+ago\b"
)
_WORD_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3,
                "couple of": 2}
#: "in the past two months": a span ending today.
_PAST = re.compile(
    r"\b(?P<word>past|last|previous)\s+(?:(?P<count>\d{1,3}|two|three|four|five|six|few|couple\s+of)\s+)?"
    r"(?P<unit>day|week|month|year)(?P<plural>s)?\b"
)
#: "before today", "until today": a bound, not the day itself.
_NOT_TODAY = re.compile(r"\b(?:before|until|till|up\s+to|prior\s+to|as\s+of)\s+today\b")
_RELATIVE = {
    "today": (0, 0),
    "yesterday": (1, 1),
    "last night": (1, 1),
    "this week": (6, 0),
    "last week": (13, 7),
    "last weekend": (9, 1),
    "this month": (30, 0),
    "last month": (60, 30),
    "recently": (30, 0),
}


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


def question_windows(question: str, today: date | None = None) -> tuple[DayWindow, ...]:
    """The day windows `question` names, in the order they appear; relative ones only with `today`."""
    text = question[:4000]  # a longer question is refused upstream; never scan more than that here
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, DayWindow]] = []
    for pattern in _EXPLICIT:
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            window = _explicit_window(match.groupdict(), today)
            if window is not None:
                taken.append(match.span())
                found.append((match.start(), window))
    if today is not None:
        found += _relative_windows(text.lower(), today)
    return tuple(window for _, window in sorted(found, key=lambda item: item[0]))


def _explicit_window(parts: dict[str, str | None], today: date | None) -> DayWindow | None:
    month_text = parts.get("month") or ""
    month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text.lower())
    if month is None or not 1 <= month <= 12:
        return None
    year = int(parts["year"]) if parts.get("year") else None
    if year is None:
        if today is None:
            return None
        year = today.year if month <= today.month else today.year - 1  # the latest such month up to today
    try:
        if parts.get("day"):
            day = date(year, month, int(parts["day"]))
            return DayWindow(day, day)
        first = date(year, month, 1)
        last = date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)
    except ValueError:  # 31 February, year 0
        return None
    return DayWindow(first, last)


def _relative_windows(text: str, today: date) -> list[tuple[int, DayWindow]]:
    found = []
    bounds = [m.span() for m in _NOT_TODAY.finditer(text)]
    for phrase, (back_first, back_last) in _RELATIVE.items():
        for match in re.finditer(rf"\b{phrase}\b", text):
            if not any(start <= match.start() < end for start, end in bounds):
                found.append((match.start(), _back(today, back_first, back_last)))
    for match in _PAST.finditer(text):
        if match["count"] is None and match["plural"]:
            continue  # "the past days": no length
        if match["count"] is None and (match["word"] == "last" or match["unit"] == "year"):
            continue  # "last week", "last month": the calendar phrases above; a year is too wide
        count = " ".join((match["count"] or "one").split())
        days = (int(count) if count.isdigit() else _WORD_COUNTS[count]) * _UNITS[match["unit"]]
        found.append((match.start(), _back(today, days, 0)))
    for match in _AGO.finditer(text):
        count = match["count"]
        days = (int(count) if count.isdigit() else _WORD_COUNTS[count]) * _UNITS[match["unit"]]
        slack = max(1, days // 7)  # "3 weeks ago" is vaguer than "3 days ago"
        found.append((match.start(), _back(today, days + slack, max(days - slack, 0))))
    return [(position, window) for position, window in found if window is not None]


def _back(today: date, first_days: int, last_days: int) -> DayWindow | None:
    try:
        return DayWindow(today - timedelta(days=first_days), today - timedelta(days=last_days))
    except OverflowError:
        return None
