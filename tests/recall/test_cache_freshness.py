"""The per-user cache stays fresh and never serves forgotten, edited or foreign rows (embedded runtime)."""

import pytest
from cache_kit import add_message, add_session, ask, counts, vertex_of, world
from memgraph_recall.client import record_action_id_rule
from recall_kit import MODEL, axis, runtime


@pytest.fixture(scope="module")
def shared_rt():
    return runtime()


@pytest.fixture()
def rt(shared_rt):
    """The world, freshly loaded, with an empty cache (a new graph under the same ids needs invalidate)."""
    shared_rt.load_elements(world().elements())
    record_action_id_rule(shared_rt.store)
    shared_rt.call("recall.invalidate")
    return shared_rt


def test_warm_calls_are_served_from_the_cache(rt):
    first = ask(rt, "ana")
    before = counts(rt)
    assert ask(rt, "ana") == first
    after = counts(rt)
    assert after["hits"] == before["hits"] + 1 and after["builds"] == before["builds"]


def test_a_new_session_is_seen_on_the_next_call_by_an_incremental_refresh(rt):
    ask(rt, "ana")
    before = counts(rt)
    session = add_session(rt, "ana", "ana-s3")
    add_message(rt, session, "ana-4", "ana zebra sighting at the zoo", "2024-02-01T10:00:00Z")
    rows = ask(rt, "ana", "zebra")
    assert any("zebra sighting" in row and "session ana-s3" in row for row in rows)
    after = counts(rt)
    assert after["refreshes"] == before["refreshes"] + 1 and after["builds"] == before["builds"]


def test_new_messages_in_an_existing_session_are_seen(rt):
    ask(rt, "ana")
    session = vertex_of(rt, "Session", "session_id", "ana-s1")
    add_message(rt, session, "ana-5", "ana bought a yellow umbrella", "2024-01-01T10:05:00Z")
    rows = ask(rt, "ana", "umbrella")
    assert any("yellow umbrella" in row for row in rows)


def test_an_incremental_refresh_renders_exactly_what_a_full_build_renders(rt):
    ask(rt, "ana")
    before = counts(rt)
    session = add_session(rt, "ana", "ana-s3")  # newer than every held turn: appended, not rebuilt
    add_message(rt, session, "ana-7", "ana late kayak lesson", "2024-02-01T10:00:00Z")
    add_message(
        rt,
        vertex_of(rt, "Session", "session_id", "ana-s2"),
        "ana-6",
        "ana curry again",
        "2024-01-02T11:00:00Z",
    )
    refreshed = ask(rt, "ana")
    after = counts(rt)
    assert after["refreshes"] == before["refreshes"] + 1 and after["builds"] == before["builds"]
    assert after["bytes"] > before["bytes"]  # the byte figure is kept up too
    rt.call("recall.invalidate", "ana")
    assert ask(rt, "ana") == refreshed
    built = counts(rt)["bytes"]
    spare = 64 * len(axis(0)) * 4  # an appended entry's vectors keep room for 64 more rows (float32)
    assert built <= after["bytes"] <= 1.05 * built + spare


def test_a_back_filled_session_is_read_by_a_full_build_that_renders_the_same(rt):
    """A turn older than those held would renumber every index: the cache builds in full instead."""
    ask(rt, "ana")
    before = counts(rt)
    session = add_session(rt, "ana", "ana-s0")
    add_message(rt, session, "ana-0", "ana early kayak lesson", "2023-12-01T10:00:00Z")
    rebuilt = ask(rt, "ana")
    after = counts(rt)
    assert after["builds"] == before["builds"] + 1 and after["refreshes"] == before["refreshes"]
    assert any("early kayak lesson" in row and "session ana-s0" in row for row in rebuilt)
    rt.call("recall.invalidate", "ana")
    assert ask(rt, "ana") == rebuilt


def test_a_deleted_session_never_surfaces_even_from_a_warm_cache(rt):
    assert any("kayak trip" in row for row in ask(rt, "ana"))
    rt.store.delete_vertex(vertex_of(rt, "Session", "session_id", "ana-s1"), detach=True)
    before = counts(rt)
    rows = ask(rt, "ana")
    assert not any("kayak trip" in row or "garden roses" in row or "blue kayak" in row for row in rows)
    assert any("soup recipe" in row for row in rows)
    assert counts(rt)["builds"] == before["builds"] + 1  # a lost edge: the user is read in full
    rt.call("recall.invalidate", "ana")
    assert ask(rt, "ana") == rows  # what a full read gives


