"""A holder's signature is (degree, edge-id sum) of exactly the ids the structure holds: a structure
grown from another (`with_holders`, the walk's `compare`) keeps the signatures it already derived only
for the holders it did not read again."""

from hypothesis import given
from hypothesis import strategies as st
from recall_lib.structure import PassedSignatures, Structure

ids = st.lists(st.integers(0, 10_000), max_size=6).map(tuple)
holders = st.dictionaries(st.integers(0, 8), st.tuples(ids, ids), max_size=6)


def claim(signatures: dict[int, tuple[int, int]]) -> PassedSignatures:
    """`signatures` as the fast call shape passes them: three lists, position by position."""
    return PassedSignatures(
        tuple(signatures), tuple(d for d, _ in signatures.values()), tuple(s for _, s in signatures.values())
    )


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
    assert grown.differing(claim(fresh.signatures)) == set()


@given(holders, st.data())
def test_a_claim_that_once_agreed_does_not_hide_a_different_one(base, data):
    """The remembered agreeing claim answers only for that exact claim: any other is compared afresh,
    however many times the agreeing one came before (the usual call)."""
    mine = structure(base)
    honest = claim(mine.signatures)
    assert mine.differing(honest) == set()
    assert mine.differing(honest) == set()  # answered from the remembered claim
    if not base:
        return
    holder = data.draw(st.sampled_from(sorted(base)))
    changed = {**mine.signatures, holder: (mine.signatures[holder][0] + 1, mine.signatures[holder][1])}
    assert mine.differing(claim(changed)) == {holder}
    missing = {h: sig for h, sig in mine.signatures.items() if h != holder}
    assert mine.differing(claim(missing)) == {holder}
    assert mine.differing(honest) == set()


def test_a_claim_with_unknown_holders_agrees_and_is_remembered_for_itself_only():
    mine = structure({1: ((10, 11), ()), 2: ((), (12,))})
    extra = claim({**mine.signatures, 99: (1, 5)})  # unknown holder ids are ignored
    assert mine.differing(extra) == set()
    assert mine.differing(claim(mine.signatures)) == set()
    assert mine.differing(claim({1: (2, 21), 2: (1, 13)})) == {2}
