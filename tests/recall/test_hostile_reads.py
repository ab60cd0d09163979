"""Reads a hostile caller controls: the question and the config are bounded by server-side ceilings, the
header cannot be blown up by a long question, and `max_chars` work is linear and abortable."""

import time

import numpy as np
import pytest
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.datasets.synthetic import SyntheticSpec, build
from memgraph_recall.embedded import QueryError, QueryTimeoutError
from recall_kit import header_of, render, runtime, world


@pytest.fixture(scope="module")
def rt():
    return runtime(world().elements())


@pytest.fixture(scope="module")
def synthetic():
    return build(SyntheticSpec(messages=3000, other_users=1, seed=3))


def test_the_longest_question_is_accepted_and_echoed_shortened_one_more_character_is_refused(rt):
    question = "where " * 666 + "abcd"  # 4000 characters
    assert len(question) == 4000
    text, recalled = render(rt, "ana", question, max_chars=2000)
    [echo] = [line for line in header_of(text) if line.startswith("Memory recall for: ")]
    assert len(echo) < 340 and echo.endswith("…") and len(text) <= 2000
    assert recalled["question"] == question
    with pytest.raises(QueryError, match="question is 4001 characters, above this server's ceiling of 4000"):
        render(rt, "ana", question + "x")


def test_huge_widths_are_refused_naming_key_value_and_ceiling(rt):
    for key in ("turns_k", "text_k", "fact_turns_k", "turns_budget", "user_facts_k"):
        with pytest.raises(
            QueryError, match=rf"config\['{key}'\] is 1000000000, above this server's ceiling"
        ):
            render(rt, "ana", "q", **{key: 10**9})


def test_query_vector_beyond_float32_is_refused_by_name(rt):
    with pytest.raises(QueryError, match=r"config\['query_vector'\] must be .* got 1e\+39 at position 0"):
        render(rt, "ana", "q", query_vector=[1e39] * 384)


def test_the_largest_accepted_config_with_a_tiny_budget_is_fast(synthetic):
    # Every width and budget at its ceiling, the deepest fusion, and a max_chars that drops hundreds of
    # rows: the fit is linear in the rows (it was quadratic: 7 s at 10k messages with huge widths).
    rt = runtime(synthetic.elements)
    widths = dict.fromkeys(
        ("memories_k", "turns_k", "text_k", "entities_k", "facts_k", "fact_turns_k", "user_facts_k"), 200
    )
    config = {**widths, "turns_budget": 200, "fusion_depth": 1000, "turn_chars": 20_000, "max_chars": 3000}
    vector = np.ones(384) / np.sqrt(384)
    render(rt, synthetic.user_id, "warm the cache", query_vector=vector.tolist())
    start = time.perf_counter()
    text, recalled = render(
        rt, synthetic.user_id, synthetic.questions[0], query_vector=vector.tolist(), **config
    )
    assert time.perf_counter() - start < 2.0
    assert len(text) <= 3000 and recalled["rows_left_out"] > 100


def test_an_operator_raised_ceiling_still_ends_at_the_transaction_timeout(synthetic, monkeypatch):
    # With the ceilings raised by the operator, one call asks for every turn through every lane and a
    # max_chars that drops nearly all of them. A cold call (the user's data read first) with a short
    # timeout ends promptly: the build, lanes and render loops all check for abort.
    monkeypatch.setenv("RECALL_MAX_ROWS", str(10**7))
    monkeypatch.setenv("RECALL_MAX_FUSION_DEPTH", str(10**7))
    rt = runtime(synthetic.elements)
    vector = (np.ones(384) / np.sqrt(384)).tolist()
    huge = dict.fromkeys(("turns_k", "text_k", "fact_turns_k", "facts_k", "fusion_depth"), 10**6)
    config = {**huge, "max_chars": 3000, "query_vector": vector, "explain": True}
    rt.call("recall.status", {"user": "nobody"})  # loads the model: what is timed is the call's own work
    rt.call("recall.invalidate")
    start = time.perf_counter()
    render(rt, synthetic.user_id, synthetic.questions[0], **config)
    whole = time.perf_counter() - start  # a cold call with no timeout
    for timeout in (0.05, whole / 3):
        rt.call("recall.invalidate")
        start = time.perf_counter()
        with pytest.raises(QueryTimeoutError):
            rt.call("recall.render", synthetic.user_id, synthetic.questions[0], None, config, timeout=timeout)
        assert time.perf_counter() - start < timeout + 0.5
    start = time.perf_counter()
    text, recalled = render(rt, synthetic.user_id, synthetic.questions[0], **config)
    assert time.perf_counter() - start < 5 and recalled["rows_left_out"] > 1000
    plain, _ = render(rt, synthetic.user_id, synthetic.questions[0], **{**config, "explain": False})
    assert len(plain) <= 3000  # explain's annotations come on top of max_chars; the rows are the same
    rows = text.split("\nRows:\n")[1].splitlines()
    assert [line.rsplit(" {", 1)[0] for line in rows] == plain.split("\nRows:\n")[1].splitlines()


def test_malformed_ontology_pools_are_skipped_and_counted_never_fatal():
    g = MemoryGraph()
    user = g.user("zoe")
    g.message(g.session(user, "z"), "z1", "hello there", "2024-01-01T00:00:00Z")
    for pool in ("[" * 5000 + "]" * 5000, '{"relation_types": 3}', " " * 1_000_001, "{broken"):
        g.relationship(user, "ADOPTED", g.node(["OntologyVersion"], model="m", pool=pool))
    good = '{"relation_types": [{"label": "LIKES", "description": "what the person enjoys"}, 7]}'
    g.relationship(user, "ADOPTED", g.node(["OntologyVersion"], model="m", pool=good))
    rt = runtime(g.elements())
    for _ in range(2):  # before and after a rebuild
        text, _ = render(rt, "zoe", "hello")
        assert "hello there" in text
        rt.call("recall.invalidate")
    rows = rt.call("recall.status", {"user": "zoe"})
    assert {r["name"]: r["count"] for r in rows if r["section"] == "malformed"} == {
        "ontology: unreadable pool": 4
    }
