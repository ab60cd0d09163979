"""`Layered` reads as the dict `{**base, **top}` would, without copying the base."""

from hypothesis import given
from hypothesis import strategies as st
from recall_lib.layered import Layered

maps = st.dictionaries(st.integers(0, 40), st.integers(), max_size=30)


@given(maps, st.lists(maps, max_size=5))
def test_layers_read_like_the_merged_dict(base, layers):
    layered, merged = dict(base), dict(base)
    for more in layers:
        layered, merged = Layered.over(layered, more), {**merged, **more}
    assert dict(layered) == merged and list(layered) == list(merged) and len(layered) == len(merged)
    for key in range(-1, 42):
        assert (key in layered) == (key in merged) and layered.get(key, "none") == merged.get(key, "none")


def test_the_base_is_shared_until_the_top_outgrows_an_eighth_of_it():
    base = {i: i for i in range(80)}
    small = Layered.over(base, {100: 1, 3: -3})
    assert small._base is base and small[3] == -3 and small[100] == 1 and base[3] == 3 and len(small) == 81
    large = Layered.over(small, {i: 0 for i in range(200, 220)})
    assert large._base is not base and large._top == {} and len(large) == 101 and large[3] == -3
