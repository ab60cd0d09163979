"""`recall.embed` (the catch-up) and `recall.status` (the doctor), with the real packaged MiniLM."""

import json
import math
import time

import numpy as np
import pytest
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import QueryError, QueryTimeoutError
from recall_kit import LONG_TEXT, MODEL, axis, header_of, render, runtime
from recall_lib.passages import split_passages

UNITS = {"messages": 4, "entities": 2, "edges": 3, "memories": 1}


def unembedded(old_model: str | None = None) -> MemoryGraph:
    """Two users without vectors (or, with `old_model`, with vectors from that model)."""
    old = {"embedding_model": old_model} if old_model else {}

    def pe(n):
        return {"passage_embeddings": [axis(i) for i in range(n)], **old} if old_model else {}

    def emb():
        return {"embedding": axis(0), **old} if old_model else {}

    g = MemoryGraph()
    g.recall_meta()  # set up: `runtime` records the uniqueness constraint on it
    pia = g.user("pia")
    s = g.session(pia, "p-s1")
    m1 = g.message(
        s, "m1", "We are flying to Lisbon on June 14th with my sister.", "2024-05-01T10:00:00Z", **pe(1)
    )
    g.message(
        s,
        "m2",
        "Great, enjoy the pastries!",
        "2024-05-01T10:01:00Z",
        action_type="assistant_message",
        **pe(1),
    )
    g.message(s, "m3", LONG_TEXT, "2024-05-02T10:00:00Z", **pe(len(split_passages(LONG_TEXT))))
    lisbon = g.entity("Lisbon", **emb())
    g.mention(lisbon, g.chunk(m1, "flying to Lisbon"), "m1")
    g.fact(
        pia, "TRAVELS_TO", lisbon, "m1", "Pia flies to Lisbon on June 14th.", valid_at="2024-06-14", **emb()
    )
    g.fact(lisbon, "VISITED_BY", pia, "m1", "Lisbon will be visited by Pia.", valid_at="2024-06-14", **emb())
    g.memory(pia, "pm1", "notes/trip.md", "Trip: Lisbon, June 14-21.", "2024-05-01T00:00:00Z", **pe(1))
    quinn = g.user("quinn")
    q = g.session(quinn, "q-s1")
    n1 = g.message(q, "n1", "I play chess every Thursday evening.", "2024-05-03T19:00:00Z", **pe(1))
    g.message(q, "n2", None, "2024-05-03T19:01:00Z")  # a message without text: malformed, skipped
    chess = g.entity("chess", embedding=[math.nan] * 384, embedding_model=MODEL)  # malformed vector
    g.mention(chess, g.chunk(n1, "chess every Thursday"), "n1")
    g.fact(quinn, "PLAYS", chess, "n1", "Quinn plays chess on Thursdays.", valid_at="2024-05-03", **emb())
    return g


def status_counts(rt, **config):
    return {
        (r["section"], r["name"]): r["count"]
        for r in rt.call("recall.status", config)
        if r["model"] in (None, MODEL)
    }


def embed(rt, **config):
    [row] = rt.call("recall.embed", config)
    return row


@pytest.fixture(scope="module")
def encoder():
    """The packaged model loaded here, independently of the module, to check what was embedded."""
    import os

    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(json.loads(os.environ["RECALL_MODELS"])[MODEL], device="cpu")


def encode(encoder, text):
    return encoder.encode([text], normalize_embeddings=True)[0]


@pytest.fixture(scope="module")
def embedded_rt():
    """A runtime whose graph was embedded by looping `recall.embed` with a small limit."""
    rt = runtime(unembedded().elements())
    before = status_counts(rt)
    steps = []
    while True:
        steps.append(embed(rt, limit=3))
        if steps[-1]["remaining"] == 0:
            break
    return rt, before, steps


def test_limit_and_remaining_let_callers_loop(embedded_rt):
    _, before, steps = embedded_rt
    total = sum(UNITS.values())
    assert [(sum(s[k] for k in UNITS), s["remaining"]) for s in steps] == [
        (3, total - 3),
        (3, total - 6),
        (3, total - 9),
        (1, 0),
    ]
    assert {k: sum(s[k] for s in steps) for k in UNITS} == UNITS
    assert all(s["model"] == MODEL for s in steps)
    for kind, count in UNITS.items():
        assert before[("units", kind)] == count and before[("without_vectors", kind)] == count
    assert before[("malformed", "message: no text")] == 1
    assert before[("malformed", "entities: vector not finite, not numeric or zero")] == 1


def test_embed_is_idempotent(embedded_rt):
    rt, _, _ = embedded_rt
    again = embed(rt)
    assert {k: again[k] for k in (*UNITS, "remaining")} == {**dict.fromkeys(UNITS, 0), "remaining": 0}
    after = status_counts(rt)
    for kind, count in UNITS.items():
        assert after[("with_vectors", kind)] == count and after[("without_vectors", kind)] == 0
    assert ("malformed", "entities: vector not finite, not numeric or zero") not in after  # re-embedded


