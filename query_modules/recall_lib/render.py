"""Render merged rows as the text an LLM answers from, and as the `recalled` map (upstream `to_json()`).

The header tells the reader how to use the rows (in our own words); each row is one line:
`MEMORY [path, updated YYYY-MM-DD]: ...`, `FACT: head -[TYPE @ YYYY-MM-DD]-> tail -- speaker: "..."`,
`TURN [session S, YYYY-MM-DDTHH:MM, speaker]: ...`. With `explain`, a row also says which lanes found
it, at what rank and score, and how a derived row was reached.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from .kinds import FACT, NOTE, TURN
from .lanes import Hit
from .reading import Fact, Note
from .rows import Row
from .snapshot import UserSnapshot
from .timeparse import format_day, format_minute
from .turn_table import Turn

ELLIPSIS = "…"
NOTHING = "(nothing in memory matched)"
RULES = (
    "How to read these rows (all from this user's own past):",
    '- A relative date in a row ("yesterday", "next week") counts from that row\'s date, not from today.',
    "- To count or add up, list each distinct item once, then compute.",
    "- When rows disagree, the most recent row wins.",
    "- When asked for a recommendation, build on the preferences the rows show.",
    "- If the rows do not show the answer, say that it is not in memory.",
)
MEMORY_RULE = (
    "- MEMORY rows are notes the user saved on purpose: take them as current unless a later row "
    "says otherwise."
)


@dataclass(frozen=True)
class RenderContext:
    """What the header states besides the rows."""

    question: str
    today: date | None
    vector_off: str | None
    model: str
    messages: int
    messages_without_vectors: int
    turn_chars: int
    explain: bool
    max_chars: int | None
    facts_off: str | None = None  # why no entity or fact could be attributed here (an operator's matter)


def one_line(text: str) -> str:
    """Rows are single lines: runs of whitespace (newlines included) become one space."""
    return " ".join(text.split())


def shown_text(text: str, passages: Sequence[str], matched: Sequence[int], limit: int) -> str:
    """The whole text, or (when longer than `limit`) the matched passages with `…` where text is left out."""
    if len(text) <= limit or not matched:
        return one_line(text)
    pieces: list[str] = [] if matched[0] == 0 else [ELLIPSIS]
    previous = None
    for index in matched:
        if previous is not None and index != previous + 1:
            pieces.append(ELLIPSIS)
        pieces.append(one_line(passages[index]))
        previous = index
    if matched[-1] != len(passages) - 1:
        pieces.append(ELLIPSIS)
    return " ".join(pieces)


def _explain(hits: Sequence[Hit]) -> str:
    """`{lane #rank score via ...}` per hit; a TURN row's fused hit reads `{#rank score: what lifted it}`."""
    parts = []
    for hit in hits:
        if hit.lane == "fused":
            found = ", ".join([*(f"{h.lane} #{h.rank}" for h in hit.found_by), *hit.lifts])
            parts.append(f"#{hit.rank} {hit.score:.3f}: {found}" if found else f"#{hit.rank} {hit.score:.3f}")
            continue
        part = f"{hit.lane} #{hit.rank} {hit.score:.2f}"
        parts.append(f"{part} via {hit.via}" if hit.via else part)
    return " {" + ", ".join(parts) + "}"


def _turn_line(turn: Turn, row: Row, ctx: RenderContext) -> str:
    where = [f"session {turn.session_id if turn.session_id is not None else '?'}"]
    if turn.timestamp is not None:
        where.append(format_minute(turn.timestamp))
    where.append(turn.speaker)
    text = shown_text(turn.text, turn.passages, row.passages, ctx.turn_chars)
    return f"TURN [{', '.join(where)}]: {text}"


def _fact_line(fact: Fact) -> str:
    when = f" @ {format_day(fact.valid_at)}" if fact.valid_at is not None else ""
    said = f"{fact.role}: " if fact.role else ""
    return (
        f"FACT: {one_line(fact.head)} -[{fact.type}{when}]-> {one_line(fact.tail)} -- "
        f'{said}"{one_line(fact.text)}"'
    )


def _memory_line(note: Note, row: Row, ctx: RenderContext) -> str:
    label = one_line(note.path)
    if note.updated_at is not None:
        label += f", updated {format_day(note.updated_at)}"
    return f"MEMORY [{label}]: {shown_text(note.content, note.passages, row.passages, ctx.turn_chars)}"


def row_line(snapshot: UserSnapshot, row: Row, ctx: RenderContext) -> str:
    if row.kind == TURN:
        line = _turn_line(snapshot.turns[row.index], row, ctx)
    elif row.kind == FACT:
        line = _fact_line(snapshot.facts[row.index])
    else:
        line = _memory_line(snapshot.notes[row.index], row, ctx)
    return line + _explain(row.hits) if ctx.explain else line


#: The longest question the header echoes; a longer one is cut with an ellipsis.
HEADER_QUESTION_CHARS = 300


def header_lines(ctx: RenderContext, with_notes: bool, dropped: int) -> list[str]:
    question = one_line(ctx.question)
    if len(question) > HEADER_QUESTION_CHARS:
        question = question[: HEADER_QUESTION_CHARS - 1].rstrip() + ELLIPSIS
    lines = [f"Memory recall for: {question}"]
    if ctx.today is not None:
        lines.append(f"Today is {ctx.today.isoformat()}.")
    lines.extend(RULES)
    if with_notes:
        lines.append(MEMORY_RULE)
    if ctx.vector_off is not None:
        lines.append(f"Vector lanes are off ({ctx.vector_off}); these rows were found by word match only.")
    elif ctx.messages_without_vectors:
        lines.append(
            f"{ctx.messages_without_vectors} of this user's {ctx.messages} messages have no "
            f"{ctx.model} vectors yet (run recall.embed); those are found by word match only."
        )
    if dropped:
        lines.append(f"{dropped} lower-ranked rows were left out to stay within max_chars={ctx.max_chars}.")
    lines.append("Rows:")
    return lines


