"""The cache never swaps rows between runtimes, graphs loaded in turn, users or concurrent callers."""

import threading

import pytest
from cache_kit import add_message, add_session, ask, counts, vertex_of, world
from memgraph_recall.client import record_action_id_rule
from memgraph_recall.datasets.memory_graph import MemoryGraph
from recall_kit import MODEL, axis, runtime


@pytest.fixture(scope="module")
def two():
    """Two runtimes holding the same shape (same ids, same user_ids) with different words."""
    return runtime(world(" alpha").elements()), runtime(world(" beta").elements())


def test_two_runtimes_never_swap_rows(two):
    alpha, beta = two
    for _ in range(2):  # cold, then warm
        for rt, own, other in ((alpha, "alpha", "beta"), (beta, "beta", "alpha")):
            rows = ask(rt, "ana")
            assert rows and all(own in row for row in rows if row.startswith(("TURN", "FACT", "MEMORY")))
            assert not any(other in row for row in rows)


def test_a_graph_replaced_under_the_same_token_never_serves_the_old_rows():
    """Same ids, user_ids and RecallMeta token, other text (a restore without recall.invalidate)."""
    rt = runtime(world(" alpha", token="same").elements())
    before = ask(rt, "ana")
    assert any("alpha" in row for row in before)
    rt.load_elements(world(" beta", token="same").elements())
    record_action_id_rule(rt.store)  # the restore's RecallMeta says what the first one said
    after = ask(rt, "ana")
    assert not any("alpha" in row for row in after)
    assert counts(rt)["verify_failures"] >= 1  # found stale by verification, rebuilt
    assert after == ask(runtime(world(" beta").elements()), "ana")  # and then complete


def test_graphs_loaded_in_turn_with_their_own_tokens_are_separate_databases():
    rt = runtime(world(" alpha").elements())
    ask(rt, "ana")
    rt.load_elements(world(" beta").elements())  # same ids and user_ids, another database
    after = ask(rt, "ana")
    assert not any("alpha" in row for row in after) and any("beta" in row for row in after)
    assert counts(rt)["verify_failures"] == 0 and counts(rt)["builds"] == 2


def test_an_edited_user_property_keeps_the_entry():
    """The key is (database, vertex id, user_id, model): a User's other properties change nothing recall
    reads, so an application that rewrites one on every turn pays no rebuild."""
    rt = runtime(world(" alpha").elements())
    ask(rt, "ana")
    rt.store.set_vertex_property(vertex_of(rt, "User", "user_id", "ana"), "name", "Ana")
    before = counts(rt)
    ask(rt, "ana")
    after = counts(rt)
    assert after["builds"] == before["builds"] and after["hits"] == before["hits"] + 1


def test_concurrent_callers_and_a_writer_never_see_a_foreign_row():
    rt = runtime(world().elements())
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader(user: str, other: str) -> None:
        try:
            for _ in range(12):
                rows = ask(rt, user, "kayak garden soup chess paddles zebra")
                assert not any(f"{other} " in row for row in rows), rows
                assert any(f"{user} " in row for row in rows)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    def writer() -> None:
        try:
            for i in range(8):
                for user in ("ana", "bob"):
                    session = add_session(rt, user, f"{user}-new{i}")
                    add_message(
                        rt,
                        session,
                        f"{user}-new{i}",
                        f"{user} zebra note {i}",
                        f"2024-03-{i + 1:02d}T10:00:00Z",
                    )
            stop.set()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=pair) for pair in [("ana", "bob"), ("bob", "ana")] * 2]
    threads.append(threading.Thread(target=writer))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors[0]
    assert stop.is_set()
    rows = ask(rt, "ana", "zebra")
    assert sum("ana zebra note" in row for row in rows) == 8  # every session written is seen
    assert not any("bob" in row for row in rows)


def agent_world() -> MemoryGraph:
    """ana's sessions share one Agent (as SDK adapters do); bob has his own session."""
    g = MemoryGraph()
    g.recall_meta()
    ana, bob = g.user("ana"), g.user("bob")
    vec = {"passage_embeddings": [axis(1)], "embedding_model": MODEL}
    for n in (1, 2):
        session = g.session(ana, f"ana-s{n}")
        g.message(session, f"ana-{n}", f"ana question {n} about kayak", f"2024-01-0{n}T10:00:00Z", **vec)
        helper = g.agent(session, "helper")
    g.message(
        helper,
        "agent-1",
        "helper answer about the garden",
        "2024-01-02T10:01:00Z",
        session_id="ana-s2",
        **vec,
    )
    g.message(g.session(bob, "bob-s1"), "bob-1", "bob chess club", "2024-01-03T10:00:00Z", **vec)
    return g


def test_an_agent_shared_by_the_users_sessions_refreshes_incrementally_and_stops_when_shared():
    rt = runtime(agent_world().elements())
    assert any("helper answer" in row for row in ask(rt, "ana"))
    helper = vertex_of(rt, "Agent", "name", "helper")
    session = add_session(rt, "ana", "ana-s3")
    rt.store.add_edge(session, helper, "HAS_AGENT")
    add_message(rt, helper, "agent-2", "helper tip about the soup", "2024-01-04T10:00:00Z")
    before = counts(rt)
    rows = ask(rt, "ana")
    assert any("helper tip about the soup" in row for row in rows)
    after = counts(rt)
    assert after["refreshes"] == before["refreshes"] + 1 and after["builds"] == before["builds"]
    # bob's session links the Agent: its actions are no one's now, for ana and for bob
    rt.store.add_edge(vertex_of(rt, "Session", "session_id", "bob-s1"), helper, "HAS_AGENT")
    for user in ("ana", "bob"):
        assert not any("helper" in row for row in ask(rt, user))
