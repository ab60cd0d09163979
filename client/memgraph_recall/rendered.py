"""The rows of `recall.render`'s text, each paired with its item of the `recalled` map.

`recall.render` writes one line per row under `Rows:` (`MEMORY [...]`, `FACT: ...`, `TURN [...]`)
and lists the same rows, per kind and in the same order, under `memories`, `facts` and `turns` of
`recalled`. Integrations that hand rows to an agent one by one (the LangChain retriever) need both:
the line the model reads and the item's fields (session, time, speaker and, with `explain`, the
lanes that found it). Unknown fields of an item are kept, so ranking fields the module adds later
arrive without a change here. A TURN row below one of the same session and day is written short in the
text (`TURN [same session, 09:04, user]: ...`); a row handed on alone must say where it was said, so
its `text` here is written out in full (`TURN [session s1, 2024-03-01T09:04, user]: ...`).
"""

import re
from dataclasses import dataclass, field
from typing import Any

from memgraph_recall.results import Recalled

PREFIXES = {"TURN [": "turn", "FACT: ": "fact", "MEMORY [": "memory"}
ITEMS = {"turn": "turns", "fact": "facts", "memory": "memories"}
ROWS_HEADER = "Rows:"
#: A continued TURN row's head, and a full one's session and day (the session up to its minute).
CONTINUED = "TURN [same session, "
_FULL_HEAD = re.compile(r"TURN \[session .*?, \d{4}-\d\d-\d\dT(?=\d\d:\d\d[,\]])")


@dataclass(frozen=True)
class RenderedRow:
    """One rendered row: `text` as the model reads it, `kind` and the matching `recalled` item."""

    kind: str
    text: str
    position: int
    item: dict[str, Any] = field(default_factory=dict)

    @property
    def lanes(self) -> list[dict[str, Any]]:
        """The lane hits behind the row (`explain`): lane, rank, score, via; empty without explain."""
        return [hit for hit in self.item.get("lanes") or () if isinstance(hit, dict)]

    @property
    def fused(self) -> dict[str, Any]:
        """A TURN row's place in the fused ranking (`explain`): rank, score, lifts; empty otherwise."""
        fused = self.item.get("fused")
        return fused if isinstance(fused, dict) else {}

    @property
    def rank(self) -> int | None:
        """The item's own rank if the module gives one (a turn's fused rank), else its best lane rank."""
        for own in (self.item.get("rank"), self.fused.get("rank")):
            if isinstance(own, int):
                return own
        ranks = [hit["rank"] for hit in self.lanes if isinstance(hit.get("rank"), int)]
        return min(ranks) if ranks else None

    @property
    def score(self) -> float | None:
        """The item's own score if given (a turn's fused score), else that of its best-ranked lane hit."""
        for own in (self.item.get("score"), self.fused.get("score")):
            if isinstance(own, (int, float)):
                return float(own)
        best = [hit for hit in self.lanes if hit.get("rank") == self.rank]
        return float(best[0]["score"]) if best and isinstance(best[0].get("score"), (int, float)) else None


def rendered_rows(recalled: Recalled) -> list[RenderedRow]:
    """The rows of `recalled.text` in render order, each with its `recalled` item.

    With `explain`, the lane annotation the module appends to a line (` {lane #rank score ...}`) is
    taken off the text: it is in `RenderedRow.lanes` already.
    """
    lines = recalled.text.split("\n")
    if ROWS_HEADER not in lines:
        return []
    items = {kind: list(recalled.raw.get(key) or ()) for kind, key in ITEMS.items()}
    taken = dict.fromkeys(ITEMS, 0)
    rows = []
    head = None  # the last full TURN row's "TURN [session s1, 2024-03-01T"
    for line in lines[lines.index(ROWS_HEADER) + 1:]:
        kind = next((kind for prefix, kind in PREFIXES.items() if line.startswith(prefix)), None)
        if kind is None:
            continue  # "(nothing in memory matched)"
        position = taken[kind]
        taken[kind] += 1
        item = items[kind][position] if position < len(items[kind]) else {}
        text = _without_explanation(line, item)
        if kind == "turn" and text.startswith(CONTINUED) and head is not None:
            text = head + text[len(CONTINUED):]
        else:
            full = _FULL_HEAD.match(text) if kind == "turn" else None
            head = full.group(0) if full else None
        rows.append(RenderedRow(kind, text, len(rows), dict(item)))
    return rows


def _without_explanation(line: str, item: dict[str, Any]) -> str:
    """The line without its trailing annotation: ` {#rank ...}` on a TURN row (its fused rank),
    ` {first-lane #...}` on the others, when the item carries them."""
    if not line.endswith("}"):
        return line
    fused = item.get("fused")
    if isinstance(fused, dict) and isinstance(fused.get("rank"), int):
        marker = f" {{#{fused['rank']} "
    else:
        lanes = [hit.get("lane") for hit in item.get("lanes") or () if isinstance(hit, dict)]
        if not lanes:
            return line
        marker = f" {{{lanes[0]} #"
    start = line.rfind(marker)
    return line[:start] if start > 0 else line
