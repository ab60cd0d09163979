"""The kept rows of a fit (`recall_lib.shown_rows`): a TURN row below one of the same session and day is
shown short, and what keeping or dropping a row costs is exactly what the text grows or shrinks by."""

from datetime import datetime, timezone
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st
from recall_lib.kinds import FACT, TURN
from recall_lib.rows import Row
from recall_lib.shown_rows import ShownRows


def history(places: list[tuple[str | None, int | None]]):
    """Rows in display order, each a TURN row of (session, day of May 2024) or a FACT row (None, None),
    with their full lines as `render` writes them, and a snapshot that answers `turns.fields`."""
    fields, rows, lines = [], [], []
    for n, (session, day) in enumerate(places):
        moment = datetime(2024, 5, day, 9, n % 60, tzinfo=timezone.utc) if day is not None else None
        fields.append((n, f"a{n}", session, moment, "user", "user_message", f"text {n}"))
        if session is None and day is None:
            rows.append(Row(FACT, n, (), (), n + 1))
            lines.append(f'FACT: x -[LIKES]-> y -- "fact {n}"')
            continue
        rows.append(Row(TURN, n, (), (), n + 1))
        where = [f"session {session if session is not None else '?'}"]
        if moment is not None:
            where.append(moment.isoformat()[:16])
        lines.append(f"TURN [{', '.join([*where, 'user'])}]: text {n}")
    snapshot = SimpleNamespace(turns=SimpleNamespace(fields=lambda i: fields[i]))
    return snapshot, rows, lines


def test_a_turn_below_one_of_its_session_and_day_is_short_and_keeping_a_row_between_restores_it():
    snapshot, rows, lines = history([("s1", 1), ("s2", 1), ("s1", 1), ("s1", 2)])
    kept = ShownRows(snapshot, rows)
    kept.add(0, lines[0])
    short = "TURN [same session, 09:02, user]: text 2"
    assert kept.cost(2, lines[2]) == len(short) + 1
    kept.add(2, lines[2])
    assert kept.lines[2] == short
    kept.add(3, lines[3])
    assert kept.lines[3] == lines[3]  # the next day: in full
    # s2's row between them: its own line, and row 2 back in full
    assert kept.cost(1, lines[1]) == len(lines[1]) + 1 + len(lines[2]) - len(kept.lines[2])
    kept.add(1, lines[1])
    assert [kept.lines[i] for i in kept.order] == lines
    assert kept.remove(1) == len(lines[1]) + 1 + len(lines[2]) - len(short)  # row 2 short again
    assert kept.lines[2].startswith("TURN [same session, ")


def test_rows_without_a_session_or_a_time_and_other_kinds_are_never_short():
    snapshot, rows, lines = history([("s1", 1), (None, None), ("s1", 1), (None, 1), (None, 1), ("s1", None)])
    kept = ShownRows(snapshot, rows)
    for at in range(len(rows)):
        kept.add(at, lines[at])
    assert [kept.lines[i] for i in kept.order] == lines  # a FACT row between; no session; no time


places = st.lists(
    st.one_of(st.tuples(st.sampled_from(["s1", "s2", "s3"]), st.integers(1, 2)), st.just((None, None))),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(places, st.lists(st.integers(0, 11), max_size=30))
def test_what_adding_and_removing_rows_costs_is_what_the_text_grows_by(places, steps):
    snapshot, rows, lines = history(places)
    kept, used = ShownRows(snapshot, rows), 0
    for step in steps:
        at = step % len(rows)
        if at in kept.lines:
            used -= kept.remove(at)
        else:
            cost = kept.cost(at, lines[at])
            kept.add(at, lines[at])
            used += cost
        shown = [kept.lines[i] for i in kept.order]
        assert used == sum(map(len, shown)) + max(len(shown) - 1, 0)
        for above, below in zip(kept.order, kept.order[1:], strict=False):
            same = rows[below].kind == TURN and places[above] == places[below]
            assert kept.lines[below].startswith("TURN [same session, ") is same
            if not same:
                assert kept.lines[below] == lines[below]