def test_a_rebuild_after_a_deleted_session_reads_less_than_a_cold_build(rt, monkeypatch):
    """The walk that finds the removal has read the User's out-edges: the build takes them as read, and
    the turns the old entry held as they were (`turn_reuse`). (The directory's per-call sweep, a fixed
    share of other ids, is paused: it differs call by call.)"""
    import sys

    from memgraph_recall.embedded import ApiCounts

    monkeypatch.setattr(sys.modules["recall_lib.directory"], "SWEEP", 0)

    def counted() -> dict[str, int]:
        found = ApiCounts()
        rt.call("recall.render", "ana", "kayak", None, {"query_vector": axis(1)}, api_counts=found)
        return found.as_dict()

    ask(rt, "ana")
    rt.store.delete_vertex(vertex_of(rt, "Session", "session_id", "ana-s1"), detach=True)
    after_deletion = counted()
    rt.call("recall.invalidate", "ana")
    cold = counted()
    assert all(after_deletion[kind] <= cold[kind] for kind in cold), (after_deletion, cold)
    assert after_deletion["properties"] < cold["properties"]  # the kept message is not read again


def test_a_deleted_message_never_surfaces(rt):
    assert any("garden roses" in row for row in ask(rt, "ana"))
    rt.store.delete_vertex(vertex_of(rt, "Action", "action_id", "ana-2"), detach=True)
    assert not any("garden roses" in row for row in ask(rt, "ana"))


def test_an_edited_memory_note_never_surfaces_in_its_old_form(rt):
    assert any("note about paddles" in row for row in ask(rt, "ana"))
    note = vertex_of(rt, "Memory", "memory_id", "ana-m1")
    rt.store.set_vertex_property(note, "content", "ana note about oars")
    rows = ask(rt, "ana", "paddles oars")
    assert not any("paddles" in row for row in rows)
    assert any("note about oars" in row for row in rows)
    assert counts(rt)["verify_failures"] >= 1


def test_an_edited_message_and_fact_never_surface_in_their_old_form(rt):
    ask(rt, "ana")
    rt.store.set_vertex_property(vertex_of(rt, "Action", "action_id", "ana-3"), "text", "ana stew recipe")
    fact = next(e for e in rt.store.edges.values() if e.type == "OWNED_BY")
    rt.store.set_edge_property(fact.id, "text", "ana sold the blue kayak")
    rows = ask(rt, "ana", "soup stew kayak")
    assert not any("soup recipe" in row or "owns a blue kayak" in row for row in rows)
    assert any("stew recipe" in row for row in rows)
    assert any("sold the blue kayak" in row for row in rows)


def test_a_facts_end_renamed_or_given_a_structural_label_never_surfaces_in_its_old_form(rt):
    """A fact shows its ends' texts: verification reads each end again (its text and labels), not only
    the edge, on the very next call."""
    ask(rt, "ana")
    kayak = vertex_of(rt, "Entity", "text", "blue kayak")
    rt.store.set_vertex_property(kayak, "text", "red canoe")
    rows = ask(rt, "ana", "blue kayak owned")
    assert not any("blue kayak -[" in row for row in rows)
    assert any("red canoe -[OWNED_BY" in row for row in rows)
    rt.store.add_label(rt.store.vertices[kayak], "Session")  # now structural: no fact's end
    assert not any("-[OWNED_BY" in row for row in ask(rt, "ana", "blue kayak owned"))


def test_a_session_taken_over_by_another_user_stops_surfacing(rt):
    """Another user's HAD_SESSION into ana's session (not visible to the change check) makes it no one's."""
    ask(rt, "ana")
    session = vertex_of(rt, "Session", "session_id", "ana-s2")
    rt.store.add_edge(vertex_of(rt, "User", "user_id", "bob"), session, "HAD_SESSION")
    assert not any("soup recipe" in row for row in ask(rt, "ana"))
    assert not any("soup recipe" in row for row in ask(rt, "bob"))


def test_a_recreated_user_vertex_is_found_again(rt):
    ask(rt, "bob")
    old = vertex_of(rt, "User", "user_id", "bob")
    session = vertex_of(rt, "Session", "session_id", "bob-s1")
    rt.store.delete_vertex(old, detach=True)
    new = rt.store.add_vertex(["User"], {"user_id": "bob"})
    rt.store.add_edge(new, session, "HAD_SESSION")
    rows = ask(rt, "bob")
    assert any("chess club" in row for row in rows)


