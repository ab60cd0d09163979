"""Rendering: golden text for a small memory (plain and with `explain`), the budget line, and how long
texts are cut into the passages that matched."""

import sys

import pytest
from memgraph_recall.datasets.memory_graph import MemoryGraph
from recall_kit import MODEL, axis, mix, render, rows_of, runtime
from recall_lib.passages import split_passages
from recall_lib.render import shown_text

HEADER = """\
Memory recall for: What is my cat called?
Today is 2024-06-20.
How to read these rows (all from this user's own past):
- A relative date in a row ("yesterday", "next week") counts from that row's date, not from today.
- To count or add up, list each distinct item once, then compute.
- When rows disagree, the most recent row wins.
- When asked for a recommendation, build on the preferences the rows show.
- If the rows do not show the answer, say that it is not in memory.
- MEMORY rows are notes the user saved on purpose: take them as current unless a later row says otherwise.
Rows:
"""

GOLDEN = (
    HEADER
    + """\
MEMORY [notes/pets.md, updated 2024-06-11]: Mochi: vaccine due in June.
FACT: user -[HAS_PET @ 2024-06-01]-> Mochi -- user: "Gina adopted a cat called Mochi."
TURN [session g-s1, 2024-06-01T06:30, Gina]: I adopted a cat called Mochi. She is three years old.
TURN [same session, 06:31, assistant]: Congratulations on adopting Mochi!
TURN [session g-s2, 2024-06-10T18:00, Gina]: Mochi needs her vaccine next Tuesday."""
)

GOLDEN_EXPLAIN = (
    HEADER.replace("Rows:\n", "Read from the question: asks about the user's turns.\nRows:\n")
    + """\
MEMORY [notes/pets.md, updated 2024-06-11]: Mochi: vaccine due in June. {memories #1 0.51}
FACT: user -[HAS_PET @ 2024-06-01]-> Mochi -- user: "Gina adopted a cat called Mochi." \
{entity_facts #1 0.95 via entity "Mochi", facts #1 0.87, user_facts #1 0.87 via type HAS_PET}
TURN [session g-s1, 2024-06-01T06:30, Gina]: I adopted a cat called Mochi. She is three years old. \
{#1 2.130: text #1, turns #1, fact_turns #1, role x3, session +0.324, neighbour +0.061, opener +0.245}
TURN [same session, 06:31, assistant]: Congratulations on adopting Mochi! \
{#2 0.509: turns #2, session +0.324, neighbour +0.062}
TURN [session g-s2, 2024-06-10T18:00, Gina]: Mochi needs her vaccine next Tuesday. \
{#3 0.367: turns #3, role x3, session +0.061}"""
)


def gina() -> MemoryGraph:
    g = MemoryGraph()
    g.recall_meta()  # set up: `runtime` records the uniqueness constraint on it
    user = g.user("gina")
    s1, s2 = g.session(user, "g-s1"), g.session(user, "g-s2")

    def vec(*weights):
        return {"passage_embeddings": [mix(*weights)], "embedding_model": MODEL}

    t1 = g.message(
        s1,
        "g1",
        "I adopted a cat called Mochi.\nShe is three years old.",
        "2024-06-01T08:30:00+02:00",
        speaker="Gina",
        **vec((1, 1.0)),
    )
    g.message(
        s1,
        "g2",
        "Congratulations on adopting Mochi!",
        "2024-06-01T06:31:00Z",
        action_type="assistant_message",
        **vec((1, 0.5), (2, 1.0)),
    )
    g.message(
        s2,
        "g3",
        "Mochi needs her vaccine next Tuesday.",
        "2024-06-10T18:00:00Z",
        speaker="Gina",
        **vec((3, 1.0), (1, 0.3)),
    )
    mochi = g.entity("Mochi", embedding=axis(20), embedding_model=MODEL)
    g.mention(mochi, g.chunk(t1, "I adopted a cat called Mochi."), "g1")
    g.fact(
        user,
        "HAS_PET",
        mochi,
        "g1",
        "Gina adopted a cat called Mochi.",
        valid_at="2024-06-01",
        role="user",
        confidence=0.95,
        embedding=mix((1, 0.9), (4, 0.5)),
        embedding_model=MODEL,
    )
    g.memory(
        user,
        "gm1",
        "notes/pets.md",
        "Mochi: vaccine due in June.",
        "2024-06-11T09:00:00Z",
        passage_embeddings=[mix((1, 0.6), (5, 1.0))],
        embedding_model=MODEL,
    )
    return g


