"""Vectors written after a user was cached are picked up on the next call without a rebuild; an edited
message shows its new text on the next call even while other readers keep renewing the same user;
`recall.status` counts what ownership turned away, by reason."""

import sys
import threading

from cache_kit import ask, counts, vertex_of, world
from memgraph_recall.datasets.memory_graph import MemoryGraph
from recall_kit import MODEL, axis, runtime


def vector_hits(rt, user="ana", query=1):
    rows = rt.call("recall.lanes", user, "anything", {"lanes": ["turns"], "query_vector": axis(query)})
    return [r["key"] for r in rows if r["lane"] == "turns"]


def test_vectors_written_later_are_picked_up_on_the_next_call_without_a_rebuild():
    rt = runtime(world().elements())
    action = vertex_of(rt, "Action", "action_id", "ana-2")
    rt.store.set_vertex_property(action, "passage_embeddings", None)
    rt.store.set_vertex_property(action, "embedding_model", None)
    assert "ana-2" not in vector_hits(rt)
    before = counts(rt)
    # Written straight into the store (no recall.embed, no invalidate): as an ingest client would.
    rt.store.set_vertex_property(action, "passage_embeddings", [axis(1)])
    rt.store.set_vertex_property(action, "embedding_model", MODEL)
    assert "ana-2" in vector_hits(rt)
    after = counts(rt)
    assert after["pickups"] == before["pickups"] + 1 and after["builds"] == before["builds"]
    vector_hits(rt)
    assert counts(rt)["hits"] == after["hits"] + 1  # nothing awaited any more: a plain warm call


def test_recall_embed_no_longer_drops_the_cache_and_its_vectors_still_appear():
    g = MemoryGraph()
    g.recall_meta()
    session = g.session(g.user("eva"), "eva-s")
    g.message(session, "e1", "eva plays the cello on sundays", "2024-01-01T10:00:00Z")
    rt = runtime(g.elements())
    text = rt.call("recall.render", "eva", "cello", None, {})[0]["text"]
    assert "Vector lanes are off" in text
    rt.call("recall.embed", {})
    builds = counts(rt)["builds"]
    text = rt.call("recall.render", "eva", "what instrument?", None, {})[0]["text"]
    assert "Vector lanes are off" not in text and "cello" in text
    assert counts(rt)["builds"] == builds and counts(rt)["pickups"] == 1


def test_many_awaited_vectors_are_picked_up_a_bounded_number_per_call(monkeypatch):
    g = MemoryGraph()
    g.recall_meta()
    session = g.session(g.user("max"), "max-s")
    for i in range(30):
        g.message(session, f"m{i}", f"message {i}", f"2024-01-01T10:{i:02d}:00Z")
    rt = runtime(g.elements())
    monkeypatch.setattr(sys.modules["recall_lib.cache"], "PICKUP_LIMIT", 10)
    vector_hits(rt, "max")
    for i in range(30):
        vertex = vertex_of(rt, "Action", "action_id", f"m{i}")
        rt.store.set_vertex_property(vertex, "passage_embeddings", [axis(1)])
        rt.store.set_vertex_property(vertex, "embedding_model", MODEL)
    seen = [len(vector_hits(rt, "max")) for _ in range(3)]
    assert seen == [8, 8, 8]  # the lane's width: vectors arrived on the first call already...
    snapshot = next(iter(rt.modules["recall"].CACHE._entries.values())).snapshot
    assert len(snapshot.turn_vectors) == 30 and counts(rt)["pickups"] == 3  # ...10 per call


def test_an_edited_message_shows_its_new_text_on_the_next_call_despite_concurrent_renewals(monkeypatch):
    monkeypatch.setenv("RECALL_CACHE_MAX_AGE", "0")  # every call renews: kept turns race the edit
    rt = runtime(world().elements())
    action = vertex_of(rt, "Action", "action_id", "ana-1")
    stop = threading.Event()
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            while not stop.is_set():
                ask(rt, "ana", "kayak lake")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        for i in range(15):
            text = f"ana kayak trip to the lake, version {i}"
            rt.store.set_vertex_property(action, "text", text)
            rows = ask(rt, "ana", "kayak lake")
            assert any(text in row for row in rows), (i, rows)
            assert not any(f"version {i - 1}" in row for row in rows)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert not errors, errors[0]


def test_status_counts_ownership_skips_by_reason_for_one_user_and_for_all():
    g = MemoryGraph()
    g.recall_meta()  # set up, but two Actions hold "dup": setup cannot create the constraint
    ann, bob = g.user("ann"), g.user("bob")
    mine, theirs = g.session(ann, "ann-s"), g.session(bob, "bob-s")
    shared = g.message(mine, "a1", "in two users' sessions", "2024-01-01T10:00:00Z")
    g.relationship(theirs, "HAS_ACTION", shared)
    g.message(mine, "dup", "ann's dup", "2024-01-01T10:01:00Z")
    g.message(theirs, "dup", "bob's dup", "2024-01-01T10:02:00Z")
    both = g.session(ann, "both")
    g.relationship(bob, "HAD_SESSION", both)
    helper = g.agent(mine, "helper")
    g.relationship(theirs, "HAS_AGENT", helper)
    rt = runtime(g.elements())
    ann_rows = {
        r["name"]: r for r in rt.call("recall.status", {"user": "ann"}) if r["section"] == "ownership"
    }
    assert {name: row["count"] for name, row in ann_rows.items()} == {
        "action_under_another_users_session": 1,
        "session_with_another_parent": 1,
        "agent_shared_with_another_user": 1,
    }  # ann's "dup" stays hers (a turn is hers by structure); what it costs is in the database section
    database = {r["name"]: r for r in rt.call("recall.status", {"user": "ann"}) if r["section"] == "database"}
    assert database["collision_rule"]["count"] == 0
    assert "no fact or entity can be told" in database["collision_rule"]["detail"]
    everyone = {r["name"]: r["count"] for r in rt.call("recall.status", {}) if r["section"] == "ownership"}
    assert everyone["session_with_another_parent"] == 2
