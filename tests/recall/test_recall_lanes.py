"""End-to-end: the lanes, their filters and `recall.lanes` rows, on the embedded runtime.

Vectors are synthetic axes (see `recall_kit.world`), so a `query_vector` along an axis finds exactly
the item stored on it; the real MiniLM is used where meaning matters (user_facts type ranking).
"""

import re

import pytest
from memgraph_recall.embedded import QueryError
from recall_kit import (
    KAYAK,
    LONG_TEXT,
    MODEL,
    axis,
    by_lane,
    expanded_rows,
    header_of,
    lanes,
    mix,
    render,
    rows_of,
    runtime,
    world,
)
from recall_lib.passages import split_passages


@pytest.fixture(scope="module")
def rt():
    return runtime(world().elements())


def turn_keys(rows):
    return [r["key"] for r in rows]


def test_facts_lane_reaches_its_source_turn(rt):
    found = by_lane(lanes(rt, "ana", "where did I book?", lanes=["facts"], facts_k=1, query_vector=axis(12)))
    assert set(found) == {"facts", "fact_turns", "fused"}
    [fact] = found["facts"]
    assert fact["relationship"].type == "BOOKED" and fact["turn"] == "a2" and fact["node"] is None
    assert fact["key"] == "user -[BOOKED]-> Lupa @a2" and fact["text"] == "Ana booked a table at Lupa."
    # The facts beyond facts_k still lead to their turns (the fact_turns lane ranks all it reached).
    turn = found["fact_turns"][0]
    assert turn["key"] == turn["turn"] == "a2" and "Action" in turn["node"].labels

    text, recalled = render(
        rt, "ana", "where did I book?", lanes=["facts"], facts_k=1, turns_budget=1, query_vector=axis(12)
    )
    assert rows_of(text) == [
        'FACT: user -[BOOKED @ 2024-02-10]-> Lupa -- user: "Ana booked a table at Lupa."',
        "TURN [session ana-s2, 2024-02-10T09:00, Ana]: Booked a table at Lupa for Friday dinner.",
    ]
    assert recalled["facts"][0]["turn"] == recalled["turns"][0]["action_id"] == "a2"


def test_turns_only_mode(rt):
    found = lanes(rt, "ana", "the wedding", lanes=["turns"], turns_k=1, query_vector=axis(1))
    # The lane's own hit, and the fused ranking: a1 is the only turn with a positive cosine, so the only
    # turn the vector lane votes for (zero-cosine turns are not "found").
    assert [(r["lane"], r["key"], r["rank"]) for r in found] == [("turns", "a1", 1), ("fused", "a1", 1)]
    assert found[0]["score"] == pytest.approx(1.0)
    text, recalled = render(rt, "ana", "the wedding", lanes=["turns"], turns_k=1, query_vector=axis(1))
    assert rows_of(text) == [
        "TURN [session ana-s1, 2024-01-05T10:00, Ana]: I went to Sara's wedding in Porto last weekend."
    ]
    assert recalled["facts"] == [] and recalled["memories"] == []


def test_user_facts_gathers_one_relation_type_across_sessions(rt):
    # The real model ranks relation types against the question; the wedding facts live in two sessions.
    found = by_lane(
        lanes(rt, "ana", "How many weddings did I attend?", lanes=["user_facts"], user_fact_types=1)
    )
    assert sorted(r["turn"] for r in found["user_facts"]) == ["a1", "a3"]
    assert {r["relationship"].type for r in found["user_facts"]} == {"ATTENDED_WEDDING"}
    assert sorted(r["key"] for r in found["fact_turns"]) == ["a1", "a3"]


def test_turns_are_in_time_order_across_timestamp_formats(rt):
    # a5 (11:00+02:00 = 09:00Z) < a6 (LocalDateTime 10:30, read as UTC) < a3 (09:00-03:00 = 12:00Z):
    # string order would put a3 first.
    query = mix(*((i, 1.0) for i in (1, 2, 3, 4, 5, 6, 7)))
    text, recalled = render(rt, "ana", "everything", lanes=["turns"], turns_k=10, query_vector=query)
    assert [t["action_id"] for t in recalled["turns"]] == ["a1", "a2", "a5", "a6", "a3", "a4", "a7"]
    times = [line.split(", ")[1] for line in expanded_rows(text)]
    assert times == sorted(times) and times[2:5] == [
        "2024-03-01T09:00",
        "2024-03-01T10:30",
        "2024-03-01T12:00",
    ]
    assert recalled["turns"][4]["timestamp"] == "2024-03-01T12:00:00+00:00"


