"""Dates a question names (`recall_lib.question_dates`): explicit forms, months, relative phrases."""

from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_lib.question_dates import DayWindow, question_windows

TODAY = date(2023, 10, 20)


def day(y, m, d):
    return DayWindow(date(y, m, d), date(y, m, d))


@pytest.mark.parametrize(
    ("question", "windows"),
    [
        ("What did Ana paint on 8 May 2023?", [day(2023, 5, 8)]),
        ("What happened on October 13, 2023?", [day(2023, 10, 13)]),
        ("What did Gina find on 1 February, 2023?", [day(2023, 2, 1)]),
        ("the 3rd of June 2024 trip", [day(2024, 6, 3)]),
        ("logs from 2023-05-08", [day(2023, 5, 8)]),
        ("What setback did Mel face in October 2023?", [DayWindow(date(2023, 10, 1), date(2023, 10, 31))]),
        ("in Feb. 2024", [DayWindow(date(2024, 2, 1), date(2024, 2, 29))]),
        ("Between May 3, 2023 and 7 July, 2023?", [day(2023, 5, 3), day(2023, 7, 7)]),
        ("How many times in 2023?", []),  # a year alone names no window
        ("What did she buy at 5 pm?", []),
        ("on 31 February 2023", [DayWindow(date(2023, 2, 1), date(2023, 2, 28))]),  # no such day: the month
    ],
)
def test_explicit_dates_need_no_today(question, windows):
    assert list(question_windows(question)) == windows
    assert list(question_windows(question, TODAY)) == windows


def test_a_month_or_day_without_a_year_is_read_only_with_today_as_the_latest_such_date():
    assert question_windows("When did Mel go camping in June?") == ()
    assert question_windows("When did Mel go camping in June?", TODAY) == (
        DayWindow(date(2023, 6, 1), date(2023, 6, 30)),
    )
    # December has not come yet this year: the last one was in 2022.
    assert question_windows("the party in December", TODAY)[0].first == date(2022, 12, 1)
    assert question_windows("What happened on May 3?", TODAY) == (day(2023, 5, 3),)


def test_relative_phrases_count_back_from_today_and_only_with_it():
    assert question_windows("What did I eat yesterday?") == ()
    assert question_windows("What did I eat yesterday?", TODAY) == (day(2023, 10, 19),)
    [window] = question_windows("Who called 2 weeks ago?", TODAY)
    assert window.first <= date(2023, 10, 6) <= window.last < TODAY
    [window] = question_windows("What did we plan last week?", TODAY)
    assert (window.first, window.last) == (date(2023, 10, 7), date(2023, 10, 13))


@given(st.text(max_size=300))
def test_any_text_gives_windows_in_order_and_never_raises(text):
    windows = question_windows(text, TODAY)
    assert all(w.first <= w.last for w in windows)


def test_a_huge_question_is_scanned_only_to_a_bound():
    text = "x " * 1_000_000 + "on 8 May 2023"
    assert question_windows(text) == ()


def test_a_span_ending_today_is_read_and_before_today_names_no_day():
    [window] = question_windows("What feed did I buy in the past two months?", TODAY)
    assert (window.first, window.last) == (TODAY - timedelta(days=60), TODAY)
    [window] = question_windows("Which cuisines did I try over the last few weeks?", TODAY)
    assert (window.first, window.last) == (TODAY - timedelta(days=21), TODAY)
    assert question_windows("The order of airlines I flew with before today?", TODAY) == ()
    # "past days" has no length, a year is too wide
    assert question_windows("What did I do last year or in the past days?", TODAY) == ()
    assert question_windows("What did I eat today?", TODAY) == (day(TODAY.year, TODAY.month, TODAY.day),)
