"""Incremental merge: merged BM25 indexes and vectors answer exactly as a full build over all turns."""

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from recall_lib.memory import UserMemory
from recall_lib.merge import (
    concat_vectors,
    merge_bm25,
    merge_turns,
    permute_bm25,
    subset_bm25,
    subset_vectors,
    turn_order,
)
from recall_lib.textindex import BM25Index
from recall_lib.turn_table import Turn, TurnTable
from recall_lib.vector_rows import VectorSet

WORDS = ["kayak", "paddle", "lake", "june", "garden", "roses", "hedge", "soup", "curry", "the", "a", "Été"]
docs_strategy = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join), min_size=0, max_size=12
)


def same_search(left: BM25Index, right: BM25Index, queries: list[list[str]], k: int = 20) -> None:
    assert left.n_docs == right.n_docs
    for terms in queries:
        a_ids, a_scores = left.search(terms, k)
        b_ids, b_scores = right.search(terms, k)
        assert a_ids.tolist() == b_ids.tolist(), terms
        np.testing.assert_allclose(a_scores, b_scores, rtol=1e-12)


QUERIES = [[w.lower()] for w in WORDS] + [["kayak", "lake"], ["soup", "garden", "été"], ["missing"]]


@settings(max_examples=60, deadline=None)
@given(first=docs_strategy, second=docs_strategy)
def test_merged_index_searches_like_one_built_over_all_documents(first, second):
    merged = merge_bm25(BM25Index.build(first), BM25Index.build(second))
    same_search(merged, BM25Index.build(first + second), QUERIES)
    assert merged.doc_freq("kayak") == BM25Index.build(first + second).doc_freq("kayak")


@settings(max_examples=40, deadline=None)
@given(docs=docs_strategy.filter(bool), data=st.data())
def test_permuted_index_searches_like_one_built_in_the_new_order(docs, data):
    order = data.draw(st.permutations(range(len(docs))))
    position = np.empty(len(docs), dtype=np.int64)
    position[np.asarray(order)] = np.arange(len(docs))
    permuted = permute_bm25(BM25Index.build(docs), position)
    same_search(permuted, BM25Index.build([docs[i] for i in order]), QUERIES)


@settings(max_examples=40, deadline=None)
@given(docs=docs_strategy, data=st.data())
def test_a_subset_index_searches_like_one_built_over_the_kept_documents(docs, data):
    keep = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(docs), max_size=len(docs))), dtype=bool)
    subset = subset_bm25(BM25Index.build(docs), keep)
    kept = [doc for doc, k in zip(docs, keep, strict=True) if k]
    same_search(subset, BM25Index.build(kept), QUERIES)
    assert [subset.doc_freq(w.lower()) for w in WORDS] == [
        BM25Index.build(kept).doc_freq(w.lower()) for w in WORDS
    ]


def test_subset_vectors_keeps_the_rows_of_kept_items_renumbered():
    vectors = VectorSet(np.eye(4, dtype=np.float32), np.array([0, 0, 1, 2]), np.array([0, 1, 0, 0]))
    kept = subset_vectors(vectors, np.array([True, False, True]))
    assert kept.owner.tolist() == [0, 0, 1] and kept.passage.tolist() == [0, 1, 0]
    assert kept.matrix.tolist() == np.eye(4, dtype=np.float32)[[0, 1, 3]].tolist()


def test_merge_refuses_different_parameters():
    with pytest.raises(ValueError, match="same k1 and b"):
        merge_bm25(BM25Index.build(["a"]), BM25Index.build(["a"], k1=1.2))


def test_concat_vectors_shifts_the_owners_of_the_second_set():
    a = VectorSet(np.eye(3, dtype=np.float32)[:2], np.array([0, 1]), np.array([0, 0]))
    b = VectorSet(np.eye(3, dtype=np.float32)[2:], np.array([0]), np.array([1]))
    both = concat_vectors(a, b, 2)
    assert both.owner.tolist() == [0, 1, 2] and both.passage.tolist() == [0, 0, 1]
    assert concat_vectors(VectorSet.empty(3), b, 5).owner.tolist() == [5]
    assert concat_vectors(a, VectorSet.empty(3), 2) is a


# -- merge_turns against a memory built at once ------------------------------------------------------
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def turn(i: int, minutes: int | None, text: str, session: str | None = "s") -> Turn:
    stamp = None if minutes is None else T0 + timedelta(minutes=minutes)
    return Turn(100 + i, f"a{i}", session, stamp, "user", "user_message", text, (text,))


def memory_of(turns: list[Turn], vectors: np.ndarray) -> UserMemory:
    """What a full build gives for these turns (time order, one vector row per turn)."""
    order = sorted(range(len(turns)), key=lambda i: turn_order(turns[i]))
    ordered = [turns[i] for i in order]
    base = UserMemory.empty(1, "u", "m", vectors.shape[1])
    return UserMemory(
        **{
            **base.__dict__,
            "turns": TurnTable.of(ordered),
            "turn_vectors": VectorSet(vectors[order], np.arange(len(order)), np.zeros(len(order), np.int64)),
            "text_index": BM25Index.build([t.text for t in ordered]),
            "turn_by_action": {t.action_id: i for i, t in enumerate(ordered)},
            "action_sessions": {t.action_id: t.session_id for t in ordered},
        }
    )


def session_names(arrays) -> list[str | None]:
    return [arrays.sessions[code] if code >= 0 else None for code in arrays.session]


def vector_per_turn(memory: UserMemory) -> list[list[float]]:
    rows = memory.turn_vectors
    by_owner = {int(owner): rows.matrix[r].tolist() for r, owner in enumerate(rows.owner)}
    return [by_owner[i] for i in range(len(memory.turns))]


@pytest.mark.parametrize(
    "new_minutes",
    [[50, 60], [5, 70], [None, 1]],
    ids=["appended", "back-filled", "undated"],
)
def test_merge_turns_equals_a_full_build(new_minutes):
    old = [turn(0, 10, "kayak lake"), turn(1, 20, "garden roses"), turn(2, 30, "soup curry kayak")]
    texts = ["lake june", "hedge kayak"]
    new = [
        turn(3 + j, m, text, session)
        for j, (m, text, session) in enumerate(zip(new_minutes, texts, ["t", None], strict=True))
    ]
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((5, 4)).astype(np.float32)
    before = memory_of(old, vectors[:3])
    cached_filter = before.turn_filter  # computed on the cached memory: the merge extends it
    new_memory = memory_of(new, vectors[3:])
    merged = merge_turns(
        before,
        new_memory.turns,
        new_memory.turn_vectors,
        0,
        {t.action_id: t.session_id for t in new},
        {},
    )
    full = memory_of(old + new, vectors)
    assert merged.turns == full.turns
    assert merged.turn_by_action == full.turn_by_action
    same_search(merged.text_index, full.text_index, QUERIES)
    assert vector_per_turn(merged) == vector_per_turn(full)  # whatever the row order
    owners = merged.turn_vectors.owner
    assert (owners[1:] >= owners[:-1]).all()  # rows stay grouped by ascending turn, as a build makes them
    carried, fresh = merged.__dict__["turn_filter"], full.turn_filter
    assert carried is not cached_filter
    np.testing.assert_array_equal(carried.epoch, fresh.epoch)
    assert session_names(carried) == session_names(fresh)
    assert tuple(before.turns) == tuple(sorted(old, key=turn_order))  # the cached memory is not changed