@pytest.fixture(scope="module")
def rt():
    return runtime(gina().elements())


def test_golden_text(rt):
    text, recalled = render(rt, "gina", "What is my cat called?", "2024-06-20", query_vector=axis(1))
    assert text == GOLDEN
    assert recalled == {
        "question": "What is my cat called?",
        "turns": [
            {
                "action_id": "g1",
                "session_id": "g-s1",
                "timestamp": "2024-06-01T06:30:00+00:00",
                "speaker": "Gina",
                "text": "I adopted a cat called Mochi.\nShe is three years old.",
                "passages": [],
            },
            {
                "action_id": "g2",
                "session_id": "g-s1",
                "timestamp": "2024-06-01T06:31:00+00:00",
                "speaker": "assistant",
                "text": "Congratulations on adopting Mochi!",
                "passages": [],
            },
            {
                "action_id": "g3",
                "session_id": "g-s2",
                "timestamp": "2024-06-10T18:00:00+00:00",
                "speaker": "Gina",
                "text": "Mochi needs her vaccine next Tuesday.",
                "passages": [],
            },
        ],
        "facts": [
            {
                "head": "user",
                "type": "HAS_PET",
                "tail": "Mochi",
                "valid_at": "2024-06-01T00:00:00+00:00",
                "speaker": "user",
                "sentence": "Gina adopted a cat called Mochi.",
                "turn": "g1",
            }
        ],
        "memories": [
            {
                "path": "notes/pets.md",
                "updated_at": "2024-06-11T09:00:00+00:00",
                "text": "Mochi: vaccine due in June.",
                "passages": [],
            }
        ],
        "vector_lanes_off": False,
        "vector_lanes_off_reason": None,
        "facts_off_reason": None,
        "messages_without_vectors": 0,
        "rows_left_out": 0,
    }


def test_golden_text_with_explain(rt):
    text, recalled = render(
        rt, "gina", "What is my cat called?", "2024-06-20", query_vector=axis(1), explain=True
    )
    assert text == GOLDEN_EXPLAIN
    assert recalled["facts"][0]["lanes"] == [
        {"lane": "entity_facts", "rank": 1, "score": 0.95, "via": 'entity "Mochi"'},
        {"lane": "facts", "rank": 1, "score": pytest.approx(0.874, abs=1e-3), "via": None},
        {"lane": "user_facts", "rank": 1, "score": pytest.approx(0.874, abs=1e-3), "via": "type HAS_PET"},
    ]


def test_budget_folds_facts_into_their_messages_then_keeps_the_best_ranked_rows_and_says_so(rt):
    golden = GOLDEN.split("\n")
    fact_line, turn_lines = golden[11], golden[12:]
    # Short of room, the FACT row read from g1 folds into g1's row (the message says it), so every TURN
    # row still fits; the fact stays in `recalled`, under the turn it was read from.
    budget = len(GOLDEN) - 1
    ask = {"question": "What is my cat called?", "today": "2024-06-20", "query_vector": axis(1)}
    text, recalled = render(rt, "gina", **ask, max_chars=budget)
    assert text == HEADER + "\n".join([golden[10], *turn_lines]) and fact_line not in text
    assert recalled["rows_left_out"] == 0 and recalled["facts"] == []
    assert [t["action_id"] for t in recalled["turns"]] == ["g1", "g2", "g3"]
    assert [f["sentence"] for f in recalled["turns"][0]["facts"]] == ["Gina adopted a cat called Mochi."]
    # Shorter still, the lowest-ranked TURN row is left out, and the header says so.
    budget = len(GOLDEN) - 60
    text, recalled = render(rt, "gina", **ask, max_chars=budget)
    left_out = f"1 lower-ranked rows were left out to stay within max_chars={budget}.\nRows:\n"
    assert text == HEADER.replace("Rows:\n", left_out) + "\n".join([golden[10], *turn_lines[:2]])
    assert recalled["rows_left_out"] == 1 and [t["action_id"] for t in recalled["turns"]] == ["g1", "g2"]
    # With room for everything nothing is folded.
    assert render(rt, "gina", **ask)[0] == GOLDEN


