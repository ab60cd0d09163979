"""The cache's maximum age and byte limit (`RECALL_CACHE_MAX_AGE`, `RECALL_CACHE_BYTES`)."""

import time

import pytest
from cache_kit import ask, counts, vertex_of, world
from memgraph_recall.embedded import ConstraintViolation
from recall_kit import MODEL, axis, runtime
from recall_lib.cache import DEFAULT_BYTES, DEFAULT_MAX_AGE, CacheSettings


def test_facts_added_later_appear_after_the_maximum_age(monkeypatch):
    monkeypatch.setenv("RECALL_CACHE_MAX_AGE", "0.3")
    rt = runtime(world().elements())
    assert counts(rt)["max_age"] == 0
    ask(rt, "ana")
    entity = rt.store.add_vertex(
        ["Entity"], {"text": "red canoe", "embedding": axis(4), "embedding_model": MODEL}
    )
    rt.store.add_edge(  # between two entities: no holder of the user's structure sees it
        vertex_of(rt, "Entity", "text", "blue kayak"),
        entity,
        "TOWS",
        {
            "source_id": "ana-3",
            "text": "the kayak tows a red canoe",
            "embedding": axis(4),
            "embedding_model": MODEL,
        },
    )
    assert not any("red canoe" in row for row in ask(rt, "ana"))  # within the maximum age
    time.sleep(0.35)
    before = counts(rt)
    renewed = ask(rt, "ana")
    assert any("red canoe" in row for row in renewed)
    after = counts(rt)  # renewed: ownership, facts and entities read again, turns kept
    assert after["renewals"] == before["renewals"] + 1 and after["builds"] == before["builds"]
    rt.call("recall.invalidate", "ana")
    assert ask(rt, "ana") == renewed  # what a full read gives


def test_a_turn_embedded_later_gets_its_vector_at_the_maximum_age(monkeypatch):
    monkeypatch.setenv("RECALL_CACHE_MAX_AGE", "0.3")
    rt = runtime(world().elements())
    action = vertex_of(rt, "Action", "action_id", "ana-2")
    rt.store.set_vertex_property(action, "passage_embeddings", None)
    rt.store.set_vertex_property(action, "embedding_model", None)
    before = [
        r["key"]
        for r in rt.call("recall.lanes", "ana", "roses", {"query_vector": axis(1)})
        if r["lane"] == "turns"
    ]
    assert "ana-2" not in before
    rt.store.set_vertex_property(action, "passage_embeddings", [axis(1)])  # embedded by someone else
    rt.store.set_vertex_property(action, "embedding_model", MODEL)
    time.sleep(0.35)
    after = [
        r["key"]
        for r in rt.call("recall.lanes", "ana", "roses", {"query_vector": axis(1)})
        if r["lane"] == "turns"
    ]
    assert "ana-2" in after


def test_an_action_id_taken_later_by_another_user_is_refused_by_the_constraint_setup_records():
    """bob's new Action with ana's id "ana-3", and a fact on ana's kayak read from it, written in one
    transaction as an ingest writes them: Memgraph refuses the whole write under the constraint, so the
    id keeps naming ana's Action and nothing of bob's can be attributed through it."""
    rt = runtime(world().elements())
    assert any("owns a blue kayak" in row for row in ask(rt, "ana"))
    session = vertex_of(rt, "Session", "session_id", "bob-s1")
    kayak = next(v.id for v in rt.store.vertices.values() if v.props.get("text") == "blue kayak")
    with pytest.raises(ConstraintViolation), rt.store.transaction():
        action = rt.store.create_vertex(["Action"], {"action_id": "ana-3", "text": "bob x"})
        rt.store.create_edge(rt.store.get_vertex(session), action, "HAS_ACTION")
        rt.store.create_edge(
            rt.store.get_vertex(kayak), rt.store.get_vertex(session), "SECRET", {"source_id": "ana-3"}
        )
    rt.call("recall.invalidate", "ana")
    rows = ask(rt, "ana")
    assert any("soup recipe" in row for row in rows) and not any("bob x" in row for row in rows)


