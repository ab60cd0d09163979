"""Passages: the unit a message or note is embedded and shown in.

Stored ``passage_embeddings`` hold one vector per passage, so this split must
cut exactly where the upstream (sessions-graph) cuts, or vectors and passages
drift apart. The rule, as the upstream applies it:

* a text is first cut into *units*, each ending right after the first of
  - a blank line: a ``\\n``, then whitespace containing another ``\\n``; the unit
    runs through the **last** ``\\n`` of that whitespace (indentation after it
    starts the next unit);
  - a line end: a single ``\\n``;
  - a sentence end: ``.``, ``!`` or ``?`` followed by whitespace or the end of
    the text; **all** the whitespace after it (spaces, newlines, blank lines)
    stays with the sentence that ends, so the next unit starts at a
    non-whitespace character;
  - the end of the text;
* a unit longer than ``max_chars`` is cut hard every ``max_chars`` characters;
* units are packed greedily, in order, into passages of at most ``max_chars``.

"Whitespace" is Python's ``str.isspace`` (the regex ``\\s``), as upstream.
Passages are consecutive substrings, so ``"".join(split_passages(t)) == t``.
"""

import re

#: The upstream's passage length: well inside bge-small's 512-token window.
PASSAGE_CHARS = 1200

# Where a unit ends: the earliest match from the unit's start, alternatives tried in this order.
_UNIT_END = re.compile(r"\n\s*\n|\n|[.!?](?:\s+|\Z)")


def split_passages(text: str, max_chars: int = PASSAGE_CHARS) -> list[str]:
    """``text`` as consecutive passages of at most ``max_chars`` characters; ``[]`` for ``""``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise ValueError(f"max_chars must be an integer >= 1, got {max_chars!r}")
    passages: list[str] = []
    current = ""
    for unit in _units(text, max_chars):
        if current and len(current) + len(unit) > max_chars:
            passages.append(current)
            current = ""
        current += unit
    if current:
        passages.append(current)
    return passages


def _units(text: str, max_chars: int) -> list[str]:
    """The units of ``text`` in order, each at most ``max_chars`` long (longer ones cut hard)."""
    ends = [match.end() for match in _UNIT_END.finditer(text)]
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    units: list[str] = []
    start = 0
    for end in ends:
        units.extend(text[cut : min(cut + max_chars, end)] for cut in range(start, end, max_chars))
        start = end
    return units
