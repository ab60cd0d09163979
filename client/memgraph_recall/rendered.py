"""The rows of `recall.render`'s text, each paired with its item of the `recalled` map.

`recall.render` writes one line per row under `Rows:` (`MEMORY [...]`, `FACT: ...`, `TURN [...]`)
and lists the same rows, per kind and in the same order, under `memories`, `facts` and `turns` of
`recalled`. Integrations that hand rows to an agent one by one (the LangChain retriever) need both:
the line the model reads and the item's fields (session, time, speaker and, with `explain`, the
lanes that found it). Unknown fields of an item are kept, so ranking fields the module adds later
arrive without a change here.
"""

from dataclasses import dataclass, field
from typing import Any

from memgraph_recall.results import Recalled

PREFIXES = {"TURN [": "turn", "FACT: ": "fact", "MEMORY [": "memory"}
ITEMS = {"turn": "turns", "fact": "facts", "memory": "memories"}
ROWS_HEADER = "Rows:"


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
    def rank(self) -> int | None:
        """The item's own rank if the module gives one, else the best rank any lane gave it."""
        if isinstance(self.item.get("rank"), int):
            return self.item["rank"]
        ranks = [hit["rank"] for hit in self.lanes if isinstance(hit.get("rank"), int)]
        return min(ranks) if ranks else None

    @property
    def score(self) -> float | None:
        """The item's own score if given, else the score of the lane hit with the best rank."""
        if isinstance(self.item.get("score"), (int, float)):
            return float(self.item["score"])
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
    for line in lines[lines.index(ROWS_HEADER) + 1:]:
        kind = next((kind for prefix, kind in PREFIXES.items() if line.startswith(prefix)), None)
        if kind is None:
            continue  # "(nothing in memory matched)"
        position = taken[kind]
        taken[kind] += 1
        item = items[kind][position] if position < len(items[kind]) else {}
        rows.append(RenderedRow(kind, _without_explanation(line, item), len(rows), dict(item)))
    return rows


def _without_explanation(line: str, item: dict[str, Any]) -> str:
    """The line without its trailing ` {first-lane #...}` annotation, when the item lists lanes."""
    lanes = [hit.get("lane") for hit in item.get("lanes") or () if isinstance(hit, dict)]
    if not lanes or not line.endswith("}"):
        return line
    start = line.rfind(f" {{{lanes[0]} #")
    return line[:start] if start > 0 else line
