"""Render merged rows as the text an LLM answers from, and as the `recalled` map (upstream `to_json()`).

The header tells the reader how to use the rows (in our own words); each row is one line:
`MEMORY [path, updated YYYY-MM-DD]: ...`, `FACT: head -[TYPE @ YYYY-MM-DD]-> tail -- speaker: "..."`,
`TURN [session S, YYYY-MM-DDTHH:MM, speaker]: ...`, or `TURN [same session, HH:MM, speaker]: ...` below
a row of the same session and day (`shown_rows`). With `explain`, a row also says which lanes found
it, at what rank and score, and how a derived row was reached.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from .kinds import FACT, NOTE, TURN
from .lanes import Hit
from .pieces import ELLIPSIS, chosen_pieces, one_line, shown_text
from .reading import Fact, Note
from .rows import Row
from .shown_rows import ShownRows
from .snapshot import UserSnapshot
from .textindex import TermOverlap
from .timeparse import format_day, format_minute
from .turn_table import Turn

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
    overlap: TermOverlap | None = None  # the question's terms: which piece of a long text is shown
    lines: dict | None = field(default=None, compare=False)  # row lines made so far in this call
    gather_piece_chars: int = 0  # a question that gathers: `RecallConfig.gather_piece_chars`, else 0
    sweep_piece_chars: int = 0  # a question that sweeps a topic: `RecallConfig.sweep_piece_chars`, else 0
    deep_piece_chars: int = 0  # a long message below the first rows: `RecallConfig.deep_piece_chars`

    @property
    def piece_chars(self) -> int:
        """How long a text is shown whole (longer ones as their matched pieces of this length):
        `turn_chars`, and under a character budget at most a `BUDGET_SHARE` of it (not below
        `MIN_PIECE_CHARS`), so a budget holds many short pieces rather than a few long messages. A
        question that gathers (counts, orders, sums up) needs more pieces still, one per occasion: half
        that share, not below `gather_piece_chars`. One that sweeps a topic (a summary, the order
        things came up in) is answered by dozens of messages, each named by a line: a quarter of the
        share, not below `sweep_piece_chars`."""
        if self.max_chars is None:
            return self.turn_chars
        share, floor = BUDGET_SHARE, MIN_PIECE_CHARS
        if self.sweep_piece_chars:
            share, floor = 4 * BUDGET_SHARE, self.sweep_piece_chars
        elif self.gather_piece_chars:
            share, floor = 2 * BUDGET_SHARE, self.gather_piece_chars
        return min(self.turn_chars, max(floor, self.max_chars // share))

    def piece_of(self, text: str, shown_above: int) -> int:
        """The piece length a TURN row shows `text` at, `shown_above` rows being shown before it (best
        first): `piece_chars`, but under a character budget, below the first `FULL_PIECE_ROWS`, a text
        longer than that as half of it, not below `deep_piece_chars` (0: never). Why: the first rows
        are the likeliest answers and keep their full pieces; the rows below are a wider net, and
        shorter pieces of long messages let the budget reach further down the ranking (BEAM's long
        chats, docs/benchmarks). A text the full piece shows whole stays whole (cut, a short message
        loses its point: LoCoMo's answers did). Never longer than the full piece: a sweep's are
        shorter already."""
        full = self.piece_chars
        deep = self.max_chars is not None and self.deep_piece_chars and shown_above >= FULL_PIECE_ROWS
        if not deep or len(text) <= full:
            return full
        return min(full, max(self.deep_piece_chars, full // 2))


#: Under a character budget a row's text takes at most 1 / BUDGET_SHARE of it (8,000 characters: 300
#: each, ~20 rows of long messages; 16 gave 500 and cost BEAM 0.06 of its lookup questions, 8000c) ...
BUDGET_SHARE = 32
#: ... but never less than this (two or three sentences).
MIN_PIECE_CHARS = 300
#: How many rows (best first) show their full pieces under a character budget (`RenderContext.piece_of`).
FULL_PIECE_ROWS = 8


def _explain(hits: Sequence[Hit]) -> str:
    """`{lane #rank score via ...}` per hit; a TURN row's fused hit reads `{#rank score: what lifted it}`."""
    parts = []
    for hit in hits:
        if hit.lane == "fused":
            found = ", ".join([*(f"{h.lane} #{h.rank}" for h in hit.found_by), *map(str, hit.lifts)])
            parts.append(f"#{hit.rank} {hit.score:.3f}: {found}" if found else f"#{hit.rank} {hit.score:.3f}")
            continue
        part = f"{hit.lane} #{hit.rank} {hit.score:.2f}"
        parts.append(f"{part} via {hit.via}" if hit.via else part)
    return " {" + ", ".join(parts) + "}"


def _turn_line(turn: Turn, row: Row, ctx: RenderContext, piece: int) -> str:
    where = [f"session {turn.session_id if turn.session_id is not None else '?'}"]
    if turn.timestamp is not None:
        where.append(format_minute(turn.timestamp))
    where.append(turn.speaker)
    text = shown_text(turn.text, turn.passages, row.passages, piece, ctx.overlap)
    return f"TURN [{', '.join(where)}]: {text}"


def _fact_line(fact: Fact) -> str:
    when = f" @ {format_day(fact.valid_at)}" if fact.valid_at is not None else ""
    said = f"{fact.role}: " if fact.role else ""
    return (
        f"FACT: {one_line(fact.head)} -[{fact.type}{when}]-> {one_line(fact.tail)} -- "
        f'{said}"{one_line(fact.text)}"'
    )


def _memory_line(note: Note, row: Row, ctx: RenderContext, piece: int) -> str:
    label = one_line(note.path)
    if note.updated_at is not None:
        label += f", updated {format_day(note.updated_at)}"
    return f"MEMORY [{label}]: {shown_text(note.content, note.passages, row.passages, piece, ctx.overlap)}"


def row_piece(snapshot: UserSnapshot, row: Row, ctx: RenderContext, shown_above: int) -> int:
    """The piece length `row` is shown at, `shown_above` rows before it (`RenderContext.piece_of`; a
    MEMORY row's note at the full length)."""
    if row.kind == TURN:
        return ctx.piece_of(snapshot.turns.text_at(row.index), shown_above)
    return ctx.piece_chars


def row_line(snapshot: UserSnapshot, row: Row, ctx: RenderContext, piece: int) -> str:
    """The row as the LLM reads it, its long text as a piece of `piece` characters (`row_piece`),
    without `explain`'s annotation (`explained`); made once per call when `ctx.lines` keeps them (a
    render fits its rows before and after verification, each fit possibly twice)."""
    key = (row.kind, row.index, row.passages, piece)
    if ctx.lines is not None and key in ctx.lines:
        return ctx.lines[key]
    if row.kind == TURN:
        line = _turn_line(snapshot.turns[row.index], row, ctx, piece)
    elif row.kind == FACT:
        line = _fact_line(snapshot.facts[row.index])
    else:
        line = _memory_line(snapshot.notes[row.index], row, ctx, piece)
    if ctx.lines is not None:
        ctx.lines[key] = line
    return line


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
    """The rows a render shows, in display order, with their lines, for each the rows of the same text
    it stands for (`repeats`: a message said again word for word is shown once), and the FACT rows
    folded into it (`folded`: a fact read from a message that is shown says nothing the message
    does not)."""

    rows: list[Row]
    lines: list[str]
    repeats: list[list[Row]]
    folded: list[list[Row]]
    pieces: list[int]  # the piece length each row's text is shown at (`row_piece`)

    def items(self) -> set[tuple[str, int]]:
        """Every item the lines show, the repeats named in them and the folded facts included."""
        return {(row.kind, row.index) for rows in (self.rows, *self.repeats, *self.folded) for row in rows}

    @property
    def stood_for(self) -> int:
        """Rows shown through another row: repeats and folded facts."""
        return sum(map(len, self.repeats)) + sum(map(len, self.folded))


def _repeated(snapshot: UserSnapshot, row: Row) -> tuple[str, str] | None:
    """What makes two TURN rows the same message: its speaker and its whole text."""
    if row.kind != TURN:
        return None
    fields = snapshot.turns.fields(row.index)  # no Turn made: this runs for every row of every fit
    return fields[4], fields[6]


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
    """The rows that fit `max_chars`, in display order: all of them when they fit whole, else the fit
    that folds facts into their messages (`fit_rows`). The folding fit runs first: it is the whole fit
    when it folded nothing, and when it still left rows out the whole fit cannot take them all (folding
    only gives room back), so the whole fit runs again only when folding is what made every row fit."""
    if ctx.max_chars is None:
        return fit_rows(snapshot, rows, ctx, abort, fold=False)
    folding = fit_rows(snapshot, rows, ctx, abort, fold=True)
    if not any(folding.folded) or len(folding.rows) + folding.stood_for < len(rows):
        return folding
    whole = fit_rows(snapshot, rows, ctx, abort, fold=False)
    return whole if len(whole.rows) + whole.stood_for == len(rows) else folding


def fit_rows(
    snapshot: UserSnapshot,
    rows: list[Row],
    ctx: RenderContext,
    abort: Callable[[], None] = lambda: None,
    fold: bool = True,
) -> Fit:
    """The rows that fit `max_chars`, in display order.

    Rows are taken best first (`Row.priority`) while they fit; one that does not is left out and the
    next one tried, so a long row does not shut out the shorter ones below it. A TURN row whose message
    was already taken word for word (same speaker and text) costs only a note on that row. With `fold`,
    a FACT row whose source message is taken is folded into that TURN row (it says nothing the message
    does not, and the room goes to rows left out): skipped when the message came first, its cost given
    back when the message comes later. A TURN row below one of the same session and day is shown
    short (`shown_rows`): a row costs what the text grows by, the row below's shorter or longer form
    included. `explain`'s annotations are not counted: explaining a call must not change what it
    shows. Linear in the rows (but for a bisection each): each line is made once, and only until the
    budget is spent; the header is measured once, with the largest "left out" line it can need (so
    what is kept always fits whatever is left out). A `max_chars` below what the header alone needs is
    an error naming it and that minimum.
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
    kept = ShownRows(snapshot, rows)  # kept row -> its line (without repeats), in display order
    repeats: dict[int, list[Row]] = {}
    folded: dict[int, list[Row]] = {}  # kept TURN row -> the FACT rows folded into it
    first_of: dict[tuple[str, str], int] = {}
    turn_of: dict[str, int] = {}  # action id of a kept TURN row -> that row
    facts_of: dict[str, list[int]] = {}  # action id -> kept FACT rows citing it
    pieces: dict[int, int] = {}  # kept row -> the piece length of its line
    used = 0
    for count, i in enumerate(sorted(range(len(rows)), key=lambda i: rows[i].priority)):
        if count % 256 == 0:
            abort()
        if room is not None and room - used < SHORTEST_ROW:
            break
        if fold and rows[i].kind == FACT:
            source = snapshot.facts[rows[i].index].source_id
            if source in turn_of:
                folded[turn_of[source]].append(rows[i])
                continue
        same = _repeated(snapshot, rows[i])
        if same in first_of:
            first = first_of[same]
            before = _with_repeats(kept.lines[first], snapshot, repeats[first])
            after = _with_repeats(kept.lines[first], snapshot, [*repeats[first], rows[i]])
            if room is None or used + len(after) - len(before) <= room:
                repeats[first].append(rows[i])
                used += len(after) - len(before)
                repeated = snapshot.turns.fields(rows[i].index)[1]
                turn_of.setdefault(repeated, first)
                for fact in facts_of.pop(repeated, ()) if fold else ():
                    used -= kept.remove(fact)
                    folded[first].append(rows[fact])
            continue
        piece = row_piece(snapshot, rows[i], ctx, len(kept.order))
        line = row_line(snapshot, rows[i], ctx, piece)
        cost = kept.cost(i, line)
        if room is None or used + cost <= room:
            kept.add(i, line)
            pieces[i] = piece
            repeats[i], folded[i] = [], []
            used += cost
            if same is not None:
                first_of[same] = i
            if rows[i].kind == FACT:
                facts_of.setdefault(snapshot.facts[rows[i].index].source_id, []).append(i)
            elif rows[i].kind == TURN:
                action_id = snapshot.turns.fields(rows[i].index)[1]
                turn_of.setdefault(action_id, i)
                for fact in facts_of.pop(action_id, ()) if fold else ():  # taken before: given back
                    used -= kept.remove(fact)
                    folded[i].append(rows[fact])
    chosen = kept.order
    shown = [explained(_with_repeats(kept.lines[i], snapshot, repeats[i]), rows[i], ctx) for i in chosen]
    return Fit(
        [rows[i] for i in chosen],
        shown,
        [repeats[i] for i in chosen],
        [folded[i] for i in chosen],
        [pieces[i] for i in chosen],
    )


def render(
    snapshot: UserSnapshot, rows: list[Row], ctx: RenderContext, abort: Callable[[], None] = lambda: None
) -> tuple[str, dict[str, Any]]:
    """The text and the `recalled` map for `rows` (already merged and in display order)."""
    fit = fit_budget(snapshot, rows, ctx, abort)
    return render_fit(snapshot, fit, ctx, len(rows) - len(fit.rows) - fit.stood_for + ctx.left_out)


def render_fit(
    snapshot: UserSnapshot, fit: Fit, ctx: RenderContext, dropped: int
) -> tuple[str, dict[str, Any]]:
    """The text and the `recalled` map of a fit, `dropped` rows left out of it."""
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
    lifts = [str(lift) for lift in fused.lifts]
    item["fused"] = {"rank": fused.rank, "score": float(fused.score), "lifts": lifts}


def _shown_pieces(text: str, passages: Sequence[str], row: Row, ctx: RenderContext, piece: int) -> list[str]:
    """The pieces of a long text a row shows at `piece` characters (none when it shows the whole text)."""
    chosen = chosen_pieces(text, passages, row.passages, piece, ctx.overlap)
    return [] if chosen is None else [chosen[0][i] for i in chosen[1]]


def _fact_item(fact: Fact) -> dict[str, Any]:
    return {
        "head": fact.head,
        "type": fact.type,
        "tail": fact.tail,
        "valid_at": _iso(fact.valid_at),
        "speaker": fact.role,
        "sentence": fact.text,
        "turn": fact.source_id,
    }


def recalled_map(snapshot: UserSnapshot, fit: Fit, ctx: RenderContext, dropped: int) -> dict[str, Any]:
    """The upstream `to_json()` shape, plain Python values only; per-row lanes when `explain`; a turn
    shown once for several identical messages lists the others' action ids as `repeats`, and the facts
    read from it that it stands for under `facts` (each as a FACT row's item)."""
    turns, facts, notes = [], [], []
    for row, repeats, folded, piece in zip(fit.rows, fit.repeats, fit.folded, fit.pieces, strict=True):
        if row.kind == TURN:
            turn = snapshot.turns[row.index]
            item = {
                "action_id": turn.action_id,
                "session_id": turn.session_id,
                "timestamp": _iso(turn.timestamp),
                "speaker": turn.speaker,
                "text": turn.text,
                "passages": _shown_pieces(turn.text, turn.passages, row, ctx, piece),
            }
            if repeats:
                item["repeats"] = [snapshot.turns[r.index].action_id for r in repeats]
            if folded:
                item["facts"] = [_fact_item(snapshot.facts[f.index]) for f in folded]
            turns.append(item)
        elif row.kind == FACT:
            item = _fact_item(snapshot.facts[row.index])
            facts.append(item)
        else:
            note = snapshot.notes[row.index]
            item = {
                "path": note.path,
                "updated_at": _iso(note.updated_at),
                "text": note.content,
                "passages": _shown_pieces(note.content, note.passages, row, ctx, piece),
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
