"""Our passage split is the upstream writer's: PyPI sessions-graph 0.11.1 (a dev dependency), whose
stored `passage_embeddings` hold one vector per passage of its own `split_passages`.

Recall splits through `passages_of` (a text within one passage's length is its own passage), so that
is the contract pinned for every string; `split_passages` itself is pinned for every non-empty one,
at upstream's 1200 characters and, with upstream's bound lowered for the test, at small bounds where
every rule decides a cut.
"""

from contextlib import contextmanager

from hypothesis import find, given, settings
from hypothesis import strategies as st
from recall_lib.passages import PASSAGE_CHARS, split_passages
from recall_lib.reading import passages_of
from sessions_graph import passages as upstream
from sessions_graph.passages import PASSAGE_CHARS as UPSTREAM_PASSAGE_CHARS
from sessions_graph.passages import split_passages as upstream_split

# Pieces that build texts around the 1200-character passage bound: words, every kind of unit end,
# other whitespace, runs with no break at all (cut hard), and arbitrary text.
_PIECES = st.one_of(
    st.sampled_from(["word", "Ünïcode", "3.14", "e.g.", "a", " ", "  "]),
    st.sampled_from([".", "!", "?", "?!", ". ", "! ", "?\n", ".\n\n", "\n", "\n\n", "\n \n", " \n\t\n ",
                     "\r\n", "\t", "\xa0", "\u2028", "\x0b", "\x1c", "...", ". \n"]),
    st.integers(min_value=1, max_value=2600).map(lambda n: "x" * n),
    st.integers(min_value=1, max_value=40).map(lambda n: f"Sentence number {n} is here. " * n),
    st.text(max_size=80),
)
_LONG_TEXTS = st.lists(_PIECES, max_size=80).map("".join)
_TEXTS = st.one_of(_LONG_TEXTS, st.text(max_size=300))


def test_the_passage_bound_is_the_upstreams():
    assert PASSAGE_CHARS == UPSTREAM_PASSAGE_CHARS == 1200


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_recall_cuts_every_text_into_the_upstreams_passages(text):
    assert passages_of(text) == tuple(upstream_split(text))


@settings(max_examples=400, deadline=None)
@given(_TEXTS.filter(bool))
def test_split_passages_equals_the_upstreams_on_non_empty_text(text):
    assert split_passages(text) == upstream_split(text)


@contextmanager
def _upstream_bound(chars: int):
    """Upstream's split reads its module constant at call time: lower it for one comparison."""
    saved = upstream.PASSAGE_CHARS
    upstream.PASSAGE_CHARS = chars
    try:
        yield
    finally:
        upstream.PASSAGE_CHARS = saved


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(list("ab .!?\n\n\t\r\xa0\u2028\x0b")), min_size=1, max_size=120).map("".join),
       st.integers(min_value=1, max_value=30))
def test_split_passages_equals_the_upstreams_at_small_bounds(text, chars):
    with _upstream_bound(chars):
        theirs = upstream_split(text)
    assert split_passages(text, chars) == theirs


def test_the_empty_text_is_the_one_difference_and_recall_never_splits_it():
    assert upstream_split("") == [""] and split_passages("") == []
    assert passages_of("") == ("",)


def test_the_generated_texts_reach_the_multi_passage_cases():
    """The strategy is not vacuous: it finds texts of several passages with a hard cut at the bound."""
    def several_with_a_hard_cut(text: str) -> bool:
        passages = upstream_split(text)
        return len(passages) >= 3 and PASSAGE_CHARS in map(len, passages)

    found = find(_TEXTS, several_with_a_hard_cut, settings=settings(max_examples=2000, database=None))
    assert split_passages(found) == upstream_split(found)
