"""Inflectional stems (Porter's step 1) and the spellings that carry them: what the text lane folds."""

import pytest
from recall_lib.inflection import forms, stem


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        # Porter's own examples for step 1
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("ties", "ti"),
        ("caress", "caress"),
        ("cats", "cat"),
        ("feed", "feed"),
        ("agreed", "agree"),
        ("plastered", "plaster"),
        ("bled", "bled"),
        ("motoring", "motor"),
        ("sing", "sing"),
        ("conflated", "conflate"),
        ("troubled", "trouble"),
        ("sized", "size"),
        ("hopping", "hop"),
        ("tanned", "tan"),
        ("falling", "fall"),
        ("hissing", "hiss"),
        ("fizzed", "fizz"),
        ("failing", "fail"),
        ("filing", "file"),
        ("happy", "happi"),
        ("sky", "sky"),
        # not folded: short words, numbers, identifiers
        ("is", "is"),
        ("2023s", "2023s"),
        ("v2ing", "v2ing"),
    ],
)
def test_stem_is_porters_first_step(word, expected):
    assert stem(word) == expected


@pytest.mark.parametrize(
    "family",
    [
        ("camp", "camps", "camped", "camping"),
        ("race", "races", "raced", "racing"),
        ("hobby", "hobbies"),
        ("activity", "activities"),
        ("run", "runs", "running"),
        ("paint", "paints", "painted", "painting"),
        ("study", "studies", "studied"),
    ],
)
def test_an_inflected_family_shares_one_stem_and_each_spelling_is_among_the_forms_of_any(family):
    assert len({stem(word) for word in family}) == 1
    for word in family:
        assert set(family) <= forms(word)
