"""Degraded mode (model cannot load, or the user has no vectors from it), partly-embedded users,
vectors from another model, and the model registry's rules (configured names only)."""

import json
import math
import os

import pytest
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import QueryError
from recall_kit import MODEL, axis, by_lane, header_of, lanes, render, rows_of, runtime, world

BROKEN = "broken/model"
OFF_NO_VECTORS = (
    f"Vector lanes are off (this user has no vectors from {MODEL} yet; run recall.embed); "
    "these rows were found by word match only."
)


@pytest.fixture(scope="module")
def rt():
    """The default model works; a second configured model points at a folder that does not exist."""
    with pytest.MonkeyPatch.context() as mp:
        models = json.loads(os.environ["RECALL_MODELS"])
        mp.setenv("RECALL_MODELS", json.dumps({**models, BROKEN: "/nonexistent/model/folder"}))
        return runtime(world().elements())


def test_user_without_vectors_gets_text_lane_and_the_facts_of_its_turns(rt):
    text, recalled = render(rt, "cara", "When does my passport expire?")
    assert OFF_NO_VECTORS in header_of(text)
    assert rows_of(text) == [
        'FACT: user -[OWNS @ 2024-05-01]-> passport -- user: "Cara\'s passport expires in October."',
        "TURN [session cara-s1, 2024-05-01T09:00, user]: My passport expires in October, renew it soon.",
        # The next turn of the session, lifted by its neighbour (the budget has room).
        "TURN [session cara-s1, 2024-05-02T09:00, user]: The dentist appointment moved to Thursday.",
    ]
    assert recalled["vector_lanes_off"] is True and "no vectors" in recalled["vector_lanes_off_reason"]
    found = by_lane(lanes(rt, "cara", "When does my passport expire?"))
    assert set(found) == {"text", "turn_facts", "fact_turns", "fused"}
    assert found["turn_facts"][0]["relationship"].type == "OWNS"


def test_model_that_cannot_load_turns_vector_lanes_off_with_the_reason(rt):
    text, recalled = render(rt, "ana", "Lupa dinner", embedding_model=BROKEN)
    [line] = [ln for ln in header_of(text) if ln.startswith("Vector lanes are off")]
    assert line.startswith(
        f"Vector lanes are off (embedding model {BROKEN} could not load: FileNotFoundError"
    )
    assert "/nonexistent/model/folder" in line
    assert (
        rows_of(text)[-1]
        == "TURN [session ana-s2, 2024-02-10T09:00, Ana]: Booked a table at Lupa for Friday dinner."
    )
    assert {r["lane"] for r in lanes(rt, "ana", "Lupa", embedding_model=BROKEN)} <= {
        "text",
        "memories",
        "turn_facts",
        "fact_turns",
        "fused",
    }
    # The default model is unaffected, and the broken one stays broken without being retried.
    assert "Vector lanes are off" not in render(rt, "ana", "Lupa", query_vector=axis(2))[0]
    assert render(rt, "ana", "Lupa dinner", embedding_model=BROKEN)[0] == text


def test_partly_embedded_user_header_counts_the_missing_messages(rt):
    text, recalled = render(rt, "dan", "hut booking for August", query_vector=axis(50))
    assert (
        f"1 of this user's 3 messages have no {MODEL} vectors yet (run recall.embed); those are found "
        "by word match only."
    ) in header_of(text)
    assert recalled["messages_without_vectors"] == 1
    # The message without a vector is still found by its words.
    assert any("Dan booked a hut for August." in row for row in rows_of(text))
    full, _ = render(rt, "ana", "q", query_vector=axis(1))
    assert not any("have no" in line for line in header_of(full))


def test_vectors_of_another_model_or_dimension_are_not_used(rt):
    # eve's vectors: one from another model (right dimension), one with our model's name but 8 numbers.
    text, _ = render(rt, "eve", "cello", query_vector=axis(60))
    assert OFF_NO_VECTORS in header_of(text)
    assert {r["lane"] for r in lanes(rt, "eve", "cello", query_vector=axis(60))} == {"text", "fused"}
    status = rt.call("recall.status", {"user": "eve"})
    counts = {(r["section"], r["name"], r["model"]): r["count"] for r in status}
    assert counts[("with_vectors", "messages", MODEL)] == 0
    assert counts[("without_vectors", "messages", MODEL)] == 2
    assert counts[("other_model", "messages", "other/model")] == 1


def test_status_reports_models_and_their_load_state(rt):
    rows = rt.call("recall.status", {})
    models = {r["name"]: r for r in rows if r["section"] == "model"}
    assert models[MODEL]["count"] == 384 and models[MODEL]["detail"] == "default, loaded"
    assert models[BROKEN]["count"] is None and models[BROKEN]["detail"].startswith(
        "failed: FileNotFoundError"
    )
    assert {"section": "module", "name": "version", "model": None, "count": None, "detail": "0.1.0"} in rows


