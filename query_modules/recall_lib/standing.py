"""What a user's message states for later: a standing instruction or preference, and whether it names
the questions it governs (a rule). Read from message texts, never from the question."""

import re

#: Words that state a standing instruction or preference ("Always add a code example when I ask about
#: ...", "Never use semicolons", "I prefer rule-based suggestions"), as `textindex.tokenize` makes them.
STANDING_WORDS = ("always", "never", "whenever", "prefer", "prefers", "preferred")

#: The clause by which a standing statement names the questions it governs: "when I ask about ...",
#: "whenever we ask for ...", "if I request ...". Asking verbs only: "if I need to", "when we talk
#: about" are as common in plain prose as in rules (LongMemEval's histories hold such sentences and no
#: rule).
_GOVERNS = re.compile(
    r"\b(?:when(?:ever)?|if|each\s+time|every\s+time)\s+(?:i|we)\s+(?:ask|am\s+asking|request|inquire)\b",
    re.IGNORECASE,
)


#: The asking verbs of `_GOVERNS` as `textindex.tokenize` makes them: a text without one names no
#: questions, so the index's postings pick the few texts the pattern must read.
ASKING_WORDS = ("ask", "asking", "request", "inquire")


def names_its_questions(text: str) -> bool:
    """Whether a standing statement's `text` says which questions it governs ("... when I ask about
    async errors"): a rule for a topic rather than a general preference."""
    return _GOVERNS.search(text) is not None
