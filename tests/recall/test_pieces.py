"""Which part of a long text a row shows (`recall_lib.pieces`): the piece of the matched passage that holds
the question's terms, whole texts below the limit, and the embedding passages at their own length."""

from hypothesis import given
from hypothesis import strategies as st
from recall_lib.passages import split_passages
from recall_lib.pieces import chosen_pieces, shown_text, split_pieces
from recall_lib.textindex import TermOverlap

FILLER = "We talked about the weather and the traffic on the way. "


def long_text() -> tuple[str, list[str]]:
    """Two embedding passages; the second holds the sentence about the PostgreSQL index."""
    first = FILLER * 20  # ~1,100 characters
    second = FILLER * 8 + "I added an index on room_id for PostgreSQL. " + FILLER * 8
    text = first + second
    return text, split_passages(text)


def test_a_long_text_shows_the_piece_of_the_matched_passage_that_holds_the_terms():
    text, passages = long_text()
    assert len(passages) == 2
    overlap = TermOverlap(["postgresql", "index"])
    shown = shown_text(text, passages, [1], 300, overlap)
    assert "I added an index on room_id for PostgreSQL." in shown
    assert shown.startswith("… ") and shown.endswith(" …") and len(shown) <= 300 + 4
    pieces, chosen = chosen_pieces(text, passages, [1], 300, overlap)
    assert "".join(pieces) == text and len(chosen) == 1 and all(len(p) <= 300 for p in pieces)


def test_without_terms_the_first_piece_of_the_matched_passage_is_shown():
    text, passages = long_text()
    pieces, chosen = chosen_pieces(text, passages, [1], 300, TermOverlap([]))
    start = len(passages[0])
    assert sum(map(len, pieces[: chosen[0]])) <= start < sum(map(len, pieces[: chosen[0] + 1]))


def test_a_text_within_the_limit_or_with_nothing_matched_is_shown_whole():
    text, passages = long_text()
    assert chosen_pieces(text, passages, [1], len(text), None) is None
    assert chosen_pieces(text, passages, [], 300, None) is None
    assert shown_text("short  text\nhere", ["short  text\nhere"], [0], 300) == "short text here"


def test_at_a_passage_s_length_or_more_the_pieces_are_the_passages():
    text, passages = long_text()
    assert chosen_pieces(text, passages, [1], 1500, TermOverlap(["weather"])) == (passages, [1])


def test_one_piece_per_matched_passage_in_text_order():
    text, passages = long_text()
    overlap = TermOverlap(["postgresql"])
    pieces, chosen = chosen_pieces(text, passages, [1, 0], 400, overlap)
    assert len(chosen) == 2 and chosen == sorted(chosen)
    assert "PostgreSQL" in pieces[chosen[1]]


def test_pieces_cut_a_long_sentence_between_words_not_inside_one():
    text = "I want to learn about sequences and series to improve my analytical skills today"
    assert split_pieces(text, 30) == [
        "I want to learn about ", "sequences and series to ", "improve my analytical skills ", "today"]
    assert split_passages(text, 30)[0] == "I want to learn about sequence"  # the passages' hard cut
    # no space in a window's second half: cut hard
    assert split_pieces("x" * 25 + " yy", 10) == ["x" * 10, "x" * 10, "xxxxx yy"]
    # sentence and line ends and greedy packing are the passages' own
    text = "One. Two. Three."
    assert split_pieces(text, 10) == split_passages(text, 10) == ["One. Two. ", "Three."]


_TRICKY = st.lists(st.sampled_from(list("ab .!?\n\t")), max_size=120).map("".join)
_TEXTS = st.one_of(_TRICKY, st.text(max_size=300))


@given(_TEXTS, st.integers(min_value=1, max_value=40))
def test_pieces_give_the_text_back_within_the_bound_and_cut_at_a_unit_end_a_space_or_hard(text, limit):
    pieces = split_pieces(text, limit)
    assert "".join(pieces) == text
    assert all(0 < len(p) <= limit for p in pieces)
    at = 0
    for piece in pieces[:-1]:
        at += len(piece)
        head = text[:at]
        after_sentence = head.rstrip()[-1:] in (".", "!", "?") and not text[at].isspace()
        assert head.endswith(("\n", " ")) or after_sentence or len(piece) == limit, (text, pieces)
