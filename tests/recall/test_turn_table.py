"""`TurnTable`: turns stored as columns behave exactly like the tuple of `Turn`s they replace."""

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_lib.turn_table import Turn, TurnTable, time_order, time_order_keys

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


def turn(i: int, text: str = "", passages: tuple[str, ...] | None = None, minutes: int | None = 0) -> Turn:
    text = text or f"turn {i}"
    stamp = None if minutes is None else T0 + timedelta(minutes=minutes)
    return Turn(10 + i, f"a{i}", f"s{i % 2}", stamp, "user", "user_message", text, passages or (text,))


TURNS = [turn(0), turn(1, "long text", ("long", "text")), turn(2, minutes=None), turn(3)]


def test_indexing_gives_back_each_turn_with_its_passages():
    table = TurnTable.of(TURNS)
    assert len(table) == 4
    assert [table[i] for i in range(4)] == TURNS
    assert table[-1] == TURNS[-1] and table[1].passages == ("long", "text")
    assert list(table) == TURNS and tuple(table) == tuple(TURNS)
    with pytest.raises(IndexError):
        table[4]


def test_columns_hold_the_fields_and_only_split_texts_keep_passages():
    table = TurnTable.of(TURNS)
    assert table.action_ids == ("a0", "a1", "a2", "a3")
    assert table.timestamps[2] is None
    assert dict(table.split) == {1: ("long", "text")}


def test_take_slices_and_concatenation_keep_passages_with_their_turns():
    table = TurnTable.of(TURNS)
    assert list(table.take([3, 1])) == [TURNS[3], TURNS[1]]
    assert list(table[1:3]) == TURNS[1:3]
    both = table + TurnTable.of([turn(4, "x", ("x", "y"))])
    assert len(both) == 5 and both[1].passages == ("long", "text") and both[4].passages == ("x", "y")
    assert both.take(range(4)) == table


def test_equality_compares_contents_not_identity():
    assert TurnTable.of(TURNS) == TurnTable.of(list(TURNS))
    assert TurnTable.of(TURNS) != TurnTable.of(TURNS[:3])
    assert TurnTable.of([turn(1, "long text")]) != TurnTable.of([turn(1, "long text", ("long", "text"))])
    assert TurnTable() == TurnTable.of([]) and not TurnTable()


def test_order_keys_put_undated_turns_last():
    keys = time_order_keys([t.timestamp for t in TURNS], [t.action_id for t in TURNS])
    assert keys == [time_order(t.timestamp, t.action_id) for t in TURNS]
    assert sorted(range(4), key=keys.__getitem__) == [0, 1, 3, 2]


@given(
    st.lists(
        st.tuples(
            st.sampled_from([datetime(2024, 1, d, tzinfo=timezone.utc) for d in (1, 2, 3)]),
            st.sampled_from(["a", "b", "c"]),
        ),
        max_size=12,
    )
)
def test_order_keys_of_dated_turns_sort_as_time_order_does(turns):
    """The zip fast path (every turn dated) orders exactly as the `time_order` keys, ties included."""
    times, ids = [t for t, _ in turns], [i for _, i in turns]
    keys = time_order_keys(times, ids)
    plain = [time_order(t, i) for t, i in turns]
    by_keys = sorted(range(len(turns)), key=keys.__getitem__)
    assert by_keys == sorted(range(len(turns)), key=plain.__getitem__)


def test_a_table_grown_from_another_never_changes_it_nor_a_sibling_grown_from_the_same_table():
    base = TurnTable.of(TURNS[:2])
    grown = base + TurnTable.of(TURNS[2:3])
    sibling = base + TurnTable.of([turn(7)])  # the rows after `base` are `grown`'s: copied, not shared
    assert list(base) == TURNS[:2] and len(base.texts) == 2 and list(base.action_ids) == ["a0", "a1"]
    assert list(grown) == TURNS[:3] and list(sibling) == [*TURNS[:2], turn(7)]
    assert base.timestamps[-1] == TURNS[1].timestamp and grown.action_ids[-1] == "a2"
    with pytest.raises(IndexError):
        base[2]
    with pytest.raises(IndexError):
        base.texts[2]
    longer = grown + TurnTable.of(TURNS[3:])  # grows in place again
    assert list(longer) == TURNS and list(grown) == TURNS[:3] and grown.text_chars < longer.text_chars
    assert longer.text_chars == sum(len(t.text) for t in TURNS)


def test_a_column_slices_only_its_own_rows():
    grown = TurnTable.of(TURNS[:2]) + TurnTable.of(TURNS[2:])
    first = grown.take(range(4))[:2]  # a table of its own
    base = TurnTable.of(TURNS[:2])
    base + TurnTable.of(TURNS[2:])  # grows base's lists in place
    ids = [t.action_id for t in TURNS[:2]]
    for piece in (slice(None), slice(1, None), slice(None, None, -1), slice(-1, None), slice(0, 9)):
        assert base.action_ids[piece] == ids[piece] and first.action_ids[piece] == ids[piece]


def test_a_column_reads_many_of_its_own_rows_at_once_and_none_past_them():
    base = TurnTable.of(TURNS[:2])
    base + TurnTable.of(TURNS[2:])  # grows base's lists in place: rows 2-3 are not base's
    assert base.action_ids.values_at([1, 0, 1]) == ["a1", "a0", "a1"] and base.texts.values_at([]) == []
    for outside in ([2], [0, -1]):
        with pytest.raises(IndexError):
            base.action_ids.values_at(outside)