def test_embed_with_a_model_that_cannot_load_is_an_error_naming_it(rt):
    with pytest.raises(QueryError, match=f"embedding_model '{BROKEN}' could not load"):
        rt.call("recall.embed", {"embedding_model": BROKEN})


def test_unconfigured_model_is_refused_everywhere(rt):
    for call in (
        lambda: lanes(rt, "ana", "q", embedding_model="BAAI/bge-small-en-v1.5"),
        lambda: rt.call("recall.embed", {"embedding_model": "/etc/passwd"}),
        lambda: rt.call("recall.status", {"embedding_model": "x"}),
    ):
        with pytest.raises(QueryError, match="embedding_model: .* is not a configured model; configured: "):
            call()


def test_broken_model_configuration_degrades_instead_of_failing_the_module(monkeypatch):
    monkeypatch.setenv("RECALL_MODELS", "{not json")
    broken = runtime(world().elements())  # the module still loads
    text, _ = render(broken, "ana", "Lupa dinner")
    assert any(
        line.startswith("Vector lanes are off (embedding model") and "RECALL_MODELS is not valid JSON" in line
        for line in header_of(text)
    )
    rows = broken.call("recall.status", {})
    assert any(r["name"] == "configuration" and "RECALL_MODELS" in r["detail"] for r in rows)


def test_malformed_stored_data_is_skipped_and_counted_never_a_crash():
    g = MemoryGraph()
    g.recall_meta()  # set up: `runtime` records the uniqueness constraint on it
    user = g.user("mal")
    s = g.session(user, "mal-s1")
    vec = {"embedding_model": MODEL}
    g.message(
        s, "m1", "Vector full of NaN.", "2024-01-01T00:00:00Z", passage_embeddings=[[math.nan] * 384], **vec
    )
    g.message(
        s, "m2", "Two vectors, one passage.", "2024-01-02T00:00:00Z", passage_embeddings=[axis(1)] * 2, **vec
    )
    g.message(s, "m3", "Ragged vectors.", "2024-01-03T00:00:00Z", passage_embeddings=[axis(1), [1.0]], **vec)
    g.message(s, "m4", None, "2024-01-04T00:00:00Z")
    g.message(s, "m5", "A time nobody can read.", "next tuesday", passage_embeddings=[axis(2)], **vec)
    good = g.message(
        s, "m6", "The one good message.", "2024-01-06T00:00:00Z", passage_embeddings=[axis(3)], **vec
    )
    nameless = g.entity(None, embedding=axis(4), embedding_model=MODEL)
    g.mention(nameless, g.chunk(good, "good chunk"), "m6")
    named = g.entity("Named", embedding=axis(4), embedding_model=MODEL)
    g.mention(named, g.chunk(good, "good chunk"), "m6")
    g.fact(user, "HAS", named, "m6", None, embedding=axis(5), embedding_model=MODEL)
    g.relationship(user, "HAS_MEMORY", g.node(["Memory"], memory_id="x", path="notes/x.md"))
    g.relationship(user, "ADOPTED", g.node(["OntologyVersion"], model="m", pool="{broken"))
    rt = runtime(g.elements())

    vector_hits = by_lane(lanes(rt, "mal", "q", lanes=["turns"], query_vector=axis(3)))["turns"]
    assert [(r["key"], round(r["score"], 3)) for r in vector_hits] == [("m6", 1.0), ("m5", 0.0)]
    _, recalled = render(rt, "mal", "NaN vector, unreadable time", query_vector=axis(3), turns_k=1)
    shown = [t["action_id"] for t in recalled["turns"]]
    assert "m6" in shown and "m1" in shown and "m5" in shown  # m1, m5 by their words only
    assert next(t for t in recalled["turns"] if t["action_id"] == "m5")["timestamp"] is None
    rows = rt.call("recall.status", {"user": "mal"})
    malformed = {r["name"]: r["count"] for r in rows if r["section"] == "malformed"}
    assert malformed == {
        "message: no text": 1,
        "message: unreadable time": 1,
        "messages: vector not finite, not numeric or zero": 1,
        "messages: vector count differs from passages": 1,
        "messages: vectors of mixed length": 1,
        "entity: no text": 1,
        "fact: no text (or an endpoint without text)": 1,
        "memory: no content": 1,
        "ontology: unreadable pool": 1,
    }
    counts = {(r["section"], r["name"]): r["count"] for r in rows if r["model"] in (None, MODEL)}
    assert counts[("with_vectors", "messages")] == 2 and counts[("without_vectors", "messages")] == 3
