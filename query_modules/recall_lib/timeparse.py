"""Times as stored and as asked for: parsed once, compared in UTC, never as strings.

Stored ``timestamp``/``valid_at``/``updated_at`` values come as ISO strings (with
or without an offset or fractional seconds), Memgraph ``LocalDateTime`` (a naive
``datetime``, taken as UTC), zoned datetimes or dates. Malformed stored values
parse to ``None`` so the caller skips them; user arguments get a ``ValueError``
naming the argument.

ISO strings are parsed by our own pattern rather than ``datetime.fromisoformat``
because that accepts different inputs on Python 3.10 (no ``Z``, only 3 or 6
fractional digits) and 3.11+ (basic and week formats): the module must read
the same data the same way on every supported Python. Accepted:
``YYYY-MM-DD`` optionally followed by ``T`` or a space, ``HH:MM``, optional
``:SS`` and ``.fraction`` (1-9 digits, truncated to microseconds), and an
optional ``Z`` or ``±HH:MM``/``±HHMM``/``±HH`` offset.
"""

import re
from datetime import date, datetime, time, timedelta, timezone

_ISO = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
    r"(?:[T ](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:[.,](?P<fraction>\d{1,9}))?)?"
    r"(?P<offset>Z|[+-]\d{2}(?::?\d{2})?)?)?",
    re.ASCII,
)

_EXPECTED = "a date, a datetime or an ISO date string like '2024-05-01'"


def to_utc(value: object) -> datetime | None:
    """``value`` as an aware UTC datetime; ``None`` when absent or unreadable (a date is its midnight UTC)."""
    if isinstance(value, str):
        value = _parse_iso(value)
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            return value.replace(tzinfo=timezone.utc)
        try:
            return value.astimezone(timezone.utc)
        except OverflowError:  # e.g. 0001-01-01T00:00+01:00 is before datetime.min in UTC
            return None
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    return None


def parse_date_arg(value: object, name: str) -> date | None:
    """A user's date argument (e.g. ``today``) as a ``date``; ``None`` stays ``None``.

    A datetime gives its own calendar date, as written (``2024-05-01T01:00+02:00``
    is May 1st): "today" is the user's local day, not UTC's.
    """
    parsed = _parse_arg(value, name)
    return parsed.date() if isinstance(parsed, datetime) else parsed


def parse_bound_arg(value: object, name: str, *, upper: bool) -> datetime | None:
    """A time-window bound (``since``/``until``) as an aware UTC datetime, both ends inclusive.

    A date bound covers its whole day (UTC): as a lower bound its first
    instant, as an upper bound (``upper=True``) its last microsecond. A
    datetime bound is that instant, a naive one taken as UTC.
    """
    parsed = _parse_arg(value, name)
    if parsed is None or isinstance(parsed, datetime):
        return to_utc(parsed)
    start = datetime(parsed.year, parsed.month, parsed.day, tzinfo=timezone.utc)
    if not upper:
        return start
    try:
        return start + timedelta(days=1, microseconds=-1)
    except OverflowError:  # 9999-12-31: the day ends at datetime.max
        return datetime.max.replace(tzinfo=timezone.utc)


def format_day(dt: date) -> str:
    """``YYYY-MM-DD`` of ``dt``, an aware datetime taken in UTC."""
    return _in_utc(dt, "dt").isoformat()[:10]


def format_minute(dt: date) -> str:
    """``YYYY-MM-DDTHH:MM`` of ``dt``, an aware datetime taken in UTC (a date is its midnight)."""
    return _in_utc(dt, "dt").isoformat()[:16]


def _in_utc(value: object, name: str) -> datetime:
    """``value`` (a date or datetime) in UTC, for display; a ``TypeError`` naming ``name`` otherwise."""
    if not isinstance(value, date):
        raise TypeError(f"{name} must be a date or a datetime, got {value!r}")
    moment = to_utc(value)
    if moment is None:
        raise ValueError(f"{name} is out of range in UTC: {value!r}")
    return moment


def _parse_arg(value: object, name: str) -> date | datetime | None:
    """A user's date/datetime argument as given (strings parsed), or a ``ValueError`` naming ``name``."""
    if value is None or isinstance(value, date):
        return value
    parsed = _parse_iso(value) if isinstance(value, str) else None
    if parsed is None:
        raise ValueError(f"{name} must be {_EXPECTED}, got {value!r}")
    return parsed


def _parse_iso(text: str) -> date | datetime | None:
    """An ISO date (a ``date``) or datetime (naive or aware) from ``text``; ``None`` if it is not one."""
    match = _ISO.fullmatch(text.strip())
    if match is None:
        return None
    parts = match.groupdict()
    try:
        day = date(int(parts["year"]), int(parts["month"]), int(parts["day"]))
        if parts["hour"] is None:
            return day
        fraction = (parts["fraction"] or "").ljust(6, "0")[:6]
        clock = time(int(parts["hour"]), int(parts["minute"]), int(parts["second"] or 0), int(fraction))
        return datetime.combine(day, clock, tzinfo=_offset(parts["offset"]))
    except ValueError:  # a day, hour or offset out of range
        return None


def _offset(text: str | None) -> timezone | None:
    """The fixed offset an ISO suffix names (``Z``, ``+02:00``, ``+0200``, ``+02``); ``None`` when absent."""
    if text is None:
        return None
    if text == "Z":
        return timezone.utc
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:] or 0)
    if minutes >= 60:
        raise ValueError(f"offset minutes out of range: {text}")
    sign = -1 if text[0] == "-" else 1
    return timezone(sign * timedelta(hours=hours, minutes=minutes))
