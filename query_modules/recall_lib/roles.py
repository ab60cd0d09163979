"""Which side of a user-assistant conversation a question asks about, from its own words.

Why: agent memory is a conversation between the user and an assistant (`action_type` `user_message` /
`assistant_message`). A question in the first person ("How many tanks do I have?") asks about the user's
own life, which the user's own turns state; the assistant's replies restate the topic at length and win
on shared words without holding the fact. A question about what the assistant said ("the restaurant you
recommended", "in our previous chat you suggested") is answered by the assistant's turns. A "you" that
only makes a request ("can you suggest", "do you have any tips") says nothing about who said what.
Questions about named third persons (LoCoMo's "When did Caroline ...") name neither side, so the signal
stays off there. Parsed with `re` only (the module may import nothing outside the standard library).
"""

import re

from . import schema as s

USER_TURNS, ASSISTANT_TURNS = s.MESSAGE_TYPES

_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|our|us)\b", re.IGNORECASE)
#: "you" as the one who said something earlier: a verb of saying or giving after it.
_ASSISTANT_SAID = re.compile(
    r"\b(?:you|you've|you'd)\s+(?:had\s+|have\s+|once\s+|previously\s+|also\s+|just\s+)?"
    r"(?:said|told|mentioned|recommended|suggested|gave|provided|listed|shared|explained|described|"
    r"proposed|advised|wrote|named|created|came\s+up\s+with|talked\s+about|pointed\s+out)\b"
    r"|\bdid\s+you\s+(?:say|tell|mention|recommend|suggest|give|list|share|explain|call|name|propose)\b"
    r"|\byour\s+(?:answer|reply|response|suggestion|recommendation|advice|list|explanation|tips?)\b",
    re.IGNORECASE,
)


def asked_role(question: str) -> str | None:
    """The `action_type` whose turns answer `question`: the assistant's when it asks what the assistant
    said, else the user's when it speaks in the first person, else None (the signal is off)."""
    text = question[:4000].replace("\u2019", "'")
    if _ASSISTANT_SAID.search(text):
        return ASSISTANT_TURNS
    if _FIRST_PERSON.search(text):
        return USER_TURNS
    return None