@pytest.mark.parametrize(
    ("matched", "expected"),
    [
        ([0], "p0 …"),
        ([1], "… p1 …"),
        ([2], "… p2 …"),
        ([3], "… p3"),
        ([0, 1], "p0 p1 …"),
        ([0, 2], "p0 … p2 …"),
        ([1, 3], "… p1 … p3"),
        ([0, 1, 2, 3], "p0 p1 p2 p3"),
    ],
)
def test_long_text_shows_matched_passages_with_an_ellipsis_where_text_is_left_out(matched, expected):
    passages = ["p0 ", "p1 ", "p2 ", "p3"]
    assert shown_text("".join(passages), passages, matched, limit=3) == expected
    assert shown_text("".join(passages), passages, matched, limit=100) == "p0 p1 p2 p3"


def appliances() -> MemoryGraph:
    """Four occasions in four sessions. Along the question's axis 1: h1 0.8, h3 0.6, h2 0.5, h4 0.45;
    h2 and h4 share h1's axis 2 (they resemble the best hit), h3 does not."""
    g = MemoryGraph()
    g.recall_meta()  # set up: `runtime` records the uniqueness constraint on it
    user = g.user("hal")
    texts = {
        "h1": ("I replaced the kitchen faucet.", mix((1, 0.8), (2, 0.6))),
        "h2": ("The toaster broke, so I bought a new one.", mix((1, 0.5), (2, 0.6), (3, 0.62))),
        "h3": ("Kitchen colours I like: sage and cream.", mix((1, 0.6), (4, 0.8))),
        "h4": ("The dishwasher leaked; I swapped its hose.", mix((1, 0.45), (2, 0.6), (5, 0.66))),
    }
    for day, (key, (text, vector)) in enumerate(texts.items(), start=1):
        g.message(g.session(user, f"hal-{key}"), key, text, f"2024-06-0{day}T10:00:00Z",
                  passage_embeddings=[vector], embedding_model=MODEL)
    return g


@pytest.mark.parametrize(
    ("question", "config", "shown"),
    [
        ("How many appliances did I repair?", {}, ["h1", "h2"]),  # gathers: the feedback pass votes
        ("How many appliances did I repair?", {"feedback_turns": 0}, ["h1", "h3"]),  # switched off
        ("Which appliance did I repair?", {}, ["h1", "h3"]),  # one occasion: no pass
    ],
)
def test_a_gathering_question_shows_the_occasions_its_best_hit_resembles(question, config, shown):
    rt = runtime(appliances().elements())
    _, recalled = render(rt, "hal", question, "2024-06-20", query_vector=axis(1), turns_budget=2,
                         **{"feedback_turns": 1, **config})
    assert sorted(t["action_id"] for t in recalled["turns"]) == shown


def test_a_message_said_again_word_for_word_is_shown_once_with_when():
    """Identical messages (same speaker, same text) spend the budget once: one row says how often and
    when; a different speaker's same words are another row."""
    g = MemoryGraph()
    g.recall_meta()
    session = g.session(g.user("rio"), "rio-s")
    water = "Water the ferns."
    said = [("r1", "Rio", water), ("r2", "Rio", water), ("r3", "assistant", water), ("r4", "Rio", water),
            ("r5", "Rio", "The ferns are by the window.")]
    for minute, (key, speaker, text) in enumerate(said):
        g.message(session, key, text, f"2024-06-01T10:0{minute}:00Z", speaker=speaker,
                  passage_embeddings=[mix((1, 1.0), (minute + 2, 0.1))], embedding_model=MODEL)
    rt = runtime(g.elements())
    text, recalled = render(rt, "rio", "ferns", "2024-06-20", query_vector=axis(1))
    rows = rows_of(text)
    repeated = [row for row in rows if "said 3 times" in row]
    assert len(repeated) == 1 and "also 2024-06-01T10:01, 2024-06-01T10:03" in repeated[0]
    assert sum("Water the ferns." in row for row in rows) == 2  # Rio's three as one row, the assistant's
    shown = {t["action_id"]: t.get("repeats") for t in recalled["turns"]}
    assert shown == {"r1": ["r2", "r4"], "r3": None, "r5": None}
    _, plain = render(rt, "rio", "ferns", "2024-06-20", query_vector=axis(1), max_chars=0)
    assert {t["action_id"] for t in plain["turns"]} == {"r1", "r3", "r5"}  # the rows budget folds them too


