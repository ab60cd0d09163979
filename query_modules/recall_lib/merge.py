"""Merge newly read turns into a cached `UserMemory` without re-reading the old ones.

The cache's incremental refresh: after a new session at 100k messages, only its ~30 actions are read
from the graph; their vectors are appended to the user's matrix and their postings merged into the
BM25 index (numpy, no re-tokenising), so the result equals a full build over all turns (same rows,
same scores), at a fraction of the cost. Turns stay in time order: new turns that sort before old
ones (back-filled sessions, old turns without a timestamp) permute every index once.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .memory import FilterArrays, UserMemory
from .textindex import BM25Index
from .turn_table import Turn, TurnTable, time_order
from .vector_rows import VectorSet


def turn_order(turn: Turn) -> tuple:
    """The sort key a full build orders turns by (time, undated last, then action_id)."""
    return time_order(turn.timestamp, turn.action_id)


def merge_bm25(first: BM25Index, second: BM25Index) -> BM25Index:
    """One index over `first`'s documents followed by `second`'s (ids of `second` shifted).

    Per term, `first`'s postings come before `second`'s; search does not depend on that order.
    """
    if (first.k1, first.b) != (second.k1, second.b):
        raise ValueError("merge_bm25: both indexes must use the same k1 and b")
    vocabulary = dict(first.vocabulary)
    second_rows = np.empty(len(second.vocabulary), dtype=np.int64)
    for term, row in second.vocabulary.items():
        second_rows[row] = vocabulary.setdefault(term, len(vocabulary))
    first_counts = np.zeros(len(vocabulary), dtype=np.int64)
    first_counts[: len(first.vocabulary)] = np.diff(first.indptr)
    second_counts = np.diff(second.indptr)
    counts = first_counts.copy()
    np.add.at(counts, second_rows, second_counts)
    indptr = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    doc_ids = np.empty(int(indptr[-1]), dtype=np.int32)
    term_freqs = np.empty(int(indptr[-1]), dtype=np.int32)

    first_row = np.repeat(np.arange(len(first.vocabulary)), np.diff(first.indptr))
    first_pos = indptr[first_row] + np.arange(len(first.doc_ids)) - first.indptr[first_row]
    doc_ids[first_pos] = first.doc_ids
    term_freqs[first_pos] = first.term_freqs

    row = np.repeat(second_rows, second_counts)
    local = np.arange(len(second.doc_ids)) - np.repeat(second.indptr[:-1], second_counts)
    second_pos = indptr[row] + first_counts[row] + local
    doc_ids[second_pos] = second.doc_ids + first.n_docs
    term_freqs[second_pos] = second.term_freqs
    doc_lengths = np.concatenate([first.doc_lengths, second.doc_lengths]).astype(np.int32)
    return BM25Index(vocabulary, indptr, doc_ids, term_freqs, doc_lengths, first.k1, first.b)


def permute_bm25(index: BM25Index, position: np.ndarray) -> BM25Index:
    """The same index with document `i` renumbered `position[i]`."""
    doc_lengths = np.empty_like(index.doc_lengths)
    doc_lengths[position] = index.doc_lengths
    doc_ids = position[index.doc_ids].astype(np.int32)
    return BM25Index(
        dict(index.vocabulary),
        index.indptr.copy(),
        doc_ids,
        index.term_freqs.copy(),
        doc_lengths,
        index.k1,
        index.b,
    )


def subset_bm25(index: BM25Index, keep: np.ndarray) -> BM25Index:
    """The same index over the documents `keep` marks (renumbered in order); terms left without a
    document stay in the vocabulary with no postings, which scores and `doc_freq` treat as absent."""
    renumber = np.cumsum(keep) - 1
    posting_kept = keep[index.doc_ids]
    term_of_posting = np.repeat(np.arange(len(index.vocabulary)), np.diff(index.indptr))
    counts = np.bincount(term_of_posting[posting_kept], minlength=len(index.vocabulary))
    indptr = np.zeros(len(index.vocabulary) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return BM25Index(
        dict(index.vocabulary),
        indptr,
        renumber[index.doc_ids[posting_kept]].astype(np.int32),
        index.term_freqs[posting_kept].astype(np.int32),
        index.doc_lengths[keep].astype(np.int32),
        index.k1,
        index.b,
    )


def subset_vectors(vectors: VectorSet, keep: np.ndarray) -> VectorSet:
    """The rows of the items `keep` marks, owners renumbered in order."""
    rows = keep[vectors.owner]
    renumber = np.cumsum(keep) - 1
    return VectorSet(vectors.matrix[rows], renumber[vectors.owner[rows]], vectors.passage[rows])


def concat_vectors(first: VectorSet, second: VectorSet, offset: int) -> VectorSet:
    """`first`'s rows then `second`'s, whose owners are shifted by `offset`."""
    if len(second) == 0:
        return first
    if len(first) == 0:
        return VectorSet(second.matrix, second.owner + offset, second.passage)
    return VectorSet(
        np.concatenate([first.matrix, second.matrix]),
        np.concatenate([first.owner, second.owner + offset]),
        np.concatenate([first.passage, second.passage]),
    )


def _merged_filter(first: FilterArrays, second: FilterArrays) -> FilterArrays:
    """`first`'s items then `second`'s, session codes of `second` renumbered into one table."""
    known = set(first.sessions)
    names = first.sessions + tuple(name for name in second.sessions if name not in known)
    code = {name: i for i, name in enumerate(names)}
    renumber = np.array([code[name] for name in second.sessions] + [-1], dtype=np.int64)  # -1 stays -1
    return FilterArrays(
        np.concatenate([first.epoch, second.epoch]),
        np.concatenate([first.session, renumber[second.session]]),
        names,
    )


def merge_turns(
    memory: UserMemory,
    turns: TurnTable | Sequence[Turn],
    vectors: VectorSet,
    without_vectors: int,
    action_sessions: Mapping[str, str | None],
    malformed: Counter,
    **changes: Any,
) -> UserMemory:
    """`memory` with `turns` (read by `memory.read_turns`, their `vectors` owned by index into `turns`)
    added, as if all turns had been read at once. `action_sessions` covers every newly owned action;
    `changes` replaces other fields (notes re-read). What `memory` derived lazily from its turns and
    facts (`turn_filter`, `fact_filter`, `fact_types`) is extended, not recomputed over all turns."""
    if not isinstance(turns, TurnTable):
        turns = TurnTable.of(turns)
    if not turns and not action_sessions and not malformed and not changes:
        return memory
    old = len(memory.turns)
    all_turns = memory.turns + turns
    matrix = concat_vectors(memory.turn_vectors, vectors, old)
    text_index = memory.text_index
    if turns:
        text_index = merge_bm25(text_index, BM25Index.build(turns.texts))
    derived = memory.__dict__  # cached_property values computed on the cached memory
    turn_filter = None
    if "turn_filter" in derived:
        added = FilterArrays.of(turns.timestamps, turns.session_ids)
        turn_filter = _merged_filter(derived["turn_filter"], added)
    if turns and memory.turns and turn_order(turns[0]) < turn_order(memory.turns[-1]):
        keys = all_turns.order_keys()
        order = np.asarray(sorted(range(len(all_turns)), key=keys.__getitem__), dtype=np.int64)
        position = np.empty(len(all_turns), dtype=np.int64)
        position[order] = np.arange(len(all_turns))
        all_turns = all_turns.take(order)
        rows = np.argsort(position[matrix.owner], kind="stable")  # keep rows grouped by ascending turn
        matrix = VectorSet(matrix.matrix[rows], position[matrix.owner][rows], matrix.passage[rows])
        text_index = permute_bm25(text_index, position)
        if turn_filter is not None:
            turn_filter = FilterArrays(
                turn_filter.epoch[order], turn_filter.session[order], turn_filter.sessions
            )
        turn_by_action = {action_id: i for i, action_id in enumerate(all_turns.action_ids)}
    else:
        turn_by_action = dict(memory.turn_by_action)
        turn_by_action.update((action_id, old + i) for i, action_id in enumerate(turns.action_ids))
    counts = Counter(memory.malformed)
    counts.update(malformed)
    merged = replace(
        memory,
        turns=all_turns,
        turn_vectors=matrix,
        text_index=text_index,
        turn_by_action=turn_by_action,
        action_sessions={**memory.action_sessions, **action_sessions},
        turns_without_vectors=memory.turns_without_vectors + without_vectors,
        malformed=dict(counts),
        **changes,
    )
    # Facts are not re-read by a merge and their source turns keep their times and sessions.
    carried = {name: derived[name] for name in ("fact_filter", "fact_types") if name in derived}
    if turn_filter is not None:
        carried["turn_filter"] = turn_filter
    merged.__dict__.update(carried)  # cached_property storage: the values a fresh computation would give
    return merged
