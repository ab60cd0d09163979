"""A message's prose: its text without the fenced code blocks pasted into it.

Why: a question asks what was said ("what did I say my query's latency was?"), and in a coding chat a
message is mostly the code its writer pasted, which its passage vectors then mostly encode. The prose
gets a vector of its own (`prose_embedding`, written by `recall.embed`), which the turns lane scores
the message by in place of its passages (`lanes.turn_cosines`). The vector is stored with a digest of
the prose it was made from (`prose_digest`): a message edited since holds a stale one, which is then
neither used nor counted as current, and `recall.embed` makes it again.
"""

import hashlib
import re
from typing import Any

from . import schema as s

#: A fenced block: three backticks to the next three, or to the end of a text whose fence never closes.
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
#: The marker that opens a fence: a text without it has no code to leave out (checked before the regex).
FENCE = "```"


def prose_text(text: str) -> str | None:
    """`text` without its fenced code blocks, its whitespace runs collapsed; None when it holds no fence
    (its passages are its prose) or nothing but code."""
    if FENCE not in text:
        return None
    prose = " ".join(_FENCED.sub(" ", text).split())
    return prose or None


def prose_digest(prose: str) -> str:
    """A short fingerprint of a message's prose, stored beside its vector (see the module docstring)."""
    return hashlib.blake2b(prose.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def made_from(props: Any, prose: str) -> bool:
    """Whether the prose vector an Action's `props` hold was made from `prose` (its stored digest):
    one rule for `recall.embed`, the reader and pickup."""
    return props.get(s.PROSE_DIGEST) == prose_digest(prose)
