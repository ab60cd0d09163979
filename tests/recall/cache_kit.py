"""Helpers for the cache tests: a small two-user world, live writes through the store API, cache counters."""

from typing import Any

from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import Runtime
from recall_kit import MODEL, axis, render, rows_of

WIDE = {"turns_k": 50, "text_k": 50, "facts_k": 50, "entities_k": 50, "memories_k": 20, "fact_turns_k": 50}


def world(tag: str = "", token: str | None = None) -> MemoryGraph:
    """ana (two sessions, a fact, an entity, a note) and bob (one session); texts carry `tag`. The
    database has a RecallMeta (`token`, else a random one), so the cache keeps its entries.

    Vectors: ana's messages along axis 1, bob's along axis 2, notes along axis 3, entities/facts axis 4.
    """
    g = MemoryGraph()
    g.recall_meta(token)
    ana, bob = g.user("ana"), g.user("bob")
    vec = {"passage_embeddings": [axis(1)], "embedding_model": MODEL}
    s1 = g.session(ana, "ana-s1")
    a1 = g.message(s1, "ana-1", f"ana kayak trip to the lake{tag}", "2024-01-01T10:00:00Z", **vec)
    g.message(s1, "ana-2", f"ana garden roses need water{tag}", "2024-01-01T10:01:00Z", **vec)
    s2 = g.session(ana, "ana-s2")
    g.message(s2, "ana-3", f"ana soup recipe with curry{tag}", "2024-01-02T10:00:00Z", **vec)
    kayak = g.entity(f"blue kayak{tag}", embedding=axis(4), embedding_model=MODEL)
    g.mention(kayak, g.chunk(a1, "kayak chunk"), "ana-1")
    g.fact(
        kayak,
        "OWNED_BY",
        ana,
        "ana-1",
        f"ana owns a blue kayak{tag}",
        valid_at="2024-01-01",
        role="user",
        confidence=0.9,
        embedding=axis(4),
        embedding_model=MODEL,
    )
    g.memory(
        ana,
        "ana-m1",
        "notes/ana.md",
        f"ana note about paddles{tag}",
        passage_embeddings=[axis(3)],
        embedding_model=MODEL,
    )
    b1 = g.session(bob, "bob-s1")
    g.message(
        b1,
        "bob-1",
        f"bob chess club on friday{tag}",
        "2024-01-03T10:00:00Z",
        passage_embeddings=[axis(2)],
        embedding_model=MODEL,
    )
    return g


def ask(
    rt: Runtime, user: Any, question: str = "kayak garden soup chess paddles", **config: Any
) -> list[str]:
    """The rendered rows for a question that reaches every lane of the world above."""
    text, _ = render(rt, user, question, query_vector=_everything(), **{**WIDE, **config})
    return rows_of(text)


def _everything() -> list[float]:
    """A query vector with cosine > 0 to axes 1-4 (every vector in the world)."""
    v = [0.0] * len(axis(0))
    for i in (1, 2, 3, 4):
        v[i] = 0.5
    return v


def counts(rt: Runtime) -> dict[str, int]:
    """The cache counters `recall.status` reports."""
    return {r["name"]: r["count"] for r in rt.call("recall.status") if r["section"] == "cache"}


def vertex_of(rt: Runtime, label: str, key: str, value: str) -> int:
    (found,) = rt.store.find_vertices(label, key, value)
    return found


def add_session(rt: Runtime, user_id: str, session_id: str) -> int:
    store = rt.store
    session = store.add_vertex(["Session"], {"session_id": session_id})
    store.add_edge(vertex_of(rt, "User", "user_id", user_id), session, "HAD_SESSION")
    return session


def add_message(
    rt: Runtime, parent: int, action_id: str, text: str, timestamp: str, vector_axis: int = 1
) -> int:
    store = rt.store
    action = store.add_vertex(
        ["Action"],
        {
            "action_id": action_id,
            "action_type": "user_message",
            "text": text,
            "timestamp": timestamp,
            "passage_embeddings": [axis(vector_axis)],
            "embedding_model": MODEL,
        },
    )
    store.add_edge(parent, action, "HAS_ACTION")
    return action
