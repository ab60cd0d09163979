"""`recall.embed` with faulty models and hostile texts: every batch is checked before anything is written,
and a text no tokenizer accepts is skipped and counted, never blocking others."""

import json

import numpy as np
import pytest
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import QueryError
from recall_kit import MODEL, runtime
from recall_lib.models import ModelRegistry, ModelSettings

FAKE = "fake/model"
BAD = "lone surrogate \ud800 here"


class FakeModel:
    """A stand-in for a SentenceTransformer: deterministic unit vectors, with an injected fault.

    Like real tokenizers, it refuses a batch holding a string that is not valid Unicode.
    """

    def __init__(self, dim: int = 384, fault: str | None = None, reports: int | None = None) -> None:
        self.dim, self.fault, self.reports, self.batches = dim, fault, reports, 0

    def get_embedding_dimension(self) -> int:
        return self.reports or self.dim

    def encode(self, texts, **_):
        self.batches += 1
        for text in texts:
            text.encode("utf-8")  # raises for a lone surrogate, as the tokenizer does
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            rows[i, hash(text) % self.dim] = 1.0
        if self.fault == "short" and self.batches == 2:
            return rows[:-1]
        return rows


def with_fake(rt, model: FakeModel):
    """Swap the module's model registry for one whose only extra model is `model`, already loaded."""
    registry = ModelRegistry(ModelSettings({FAKE: "unused"}, MODEL, 1))
    registry._models[FAKE], registry._dims[FAKE] = model, model.get_embedding_dimension()
    rt.modules["recall"].MODELS = registry
    return rt


def messages(count: int, user: str = "ann", bad: int = 0) -> MemoryGraph:
    g = MemoryGraph()
    session = g.session(g.user(user), f"{user}-s")
    for i in range(bad):
        g.message(
            session, f"{user}-bad{i}", f"{BAD} {i}", f"2024-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:00Z"
        )
    for i in range(count):
        minute = f"{i // 60:02d}:{i % 60:02d}"
        g.message(session, f"{user}-m{i}", f"message number {i}", f"2024-02-01T{minute}:00Z")
    return g


def graph_state(rt) -> str:
    nodes = [rt.store.node(vertex_id) for vertex_id in sorted(rt.store.vertices)]
    return json.dumps([(n.id, sorted(n.labels), n.properties) for n in nodes], sort_keys=True, default=repr)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (FakeModel(fault="short"), r"an array of shape \(31, 384\), expected 32 vectors for batch 2"),
        (FakeModel(dim=128, reports=384), "vectors of dimension 128, expected the model's 384"),
    ],
)
def test_a_batch_that_does_not_match_its_texts_fails_the_call_and_writes_nothing(model, message):
    rt = with_fake(runtime(messages(100).elements()), model)
    before = graph_state(rt)
    with pytest.raises(
        QueryError, match=f"embedding model '{FAKE}' returned {message}.*recall.embed wrote nothing"
    ):
        rt.call("recall.embed", {"embedding_model": FAKE, "batch_size": 32})
    assert graph_state(rt) == before
    [row] = [
        r
        for r in rt.call("recall.status", {"embedding_model": FAKE})
        if r["section"] == "with_vectors" and r["name"] == "messages"
    ]
    assert row["count"] == 0


def test_unencodable_texts_are_skipped_counted_and_never_stall_progress():
    g = messages(30, "ann", bad=2000)
    bob = g.session(g.user("bob"), "bob-s")
    g.message(bob, "bob-m0", "bob's only message", "2024-03-01T00:00:00Z")
    rt = with_fake(runtime(g.elements()), FakeModel())
    first = rt.call("recall.embed", {"embedding_model": FAKE, "limit": 20})[0]
    # The 2000 bad texts come first in the graph, yet the first call already embeds good ones.
    assert first["messages"] == 20 and first["remaining"] == 11
    second = rt.call("recall.embed", {"embedding_model": FAKE, "limit": 20})[0]
    assert second["messages"] == 11 and second["remaining"] == 0
    status = rt.call("recall.status", {"embedding_model": FAKE})
    counts = {(r["section"], r["name"]): r["count"] for r in status if r["model"] == FAKE}
    assert counts[("unembeddable", "messages")] == 2000
    assert counts[("with_vectors", "messages")] == 31 and counts[("without_vectors", "messages")] == 0
    bob_row = rt.store.node(rt.find_vertex("Action", "action_id", "bob-m0").id)
    assert bob_row.properties["embedding_model"] == FAKE


def test_a_question_that_is_not_valid_unicode_is_refused_by_name():
    rt = runtime(messages(3).elements())
    with pytest.raises(QueryError, match="question must be valid Unicode text"):
        rt.call("recall.render", "ann", BAD, None, {})