def test_facts_are_in_valid_at_order(rt):
    query = mix((10, 1.0), (11, 1.0), (12, 1.0))
    _, recalled = render(rt, "ana", "facts", lanes=["facts"], fact_turns_k=0, query_vector=query)
    assert [f["valid_at"][:10] for f in recalled["facts"]] == ["2024-01-04", "2024-02-10", "2024-03-01"]


def test_memories_lane_by_vector_then_by_words(rt):
    text, recalled = render(rt, "ana", "my kayak", lanes=["memories"], memories_k=1, query_vector=axis(30))
    assert rows_of(text) == [
        "MEMORY [notes/kayak.md, updated 2024-04-03]: Kayak: the blue one, the paddle is broken."
    ]
    assert any(line.startswith("- MEMORY rows are notes") for line in header_of(text))
    # No vector passes min_score, so the note comes by its words; a note without a date has no "updated".
    text, _ = render(
        rt, "ana", "favourite restaurant", lanes=["memories"], query_vector=axis(99), min_score=0.5
    )
    assert rows_of(text) == ["MEMORY [notes/food.md]: Favourite restaurant: Lupa, the corner table."]
    found = lanes(rt, "ana", "my kayak", lanes=["memories"], memories_k=1, query_vector=axis(30))
    assert [(r["key"], r["passage"], r["node"].properties["path"]) for r in found] == [
        ("ana-mem1", 0, "notes/kayak.md")
    ]


def test_long_message_shows_the_matched_passage_of_the_upstream_split(rt):
    passages = split_passages(LONG_TEXT)
    assert KAYAK.strip() in passages[1] and "kayak" not in passages[0] + passages[2]
    found = lanes(rt, "ana", "kayak paddle", lanes=["turns"], turns_k=1, query_vector=axis(4))
    assert [(r["lane"], r["key"], r["passage"], r["text"]) for r in found] == [
        ("turns", "a4", 1, passages[1]),
        ("fused", "a4", 1, passages[1]),  # a fused turn shows the passage the vector lane found
    ]
    rows_config = {"lanes": ["turns"], "turns_k": 1, "query_vector": axis(4), "max_chars": 0}
    text, recalled = render(rt, "ana", "kayak paddle", **rows_config)
    [row] = rows_of(text)
    assert row == "TURN [session ana-s4, 2024-04-02T08:00, Ana]: … " + " ".join(passages[1].split()) + " …"
    assert recalled["turns"][0]["passages"] == [passages[1]] and recalled["turns"][0]["text"] == LONG_TEXT
    # Under the default character budget the row shows the piece of at most 500 characters (8,000 / 16),
    # cut at sentence ends, that overlaps that passage and holds the question's words.
    text, recalled = render(rt, "ana", "kayak paddle", lanes=["turns"], turns_k=1, query_vector=axis(4))
    [piece] = recalled["turns"][0]["passages"]
    assert piece in LONG_TEXT and len(piece) <= 500 and "kayak needs a new paddle" in piece
    row = "TURN [session ana-s4, 2024-04-02T08:00, Ana]: … " + " ".join(piece.split()) + " …"
    assert rows_of(text) == [row]
    # With a wide turn_chars and no character budget the whole message is shown.
    text, recalled = render(rt, "ana", "kayak paddle", **{**rows_config, "turn_chars": 10_000})
    assert rows_of(text)[0].endswith(" ".join(LONG_TEXT.split())) and recalled["turns"][0]["passages"] == []


def test_lanes_rows_carry_graph_objects_and_keys(rt):
    query = mix((2, 1.0), (22, 1.0), (12, 1.0), (31, 1.0))
    found = lanes(
        rt,
        "ana",
        "Lupa",
        query_vector=query,
        entities_k=1,
        facts_k=1,
        turns_k=1,
        memories_k=1,
        text_k=1,
        user_fact_types=1,
        user_facts_k=1,
    )
    lane_names = {r["lane"] for r in found}
    assert {"memories", "turns", "text", "entities", "entity_facts", "facts", "fact_turns"} <= lane_names
    for row in found:
        assert isinstance(row["score"], float) and row["rank"] >= 1
        if row["lane"] in ("facts", "user_facts", "entity_facts"):
            assert row["node"] is None and row["relationship"] is not None and row["passage"] is None
        else:
            assert row["relationship"] is None and row["node"] is not None
    entity = by_lane(found)["entities"][0]
    assert (entity["key"], entity["text"], entity["turn"], set(entity["node"].labels)) == (
        "Lupa",
        "Lupa",
        None,
        {"Entity"},
    )
    text_hit = by_lane(found)["text"][0]
    assert text_hit["key"] == "a2" and text_hit["passage"] == 0 and text_hit["score"] > 0
    memory = by_lane(found)["memories"][0]
    assert memory["key"] == "ana-mem2" and memory["turn"] is None