def test_pieces_under_a_budget_are_a_thirty_second_of_it_and_half_that_for_a_gathering_question():
    from recall_lib.render import RenderContext

    def piece(max_chars, gather=0, turn_chars=1500, sweep=0):
        return RenderContext("q", None, None, MODEL, 1, 0, turn_chars, False, max_chars,
                             gather_piece_chars=gather, sweep_piece_chars=sweep).piece_chars

    assert piece(None) == 1500 and piece(None, gather=200) == 1500  # no budget: turn_chars
    assert piece(8000) == 300 and piece(32000) == 1000 and piece(4000) == 300  # at least 300
    assert piece(8000, gather=200) == 200 and piece(32000, gather=200) == 500
    assert piece(8000, gather=400) == 400 and piece(64000, gather=200, turn_chars=800) == 800
    # a sweep: a quarter of a gathering question's share, not below sweep_piece_chars
    assert piece(8000, gather=200, sweep=60) == 62 and piece(32000, gather=200, sweep=60) == 250
    assert piece(4000, gather=200, sweep=60) == 60 and piece(None, gather=200, sweep=60) == 1500


def trips() -> MemoryGraph:
    """Three trips told in three sessions, each in a long message whose first passage names the trip."""
    g = MemoryGraph()
    g.recall_meta()
    user = g.user("tess")
    for n, (place, axis_n) in enumerate((("Lisbon", 1), ("Oslo", 2), ("Kyoto", 3))):
        session = g.session(user, f"t-s{n}")
        text = f"I took a trip to {place} this spring. " + "We walked the old town and ate well. " * 30
        g.message(session, f"t{n}", text, f"2024-0{n + 3}-01T10:00:00+00:00",
                  passage_embeddings=[mix((axis_n, 0.8), (9, 0.6))], embedding_model=MODEL)
    return g


def test_a_gathering_question_shows_shorter_pieces_unless_gather_piece_chars_is_off():
    rt = runtime(trips().elements())
    ask = {"question": "How many trips did I take?", "today": "2024-06-20", "query_vector": axis(9)}
    pieces = {}
    for gather in (200, 0):
        _, recalled = render(rt, "tess", **ask, max_chars=8000, gather_piece_chars=gather)
        assert sorted(t["action_id"] for t in recalled["turns"]) == ["t0", "t1", "t2"]
        pieces[gather] = max(len(p) for t in recalled["turns"] for p in t["passages"])
    assert 150 <= pieces[200] <= 200 < 250 <= pieces[0] <= 300


def test_a_sweeping_question_shows_shorter_pieces_than_a_gathering_one_unless_sweep_piece_chars_is_off():
    rt = runtime(trips().elements())
    ask = {"today": "2024-06-20", "query_vector": axis(9), "max_chars": 8000}
    pieces = {}
    for question, sweep in (("Summarize my trips.", 60), ("Summarize my trips.", 0), ("How many trips?", 60)):
        _, recalled = render(rt, "tess", question, **ask, sweep_piece_chars=sweep)
        assert sorted(t["action_id"] for t in recalled["turns"]) == ["t0", "t1", "t2"]
        pieces[question, sweep] = max(len(p) for t in recalled["turns"] for p in t["passages"])
    assert pieces["Summarize my trips.", 60] <= 62 < 150 <= pieces["Summarize my trips.", 0] <= 200
    assert pieces["How many trips?", 60] == pieces["Summarize my trips.", 0]  # not a sweep: as it gathers


def long_notes() -> MemoryGraph:
    """Twelve long messages, each in its own session, nearer the question's axis 1 the earlier they are
    (`n0` nearest), and a short one (`short`, 200 characters) furthest."""
    g = MemoryGraph()
    g.recall_meta()
    user = g.user("lea")
    filler = "We moved the beds and the hose. " * 50
    said = [(f"n{n}", 0.95 - 0.03 * n, f"Note {n} on the garden plan. {filler}") for n in range(12)]
    said.append(("short", 0.5, "The shed key is under the blue pot by the door, left of the steps, and the "
                    "spare is with Ana next door in the kitchen drawer by her phone; ask her before nine in "
                    "the evening, she sleeps early."))
    for minute, (key, cosine, text) in enumerate(said):
        vector = mix((1, cosine), (minute + 2, (1 - cosine**2) ** 0.5))
        g.message(g.session(user, f"lea-{key}"), key, text, f"2024-05-01T10:{minute:02d}:00+00:00",
                  passage_embeddings=[vector] * len(split_passages(text)), embedding_model=MODEL)
    return g


