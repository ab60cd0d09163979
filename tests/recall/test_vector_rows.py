"""`VectorCollector`: stored vectors packed as read, checked, normalised; bad units dropped and counted."""

from collections import Counter

import numpy as np
from recall_lib.vector_rows import VectorCollector

DIM = 4


def collect(*units, dim: int | None = DIM) -> tuple:
    malformed: Counter = Counter()
    collector = VectorCollector("message", "m", dim, malformed)
    added = [
        collector.add(owner, model, vectors, passages)
        for owner, (model, vectors, passages) in enumerate(units)
    ]
    vectors, bad = collector.build()
    return added, vectors, bad, malformed


def test_rows_are_normalised_and_grouped_by_owner_in_passage_order():
    added, vectors, bad, malformed = collect(
        ("m", ((3.0, 4.0, 0.0, 0.0), (0.0, 0.0, 2.0, 0.0)), 2),
        ("m", ((1, 1, 1, 1),), 1),
    )
    assert added == [True, True] and not bad and not malformed
    assert vectors.owner.tolist() == [0, 0, 1] and vectors.passage.tolist() == [0, 1, 0]
    np.testing.assert_allclose(vectors.matrix[0], [0.6, 0.8, 0.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors.matrix, axis=1), 1.0, rtol=1e-6)
    assert vectors.matrix.dtype == np.float32


def test_a_single_embedding_is_one_row():
    added, vectors, _, _ = collect(("m", (0.0, 2.0, 0.0, 0.0), None))
    assert added == [True] and vectors.matrix.tolist() == [[0.0, 1.0, 0.0, 0.0]]


def test_non_numbers_huge_values_nan_and_zero_rows_drop_their_unit():
    added, vectors, bad, malformed = collect(
        ("m", ((1.0, "x", 0.0, 0.0),), 1),  # not a number
        ("m", ((1e39, 0.0, 0.0, 0.0),), 1),  # beyond float32
        ("m", ((float("nan"), 0.0, 0.0, 0.0),), 1),
        ("m", ((0.0, 0.0, 0.0, 0.0),), 1),
        ("m", ((1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)), 2),  # one bad passage drops the unit
        ("m", ((0.0, 1.0, 0.0, 0.0),), 1),
    )
    assert bad == {0, 1, 2, 3, 4}
    assert vectors.owner.tolist() == [5]
    assert malformed == {"message: vector not finite, not numeric or zero": 5}


def test_other_models_missing_and_misshapen_vectors_are_not_added():
    added, vectors, _, malformed = collect(
        ("other", ((1.0, 0.0, 0.0, 0.0),), 1),  # another model's
        ("m", None, 1),  # none stored
        ("m", ((1.0, 0.0, 0.0),), 1),  # another dimension: another model's
        ("m", ((1.0, 0.0, 0.0, 0.0),), 2),  # fewer vectors than passages
        ("m", ((1.0, 0.0, 0.0, 0.0), (1.0, 0.0)), 2),  # ragged
    )
    assert added == [False] * 5 and len(vectors) == 0
    assert malformed == {
        "message: vector count differs from passages": 1,
        "message: vectors of mixed length": 1,
    }


def test_without_a_loaded_model_nothing_is_collected():
    added, vectors, _, _ = collect(("m", ((1.0, 0.0, 0.0, 0.0),), 1), dim=None)
    assert added == [False] and len(vectors) == 0


def test_rows_taken_over_normalised_stay_bit_for_bit_beside_rows_read_anew():
    """A rebuild adds the rows it takes over as they were (`add_taken`) and normalises only those it
    read anew, a bad one among them dropped with its unit and the rest kept in line."""
    malformed: Counter = Counter()
    collector = VectorCollector("message", "m", DIM, malformed)
    kept = np.array([[0.5, 0.5, 0.5, 0.5000001]], dtype=np.float32)  # not quite unit length: left so
    collector.add(0, "m", ((3.0, 4.0, 0.0, 0.0),), 1)
    collector.add_taken(1, np.vstack([kept, kept, kept]), 1, 2)
    collector.add(2, "m", ((0.0, 0.0, 0.0, 0.0),), 1)  # zero: dropped
    collector.add(3, "m", ((0.0, 0.0, 0.0, 2.0),), 1)
    vectors, bad = collector.build()
    assert bad == {2} and vectors.owner.tolist() == [0, 1, 3]
    assert vectors.matrix[1].tobytes() == kept[0].tobytes()
    expected = [[0.6, 0.8, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    np.testing.assert_allclose(vectors.matrix[[0, 2]], expected, rtol=1e-6)


def test_rows_taken_over_in_runs_come_out_in_the_order_they_were_added():
    """Taken rows are copied at `build`, adjacent ones as one run: the matrix reads as if each unit's rows
    had been appended when it was added, packed ones among them."""
    source = np.eye(DIM, dtype=np.float32)[[0, 1, 2, 3, 0]]
    collector = VectorCollector("message", "m", DIM, Counter())
    collector.add_taken(0, source, 0, 2)  # two passages
    collector.add_taken(1, source, 2, 3)  # right after: the same run
    collector.add(2, "m", ((0.0, 0.0, 0.0, 5.0),), 1)
    collector.add(3, "m", ((0.0, 3.0, 0.0, 0.0),), 1)
    collector.add_taken(4, source, 4, 5)
    collector.add_taken(5, source, 1, 2)  # earlier in the source: a run of its own
    vectors, bad = collector.build()
    assert not bad and vectors.owner.tolist() == [0, 0, 1, 2, 3, 4, 5]
    assert vectors.passage.tolist() == [0, 1, 0, 0, 0, 0, 0]
    assert vectors.matrix.argmax(axis=1).tolist() == [0, 1, 2, 3, 1, 0, 1]
    np.testing.assert_allclose(np.linalg.norm(vectors.matrix, axis=1), 1.0, rtol=1e-6)