def test_node_form_of_user_matches_the_string_form(rt):
    node = rt.find_vertex("User", "user_id", "ana")
    by_node = render(rt, node, "wedding", "2024-05-01", query_vector=axis(1))
    by_string = render(rt, "ana", "wedding", "2024-05-01", query_vector=axis(1))
    assert by_node == by_string and "Today is 2024-05-01." in by_node[0]
    session = rt.find_vertex("Session", "session_id", "ana-s1")
    expected = "user must be a user_id string, a :User node or the fast call shape.s map"
    with pytest.raises(QueryError, match=f"{expected}.*Session"):
        render(rt, session, "wedding")
    with pytest.raises(QueryError, match=f"{expected}, got 42"):
        render(rt, 42, "wedding")


def test_max_chars_drops_the_lowest_ranked_rows_first(rt):
    # Scores fall a1 > a2 > a3 > a5, so ranks are 1..4 in that order.
    # Without the session signals the fused ranks follow the vector lane: a1, a2, a3, a5.
    query = mix((1, 0.8), (2, 0.6), (3, 0.4), (5, 0.2))
    plain = {"lanes": ["turns"], "turns_k": 4, "query_vector": query}
    plain |= {"session_boost": 0, "neighbour_boost": 0}
    full, _ = render(rt, "ana", "q", **plain)
    assert len(rows_of(full)) == 4
    # room for the three best rows and the line that says one was left out: a5, above a3 in time and
    # in its session, would shorten a3's row (`same session`) but cannot fit itself
    three, _ = render(rt, "ana", "q", **{**plain, "turns_k": 3})
    budget = len(three) + len(f"1 lower-ranked rows were left out to stay within max_chars={len(full)}.") + 1
    assert len(str(budget)) == len(str(len(full))) and budget < len(full)
    text, recalled = render(rt, "ana", "q", **plain, max_chars=budget)
    assert len(text) <= budget
    assert [t["action_id"] for t in recalled["turns"]] == ["a1", "a2", "a3"]
    assert "1 lower-ranked rows were left out to stay within max_chars=" in text
    assert recalled["rows_left_out"] == 1
    with pytest.raises(QueryError, match=r"config\['max_chars'\] must be at least \d+ here") as error:
        render(rt, "ana", "q", **plain, max_chars=50)
    minimum = int(re.search(r"at least (\d+) here \(the header alone\), got 50", str(error.value)).group(1))
    header_only, recalled = render(rt, "ana", "q", **plain, max_chars=minimum)
    assert rows_of(header_only) == [] and recalled["rows_left_out"] == 4 and len(header_only) <= minimum
    # With them, a3 and a5 (one session, each the other's neighbour) outrank a2, and the row dropped is
    # still the lowest fused rank.
    _, ranked = render(rt, "ana", "q", lanes=["turns"], turns_k=4, query_vector=query, explain=True)
    by_rank = sorted(ranked["turns"], key=lambda t: t["fused"]["rank"])
    assert [t["action_id"] for t in by_rank] == ["a1", "a3", "a5", "a2"]
    _, cut = render(rt, "ana", "q", lanes=["turns"], turns_k=4, query_vector=query, max_chars=budget)
    assert {t["action_id"] for t in cut["turns"]} == {"a1", "a3", "a5"}


def test_since_and_until_window_turns_and_facts(rt):
    query = mix(*((i, 1.0) for i in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)))
    found = by_lane(
        lanes(
            rt,
            "ana",
            "q",
            lanes=["turns", "facts"],
            turns_k=10,
            query_vector=query,
            since="2024-02-01",
            until="2024-03-01",
        )
    )
    assert sorted(turn_keys(found["turns"])) == ["a2", "a3", "a5", "a6"]  # until covers all of March 1st
    assert sorted(r["turn"] for r in found["facts"]) == ["a2", "a3"]
    found = by_lane(
        lanes(rt, "ana", "q", lanes=["turns"], turns_k=10, query_vector=query, since="2024-03-01T11:00:00Z")
    )
    assert sorted(turn_keys(found["turns"])) == ["a3", "a4", "a7"]


def test_exclude_sessions_hides_their_turns_and_facts(rt):
    query = mix(*((i, 1.0) for i in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)))
    text, recalled = render(
        rt,
        "ana",
        "wedding Lyon",
        lanes=["turns", "facts", "text"],
        turns_k=10,
        query_vector=query,
        exclude_sessions=["ana-s3", "ana-s4"],
    )
    assert sorted(t["action_id"] for t in recalled["turns"]) == ["a1", "a2"]
    assert sorted(f["turn"] for f in recalled["facts"]) == ["a1", "a2"]
    assert not any("ana-s3" in row or "Lyon" in row for row in rows_of(text))


