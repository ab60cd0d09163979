"""The passage split must cut exactly where the upstream does, or stored vectors drift from passages."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_lib.passages import PASSAGE_CHARS, split_passages

# Characters that exercise every rule: sentence ends, line ends, blank lines, other whitespace.
_TRICKY = st.lists(st.sampled_from(list("ab .!?\n\n\t\r\xa0\u2028")), max_size=120).map("".join)
_TEXTS = st.one_of(_TRICKY, st.text(max_size=400))


@pytest.mark.parametrize(
    ("text", "max_chars", "expected"),
    [
        ("", 10, []),
        ("Hello.", 10, ["Hello."]),
        # Greedy packing: "Three." would make the first passage 16 > 10.
        ("One. Two. Three.", 10, ["One. Two. ", "Three."]),
        # All whitespace after a sentence end, blank line included, stays with that sentence.
        ("Hi!  \n\nNext", 8, ["Hi!  \n\n", "Next"]),
        # A blank line's unit runs through its last newline; indentation after it starts the next unit.
        ("a\n \n  b", 4, ["a\n \n", "  b"]),
        # "3.14" has no whitespace after the dot: not a sentence end, so the line is cut hard.
        ("Pi is 3.14 ok", 5, ["Pi is", " 3.14", " ok"]),
        # The tail of a hard-cut unit packs with the units after it.
        ("xxxxxxxxx\nab", 6, ["xxxxxx", "xxx\nab"]),
        # Only "\n" ends a line: "\r" stays inside the unit.
        ("a\rb\nc", 4, ["a\rb\n", "c"]),
        # "?!" ends a sentence only at the "!" (the "?" is followed by "!", not whitespace).
        ("Why?! Now. Go", 6, ["Why?! ", "Now. ", "Go"]),
    ],
)
def test_worked_examples(text, max_chars, expected):
    assert split_passages(text, max_chars) == expected


def test_default_length_is_the_upstreams_1200():
    line = "y" * 3000
    assert [len(p) for p in split_passages(line)] == [PASSAGE_CHARS, PASSAGE_CHARS, 600]
    sentences = "A short sentence. " * 100
    passages = split_passages(sentences)
    assert all(p.endswith(". ") for p in passages)
    assert [len(p) for p in passages] == [1188, 612]


@pytest.mark.parametrize("max_chars", [0, -3, 1.5, True, "1200"])
def test_bad_max_chars_is_named(max_chars):
    with pytest.raises(ValueError, match="max_chars must be an integer >= 1"):
        split_passages("text", max_chars)


def test_non_string_text_is_rejected():
    with pytest.raises(TypeError, match="text must be a string"):
        split_passages(None)


@given(_TEXTS, st.integers(min_value=1, max_value=30))
def test_passages_give_the_text_back_and_respect_the_bound(text, max_chars):
    passages = split_passages(text, max_chars)
    assert "".join(passages) == text
    assert all(0 < len(p) <= max_chars for p in passages)


@given(_TEXTS, st.integers(min_value=1, max_value=30))
def test_packing_is_greedy(text, max_chars):
    """A passage starts only with a unit that did not fit in the one before."""
    passages = split_passages(text, max_chars)
    for before, after in zip(passages, passages[1:], strict=False):
        assert len(before) + len(after) > max_chars


@given(_TEXTS, st.integers(min_value=1, max_value=30))
def test_cuts_fall_after_a_line_or_sentence_end_unless_hard(text, max_chars):
    passages = split_passages(text, max_chars)
    position = 0
    for passage in passages[:-1]:
        position += len(passage)
        if len(passage) == max_chars:
            continue  # may be a hard cut
        head = text[:position]
        after_sentence = head.rstrip()[-1:] in (".", "!", "?") and not text[position].isspace()
        assert head.endswith("\n") or after_sentence, (text, passages)