def test_vectors_are_of_the_upstream_shapes(embedded_rt, encoder):
    rt, _, _ = embedded_rt

    def props(label, key, value):
        return rt.store.node(rt.find_vertex(label, key, value).id).properties

    long_message = props("Action", "action_id", "m3")
    passages = split_passages(LONG_TEXT)
    assert long_message["embedding_model"] == MODEL and len(long_message["passage_embeddings"]) == len(
        passages
    )
    for vector, passage in zip(long_message["passage_embeddings"], passages, strict=True):
        assert np.dot(vector, encode(encoder, passage)) > 0.999
    assert np.dot(props("Entity", "text", "Lisbon")["embedding"], encode(encoder, "Lisbon")) > 0.999
    assert (
        np.dot(
            props("Memory", "memory_id", "pm1")["passage_embeddings"][0],
            encode(encoder, "Trip: Lisbon, June 14-21."),
        )
        > 0.999
    )
    facts = {
        e.type: e.properties
        for e in map(rt.store.relationship, list(rt.store.edges))
        if "source_id" in e.properties
    }
    assert (
        np.dot(
            facts["TRAVELS_TO"]["embedding"],
            encode(encoder, "user TRAVELS TO Lisbon. Pia flies to Lisbon on June 14th."),
        )
        > 0.999
    )
    assert (
        np.dot(
            facts["VISITED_BY"]["embedding"],
            encode(encoder, "Lisbon VISITED BY user. Lisbon will be visited by Pia."),
        )
        > 0.999
    )
    assert all(facts[t]["embedding_model"] == MODEL for t in facts)


def test_recall_over_real_embeddings_finds_the_right_turn(embedded_rt):
    rt, _, _ = embedded_rt
    text, recalled = render(rt, "pia", "When do I fly to Lisbon?", "2024-05-10", lanes=["turns"], turns_k=1)
    assert [t["action_id"] for t in recalled["turns"]] == ["m1"]
    assert not any("Vector lanes are off" in line or "have no" in line for line in header_of(text))
    _, recalled = render(rt, "quinn", "Which evening is my chess game?", lanes=["turns"], turns_k=1)
    assert [t["action_id"] for t in recalled["turns"]] == ["n1"]


def test_embed_one_user_only():
    rt = runtime(unembedded().elements())
    row = embed(rt, user="quinn")
    assert {k: row[k] for k in (*UNITS, "remaining")} == {
        "messages": 1,
        "entities": 1,
        "edges": 1,
        "memories": 0,
        "remaining": 0,
    }
    pia = status_counts(rt, user="pia")
    assert pia[("with_vectors", "messages")] == 0 and pia[("without_vectors", "messages")] == 3
    assert embed(rt, user="nobody")["remaining"] == 0


def test_model_change_re_embeds_instead_of_mixing():
    rt = runtime(unembedded(old_model="old/model").elements())
    counts = status_counts(rt)
    assert counts[("with_vectors", "messages")] == 0
    others = {
        (r["name"], r["model"]): r["count"]
        for r in rt.call("recall.status", {})
        if r["section"] == "other_model"
    }
    # every unit but the NaN entity, which claims our model
    assert others == {
        ("messages", "old/model"): 4,
        ("entities", "old/model"): 1,
        ("edges", "old/model"): 3,
        ("memories", "old/model"): 1,
    }
    row = embed(rt)
    assert {k: row[k] for k in UNITS} == UNITS
    node = rt.store.node(rt.find_vertex("Action", "action_id", "m1").id).properties
    assert node["embedding_model"] == MODEL and node["passage_embeddings"][0] != axis(0)


def test_a_failure_or_timeout_while_embedding_leaves_the_graph_unchanged(tmp_path):
    rt = runtime(unembedded().elements())
    rt.save_graph(tmp_path / "before.json")
    registry = rt.modules["recall"].MODELS
    real = registry.embed_documents
    calls = []

    def fail_on_second_batch(texts, name, batch_size=32):
        calls.append(len(texts))
        if len(calls) == 2:
            raise RuntimeError("model crashed")
        return real(texts, name, batch_size)

    registry.embed_documents = fail_on_second_batch
    try:
        with pytest.raises(QueryError, match="model crashed"):
            rt.call("recall.embed", {"batch_size": 2})
    finally:
        registry.embed_documents = real
    rt.save_graph(tmp_path / "after_failure.json")
    assert (tmp_path / "after_failure.json").read_text() == (tmp_path / "before.json").read_text()

    def slow(texts, name, batch_size=32):
        calls.append(len(texts))
        time.sleep(0.05)
        return real(texts, name, batch_size)

    calls.clear()
    registry.embed_documents = slow
    try:  # the deadline passes after a few batches: the module aborts between batches
        with pytest.raises(QueryTimeoutError):
            rt.call("recall.embed", {"batch_size": 1}, timeout=0.2)
    finally:
        registry.embed_documents = real
    assert 1 <= len(calls) < 10
    rt.save_graph(tmp_path / "after_timeout.json")
    assert (tmp_path / "after_timeout.json").read_text() == (tmp_path / "before.json").read_text()


def test_embed_config_is_validated():
    rt = runtime()
    with pytest.raises(QueryError, match=r"config\['batch_size'\] must be an integer from 1 to 64"):
        rt.call("recall.embed", {"batch_size": 65})
    with pytest.raises(QueryError, match=r"config\['limit'\] must be an integer >= 1"):
        rt.call("recall.embed", {"limit": 0})
    with pytest.raises(QueryError, match="unknown config key 'users'"):
        rt.call("recall.embed", {"users": "x"})
