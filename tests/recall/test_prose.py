"""A message's prose: its text without fenced code (`recall_lib.prose`)."""

from recall_lib.prose import prose_text


def test_prose_leaves_out_fenced_code_and_keeps_the_words_around_it():
    text = "My query takes 350ms.\n```js\nconst q = db.find({roomId});\n```\nHow do I index roomId?"
    assert prose_text(text) == "My query takes 350ms. How do I index roomId?"


def test_an_unclosed_fence_runs_to_the_end():
    assert prose_text("Here is the failing code:\n```python\nimport tweepy\n") == "Here is the failing code:"


def test_no_prose_of_its_own_without_a_fence_or_without_words():
    assert prose_text("I prefer Android phones.") is None  # its passages are its prose
    assert prose_text("```\nprint(1)\n```\n") is None