def _text_length(lines: Sequence[str]) -> int:
    """Length of the lines joined by newlines."""
    return sum(map(len, lines)) + max(len(lines) - 1, 0)


def header_minimum(ctx: RenderContext, rows: int) -> int:
    """The fewest characters a text with every row left out takes: the header and its "left out" line,
    which itself names `max_chars` (so the fixed point of that length, found in two or three steps)."""
    minimum = 1
    while True:
        length = _text_length(header_lines(replace(ctx, max_chars=minimum), False, rows or 1))
        if length <= minimum:
            return minimum
        minimum = length


def fit_budget(
    snapshot: UserSnapshot, rows: list[Row], ctx: RenderContext, abort: Callable[[], None] = lambda: None
) -> tuple[list[Row], list[str]]:
    """The rows that fit `max_chars` (lowest-ranked dropped first) and their lines, in display order.

    Linear in the rows: the kept lines' length is kept as a running sum while rows are dropped, and
    only the header (a few lines, which says how many were dropped) is measured again each time.
    A `max_chars` below what the header alone needs is an error naming it and that minimum.
    """
    lines = []
    for i, row in enumerate(rows):
        if i % 256 == 0:
            abort()
        lines.append(row_line(snapshot, row, ctx))
    if ctx.max_chars is None:
        return rows, lines
    minimum = header_minimum(ctx, len(rows))
    if ctx.max_chars < minimum:
        raise ValueError(
            f"config['max_chars'] must be at least {minimum} here (the header alone), got {ctx.max_chars}"
        )
    keep = [True] * len(rows)
    notes = sum(1 for row in rows if row.kind == NOTE)
    body = _text_length(lines) if lines else len(NOTHING)
    dropped = 0

    def total() -> int:
        head = _text_length(header_lines(ctx, notes > 0, dropped))
        return head + 1 + body if body else head

    for count, i in enumerate(sorted(range(len(rows)), key=lambda i: rows[i].priority, reverse=True)):
        if count % 256 == 0:
            abort()
        if total() <= ctx.max_chars:
            break
        keep[i] = False
        dropped += 1
        notes -= rows[i].kind == NOTE
        body -= len(lines[i]) + (1 if dropped < len(rows) else 0)
    return [r for r, k in zip(rows, keep, strict=True) if k], [
        ln for ln, k in zip(lines, keep, strict=True) if k
    ]


def render(
    snapshot: UserSnapshot, rows: list[Row], ctx: RenderContext, abort: Callable[[], None] = lambda: None
) -> tuple[str, dict[str, Any]]:
    """The text and the `recalled` map for `rows` (already merged and in display order)."""
    kept, lines = fit_budget(snapshot, rows, ctx, abort)
    dropped = len(rows) - len(kept)
    head = header_lines(ctx, any(r.kind == NOTE for r in kept), dropped)
    body = lines or ([] if dropped else [NOTHING])
    return "\n".join(head + body), recalled_map(snapshot, kept, ctx, dropped)


def _iso(moment: Any) -> str | None:
    return None if moment is None else moment.isoformat()


def _lane_entries(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    return [{"lane": h.lane, "rank": h.rank, "score": float(h.score), "via": h.via} for h in hits]


def _explained(item: dict[str, Any], row: Row) -> None:
    """Add `explain`'s fields to a `recalled` item: the lanes behind the row (a turn: those that found it,
    and its fused rank, score and lifts)."""
    fused = next((h for h in row.hits if h.lane == "fused"), None)
    if fused is None:
        item["lanes"] = _lane_entries(row.hits)
        return
    item["lanes"] = _lane_entries(fused.found_by)
    item["fused"] = {"rank": fused.rank, "score": float(fused.score), "lifts": list(fused.lifts)}


def recalled_map(snapshot: UserSnapshot, rows: list[Row], ctx: RenderContext, dropped: int) -> dict[str, Any]:
    """The upstream `to_json()` shape, plain Python values only; per-row lanes when `explain`."""
    turns, facts, notes = [], [], []
    for row in rows:
        if row.kind == TURN:
            turn = snapshot.turns[row.index]
            partial = len(turn.text) > ctx.turn_chars and bool(row.passages)
            item = {
                "action_id": turn.action_id,
                "session_id": turn.session_id,
                "timestamp": _iso(turn.timestamp),
                "speaker": turn.speaker,
                "text": turn.text,
                "passages": [turn.passages[p] for p in row.passages] if partial else [],
            }
            turns.append(item)
        elif row.kind == FACT:
            fact = snapshot.facts[row.index]
            item = {
                "head": fact.head,
                "type": fact.type,
                "tail": fact.tail,
                "valid_at": _iso(fact.valid_at),
                "speaker": fact.role,
                "sentence": fact.text,
                "turn": fact.source_id,
            }
            facts.append(item)
        else:
            note = snapshot.notes[row.index]
            partial = len(note.content) > ctx.turn_chars and bool(row.passages)
            item = {
                "path": note.path,
                "updated_at": _iso(note.updated_at),
                "text": note.content,
                "passages": [note.passages[p] for p in row.passages] if partial else [],
            }
            notes.append(item)
        if ctx.explain:
            _explained(item, row)
    return {
        "question": ctx.question,
        "turns": turns,
        "facts": facts,
        "memories": notes,
        "vector_lanes_off": ctx.vector_off is not None,
        "vector_lanes_off_reason": ctx.vector_off,
        "facts_off_reason": ctx.facts_off,
        "messages_without_vectors": ctx.messages_without_vectors,
        "rows_left_out": dropped,
    }