def test_a_duplicated_user_id_is_an_error_naming_user(rt):
    ask(rt, "bob")
    vertex_of(rt, "User", "user_id", "bob")
    rt.store.add_vertex(["User"], {"user_id": "bob"})
    rt.call("recall.invalidate")  # the cached user map is verified on use, not rescanned on a hit
    with pytest.raises(Exception, match="user: 2 :User nodes have user_id 'bob'"):
        ask(rt, "bob")


def test_an_unknown_user_costs_no_scan_and_a_user_created_later_is_found_on_its_next_call(rt):
    assert ask(rt, "cleo") == ["(nothing in memory matched)"]
    scans = counts(rt)["scans"]
    for number in range(20):
        assert ask(rt, f"nobody-{number}") == ["(nothing in memory matched)"]
    assert counts(rt)["scans"] == scans  # no full pass for unknown user_ids, however many
    cleo = rt.store.add_vertex(["User"], {"user_id": "cleo"})
    session = rt.store.add_vertex(["Session"], {"session_id": "cleo-s1"})
    rt.store.add_edge(cleo, session, "HAD_SESSION")
    add_message(rt, session, "cleo-1", "cleo kayak race", "2024-03-01T10:00:00Z")
    assert any("cleo kayak race" in row for row in ask(rt, "cleo"))  # no waiting, no invalidate
    assert counts(rt)["scans"] == scans


def test_facts_about_the_user_appear_at_once_and_between_entities_after_invalidate(rt):
    ask(rt, "ana")
    store = rt.store
    vector = {"embedding": axis(4), "embedding_model": MODEL}
    fact = {"valid_at": "2024-01-02", "role": "user", "confidence": 0.8, **vector}
    canoe = store.add_vertex(["Entity"], {"text": "red canoe", **vector})
    ana = vertex_of(rt, "User", "user_id", "ana")
    store.add_edge(canoe, ana, "OWNED_BY", {"source_id": "ana-3", "text": "ana owns a red canoe", **fact})
    assert any("red canoe" in row for row in ask(rt, "ana"))  # an edge into the User: read at once
    kayak = vertex_of(rt, "Entity", "text", "blue kayak")
    shed = store.add_vertex(["Entity"], {"text": "garden shed", **vector})
    store.add_edge(kayak, shed, "STORED_IN", {"source_id": "ana-1", "text": "kept in a garden shed", **fact})
    assert not any("garden shed" in row for row in ask(rt, "ana"))  # between entities: max age...
    assert rt.call("recall.invalidate", "ana") == [{"dropped": 1}]
    assert any("garden shed" in row for row in ask(rt, "ana"))  # ...or invalidate


def test_invalidate_one_user_all_users_and_bad_input(rt):
    ask(rt, "ana")
    ask(rt, "bob")
    assert counts(rt)["entries"] == 2
    assert rt.call("recall.invalidate", "nobody") == [{"dropped": 0}]
    assert rt.call("recall.invalidate", rt.vertex(vertex_of(rt, "User", "user_id", "bob"))) == [
        {"dropped": 1}
    ]
    assert counts(rt)["entries"] == 1
    ask(rt, "bob")
    scans = counts(rt)["scans"]
    assert rt.call("recall.invalidate") == [{"dropped": 2}]
    assert counts(rt)["entries"] == 0
    ask(rt, "bob")  # the directory stays (any reader may invalidate): no second full pass
    assert counts(rt)["scans"] == scans
    with pytest.raises(Exception, match="user must be a user_id string, a :User node or null, got 7"):
        rt.call("recall.invalidate", 7)
    with pytest.raises(Exception, match="user must be .* got a node with Session"):
        rt.call("recall.invalidate", rt.vertex(vertex_of(rt, "Session", "session_id", "ana-s1")))


def test_status_reports_entries_bytes_and_the_limit(rt):
    ask(rt, "ana")
    rows = {r["name"]: r for r in rt.call("recall.status") if r["section"] == "cache"}
    assert rows["entries"]["count"] == 1
    assert rows["bytes"]["count"] > 1000
    assert "limit 1073741824" in rows["bytes"]["detail"]
    assert rows["max_age"]["count"] == 60
