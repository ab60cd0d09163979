"""A message holding fenced code is scored by its prose vector (`recall_lib.prose`): `recall.embed`
writes it, a cached user picks it up, a stale one (the text edited since) is neither used nor current."""

import numpy as np
from cache_kit import counts, vertex_of
from memgraph_recall.datasets.memory_graph import MemoryGraph
from recall_kit import MODEL, axis, runtime
from recall_lib.prose import prose_digest, prose_text

CODED = (
    "My chat query takes 350ms to return the latest messages.\n"
    "```js\nconst q = db.messages.find({roomId}).sort({ts: -1}).limit(50)\n```\n"
    "How do I make it faster?"
)


def coded_world():
    """cy: one message with code (its passage vector along axis 5, as an upstream that embeds the
    whole text would write it) and one without (axis 6)."""
    g = MemoryGraph()
    g.recall_meta()
    session = g.session(g.user("cy"), "cy-s")
    g.message(session, "c1", CODED, "2024-01-01T10:00:00Z",
              passage_embeddings=[axis(5)], embedding_model=MODEL)
    g.message(session, "c2", "I like green tea in the morning", "2024-01-01T10:01:00Z",
              passage_embeddings=[axis(6)], embedding_model=MODEL)
    return g


def turn_scores(rt, query, **settings):
    config = {"lanes": ["turns"], "query_vector": [float(x) for x in query], **settings}
    rows = rt.call("recall.lanes", "cy", "anything", config)
    return {r["key"]: r["score"] for r in rows if r["lane"] == "turns"}


def test_recall_embed_writes_the_prose_vector_and_the_turns_lane_scores_the_message_by_it():
    rt = runtime(coded_world().elements())
    done = rt.call("recall.embed", {"user": "cy", "embedding_model": MODEL})[0]
    assert (done["messages"], done["prose"], done["remaining"]) == (0, 1, 0)  # passages were current
    props = rt.store.node(vertex_of(rt, "Action", "action_id", "c1")).properties
    assert props["prose_embedding_model"] == MODEL
    assert props["prose_digest"] == prose_digest(prose_text(CODED))
    prose = np.asarray(props["prose_embedding"])
    assert "prose_embedding" not in rt.store.node(vertex_of(rt, "Action", "action_id", "c2")).properties
    scores = turn_scores(rt, prose / np.linalg.norm(prose))
    assert scores["c1"] > 0.99  # its prose vector, not its passage's (axis 5)
    assert turn_scores(rt, axis(5))["c1"] < 0.5
    assert turn_scores(rt, axis(5), prose_vectors=False)["c1"] > 0.99  # switched off: its passage again
    assert rt.call("recall.embed", {"user": "cy", "embedding_model": MODEL})[0]["prose"] == 0  # current
    units = {(r["section"], r["name"]): r["count"] for r in rt.call("recall.status", {"user": "cy"})
             if r["section"] in ("units", "with_vectors")}
    assert units[("units", "prose")] == 1 and units[("with_vectors", "prose")] == 1


def test_a_prose_vector_written_later_is_picked_up_and_a_stale_one_is_never_used():
    rt = runtime(coded_world().elements())
    action = vertex_of(rt, "Action", "action_id", "c1")
    assert turn_scores(rt, axis(7)).get("c1", 0.0) < 0.5  # scored by its passage (axis 5)
    before = counts(rt)
    # A vector made from another text (a digest that is not its prose's): not used, still awaited.
    rt.store.set_vertex_property(action, "prose_embedding", axis(7))
    rt.store.set_vertex_property(action, "prose_embedding_model", MODEL)
    rt.store.set_vertex_property(action, "prose_digest", prose_digest("an older text"))
    assert turn_scores(rt, axis(7)).get("c1", 0.0) < 0.5
    # Its own digest: picked up on the next call, without a rebuild.
    rt.store.set_vertex_property(action, "prose_digest", prose_digest(prose_text(CODED)))
    assert turn_scores(rt, axis(7))["c1"] > 0.99
    after = counts(rt)
    assert after["builds"] == before["builds"] and after["pickups"] >= before["pickups"] + 1
    # The text edited: the stored prose vector is stale, so a fresh build scores the passages again.
    rt.store.set_vertex_property(action, "text", CODED.replace("350ms", "900ms"))
    assert turn_scores(rt, axis(7)).get("c1", 0.0) < 0.5


def test_the_text_lane_searches_a_code_bearing_message_by_its_prose_not_its_code():
    rt = runtime(coded_world().elements())
    config = {"lanes": ["text"]}
    prose_words = rt.call("recall.lanes", "cy", "latest messages faster", config)
    assert "c1" in [r["key"] for r in prose_words if r["lane"] == "text"]
    code_words = rt.call("recall.lanes", "cy", "roomId sort limit", config)
    assert "c1" not in [r["key"] for r in code_words if r["lane"] == "text"]