def test_rows_below_the_first_eight_show_long_messages_shorter_unless_deep_piece_chars_is_off():
    rt = runtime(long_notes().elements())
    ask = {"question": "Which note?", "today": "2024-06-20", "query_vector": axis(1), "max_chars": 8000}
    pieces, ranks = {}, {}
    for deep in (150, 0):
        text, recalled = render(rt, "lea", **ask, deep_piece_chars=deep, explain=True)
        turns = {t["action_id"]: t for t in recalled["turns"]}
        assert set(turns) == {f"n{n}" for n in range(12)} | {"short"}
        assert turns["short"]["passages"] == [] and turns["short"]["text"] in text  # short: shown whole
        pieces[deep] = {key: sum(map(len, t["passages"])) for key, t in turns.items() if key != "short"}
        ranks[deep] = {key: t["fused"]["rank"] for key, t in turns.items()}
        for t in turns.values():  # the map's pieces are the text's
            assert all(piece in text for piece in t["passages"])
    assert ranks[150] == ranks[0]
    first = [key for key in pieces[0] if ranks[0][key] <= 8]
    below = [key for key in pieces[0] if ranks[0][key] > 8]
    assert len(first) == 8 and len(below) == 4 and ranks[0]["short"] > 8
    assert all(250 <= pieces[150][key] == pieces[0][key] <= 300 for key in first)
    assert all(pieces[150][key] <= 150 and 250 <= pieces[0][key] <= 300 for key in below)
    _, rows = render(rt, "lea", **{**ask, "max_chars": 0})  # no character budget: every row alike
    assert all(sum(map(len, t["passages"])) > 1000 for t in rows["turns"] if t["action_id"] != "short")


def tracker_chat() -> MemoryGraph:
    """Three requests about a tracker along the question's axis 1 (0.9, 0.85, 0.8), each answered by a
    reply that shares neither its words nor its vector (cosine 0.1), then a remark (0.75) that no reply
    follows."""
    g = MemoryGraph()
    g.recall_meta()
    user = g.user("ivo")
    said = [
        ("s1", "u1", "user_message", "My tracker loses objects between frames.", 0.9),
        ("s1", "r1", "assistant_message", "Raise max_age so lost ids survive a few frames.", 0.1),
        ("s2", "u2", "user_message", "The tracker swaps ids when people cross.", 0.85),
        ("s2", "r2", "assistant_message", "Add appearance features to the matching cost.", 0.1),
        ("s3", "u3", "user_message", "Can the tracker run on the GPU?", 0.8),
        ("s3", "r3", "assistant_message", "Batch the Kalman updates with numpy first.", 0.1),
        ("s4", "u4", "user_message", "I logged the tracker's latency today.", 0.75),
    ]
    sessions = {}
    for minute, (session, key, kind, text, cosine) in enumerate(said):
        if session not in sessions:
            sessions[session] = g.session(user, session)
        vector = mix((1, cosine), (6 + minute, (1 - cosine**2) ** 0.5))
        when = f"2024-06-0{session[1]}T10:{minute:02d}:00Z"
        g.message(sessions[session], key, text, when, action_type=kind, passage_embeddings=[vector],
                  embedding_model=MODEL)
    return g


@pytest.mark.parametrize(
    ("question", "config", "shown"),
    [
        ("Can you summarize what I learned about the tracker?", {}, ["r1", "r2", "u1", "u2"]),
        ("Can you summarize what I learned about the tracker?", {"exchange_share": 0},
         ["u1", "u2", "u3", "u4"]),
        ("In what order did I bring up the tracker's problems?", {}, ["u1", "u2", "u3", "u4"]),  # no summary
    ],
)
def test_a_summary_shows_each_request_with_its_reply(question, config, shown):
    rt = runtime(tracker_chat().elements())
    _, recalled = render(rt, "ivo", question, "2024-06-20", query_vector=axis(1), turns_budget=4, max_chars=0,
                         **config)
    assert sorted(t["action_id"] for t in recalled["turns"]) == shown


