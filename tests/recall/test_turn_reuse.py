"""A build after a removal takes the turns the old entry held (`turn_reuse`): it must hold exactly what a
cold build of the same graph holds, vectors to the bit, malformed counts included."""

import sys

import numpy as np
from cache_kit import add_session, ask, counts, vertex_of
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import ApiCounts
from recall_kit import MODEL, axis, runtime
from recall_lib.passages import PASSAGE_CHARS
from recall_lib.prose import prose_digest, prose_text

CODED = "the fix for the kayak booking:\n```py\nbook(kayak, seats=2)\n```\nit works now"


def history() -> MemoryGraph:
    """ana: three sessions of messages with vectors, a long message of several passages, one without a
    vector, one with an unreadable time (counted malformed), one of another model's vectors; in sessions
    s0 and s2 a message holding code, with a prose vector made from its prose (s0) or from another text
    (s2: stale)."""
    g = MemoryGraph()
    g.recall_meta()
    ana = g.user("ana")
    for number in range(3):
        session = g.session(ana, f"s{number}")
        for i in range(4):
            vector = [0.3 * i + 0.1 * number + 0.05 * k for k in range(len(axis(0)))]
            g.message(session, f"s{number}-m{i}", f"message {i} of session {number} about kayaks",
                      f"2024-01-0{number + 1}T10:0{i}:00Z", passage_embeddings=[vector],
                      embedding_model=MODEL)
        if number != 1:
            made_from = prose_text(CODED) if number == 0 else "an older text"
            g.message(session, f"s{number}-code", CODED, f"2024-01-0{number + 1}T11:00:00Z",
                      passage_embeddings=[axis(5)], embedding_model=MODEL, prose_embedding=axis(6 + number),
                      prose_embedding_model=MODEL, prose_digest=prose_digest(made_from))
    odd = g.session(ana, "odd")
    long_text = " ".join(f"sentence {i} about the lake." for i in range(PASSAGE_CHARS // 10))
    passages = 1 + len(long_text) // PASSAGE_CHARS
    g.message(odd, "long", long_text, "2024-02-01T10:00:00Z",
              passage_embeddings=[axis(k % 4 + 1) for k in range(passages)], embedding_model=MODEL)
    g.message(odd, "bare", "no vector here", "2024-02-01T10:01:00Z")
    g.message(odd, "late", "an unreadable time", "sometime", passage_embeddings=[axis(2)],
              embedding_model=MODEL)
    g.message(odd, "other", "another model's vector", "2024-02-01T10:03:00Z",
              passage_embeddings=[axis(3)], embedding_model="other-model")
    return g


def snapshot_of(rt):
    (entry,) = rt.modules["recall"].CACHE._entries.values()
    return entry.snapshot


def properties_read(rt) -> int:
    found = ApiCounts()
    rt.call("recall.render", "ana", "kayaks lake", None, {"query_vector": axis(1)}, api_counts=found)
    return found.as_dict()["properties"]


def test_the_build_after_a_deleted_session_holds_what_a_cold_build_holds(monkeypatch):
    rt = runtime(history().elements())
    monkeypatch.setattr(sys.modules["recall_lib.directory"], "SWEEP", 0)  # same reads call by call
    rt.modules["recall"].CACHE.clock = lambda: 1000.0  # no time passes: the rolling check reads nothing
    ask(rt, "ana")
    before = snapshot_of(rt)
    assert len(before.turns) == 18 and before.malformed  # the unreadable time and the other model
    rt.store.delete_vertex(vertex_of(rt, "Session", "session_id", "s1"), detach=True)
    builds = counts(rt)["builds"]
    rebuild_reads = properties_read(rt)
    rows = ask(rt, "ana")
    assert counts(rt)["builds"] == builds + 1
    reused = snapshot_of(rt)
    rt.call("recall.invalidate", "ana")
    cold_reads = properties_read(rt)
    assert ask(rt, "ana") == rows
    cold = snapshot_of(rt)
    # the 9 kept messages read cleanly (time, vector) and without code are taken as held: 6 properties
    # each, not read; the two holding code are read again, with their prose vectors
    assert cold_reads - rebuild_reads == 9 * 6, (rebuild_reads, cold_reads)
    assert len(reused.turns) == 14 and reused.turns == cold.turns
    assert np.array_equal(reused.turn_vectors.matrix, cold.turn_vectors.matrix)
    assert reused.turn_vectors.owner.tolist() == cold.turn_vectors.owner.tolist()
    assert reused.turn_vectors.passage.tolist() == cold.turn_vectors.passage.tolist()
    assert reused.malformed == cold.malformed and reused.skipped == cold.skipped
    assert reused.turns_without_vectors == cold.turns_without_vectors
    assert reused.awaiting.turn.tolist() == cold.awaiting.turn.tolist()
    assert reused.turn_by_action == cold.turn_by_action
    assert len(cold.prose_vectors) == 1  # s0's; s2's was made from another text
    assert np.array_equal(reused.prose_vectors.matrix, cold.prose_vectors.matrix)
    assert reused.prose_vectors.owner.tolist() == cold.prose_vectors.owner.tolist()


def test_an_edited_kept_message_is_read_again_when_verification_finds_it():
    rt = runtime(history().elements())
    ask(rt, "ana")
    rt.store.set_vertex_property(vertex_of(rt, "Action", "action_id", "s0-m1"), "text", "edited canoe words")
    rt.store.delete_vertex(vertex_of(rt, "Session", "session_id", "s2"), detach=True)
    rows = ask(rt, "ana", "canoe kayaks")
    assert any("edited canoe words" in row for row in rows)
    assert not any("message 1 of session 0" in row for row in rows)


def test_a_kept_message_moved_to_another_user_in_the_same_change_is_not_taken():
    rt = runtime(history().elements())
    ask(rt, "ana")
    store = rt.store
    moved = vertex_of(rt, "Action", "action_id", "s0-m2")
    (edge,) = [e for e in store.get_vertex(moved).in_edges if e.type == "HAS_ACTION"]
    store.delete_edge(edge.id)
    store.add_vertex(["User"], {"user_id": "eve"})
    store.add_edge(add_session(rt, "eve", "eve-s"), moved, "HAS_ACTION")
    rows = ask(rt, "ana", "message 2 of session 0 kayaks")
    assert rows and not any("message 2 of session 0" in row for row in rows)
    assert any("message 2 of session 0" in row for row in ask(rt, "eve", "message 2 of session 0 kayaks"))
