"""Stored times parse the same way on every Python, compare in UTC, and never crash on bad data."""

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_lib.timeparse import format_day, format_minute, parse_bound_arg, parse_date_arg, to_utc

UTC = timezone.utc
PLUS2 = timezone(timedelta(hours=2))

# Fixed offsets as ISO strings can carry them: whole minutes, strictly inside a day.
_OFFSETS = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
_ISO_LIKE = st.from_regex(
    r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}([.,]\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?", fullmatch=True
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01T10:00:00Z", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01T10:00:00+02:00", datetime(2024, 5, 1, 8, tzinfo=UTC)),
        ("2024-05-01T10:00+0200", datetime(2024, 5, 1, 8, tzinfo=UTC)),
        ("2024-05-01T10:00-02", datetime(2024, 5, 1, 12, tzinfo=UTC)),
        ("2024-05-01T00:30:00+02:00", datetime(2024, 4, 30, 22, 30, tzinfo=UTC)),
        ("2024-05-01 10:00:00", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01T10:00:00.5", datetime(2024, 5, 1, 10, 0, 0, 500000, tzinfo=UTC)),
        ("2024-05-01T10:00:00,25Z", datetime(2024, 5, 1, 10, 0, 0, 250000, tzinfo=UTC)),
        ("2024-05-01T10:00:00.123456789Z", datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC)),
        ("  2024-05-01  ", datetime(2024, 5, 1, tzinfo=UTC)),
        (datetime(2024, 5, 1, 10), datetime(2024, 5, 1, 10, tzinfo=UTC)),  # LocalDateTime: UTC
        (datetime(2024, 5, 1, 10, tzinfo=PLUS2), datetime(2024, 5, 1, 8, tzinfo=UTC)),
        (date(2024, 5, 1), datetime(2024, 5, 1, tzinfo=UTC)),
    ],
)
def test_to_utc_reads_every_stored_form(value, expected):
    result = to_utc(value)
    assert result == expected
    assert result.tzinfo is UTC


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "   ",
        "yesterday",
        "20240501",  # basic format: 3.11's fromisoformat reads it, 3.10's does not; we never do
        "2024-W18-3",
        "2024-13-01",
        "2024-02-30",
        "2024-05-01T25:00",
        "2024-05-01T10:60",
        "2024-05-01T10:00+24:00",
        "2024-05-01T10:00+02:60",
        "2024-05-01T10:00:00.",
        "0001-01-01T00:00+01:00",  # before datetime.min once in UTC
        datetime(1, 1, 1, tzinfo=PLUS2),
        12345,
        True,
        ["2024-05-01"],
    ],
)
def test_to_utc_skips_what_it_cannot_read(value):
    assert to_utc(value) is None


@given(st.datetimes(timezones=_OFFSETS))
def test_to_utc_round_trips_isoformat_as_the_same_instant(moment):
    parsed = to_utc(moment.isoformat())
    try:
        expected = moment.astimezone(UTC)
    except OverflowError:
        assert parsed is None
    else:
        assert parsed == expected and parsed.tzinfo is UTC


@given(st.datetimes())
def test_naive_strings_are_utc(moment):
    assert to_utc(moment.isoformat(sep=" ")) == moment.replace(tzinfo=UTC)


@given(st.one_of(_ISO_LIKE, st.text(max_size=40)))
def test_to_utc_never_raises(text):
    result = to_utc(text)
    assert result is None or result.tzinfo is UTC


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (date(2024, 5, 1), date(2024, 5, 1)),
        (datetime(2024, 5, 1, 23, 30), date(2024, 5, 1)),
        ("2024-05-01", date(2024, 5, 1)),
        # The user's own calendar day, as written: not converted to UTC first.
        ("2024-05-01T01:00+02:00", date(2024, 5, 1)),
        (datetime(2024, 5, 1, 1, tzinfo=PLUS2), date(2024, 5, 1)),
    ],
)
def test_parse_date_arg(value, expected):
    assert parse_date_arg(value, "today") == expected


@pytest.mark.parametrize("value", ["tomorrow", "", "2024-02-30", 20240501, 1.5, ["2024-05-01"]])
def test_parse_date_arg_names_the_argument(value):
    expected = f"today must be a date, a datetime or an ISO date string like '2024-05-01', got {value!r}"
    with pytest.raises(ValueError) as error:
        parse_date_arg(value, "today")
    assert str(error.value) == expected


def test_parse_date_arg_example_message():
    with pytest.raises(ValueError, match=r"^today must be .* like '2024-05-01', got 'tomorrow'$"):
        parse_date_arg("tomorrow", "today")


def test_bounds_cover_whole_days_and_keep_instants():
    assert parse_bound_arg("2024-05-01", "since", upper=False) == datetime(2024, 5, 1, tzinfo=UTC)
    assert parse_bound_arg(date(2024, 5, 1), "until", upper=True) == datetime(
        2024, 5, 1, 23, 59, 59, 999999, tzinfo=UTC
    )
    assert parse_bound_arg("2024-05-01T12:00+02:00", "until", upper=True) == datetime(
        2024, 5, 1, 10, tzinfo=UTC
    )
    assert parse_bound_arg(date(9999, 12, 31), "until", upper=True) == datetime.max.replace(tzinfo=UTC)
    assert parse_bound_arg(None, "since", upper=False) is None
    with pytest.raises(ValueError, match="^since must be a date"):
        parse_bound_arg("last week", "since", upper=False)


def test_format_day_and_minute_show_utc():
    assert format_day(to_utc("2024-05-01T00:30+02:00")) == "2024-04-30"
    assert format_minute(to_utc("2024-05-01T10:07:59.9+02:00")) == "2024-05-01T08:07"
    assert format_minute(datetime(2024, 5, 1, 10, 7, tzinfo=PLUS2)) == "2024-05-01T08:07"
    assert format_minute(date(2024, 5, 1)) == "2024-05-01T00:00"
    assert format_day(datetime(5, 1, 2)) == "0005-01-02"


@pytest.mark.parametrize("value", [None, "2024-05-01", 3])
def test_format_rejects_what_is_not_a_date(value):
    with pytest.raises(TypeError, match="dt must be a date or a datetime"):
        format_day(value)