def coding_chat(rule: str = "Always include a code example when I ask about these.",
                preference: bool = False) -> MemoryGraph:
    """Requests about async errors along the question's axis 1 (0.9, 0.85, 0.8), an assistant reply
    that says "always" (0.7) and the user's standing instruction `rule` (0.5): nearer the question than
    the instruction, but neither of the two is the user's rule. With `preference`, also a standing
    statement that names no questions (0.6): nearer than the rule, and no rule."""
    g = MemoryGraph()
    g.recall_meta()
    session = g.session(g.user("ada"), "ada-s")
    said = [
        ("a1", "user_message", "My async handler swallows errors, why?", mix((1, 0.9), (3, 0.44))),
        ("a2", "user_message", "My async fetch throws an unhandled rejection.", mix((1, 0.85), (4, 0.53))),
        ("a3", "user_message", "How do I retry a failed async request?", mix((1, 0.8), (5, 0.6))),
        ("r1", "assistant_message", "You should always await the promise.", mix((1, 0.7), (6, 0.71))),
        ("rule", "user_message", rule, mix((1, 0.5), (2, 0.866))),
    ]
    if preference:
        said.append(("pref", "user_message", "I always prefer short answers.", mix((1, 0.6), (7, 0.8))))
    for minute, (key, kind, text, vector) in enumerate(said):
        g.message(session, key, text, f"2024-06-01T10:0{minute}:00Z", action_type=kind,
                  passage_embeddings=[vector], embedding_model=MODEL)
    return g


@pytest.mark.parametrize(
    ("question", "config", "shown"),
    [
        ("How should I handle errors in my async code?", {"rule_turns": 0}, ["a1", "a2", "rule"]),  # its vote
        ("How should I handle errors in my async code?", {"instruction_turns": 0, "rule_turns": 0},
         ["a1", "a2", "a3"]),
        ("How should errors in async code be handled?", {"rule_turns": 0}, ["a1", "a2", "a3"]),  # no side
        ("What did I say about errors in my async code?", {"rule_turns": 0}, ["a1", "a2", "a3"]),  # no ask
    ],
)
def test_a_request_on_the_users_side_shows_their_standing_instruction_not_an_assistant_always(
    question, config, shown
):
    rt = runtime(coding_chat().elements())
    _, recalled = render(rt, "ada", question, "2024-06-20", query_vector=axis(1), turns_budget=3, **config)
    assert sorted(t["action_id"] for t in recalled["turns"]) == shown


@pytest.mark.parametrize(
    ("question", "rule", "preference", "config", "shown"),
    [  # the rules pass votes for any question: no side, no request
        ("How should errors in async code be handled?", None, False, {}, {"rule"}),
        ("What did I say about errors in my async code?", None, False, {}, {"rule"}),
        ("What did I say about errors in my async code?", None, False, {"rule_turns": 0}, set()),
        # a standing statement that names no questions is no rule
        ("What did I say about errors in my async code?", "Always include a code example.", False, {}, set()),
        # a nearer preference takes the instructions pass's one vote; among rules the rule is first
        ("How should I handle errors in my async code?", None, True, {"rule_turns": 0, "rule_boost": 0},
         {"pref"}),
        ("How should I handle errors in my async code?", None, True, {}, {"pref", "rule"}),
    ],
)
def test_a_rule_that_names_the_questions_it_governs_is_shown_for_any_question_on_its_topic(
    question, rule, preference, config, shown
):
    """`shown`: which of the standing statements are among the rows (the rest are the requests)."""
    chat = coding_chat(preference=preference) if rule is None else coding_chat(rule, preference)
    rt = runtime(chat.elements())
    _, recalled = render(rt, "ada", question, "2024-06-20", query_vector=axis(1), turns_budget=3, **config)
    ids = {t["action_id"] for t in recalled["turns"]}
    assert len(ids) == 3 and ids & {"rule", "pref"} == shown


