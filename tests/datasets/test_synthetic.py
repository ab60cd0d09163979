"""The synthetic scale generator: deterministic, sized as asked, in the ownership shape recall reads."""

from collections import defaultdict

import numpy as np
import pytest
from memgraph_recall.datasets.synthetic import (
    DIMENSION,
    SyntheticSpec,
    _split_passages,
    build,
    new_session,
    questions,
)


@pytest.fixture(scope="module")
def small():
    return build(SyntheticSpec(messages=400, seed=7))


def index(elements):
    nodes = {e["id"]: e for e in elements if e["type"] == "node"}
    rels = [e for e in elements if e["type"] == "relationship"]
    out = defaultdict(list)
    for rel in rels:
        out[rel["start"]].append(rel)
    return nodes, rels, out


def owned_actions(nodes, out, user_id):
    user = next(i for i, n in nodes.items() if n["properties"].get("user_id") == user_id)
    sessions = [r["end"] for r in out[user] if r["label"] == "HAD_SESSION"]
    return sessions, [nodes[r["end"]] for s in sessions for r in out[s] if r["label"] == "HAS_ACTION"]


def test_deterministic_from_seed(small):
    again = build(SyntheticSpec(messages=400, seed=7))
    assert again.elements == small.elements
    assert np.array_equal(again.user_passages, small.user_passages)
    other = build(SyntheticSpec(messages=400, seed=8))
    assert other.elements != small.elements
    assert new_session(small, 1) == new_session(again, 1) != new_session(small, 2)


def test_sizes_as_asked(small):
    nodes, _, out = index(small.elements)
    target = small.counts[small.user_id]
    sessions, actions = owned_actions(nodes, out, small.user_id)
    assert target.messages == len(actions) == 400 == len(small.user_texts)
    sizes = [sum(1 for r in out[s] if r["label"] == "HAS_ACTION") for s in sessions]
    assert all(20 <= n <= 50 for n in sizes[:-1]) and 1 <= sizes[-1] <= 50
    others = sum(small.counts[u].messages for u in small.other_user_ids)
    assert others >= target.messages and len(small.other_user_ids) == 3
    assert target.entities == 20 and target.facts == 40 and target.memories == 1
    lengths = np.array([len(t) for t in small.user_texts])
    assert 80 < lengths.mean() < 400 and lengths.max() > 1200  # chat-sized, a few multi-passage answers
    assert len(set(small.questions)) == len(small.questions) >= 20
    assert questions(7) == small.questions


def test_vectors_line_up_with_passages(small):
    nodes, _, out = index(small.elements)
    split = _split_passages()
    _, actions = owned_actions(nodes, out, small.user_id)
    stored = []
    for action in actions:
        props = action["properties"]
        assert props["embedding_model"] == small.spec.model
        assert len(props["passage_embeddings"]) == len(split(props["text"]))
        stored.extend(props["passage_embeddings"])
    matrix = np.array(stored, dtype=np.float32)
    assert matrix.shape == (small.counts[small.user_id].passages, DIMENSION)
    assert np.allclose(matrix, small.user_passages)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    target = small.counts[small.user_id]
    notes = [n["properties"] for n in nodes.values()
             if n["properties"].get("memory_id", "").startswith(f"{small.user_id}:")]
    items = target.entities + target.facts + sum(len(n["passage_embeddings"]) for n in notes)
    assert small.user_item_vectors.shape == (items, DIMENSION)


def test_facts_and_entities_are_owned_by_their_user(small):
    nodes, rels, out = index(small.elements)
    owner = {}
    for user_id in [small.user_id, *small.other_user_ids]:
        for action in owned_actions(nodes, out, user_id)[1]:
            owner[action["properties"]["action_id"]] = user_id
    facts = [r for r in rels if "source_id" in r["properties"]]
    assert len(facts) == sum(c.facts for c in small.counts.values())
    for fact in facts:
        props = fact["properties"]
        user = owner[props["source_id"]]
        assert len(props["embedding"]) == DIMENSION and props["text"]
        mentions = [r for r in out[fact["start"]] if r["label"] == "MENTIONED_IN"]
        head_sources = {s for r in mentions for s in r["properties"]["sources"]}
        assert props["source_id"] in head_sources
        assert {owner[s] for s in head_sources} == {user}


def test_new_session_follows_the_last(small):
    messages = new_session(small, 1, size=12)
    assert len(messages) == 12 and len({m.action_id for m in messages}) == 12
    assert min(m.timestamp for m in messages) > small.last_time.isoformat()
    split = _split_passages()
    assert all(len(m.passage_embeddings) == len(split(m.text)) for m in messages)


def test_bad_spec_rejected():
    with pytest.raises(ValueError, match="messages"):
        SyntheticSpec(messages=0)
    with pytest.raises(ValueError, match="others_factor"):
        SyntheticSpec(messages=10, others_factor=0.5)
