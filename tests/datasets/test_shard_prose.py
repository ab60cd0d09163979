"""The evaluations' embedding shards (`scripts/longmemeval_cache.py`) keep the prose vectors too, so a
resumed or cached run holds what a fresh `recall.embed` wrote, without embedding them again."""

import sys
from pathlib import Path

import numpy as np
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import Runtime
from memgraph_recall.locate import query_modules_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from bench_common import configure_model  # noqa: E402
from longmemeval_cache import ActionVertices, Shard, embed_user  # noqa: E402

CODED = "My query is slow:\n```sql\nSELECT * FROM messages ORDER BY ts DESC\n```\nHow do I speed it up?"


def loaded() -> Runtime:
    g = MemoryGraph()
    session = g.session(g.user("u"), "u-s")
    g.message(session, "plain", "I like green tea", "2024-01-01T10:00:00Z")
    g.message(session, "coded", CODED, "2024-01-01T10:01:00Z")
    runtime = Runtime(query_modules_dir())
    runtime.load_elements(g.elements())
    return runtime


def test_a_shard_keeps_the_prose_vectors_and_puts_them_back(tmp_path):
    model = configure_model()
    runtime = loaded()
    messages, units, _ = embed_user(runtime, "u", model)
    assert (messages, units) == (2, 3)  # two messages' passages and one prose vector
    shard = ActionVertices(runtime).read("u", ["plain", "coded"], model, messages, 1.0)
    assert shard.prose.action_ids == ("coded",) and shard.prose.vectors.shape[0] == 1
    shard.save(tmp_path / "u.npz")
    again = loaded()
    target = ActionVertices(again)
    target.restore(Shard.load(tmp_path / "u.npz"), model)
    written, restored = ActionVertices(runtime).properties("coded"), target.properties("coded")
    for key in ("prose_embedding_model", "prose_digest"):
        assert restored[key] == written[key]
    assert np.allclose(restored["prose_embedding"], written["prose_embedding"], atol=1e-6)
    assert embed_user(again, "u", model)[1] == 0  # nothing left to embed: the prose vector is current


def test_a_shard_saved_before_the_prose_vectors_loads_without_them(tmp_path):
    path = tmp_path / "old.npz"
    np.savez(path, action_ids=np.array(["a"]), counts=np.array([1], dtype=np.int32),
             vectors=np.zeros((1, 4), dtype=np.float32), stats=np.array('{"user_id": "u", "messages": 1, '
                                                                       '"seconds": 0.5}'))
    shard = Shard.load(path)
    assert shard.prose.action_ids == shard.prose.digests == () and shard.prose.vectors.size == 0
    assert shard.action_ids == ("a",) and shard.messages == 1
