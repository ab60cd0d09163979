"""Whether a question gathers several occasions: a count, a total, an order of events, a current value.

Why: "How many tanks do I have?", "the total weight of the feed I bought", "the order of the trips I
took" are answered by pieces said in different conversations, one piece each; "What car am I currently
working on?" or "the lens I bought most recently" asks for the latest of values said at different
times, and the earlier statement is part of the answer (it is what changed). A single-fact question
("When did I buy the feed?") is answered inside one conversation, where the best hit's neighbours and
session hold the rest; for a gathering question the same pull fills the rows with one conversation and
leaves the other pieces out. Parsed with `re` only (the module may import nothing outside the standard
library).
"""

import re

_GATHERS = re.compile(
    r"\bhow\s+many\b"
    r"|\b(?:in\s+total|total|altogether|combined|in\s+all|all\s+together)\b"
    r"|\b(?:the\s+)?order\s+(?:of|in\s+which)\b"
    r"|\bfrom\s+(?:the\s+)?(?:earliest|first|oldest)\b"
    r"|\bwhich\b.{1,60}\b(?:first|earlier|later|last)\b"
    r"|\b(?:currently|most\s+recent(?:ly)?|these\s+days|now|still|anymore)\b",
    re.IGNORECASE,
)


def gathers_occasions(question: str) -> bool:
    """True when `question` counts, sums or orders things said on several occasions, or asks for the
    current one of values that changed."""
    return _GATHERS.search(question[:4000]) is not None
