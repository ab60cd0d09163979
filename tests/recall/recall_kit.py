"""Helpers for the recall end-to-end tests: synthetic vectors, runtime calls, reading rendered rows."""

import os
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
from memgraph_recall.client import record_action_id_rule
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import Runtime
from recall_lib.passages import split_passages

# The module folder under test: this checkout's, or another (e.g. an installed copy) named by the variable.
QUERY_MODULES = Path(
    os.environ.get("RECALL_TEST_QUERY_MODULES") or Path(__file__).resolve().parents[2] / "query_modules"
)
MODEL = os.environ["RECALL_DEFAULT_MODEL"]  # the packaged MiniLM, set by tests/conftest.py
DIM = 384
CONTINUED = "TURN [same session, "


def axis(i: int) -> list[float]:
    """The unit vector along axis `i`: cosine 1 with itself, 0 with every other axis."""
    v = [0.0] * DIM
    v[i] = 1.0
    return v


def mix(*weights: tuple[int, float]) -> list[float]:
    """A unit vector mixing axes: `mix((1, 0.8), (2, 0.6))` has cosine 0.8 with axis 1."""
    v = np.zeros(DIM)
    for i, w in weights:
        v[i] += w
    return (v / np.linalg.norm(v)).tolist()


def runtime(elements: list[dict] | None = None) -> Runtime:
    """A runtime over `elements` with, as `memgraph-recall setup` leaves it, the uniqueness constraint
    on :Action(action_id) recorded on the graph's RecallMeta (when it has one and the data allows)."""
    rt = Runtime(QUERY_MODULES)
    assert not rt.load_errors, rt.load_errors
    if elements is not None:
        rt.load_elements(elements)
        record_action_id_rule(rt.store)
    return rt


def render(rt: Runtime, user: Any, question: str, today: Any = None, **config: Any) -> tuple[str, dict]:
    row = rt.call("recall.render", user, question, today, config)
    assert len(row) == 1
    return row[0]["text"], row[0]["recalled"]


def lanes(rt: Runtime, user: Any, question: str, **config: Any) -> list[dict]:
    return rt.call("recall.lanes", user, question, config)


def rows_of(text: str) -> list[str]:
    """The row lines of a rendered text (everything after `Rows:`)."""
    lines = text.split("\n")
    return lines[lines.index("Rows:") + 1 :]


def expanded_rows(text: str) -> list[str]:
    """`rows_of(text)` with each continued TURN row (`TURN [same session, HH:MM, ...]`, below a row of the
    same session and day) written out in full, as a row read on its own."""
    rows, place = [], None
    for line in rows_of(text):
        if full := re.match(r"TURN \[session ([^,]+), (\d{4}-\d\d-\d\d)T", line):
            place = full.groups()
        elif line.startswith(CONTINUED) and place is not None:
            line = f"TURN [session {place[0]}, {place[1]}T{line[len(CONTINUED):]}"
        else:
            place = None
        rows.append(line)
    return rows