def rule_then_request_chat() -> MemoryGraph:
    """A rule far from the question's axis 1, the assistant's acknowledgement, then the request that
    applies it (0.9 on the axis); three other requests of another session nearer the axis than the rule."""
    g = MemoryGraph()
    g.recall_meta()
    user = g.user("ada")
    said = {
        "ada-1": [
            ("rule", "user_message", "Always give Python snippets when I ask about implementation details.",
             mix((2, 1.0))),
            ("ack", "assistant_message", "Noted, Python snippets from now on.", mix((3, 1.0))),
            ("req", "user_message", "How do I switch the counting overlay on and off at runtime?",
             mix((1, 0.9), (4, 0.44))),
        ],
        "ada-2": [
            (f"o{n}", "user_message", text, mix((1, share), (4 + n, (1 - share * share) ** 0.5)))
            for n, (text, share) in enumerate(
                [("The overlay flickers on my laptop.", 0.8), ("The counter skips frames.", 0.75),
                 ("My video feed lags at night.", 0.7)], 1)
        ],
    }
    minute = 0
    for session_id, turns in said.items():
        session = g.session(user, session_id)
        for key, kind, text, vector in turns:
            g.message(session, key, text, f"2024-06-01T10:{minute:02d}:00Z", action_type=kind,
                      passage_embeddings=[vector], embedding_model=MODEL)
            minute += 1
    return g


@pytest.mark.parametrize(
    ("config", "shown"), [({}, {"req", "rule", "o1"}), ({"rule_boost": 0}, {"req", "o1", "o2"})]
)
def test_a_rule_stated_just_before_the_request_that_applies_it_is_shown_with_it(config, shown):
    # the rules pass off: its vote would show the user's only rule whatever the question
    rt = runtime(rule_then_request_chat().elements())
    question = "How can I add a toggle for the overlay while the app runs?"
    _, recalled = render(rt, "ada", question, "2024-06-20", query_vector=axis(1), turns_budget=3,
                         rule_turns=0, **config)
    assert {t["action_id"] for t in recalled["turns"]} == shown


def security_chat() -> MemoryGraph:
    """Three messages a question lists (JWT expiry, Socket.io verification, clock skew), each in its own
    words, after three checklists that name all three things at once: the whole question's words rank
    the checklists first."""
    g = MemoryGraph()
    g.recall_meta()
    session = g.session(g.user("ada"), "ada-s")
    said = [
        ("d1", "Notes on the JWT token, Socket.io and clock settings for the app."),
        ("d2", "JWT token, Socket.io reconnects and clock drift: all in the app checklist."),
        ("d3", "The app checklist: token expiry, socket timeouts, clock sync."),
        ("jwt", "The JWT token expiry logs me out after an hour."),
        ("socket", "Socket.io verification fails when the client reconnects."),
        ("skew", "Clock skew between the two servers rejects fresh logins."),
    ]
    for minute, (key, text) in enumerate(said):
        g.message(session, key, text, f"2024-06-0{minute + 1}T10:00:00Z")
    return g


@pytest.mark.parametrize(
    ("question", "config", "has"),
    [
        ("Given my JWT token expiry, the Socket.io verification, and the clock skew, how do I fix these?",
         {}, True),
        ("Given my JWT token expiry, the Socket.io verification, and the clock skew, how do I fix these?",
         {"facet_turns": 0}, False),
        ("How do I fix my JWT token expiry with the Socket.io verification under clock skew?",
         {}, False),  # no list
    ],
)
def test_a_question_listing_things_shows_the_message_of_each_not_the_words_they_share(question, config, has):
    rt = runtime(security_chat().elements())
    _, recalled = render(rt, "ada", question, "2024-06-20", turns_budget=4, **config)
    shown = {t["action_id"] for t in recalled["turns"]}
    assert ({"jwt", "socket", "skew"} <= shown) is has, shown


