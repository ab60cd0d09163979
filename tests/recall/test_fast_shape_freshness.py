"""Exact freshness in both call forms (issue #20): the bare user_id walks every holder, the fast call
shape passes each holder's (degree, id sum) and recall reads only the holders that differ.

Every change below is made straight in the store between two calls, as another client's write would.
"""

import pytest
from cache_kit import WIDE, add_message, add_session, counts, vertex_of, world
from memgraph_recall.embedded.prelude import fast_shape
from recall_kit import MODEL, axis, rows_of, runtime

QUESTION = "kayak garden soup chess paddles tent"
EVERYTHING = [0.0] * len(axis(0))
for _axis in (1, 2, 3, 4):
    EVERYTHING[_axis] = 0.5
CONFIG = {**WIDE, "query_vector": EVERYTHING}
FORMS = ("string", "fast")


def ask(rt, form: str, user: str = "ana", shape: dict | None = None) -> str:
    """The rendered rows for `user`: by user_id, or in the fast shape (its prelude, or `shape` as given)."""
    if form == "string":
        rows = rt.call("recall.render", user, QUESTION, None, CONFIG)
    else:
        rows = rt.call("recall.render", prelude=lambda store: (shape or fast_shape(store, user), QUESTION,
                                                                None, CONFIG))
    return "\n".join(rows_of(rows[0]["text"]))


@pytest.fixture
def rt():
    runtime_ = runtime(world().elements())
    from memgraph_recall.client import setup_store

    setup_store(runtime_.store)
    return runtime_


@pytest.mark.parametrize("form", FORMS)
def test_a_message_added_to_any_session_or_agent_is_seen_on_the_next_call(rt, form):
    assert "tent" not in ask(rt, form)
    session = vertex_of(rt, "Session", "session_id", "ana-s1")
    add_message(rt, session, "ana-9", "ana packed the tent", "2024-02-01T10:00:00Z")
    assert "ana packed the tent" in ask(rt, form)
    agent = rt.store.add_vertex(["Agent"], {"name": "helper"})
    rt.store.add_edge(session, agent, "HAS_AGENT")
    add_message(rt, agent, "ana-10", "the agent noted the tent size", "2024-02-02T10:00:00Z")
    assert "the agent noted the tent size" in ask(rt, form)
    new = add_session(rt, "ana", "ana-s9")
    add_message(rt, new, "ana-11", "a new session about the tent pegs", "2024-02-03T10:00:00Z")
    assert "tent pegs" in ask(rt, form)
    assert counts(rt)["builds"] == 1  # all of it read incrementally


@pytest.mark.parametrize("form", FORMS)
def test_an_edge_removed_and_another_added_in_one_session_between_two_calls_is_seen(rt, form):
    ask(rt, form)
    session = vertex_of(rt, "Session", "session_id", "ana-s1")
    gone = vertex_of(rt, "Action", "action_id", "ana-2")
    before = fast_shape(rt.store, "ana")
    rt.store.delete_vertex(gone, detach=True)  # the degree drops by one...
    add_message(rt, session, "ana-9", "ana packed the tent", "2024-02-01T10:00:00Z")  # ...and is back
    after = fast_shape(rt.store, "ana")
    at = after["holders"].index(session)
    assert before["degrees"][at] == after["degrees"][at] and before["id_sums"][at] != after["id_sums"][at]
    rows = ask(rt, form)
    assert "ana packed the tent" in rows and "roses need water" not in rows


@pytest.mark.parametrize("form", FORMS)
def test_a_deleted_or_edited_turn_fact_note_or_entity_is_never_shown(rt, form):
    rows = ask(rt, form)
    assert "kayak trip" in rows and "owns a blue kayak" in rows and "note about paddles" in rows
    store = rt.store
    store.set_vertex_property(vertex_of(rt, "Action", "action_id", "ana-1"), "text", "ana canoe trip (edit)")
    store.set_vertex_property(vertex_of(rt, "Memory", "memory_id", "ana-m1"), "content", "a rewritten note")
    rows = ask(rt, form)  # properties: no signature moves; every shown row is read back before it is shown
    assert "kayak trip" not in rows and "canoe trip (edit)" in rows
    assert "note about paddles" not in rows and "a rewritten note" in rows
    (fact,) = [e for e in store.get_vertex(vertex_of(rt, "User", "user_id", "ana")).in_edges
               if e.type == "OWNED_BY"]
    store.delete_edge(fact.id)
    assert "owns a blue kayak" not in ask(rt, form)
    store.delete_vertex(vertex_of(rt, "Entity", "text", "blue kayak"), detach=True)
    assert "blue kayak" not in ask(rt, form)


def test_a_stale_or_forged_signature_gets_at_worst_its_own_stale_answer(rt):
    ask(rt, "fast")
    stale = fast_shape(rt.store, "ana")  # what a caller read before the write below
    session = vertex_of(rt, "Session", "session_id", "ana-s2")
    add_message(rt, session, "ana-9", "ana packed the tent", "2024-02-01T10:00:00Z")
    # The stale signature says nothing changed: this call may answer from the cache as it stands...
    assert "packed the tent" not in ask(rt, "fast", shape=stale)
    # ...but keeps nothing of the caller's: the next honest call sees the write.
    assert "packed the tent" in ask(rt, "fast")
    # Forged values (every holder claims a change it does not have) only make recall read them.
    forged = fast_shape(rt.store, "ana")
    forged["degrees"] = [d + 1 for d in forged["degrees"]]
    forged["holders"] = [*forged["holders"], 10**9]  # an unknown holder id is ignored
    forged["degrees"].append(1)
    forged["id_sums"].append(1)
    assert "packed the tent" in ask(rt, "fast", shape=forged)
    rt.store.set_vertex_property(vertex_of(rt, "Action", "action_id", "ana-9"), "text", "ana lost the tent")
    assert "packed the tent" not in ask(rt, "fast", shape=stale)  # stale: still never an edited row
    assert "lost the tent" in ask(rt, "fast")
    # A signature list of another user's holders changes nothing for ana either.
    bob = fast_shape(rt.store, "bob")
    assert "lost the tent" in ask(rt, "fast", shape={**stale, "holders": bob["holders"],
                                                     "degrees": bob["degrees"], "id_sums": bob["id_sums"]})