def header_of(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[: lines.index("Rows:")]


def by_lane(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(row["lane"], []).append(row)
    return out


# -- the shared scenario graph ------------------------------------------------------------------------
GARDEN = "Morning notes about the garden: the roses need water and the hedge wants trimming. " * 14
KAYAK = "The blue kayak needs a new paddle before the lake trip in June. " * 3
COOKING = "Cooking plan for the week: soup on Monday, risotto on Wednesday, curry on Friday. " * 20
LONG_TEXT = GARDEN.strip() + "\n\n" + KAYAK.strip() + "\n\n" + COOKING.strip()


def world() -> MemoryGraph:
    """Users for the end-to-end tests, each with vectors along known axes (see the test modules).

    ana: a full memory (four sessions, mixed timestamp formats, a long message, facts, notes,
    ontology); cara: messages and facts without any vector; dan: one of three messages not embedded;
    eve: vectors only from another model or of another dimension; bob: a User with nothing.
    """
    g = MemoryGraph()
    g.recall_meta()  # a database set up as `memgraph-recall setup` leaves it (see `runtime`)
    ana = g.user("ana")
    s1, s2, s3, s4 = (g.session(ana, f"ana-s{i}") for i in range(1, 5))

    def msg(session, key, text, ts, vectors, **kw):
        return g.message(session, key, text, ts, passage_embeddings=vectors, embedding_model=MODEL, **kw)

    a1 = msg(
        s1,
        "a1",
        "I went to Sara's wedding in Porto last weekend.",
        "2024-01-05T10:00:00Z",
        [axis(1)],
        speaker="Ana",
    )
    a2 = msg(
        s2,
        "a2",
        "Booked a table at Lupa for Friday dinner.",
        datetime(2024, 2, 10, 9, 0),
        [axis(2)],
        speaker="Ana",
    )
    a3 = msg(
        s3,
        "a3",
        "Attended my cousin Leo's wedding in Lyon.",
        "2024-03-01T09:00:00-03:00",
        [axis(3)],
        speaker="Ana",
    )
    msg(s3, "a5", "The train to Lyon was late again.", "2024-03-01T11:00:00+02:00", [axis(5)], speaker="Ana")
    msg(s3, "a6", "Packed the blue suit for Lyon.", datetime(2024, 3, 1, 10, 30), [axis(6)], speaker="Ana")
    assert len(split_passages(LONG_TEXT)) == 3
    msg(s4, "a4", LONG_TEXT, "2024-04-02T08:00:00+00:00", [axis(40), axis(4), axis(41)], speaker="Ana")
    msg(
        s4,
        "a7",
        "Noted, a new paddle before June.",
        "2024-04-02T08:01:00+00:00",
        [axis(7)],
        action_type="assistant_message",
    )
    ends = {}
    for ref, name, axis_i in ((a1, "Sara", 20), (a3, "Leo", 21), (a2, "Lupa", 22)):
        ends[name] = g.entity(name, embedding=axis(axis_i), embedding_model=MODEL)
        g.mention(ends[name], g.chunk(ref, f"chunk of {ref.key}"), ref.key)
    vec = {"role": "user", "embedding_model": MODEL}
    g.fact(
        ana,
        "ATTENDED_WEDDING",
        ends["Sara"],
        "a1",
        "Ana attended Sara's wedding in Porto.",
        valid_at=date(2024, 1, 4),
        confidence=0.9,
        embedding=axis(10),
        **vec,
    )
    g.fact(
        ana,
        "ATTENDED_WEDDING",
        ends["Leo"],
        "a3",
        "Ana attended her cousin Leo's wedding in Lyon.",
        valid_at="2024-03-01",
        confidence=0.8,
        embedding=axis(11),
        **vec,
    )
    g.fact(
        ana,
        "BOOKED",
        ends["Lupa"],
        "a2",
        "Ana booked a table at Lupa.",
        valid_at=datetime(2024, 2, 10),
        confidence=0.7,
        embedding=axis(12),
        **vec,
    )
    g.ontology(
        ana,
        "test",
        [
            {"label": "ATTENDED_WEDDING", "description": "went to someone's wedding as a guest"},
            {"label": "BOOKED", "description": "reserved a table, a room or a ticket"},
        ],
    )
    g.memory(
        ana,
        "ana-mem1",
        "notes/kayak.md",
        "Kayak: the blue one, the paddle is broken.",
        "2024-04-03T00:00:00Z",
        passage_embeddings=[axis(30)],
        embedding_model=MODEL,
    )
    g.memory(
        ana,
        "ana-mem2",
        "notes/food.md",
        "Favourite restaurant: Lupa, the corner table.",
        None,
        passage_embeddings=[axis(31)],
        embedding_model=MODEL,
    )

    cara = g.user("cara")
    c1 = g.session(cara, "cara-s1")
    c_msg = g.message(c1, "c1", "My passport expires in October, renew it soon.", "2024-05-01T09:00:00Z")
    g.message(c1, "c2", "The dentist appointment moved to Thursday.", "2024-05-02T09:00:00Z")
    passport = g.entity("passport")
    g.mention(passport, g.chunk(c_msg, "chunk of c1"), "c1")
    g.fact(
        cara,
        "OWNS",
        passport,
        "c1",
        "Cara's passport expires in October.",
        valid_at="2024-05-01",
        role="user",
        confidence=0.9,
    )

    dan = g.user("dan")
    d1 = g.session(dan, "dan-s1")
    g.message(
        d1,
        "d1",
        "Dan likes hiking in the Alps.",
        "2024-01-01T09:00:00Z",
        passage_embeddings=[axis(50)],
        embedding_model=MODEL,
    )
    g.message(
        d1,
        "d2",
        "Dan bought new boots.",
        "2024-01-02T09:00:00Z",
        passage_embeddings=[axis(51)],
        embedding_model=MODEL,
    )
    g.message(d1, "d3", "Dan booked a hut for August.", "2024-01-03T09:00:00Z")

    eve = g.user("eve")
    e1 = g.session(eve, "eve-s1")
    g.message(
        e1,
        "e1",
        "Eve plays the cello on Sundays.",
        "2024-01-01T09:00:00Z",
        passage_embeddings=[axis(60)],
        embedding_model="other/model",
    )
    g.message(
        e1,
        "e2",
        "Eve's cello teacher is called Ines.",
        "2024-01-02T09:00:00Z",
        passage_embeddings=[[1.0] * 8],
        embedding_model=MODEL,
    )

    g.user("bob")
    return g