@pytest.mark.parametrize(
    ("config", "wrote_it", "shown"),
    [
        ({}, False, {"beach", "gear"}),
        ({"text_inflections": False}, False, set()),
        ({}, True, {"lake"}),  # the user wrote "camped": the word alone is searched
    ],
)
def test_a_word_the_user_never_wrote_is_searched_by_the_relatives_they_did(config, wrote_it, shown):
    g = MemoryGraph()
    g.recall_meta()
    ada = g.user("ada")
    session = g.session(ada, "ada-s")
    said = ["We went camping at the beach.", "My camping gear list: tent, stove, lamp."]
    said += [f"Groceries for day {day}: bread and milk." for day in range(6)]
    keys = ["beach", "gear", *(f"x{day}" for day in range(6))]
    for day, (key, text) in enumerate(zip(keys, said, strict=True)):
        g.message(session, key, text, f"2024-06-{day + 1:02d}T10:00:00Z")
    if wrote_it:
        g.message(g.session(ada, "ada-t"), "lake", "We camped by the lake.", "2024-06-15T10:00:00Z")
    rt = runtime(g.elements())
    asked = {"lanes": ["text"], "explain": True, **config}
    text, recalled = render(rt, "ada", "Where have I camped?", "2024-06-20", **asked)
    found = {t["action_id"] for t in recalled["turns"]} & {"beach", "gear", "lake"}
    assert found == shown
    assert ('"camped" searched as camping (never written)' in text) is (shown == {"beach", "gear"})


@pytest.mark.parametrize(("config", "found"), [({}, True), ({"text_inflections": False}, False)])
def test_a_note_is_found_by_the_relatives_of_a_word_it_never_holds(config, found):
    g = MemoryGraph()
    g.recall_meta()
    ada = g.user("ada")
    g.memory(ada, "m1", "notes/boats.md", "Kayak: the blue one, paddle broken.", "2024-04-03T00:00:00Z")
    g.memory(ada, "m2", "notes/food.md", "Favourite restaurant: Lupa.", "2024-04-04T00:00:00Z")
    rt = runtime(g.elements())
    _, recalled = render(rt, "ada", "Where are my kayaks?", "2024-06-20", lanes=["memories"], **config)
    assert ("notes/boats.md" in {m["path"] for m in recalled["memories"]}) is found


@pytest.mark.parametrize(
    ("config", "reads"),
    [({}, 1), ({"lanes": ["text"]}, 1), ({"lanes": ["text"], "rule_boost": 0}, 0),
     ({"rule_turns": 0, "instruction_turns": 0, "rule_boost": 0}, 0)],
)
def test_the_standing_statements_are_read_only_when_a_pass_or_the_rule_lift_will_use_them(
    monkeypatch, config, reads
):
    # without the turns lane no vector pass runs: only the rule lift (a ranking signal) wants the rules
    lanes = sys.modules["recall_lib.lanes"]
    calls = []
    read = lanes.standing_turns
    monkeypatch.setattr(lanes, "standing_turns", lambda *args: calls.append(1) or read(*args))
    rt = runtime(coding_chat().elements())
    render(rt, "ada", "How should I handle errors in my async code?", "2024-06-20", query_vector=axis(1),
           turns_budget=3, **config)
    assert len(calls) == reads


def near_tie_chat() -> MemoryGraph:
    """Four messages, each its own session (no session, neighbour or opener lift between them): two the
    question's words match (the second far more weakly), then two its vector matches (the second nearly
    as well as the first), written in that order."""
    g = MemoryGraph()
    g.recall_meta()
    user = g.user("ada")
    said = [
        ("words", "I picked the Niche espresso grinder for the burr quality.", axis(5)),
        ("weak", "Coffee again this morning, then a long walk with the dog along the river and back "
                 "home for lunch; an espresso later.", axis(6)),
        ("near", "A conical machine for the kitchen counter.", mix((1, 0.9), (7, 0.44))),
        ("nearly", "The kitchen gadget that mills the beans.", mix((1, 0.88), (8, 0.47))),
    ]
    for day, (key, text, vector) in enumerate(said, 1):
        session = g.session(user, f"ada-{key}")
        g.message(session, key, text, f"2024-06-0{day}T10:00:00Z", passage_embeddings=[vector],
                  embedding_model=MODEL)
    return g


@pytest.mark.parametrize(("config", "third"), [({}, "nearly"), ({"score_share": 0}, "weak")])
def test_a_turn_scoring_nearly_its_lanes_best_outranks_one_of_the_same_rank_far_below_its_lanes_best(
    config, third
):
    rt = runtime(near_tie_chat().elements())
    question = "Which burr grinder did I pick for espresso?"
    _, recalled = render(rt, "ada", question, "2024-06-20", query_vector=axis(1), turns_budget=3, **config)
    assert {t["action_id"] for t in recalled["turns"]} == {"words", "near", third}
