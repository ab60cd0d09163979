"""`distinct`'s helpers give exactly what np.unique gives (they replace it where a call is timed)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from recall_lib.distinct import distinct, distinct_with_inverse, first_positions

integers = st.lists(st.integers(-5, 40), max_size=60).map(lambda v: np.asarray(v, dtype=np.int64))


@given(integers)
def test_the_helpers_agree_with_numpy_unique(values):
    expected, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    assert np.array_equal(distinct(values), expected)
    found, places = distinct_with_inverse(values)
    assert np.array_equal(found, expected) and np.array_equal(places, inverse.reshape(-1))
    assert np.array_equal(first_positions(values), np.sort(first))
