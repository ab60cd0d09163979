"""`recall.render` under generated character budgets, over a history whose sessions run several turns
a day, cross midnight and mix short and long messages: the text never exceeds `max_chars`, and every
TURN row, a short one (`TURN [same session, HH:MM, ...]`) read with the row above, names the session
and minute of the turn `recalled` lists in its place."""

import re
from functools import cache

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import QueryError
from recall_kit import MODEL, expanded_rows, mix, render, rows_of, runtime

SAID = [  # session, minute, speaker side, words; the axes the message's vector leans on
    ("z-s1", "2024-05-01T09:00", "user_message", "I booked the kayak trip for June.", (1, 2)),
    ("z-s1", "2024-05-01T09:01", "assistant_message", "Great, paddling in June is lovely. " * 12, (1, 3)),
    ("z-s1", "2024-05-01T09:05", "user_message", "My sister Ana is coming along.", (2, 4)),
    ("z-s2", "2024-05-03T23:58", "user_message", "Ana asked about the kayak sizes.", (1, 4)),
    ("z-s2", "2024-05-04T00:02", "assistant_message", "Tandem kayaks seat two adults. " * 15, (1, 5)),
    ("z-s2", "2024-05-04T00:04", "user_message", "We will take a tandem then.", (1, 6)),
    ("z-s3", "2024-05-10T08:00", "user_message", "Packing list: dry bag, sunscreen, hat.", (3, 6)),
    ("z-s3", "2024-05-10T08:01", "assistant_message", "Add water shoes and a whistle. " * 10, (3, 5)),
    ("z-s4", "2024-05-12T18:30", "user_message", "The kayak trip moved to July.", (1, 2)),
]
ROW_HEAD = re.compile(r"TURN \[session (?P<session>[^,]+), (?P<minute>\d{4}-\d\d-\d\dT\d\d:\d\d)[,\]]")


@cache
def _runtime():
    g = MemoryGraph()
    g.recall_meta()
    user, sessions = g.user("zoe"), {}
    for n, (session, minute, side, text, (a, b)) in enumerate(SAID):
        if session not in sessions:
            sessions[session] = g.session(user, session)
        g.message(sessions[session], f"z{n}", text, f"{minute}:00Z", action_type=side,
                  passage_embeddings=[mix((a, 0.8), (b, 0.6))], embedding_model=MODEL)
    return runtime(g.elements())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(max_chars=st.integers(500, 4000),
       leans=st.lists(st.integers(1, 6), min_size=1, max_size=3, unique=True),
       question=st.sampled_from(["When is the kayak trip?", "Summarize my kayak plans.", "How many kayaks?"]))
def test_a_render_keeps_its_budget_and_each_row_names_its_turn(max_chars, leans, question):
    vector = mix(*((axis, 1.0) for axis in leans))
    try:
        text, recalled = render(_runtime(), "zoe", question, "2024-06-01", query_vector=vector,
                                max_chars=max_chars)
    except QueryError as error:
        assume("must be at least" not in str(error))  # below the header alone: refused, as documented
        raise
    assert len(text) <= max_chars
    rows = [row for row in expanded_rows(text) if row.startswith("TURN [")]
    named = [(m["session"], m["minute"]) for m in map(ROW_HEAD.match, rows)]
    assert named == [(t["session_id"], t["timestamp"][:16]) for t in recalled["turns"]]
    shown = [row for row in rows_of(text) if row.startswith("TURN [")]
    for at in range(1, len(named)):  # short exactly when the row above is of the same session and day
        same = named[at - 1][0] == named[at][0] and named[at - 1][1][:10] == named[at][1][:10]
        assert shown[at].startswith("TURN [same session, ") is same
