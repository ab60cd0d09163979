"""A holder's signature is (degree, edge-id sum) of exactly the ids the structure holds: a structure
grown from another (`with_holders`, the walk's `compare`) keeps the signatures it already derived only
for the holders it did not read again."""

from hypothesis import given
from hypothesis import strategies as st
from recall_lib.structure import Structure

ids = st.lists(st.integers(0, 10_000), max_size=6).map(tuple)
holders = st.dictionaries(st.integers(0, 8), st.tuples(ids, ids), max_size=6)


def structure(of: dict[int, tuple[tuple[int, ...], tuple[int, ...]]]) -> Structure:
    return Structure(0, {h: out for h, (out, _) in of.items()}, {h: inn for h, (_, inn) in of.items()})


@given(holders, holders, st.booleans())
def test_a_grown_structure_signs_every_holder_as_a_fresh_one_would(base, read, derived_first):
    before = structure(base)
    if derived_first:
        assert before.signatures == {h: (len(o) + len(i), sum(o) + sum(i)) for h, (o, i) in base.items()}
    grown = before.with_holders(structure(read))
    fresh = structure({**base, **read})
    assert grown.signatures == fresh.signatures
    assert grown.differing(fresh.signatures) == set()
