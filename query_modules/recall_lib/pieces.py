"""Which part of a long text a row shows: whole up to a limit, else the pieces that matched.

Why pieces smaller than the embedding passages: an answer pays for its context in characters, and a
long message (a coding chat's 3,000-character reply) shown as its 1,200-character matched passage
leaves room for few other rows. Shown as the piece of at most `limit` characters (cut at sentence and
line ends, as passages are, and a longer sentence between words) that holds most of the question's
terms within the passage that matched, many more messages fit a budget; the matched passage is still
the one the piece comes from.
"""

from collections.abc import Sequence

from .passages import _UNIT_END, PASSAGE_CHARS
from .textindex import TermOverlap

ELLIPSIS = "…"


def one_line(text: str) -> str:
    """Rows are single lines: runs of whitespace (newlines included) become one space."""
    return " ".join(text.split())


def split_pieces(text: str, limit: int) -> list[str]:
    """`text` as consecutive pieces of at most `limit` characters, cut as `passages.split_passages` cuts
    (its unit ends, greedy packing) except inside a unit longer than `limit`: there a cut falls after the
    last space of each `limit` window when the window's second half holds one, not inside a word.

    Why not `split_passages` itself: its hard cuts must stay the upstream's (stored vectors are per
    passage); a 60-character piece cut inside a word reads as noise."""
    ends = [match.end() for match in _UNIT_END.finditer(text)]
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    units, start = [], 0
    for end in ends:
        while end - start > limit:
            space = text.rfind(" ", start + limit // 2, start + limit)
            cut = space + 1 if space >= 0 else start + limit
            units.append(text[start:cut])
            start = cut
        if end > start:
            units.append(text[start:end])
        start = end
    pieces: list[str] = []
    for unit in units:
        if pieces and len(pieces[-1]) + len(unit) <= limit:
            pieces[-1] += unit
        else:
            pieces.append(unit)
    return pieces


def chosen_pieces(
    text: str, passages: Sequence[str], matched: Sequence[int], limit: int, overlap: TermOverlap | None
) -> tuple[list[str], list[int]] | None:
    """The pieces `text` is cut into for showing, and the indexes of those shown (ascending); None when
    the whole text is shown (`limit` or more characters long, or nothing matched).

    `passages`: the text's embedding passages (consecutive); `matched`: those that matched. At a limit
    of a passage's length or more the pieces are the passages. Below it, each matched passage shows the
    one of its pieces holding most of `overlap`'s terms (the first on a tie)."""
    if len(text) <= limit or not matched or limit <= 0:
        return None
    if limit >= PASSAGE_CHARS or len(passages) == 0:
        return list(passages), sorted(set(matched))
    pieces = split_pieces(text, limit)
    starts, at = [], 0
    for piece in pieces:
        starts.append(at)
        at += len(piece)
    shown: set[int] = set()
    begin = 0
    spans = []
    for passage in passages:
        spans.append((begin, begin + len(passage)))
        begin += len(passage)
    for index in sorted(set(matched)):
        if not 0 <= index < len(spans):
            continue
        first, last = spans[index]
        inside = [i for i, s in enumerate(starts) if s < last and s + len(pieces[i]) > first]
        if not inside:
            continue
        counts = [overlap.count(pieces[i]) if overlap is not None else 0 for i in inside]
        shown.add(inside[counts.index(max(counts))])
    return (pieces, sorted(shown)) if shown else None


def shown_text(
    text: str, passages: Sequence[str], matched: Sequence[int], limit: int, overlap: TermOverlap | None = None
) -> str:
    """The whole text, or (when longer than `limit`) its chosen pieces with `…` where text is left out."""
    chosen = chosen_pieces(text, passages, matched, limit, overlap)
    if chosen is None:
        return one_line(text)
    pieces, shown = chosen
    parts: list[str] = [] if shown[0] == 0 else [ELLIPSIS]
    previous = None
    for index in shown:
        if previous is not None and index != previous + 1:
            parts.append(ELLIPSIS)
        parts.append(one_line(pieces[index]))
        previous = index
    if shown[-1] != len(pieces) - 1:
        parts.append(ELLIPSIS)
    return " ".join(parts)
