"""`recall.embed` sets upstream's Session embedding markers, so `sessions-graph embed --pending` skips the
sessions recall embedded completely, and never marks a session upstream would still find units in."""

from memgraph_recall.datasets.memory_graph import MemoryGraph
from recall_kit import MODEL, runtime
from recall_lib.session_markers import PASSAGE_SCHEME

MARKERS = ("embedding_status", "embedding_model", "embedding_scheme", "embedding_error")


def pending(rt, model: str = MODEL) -> set[str]:
    """Upstream's `pending_embeddings` query, restated over the store: sessions its sweep would embed."""
    out = set()
    for vertex_id in rt.store.vertices:
        node = rt.store.node(vertex_id)
        if "Session" not in node.labels:
            continue
        p = node.properties
        done = (
            p.get("embedding_status") == "completed"
            and p.get("embedding_model") == model
            and (p.get("embedding_scheme") or "") == "passages-1200"
        )
        if not done:
            out.add(p["session_id"])
    return out


def graph() -> MemoryGraph:
    g = MemoryGraph()
    g.recall_meta()  # set up: `runtime` records the uniqueness constraint on it
    ann, bob = g.user("ann"), g.user("bob")
    s1, s2 = g.session(ann, "ann-s1"), g.session(ann, "ann-s2")
    m1 = g.message(s1, "a1", "I adopted a cat called Mochi.", "2024-01-01T10:00:00Z")
    g.message(s2, "a2", "We went hiking.", "2024-01-02T10:00:00Z")
    mochi = g.entity("Mochi")
    g.mention(mochi, g.chunk(m1, "adopted a cat called Mochi"), "a1")
    g.fact(ann, "HAS_PET", mochi, "a1", "Ann adopted Mochi.")
    b1 = g.session(bob, "bob-s1")
    g.message(b1, "b1", "Bob plays chess.", "2024-01-03T10:00:00Z")
    helper = g.agent(s2, "helper")  # shared by ann's s2 and bob's s1: upstream counts its actions for both
    g.agent(b1, "helper")
    g.message(helper, "h1", "A helper's note.", "2024-01-02T10:05:00Z", session_id="ann-s2")
    return g


def session(rt, session_id: str) -> dict:
    return rt.store.node(rt.find_vertex("Session", "session_id", session_id).id).properties


def test_a_completely_embedded_session_is_marked_as_upstream_reads_it():
    rt = runtime(graph().elements())
    assert pending(rt) == {"ann-s1", "ann-s2", "bob-s1"}
    row = rt.call("recall.embed", {})[0]
    assert row["remaining"] == 0
    assert [session(rt, "ann-s1").get(k) for k in MARKERS] == ["completed", MODEL, PASSAGE_SCHEME, None]
    assert PASSAGE_SCHEME == "passages-1200"
    assert pending(rt) == set()


def test_a_session_is_marked_only_once_every_unit_upstream_counts_has_a_vector():
    rt = runtime(graph().elements())
    # ann alone: the helper Agent is shared with bob, so its action is not ann's and stays unembedded,
    # but upstream counts it as a unit of ann-s2: ann-s2 must stay pending.
    assert rt.call("recall.embed", {"user": "ann"})[0]["remaining"] == 0
    assert pending(rt) == {"ann-s2", "bob-s1"}
    assert session(rt, "ann-s1")["embedding_status"] == "completed"
    # Step by step with a limit: nothing is marked before the session's last unit has its vector.
    rt = runtime(graph().elements())
    first = rt.call("recall.embed", {"limit": 1})[0]
    assert first["messages"] == 1 and pending(rt) == {"ann-s1", "ann-s2", "bob-s1"}
    while rt.call("recall.embed", {"limit": 1})[0]["remaining"]:
        pass
    assert pending(rt) == set()