def entry_bytes(user: str) -> int:
    rt = runtime(world().elements())
    ask(rt, user)
    return counts(rt)["bytes"]


def test_the_byte_limit_evicts_the_least_recently_used_entry(monkeypatch):
    ana, bob = entry_bytes("ana"), entry_bytes("bob")
    monkeypatch.setenv("RECALL_CACHE_BYTES", str(ana + bob - 1))  # room for either, not both
    rt = runtime(world().elements())
    first = ask(rt, "ana")
    ask(rt, "bob")
    assert counts(rt)["entries"] == 1 and counts(rt)["evictions"] == 1 and counts(rt)["bytes"] == bob
    assert ask(rt, "ana") == first  # rebuilt, same rows
    assert counts(rt)["evictions"] == 2 and counts(rt)["bytes"] == ana


def test_a_snapshot_larger_than_the_limit_is_used_but_not_kept(monkeypatch):
    monkeypatch.setenv("RECALL_CACHE_BYTES", "0")
    rt = runtime(world().elements())
    rows = ask(rt, "ana")
    assert any("kayak trip" in row for row in rows)
    assert counts(rt)["entries"] == 0 and counts(rt)["bytes"] == 0
    assert ask(rt, "ana") == rows


def test_settings_from_the_environment():
    assert CacheSettings.from_env({}) == CacheSettings(DEFAULT_BYTES, DEFAULT_MAX_AGE)
    assert CacheSettings.from_env(
        {"RECALL_CACHE_BYTES": "2048", "RECALL_CACHE_MAX_AGE": "1.5"}
    ) == CacheSettings(2048, 1.5)
    bad = CacheSettings.from_env({"RECALL_CACHE_BYTES": "lots", "RECALL_CACHE_MAX_AGE": "-1"})
    assert (bad.max_bytes, bad.max_age) == (DEFAULT_BYTES, DEFAULT_MAX_AGE)
    assert "RECALL_CACHE_BYTES must be an integer >= 0, got 'lots'" in bad.problem
    assert "RECALL_CACHE_MAX_AGE must be a number >= 0, got '-1'" in bad.problem
    assert "RECALL_CACHE_MAX_AGE" in CacheSettings.from_env({"RECALL_CACHE_MAX_AGE": "nan"}).problem


def test_a_configuration_problem_is_reported_by_status(monkeypatch):
    monkeypatch.setenv("RECALL_CACHE_BYTES", "-5")
    rt = runtime()
    rows = {r["name"]: r for r in rt.call("recall.status") if r["section"] == "cache"}
    assert "RECALL_CACHE_BYTES must be an integer >= 0, got '-5'" in rows["configuration"]["detail"]


@pytest.mark.parametrize("raw", ["inf", "1e400"])
def test_an_infinite_maximum_age_is_refused(raw):
    assert CacheSettings.from_env({"RECALL_CACHE_MAX_AGE": raw}).problem


def test_no_call_after_the_first_reads_the_whole_graph_whatever_the_time():
    """The directory is built once per database; later calls, the rolling check's reading of every unit
    at the maximum age included, read only what changed (`recall_lib.directory`)."""
    rt = runtime(world().elements())
    cache = rt.modules["recall"].CACHE
    now = [1000.0]
    cache.clock = lambda: now[0]
    ask(rt, "ana")  # the database's first call: one full pass
    assert counts(rt)["scans"] == 1
    for _ in range(3):
        now[0] += 70  # past the 60 s maximum age
        ask(rt, "bob")
        ask(rt, "ana")
        ask(rt, "nobody")
    units = sum(len(entry.rota) for entry in cache._entries.values())
    assert counts(rt)["scans"] == 1 and counts(rt)["checked"] >= 2 * units  # bob is built in the first round
