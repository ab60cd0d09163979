"""Merge lane hits into the rows recall shows: one row per item, duplicates removed, display order set.

Memories come first (by rank), then facts in `valid_at` order, then turns in time order. Turns come from
the `fused` lane only (the turn lanes' own hits feed it and are listed by `recall.lanes`). Each row keeps
every lane hit behind it (for `explain`) and the rank a budget takes it by (`Row.rank`), so a budget
drops the rows ranked low first.
"""

from dataclasses import dataclass
from datetime import datetime

from .kinds import FACT, NOTE, TURN
from .lanes import Hit, LaneResults, MatchedPassages, fact_order
from .snapshot import UserSnapshot

_KIND_ORDER = {NOTE: 0, FACT: 1, TURN: 2}


@dataclass(frozen=True)
class Row:
    kind: str  # NOTE, FACT or TURN
    index: int  # into the snapshot list of that kind
    hits: tuple[Hit, ...]  # every lane hit behind the row, best first
    passages: tuple[int, ...]  # passages that matched (turns and notes), ascending
    rank: int  # a turn's fused rank, a note's memories rank, a fact's place among the facts (`fact_places`)

    @property
    def priority(self) -> tuple[int, int, int]:
        """Lower is more important: rank, then kind, then position."""
        return (self.rank, _KIND_ORDER[self.kind], self.index)


def merge_rows(snapshot: UserSnapshot, results: LaneResults) -> list[Row]:
    """The rows to show, in display order."""
    grouped: dict[tuple[str, int], list[Hit]] = {}
    for hit in results.shown():
        grouped.setdefault((hit.kind, hit.index), []).append(hit)
    for hits in grouped.values():
        hits.sort(key=lambda h: (h.rank, h.lane))
    places = fact_places({index: hits for (kind, index), hits in grouped.items() if kind == FACT})
    rows = []
    matched = results.matched or MatchedPassages(snapshot, results.terms)
    for (kind, index), hits in grouped.items():
        rank = places[index] if kind == FACT else hits[0].rank
        passages = _matched_passages(snapshot, kind, index, hits, matched)
        rows.append(Row(kind, index, tuple(hits), passages, rank))
    return sorted(rows, key=lambda r: _display_key(snapshot, r))


def fact_places(facts: dict[int, list[Hit]]) -> dict[int, int]:
    """Each fact's place (1, 2, ...) in one ranking of the facts the fact lanes found (`facts`: a fact's
    hits), in the order they vote for turns (`lanes.fact_order`).

    Why one ranking: the turn lanes vote in one fused ranking, a TURN row per rank, while each fact lane
    ranks on its own; taking a fact at its lane's rank gave facts three rows per rank to a turn's one,
    and a budget filled with facts of the question's relation types and entities while the messages
    that answer it were left out (LoCoMo at 8,000 characters: 28.5 FACT rows to 17.0 TURN rows)."""
    order = sorted(facts, key=lambda index: fact_order(facts[index]))
    return {index: place for place, index in enumerate(order, 1)}


def _matched_passages(
    snapshot: UserSnapshot, kind: str, index: int, hits: list[Hit], matched: MatchedPassages
) -> tuple[int, ...]:
    if kind == FACT:
        return ()
    passages = snapshot.turns.passages(index) if kind == TURN else snapshot.notes[index].passages
    chosen = {h.passage for h in hits if h.passage is not None}
    if matched.overlap.terms and len(passages) > 1:
        chosen.add(matched.turn(index) if kind == TURN else matched.note(index))
    return tuple(sorted(p for p in chosen if 0 <= p < len(passages)))


def _display_key(snapshot: UserSnapshot, row: Row) -> tuple:
    kind_order = _KIND_ORDER[row.kind]
    if row.kind == NOTE:
        return (kind_order, row.priority)
    if row.kind == FACT:
        valid_at = snapshot.facts[row.index].valid_at
        return (kind_order, valid_at is None, valid_at or datetime.min, row.priority)
    return (kind_order, row.index)  # turns are stored in time order
