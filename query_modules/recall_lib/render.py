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
    reading: tuple[str, ...] = ()  # what was read from the question (`LaneResults.reading`), for explain
    left_out: int = 0  # rows a fit before verification left out already (`pipeline.render_recall`)


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
    """The row as the LLM reads it, without `explain`'s annotation (`explained`)."""
    if row.kind == TURN:
        return _turn_line(snapshot.turns[row.index], row, ctx)
    if row.kind == FACT:
        return _fact_line(snapshot.facts[row.index])
    return _memory_line(snapshot.notes[row.index], row, ctx)


def explained(line: str, row: Row, ctx: RenderContext) -> str:
    """`line` with what put its row there, when `explain` asks."""
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
    if ctx.explain and ctx.reading:
        lines.append("Read from the question: " + "; ".join(ctx.reading) + ".")
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


#: Below this many characters left no row fits (the shortest is "TURN [session s, speaker]: ..."):
#: the fit stops looking.
SHORTEST_ROW = 32
#: The most other times a repeated text's row lists.
REPEATS_LISTED = 5


@dataclass(frozen=True)
class Fit:
    """The rows a render shows, in display order, with their lines, and for each the rows of the same
    text it stands for (`repeats`: a message said again word for word is shown once)."""

    rows: list[Row]
    lines: list[str]
    repeats: list[list[Row]]

    def items(self) -> set[tuple[str, int]]:
        """Every item the lines show, the repeats named in them included."""
        return {(row.kind, row.index) for rows in (self.rows, *self.repeats) for row in rows}


def _repeated(snapshot: UserSnapshot, row: Row) -> tuple[str, str] | None:
    """What makes two TURN rows the same message: its speaker and its whole text."""
    if row.kind != TURN:
        return None
    turn = snapshot.turns[row.index]
    return turn.speaker, turn.text


def _with_repeats(line: str, snapshot: UserSnapshot, repeats: Sequence[Row]) -> str:
    """A TURN line that stands for the same text said at other times too: how often, and when."""
    if not repeats:
        return line
    when = [snapshot.turns[r.index].timestamp for r in repeats[:REPEATS_LISTED]]
    listed = ", ".join(format_minute(w) if w is not None else "?" for w in when)
    more = ", ..." if len(repeats) > REPEATS_LISTED else ""
    return f"{line} (said {len(repeats) + 1} times; also {listed}{more})"


def fit_budget(
    snapshot: UserSnapshot, rows: list[Row], ctx: RenderContext, abort: Callable[[], None] = lambda: None
) -> Fit:
    """The rows that fit `max_chars`, in display order.

    Rows are taken best first (`Row.priority`) while they fit; one that does not is left out and the
    next one tried, so a long row does not shut out the shorter ones below it. A TURN row whose message
    was already taken word for word (same speaker and text) costs only a note on that row. `explain`'s
    annotations are not counted: explaining a call must not change what it shows. Linear in
    the rows: each line is made once, and only until the budget is spent; the header is measured once,
    with the largest "left out" line it can need (so what is kept always fits whatever is left out). A
    `max_chars` below what the header alone needs is an error naming it and that minimum.
    """
    room = None
    if ctx.max_chars is not None:
        plain = replace(ctx, explain=False)  # what the budget counts (the annotations come on top)
        minimum = header_minimum(plain, len(rows) + ctx.left_out)
        if ctx.max_chars < minimum:
            raise ValueError(
                f"config['max_chars'] must be at least {minimum} here (the header alone), got {ctx.max_chars}"
            )
        notes = any(row.kind == NOTE for row in rows)
        room = ctx.max_chars - _text_length(header_lines(plain, notes, len(rows) + ctx.left_out)) - 1
    lines: dict[int, str] = {}  # kept row -> its line (without repeats)
    repeats: dict[int, list[Row]] = {}
    first_of: dict[tuple[str, str], int] = {}
    used = 0
    for count, i in enumerate(sorted(range(len(rows)), key=lambda i: rows[i].priority)):
        if count % 256 == 0:
            abort()
        if room is not None and room - used < SHORTEST_ROW:
            break
        same = _repeated(snapshot, rows[i])
        if same in first_of:
            kept = first_of[same]
            before = _with_repeats(lines[kept], snapshot, repeats[kept])
            after = _with_repeats(lines[kept], snapshot, [*repeats[kept], rows[i]])
            if room is None or used + len(after) - len(before) <= room:
                repeats[kept].append(rows[i])
                used += len(after) - len(before)
            continue
        line = row_line(snapshot, rows[i], ctx)
        cost = len(line) + (1 if lines else 0)
        if room is None or used + cost <= room:
            lines[i], repeats[i] = line, []
            used += cost
            if same is not None:
                first_of[same] = i
    chosen = sorted(lines)
    shown = [explained(_with_repeats(lines[i], snapshot, repeats[i]), rows[i], ctx) for i in chosen]
    return Fit([rows[i] for i in chosen], shown, [repeats[i] for i in chosen])


def render(
    snapshot: UserSnapshot, rows: list[Row], ctx: RenderContext, abort: Callable[[], None] = lambda: None
) -> tuple[str, dict[str, Any]]:
    """The text and the `recalled` map for `rows` (already merged and in display order)."""
    fit = fit_budget(snapshot, rows, ctx, abort)
    dropped = len(rows) - len(fit.rows) - sum(map(len, fit.repeats)) + ctx.left_out
    head = header_lines(ctx, any(r.kind == NOTE for r in fit.rows), dropped)
    body = fit.lines or ([] if dropped else [NOTHING])
    return "\n".join(head + body), recalled_map(snapshot, fit, ctx, dropped)


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


def recalled_map(snapshot: UserSnapshot, fit: Fit, ctx: RenderContext, dropped: int) -> dict[str, Any]:
    """The upstream `to_json()` shape, plain Python values only; per-row lanes when `explain`; a turn
    shown once for several identical messages lists the others' action ids as `repeats`."""
    turns, facts, notes = [], [], []
    for row, repeats in zip(fit.rows, fit.repeats, strict=True):
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
            if repeats:
                item["repeats"] = [snapshot.turns[r.index].action_id for r in repeats]
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