def test_min_score_drops_weak_vector_hits(rt):
    query = mix((1, 0.9), (2, 0.4))
    found = by_lane(lanes(rt, "ana", "q", lanes=["turns"], query_vector=query))["turns"]
    assert turn_keys(found)[:2] == ["a1", "a2"] and len(found) == 7  # zero-score turns still count
    found = by_lane(lanes(rt, "ana", "q", lanes=["turns"], query_vector=query, min_score=0.5))["turns"]
    assert [(r["key"], round(r["score"], 3)) for r in found] == [
        ("a1", round(0.9 / (0.9**2 + 0.4**2) ** 0.5, 3))
    ]


def test_explain_names_the_lanes_ranks_scores_and_paths(rt):
    text, recalled = render(
        rt,
        "ana",
        "Lupa",
        lanes=["turns", "text", "facts"],
        turns_k=1,
        facts_k=1,
        query_vector=mix((2, 1.0), (12, 1.0)),
        explain=True,
    )
    rows = rows_of(text)
    assert rows[0] == (
        'FACT: user -[BOOKED @ 2024-02-10]-> Lupa -- user: "Ana booked a table at Lupa." {facts #1 0.71}'
    )
    # a2 is found by all three turn lanes (each its #1); the other turns share no word with "Lupa" and
    # have a cosine of 0 with the question, so no lane found them and nothing lifts them.
    assert rows[1:] == [
        "TURN [session ana-s2, 2024-02-10T09:00, Ana]: Booked a table at Lupa for Friday dinner. "
        "{#1 0.600: text #1, turns #1, fact_turns #1, session +0.100}"
    ]
    [turn] = recalled["turns"]
    assert [(entry["lane"], entry["rank"]) for entry in turn["lanes"]] == [
        ("text", 1),
        ("turns", 1),
        ("fact_turns", 1),
    ]
    assert turn["lanes"][2]["via"] == "fact user -[BOOKED]-> Lupa @a2"
    assert turn["fused"] == {"rank": 1, "score": pytest.approx(0.6), "lifts": ["session +0.100"]}
    plain, plain_recalled = render(rt, "ana", "Lupa", lanes=["turns"], turns_k=1, query_vector=axis(2))
    assert "{" not in rows_of(plain)[0] and "lanes" not in plain_recalled["turns"][0]


def test_unknown_user_and_user_without_data_are_empty_memories(rt):
    for user in ("nobody", "bob"):
        text, recalled = render(rt, user, "anything?", "2024-01-01", query_vector=axis(1))
        assert rows_of(text) == ["(nothing in memory matched)"]
        assert text.startswith("Memory recall for: anything?\nToday is 2024-01-01.\n")
        assert "Vector lanes are off" not in text
        assert (recalled["turns"], recalled["facts"], recalled["memories"]) == ([], [], [])
        assert lanes(rt, user, "anything?", query_vector=axis(1)) == []


@pytest.mark.parametrize(
    ("args", "config", "message"),
    [
        (("ana", ""), {}, "question must be a non-empty string"),
        (("ana", "   "), {}, "question must be a non-empty string"),
        (("ana", "q", "not a date"), {}, "today must be a date"),
        (("ana", "q", 5), {}, "today must be a date"),
        (("ana", "q"), {"turnsk": 3}, "unknown config key 'turnsk'"),
        (("ana", "q"), {"turns_k": -1}, r"config\['turns_k'\] must be an integer >= 0"),
        (("ana", "q"), {"lanes": ["turns", "nope"]}, r"config\['lanes'\] must be"),
        (("ana", "q"), {"since": "last week"}, r"config\['since'\] must be"),
        (("ana", "q"), {"query_vector": [1.0, 0.0]}, r"config\['query_vector'\] must have 384 numbers"),
        (("ana", "q"), {"query_vector": [0.0] * 384}, r"config\['query_vector'\] must not be all zeros"),
        (
            ("ana", "q"),
            {"embedding_model": "someone/else"},
            "embedding_model: 'someone/else' is not a configured",
        ),
        (("ana", "q"), {"max_chars": -1}, r"config\['max_chars'\] must be an integer >= 0"),
    ],
)
def test_bad_input_is_an_error_naming_the_argument(rt, args, config, message):
    padded = (*args, None)[:3]
    with pytest.raises(QueryError, match=message):
        rt.call("recall.render", *padded, config)


def test_non_string_question_is_rejected_before_the_procedure_runs(rt):
    with pytest.raises(QueryError, match="question"):
        rt.call("recall.render", "ana", 7)
    with pytest.raises(QueryError, match="question"):
        rt.call("recall.lanes", "ana", None)


def test_unconfigured_model_error_lists_the_configured_ones(rt):
    with pytest.raises(QueryError, match=f"configured: '{MODEL}'"):
        lanes(rt, "ana", "q", embedding_model="BAAI/bge-small-en-v1.5x")
