"""What a cached snapshot grows by: BM25 postings and vector rows appended answer exactly as a build over
all turns would (the end-to-end equality of a refresh and a full build is in test_cache_freshness)."""

from datetime import datetime, timezone

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from recall_lib.snapshot import FilterArrays
from recall_lib.textindex import BM25Index
from recall_lib.vector_rows import VectorSet

WORDS = ["kayak", "paddle", "lake", "june", "garden", "roses", "hedge", "soup", "curry", "the", "a", "Été"]
docs_strategy = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join), min_size=0, max_size=12
)
QUERIES = [[w.lower()] for w in WORDS] + [["kayak", "lake"], ["soup", "garden", "été"], ["missing"]]


@settings(max_examples=60, deadline=None)
@given(first=docs_strategy, second=docs_strategy)
def test_an_extended_index_searches_like_one_built_over_all_documents(first, second):
    extended = BM25Index.build(first).extended(second)
    whole = BM25Index.build(first + second)
    assert extended.n_docs == whole.n_docs
    for terms in QUERIES:
        a_ids, a_scores = extended.search(terms, 20)
        b_ids, b_scores = whole.search(terms, 20)
        assert a_ids.tolist() == b_ids.tolist(), terms
        np.testing.assert_allclose(a_scores, b_scores, rtol=1e-12)
        assert extended.doc_freq(terms[0]) == whole.doc_freq(terms[0])


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(docs_strategy, min_size=1, max_size=6))
def test_an_index_extended_session_by_session_scores_to_the_bit_like_one_build(parts):
    """Extending keeps new documents in a tail (merged once it is large): the same scores, not close."""
    index = BM25Index.build(parts[0])
    for more in parts[1:]:
        index = index.extended(more)
    whole = BM25Index.build([doc for part in parts for doc in part])
    assert index.n_docs == whole.n_docs and index.doc_lengths.tolist() == whole.doc_lengths.tolist()
    for terms in QUERIES:
        a_ids, a_scores = index.search(terms, 50)
        b_ids, b_scores = whole.search(terms, 50)
        assert a_ids.tolist() == b_ids.tolist() and a_scores.tolist() == b_scores.tolist(), terms
        assert index.doc_freq(terms[0]) == whole.doc_freq(terms[0])


def test_a_small_extension_goes_to_the_tail_and_a_large_one_merges_it():
    base = BM25Index.build([f"kayak lake day {i}" for i in range(80)])
    small = base.extended(["soup garden"])
    assert small.tail is not None and small.indptr is base.indptr  # the postings shared, not copied
    assert small.search(["soup"], 5)[0].tolist() == [80]
    large = small.extended([f"curry roses {i}" for i in range(80)])
    assert large.tail is None and large.n_docs == 161
    assert large.search(["soup"], 5)[0].tolist() == [80] and large.doc_freq("curry") == 80
    assert small.nbytes > base.nbytes


def test_vector_rows_extend_with_shifted_owners_and_merge_keeping_items_grouped():
    a = VectorSet(np.eye(3, dtype=np.float32)[:2], np.array([0, 2]), np.array([0, 0]))
    b = VectorSet(np.eye(3, dtype=np.float32)[2:], np.array([0]), np.array([1]))
    assert a.extended(b, 3).owner.tolist() == [0, 2, 3] and a.extended(VectorSet.empty(3), 3) is a
    merged = a.with_rows(VectorSet(np.eye(3, dtype=np.float32)[2:], np.array([1]), np.array([0])))
    assert merged.owner.tolist() == [0, 1, 2]
    assert merged.matrix[1].tolist() == [0.0, 0.0, 1.0]
    assert a.without_rows(4).tolist() == [1, 3]


def test_filter_arrays_add_renumbers_the_second_lists_sessions():
    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    first = FilterArrays.of([t, None], ["b", None])
    both = first + FilterArrays.of([None, t], ["a", "b"])
    assert [both.sessions[c] if c >= 0 else None for c in both.session] == ["b", None, "a", "b"]
    assert np.isnan(both.epoch[1]) and both.epoch[3] == t.timestamp()


def test_extending_writes_spare_room_once_and_never_changes_a_published_view():
    eye = np.eye(4, dtype=np.float32)
    base = VectorSet(eye[:1], np.array([0]), np.array([0])).extended(
        VectorSet(eye[1:2], np.array([0]), np.array([0])), 1
    )
    assert base.buffer is not None and len(base.buffer.rows) > len(base)  # room to grow
    first = base.extended(VectorSet(eye[2:3], np.array([0]), np.array([0])), 2)
    assert np.shares_memory(first.matrix, base.matrix)  # written in place, not copied
    # A second extension of the same base must not reuse the rows `first` claimed.
    second = base.extended(VectorSet(eye[3:4], np.array([0]), np.array([0])), 2)
    assert first.matrix[2].tolist() == eye[2].tolist() and second.matrix[2].tolist() == eye[3].tolist()
    assert base.matrix.tolist() == eye[:2].tolist() and len(base) == 2