def test_the_one_case_the_signature_cannot_see_is_bounded_by_the_maximum_age(monkeypatch):
    """Two edges whose ids were taken before recall's read commit after it, while as many edges of the
    same id total are removed: degree and id sum are unchanged. The bare form, which compares edge ids,
    sees it at once; the fast shape at the cache's maximum age (README: "What every call sees")."""
    monkeypatch.setenv("RECALL_CACHE_MAX_AGE", "3600")
    rt = runtime(world().elements())
    cache = rt.modules["recall"].CACHE
    now = [1000.0]
    cache.clock = lambda: now[0]
    store = rt.store
    session = vertex_of(rt, "Session", "session_id", "ana-s1")
    tag = store.add_vertex(["Tag"], {"name": "outdoors"})
    base = store.next_edge_id + 100
    for edge_id in (base, base + 3):  # two edges recall will read
        store.add_edge(session, tag, "TAGGED", id=edge_id)
    # Two messages whose edges take ids base + 1 and base + 2 in a write still open at recall's read
    # (the embedded store cannot hide an uncommitted edge: they are created, with those ids, after it).
    message = {"action_type": "user_message", "timestamp": "2024-02-01T10:00:00Z",
               "passage_embeddings": [axis(1)], "embedding_model": MODEL}
    late = [store.add_vertex(["Action"], {"action_id": f"late-{i}", "text": f"late message {i}", **message})
            for i in range(2)]
    ask(rt, "fast")  # recall reads the session
    for edge_id in (base, base + 3):  # another write removes the two tags...
        store.delete_edge(edge_id)
    for offset, action in zip((1, 2), late, strict=True):  # ...and the open write commits
        store.add_edge(session, action, "HAS_ACTION", id=base + offset)
    assert "late message" not in ask(rt, "fast")  # unseen by the signature...
    now[0] += 3601
    assert "late message" in ask(rt, "fast")  # ...until the maximum age re-reads every holder
    rt.call("recall.invalidate")
    assert "late message" in ask(rt, "string")


def test_a_vertex_property_or_an_edge_elsewhere_changes_no_signature_and_costs_no_walk(rt):
    ask(rt, "fast")
    builds, hits = counts(rt)["builds"], counts(rt)["hits"]
    rt.store.set_vertex_property(vertex_of(rt, "User", "user_id", "ana"), "last_seen", "today")
    rt.store.add_edge(vertex_of(rt, "Entity", "text", "blue kayak"),
                      rt.store.add_vertex(["Entity"], {"text": "paddle", "embedding": axis(4),
                                                       "embedding_model": MODEL}), "RELATED_TO")
    ask(rt, "fast")
    assert counts(rt)["builds"] == builds and counts(rt)["hits"] == hits + 1


def test_duplicate_user_ids_are_refused_in_the_fast_shape_as_in_the_string_form(rt):
    rt.store.add_vertex(["User"], {"user_id": "bob"})
    for form in FORMS:
        with pytest.raises(Exception, match="user: 2 :User nodes have user_id 'bob'"):
            ask(rt, form, user="bob")


@pytest.mark.parametrize("form", FORMS)
def test_an_edited_or_deleted_fact_between_two_entities_is_never_shown(form):
    """The fact is read back through its tail's in-edges (an entity's mention edges all leave it): an
    edit or a deletion of a fact whose ends are both entities is caught there."""
    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets.memory_graph import MemoryGraph

    g = MemoryGraph()
    ana = g.user("ana")
    a1 = g.message(g.session(ana, "ana-s1"), "ana-1", "ana kayak trip to the lake", "2024-01-01T10:00:00Z",
                   passage_embeddings=[axis(1)], embedding_model=MODEL)
    kayak, lake = (g.entity(t, embedding=axis(4), embedding_model=MODEL) for t in ("blue kayak", "lake"))
    for entity in (kayak, lake):
        g.mention(entity, g.chunk(a1, "kayak chunk"), "ana-1")
    g.fact(kayak, "PADDLED_ON", lake, "ana-1", "the blue kayak went out on the lake", valid_at="2024-01-01",
           role="user", confidence=0.9, embedding=axis(4), embedding_model=MODEL)
    rt = runtime(g.elements())
    setup_store(rt.store)
    assert "went out on the lake" in ask(rt, form)
    (fact,) = [e for e in rt.store.get_vertex(vertex_of(rt, "Entity", "text", "lake")).in_edges
               if e.type == "PADDLED_ON"]
    rt.store.set_edge_property(fact.id, "text", "the blue kayak stayed ashore")
    rows = ask(rt, form)
    assert "went out on the lake" not in rows and "stayed ashore" in rows
    rt.store.delete_edge(fact.id)
    assert "stayed ashore" not in ask(rt, form)
