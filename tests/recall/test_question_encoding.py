"""A question is embedded through the model's own modules rather than `encode`, whose per-call set-up
(a device check of every parameter) costs about 1 ms of each call: the vector must still be exactly
the one `encode` gives, from a freshly loaded model's first call on."""

import numpy as np
from recall_kit import MODEL
from recall_lib.models import ModelRegistry, ModelSettings

QUESTIONS = (
    "Where did I go hiking last spring?",
    "Qu'ai-je dit du café naïve à Zürich ?",
    "",
    "why " * 400,  # beyond the model's 256-token window: cut the same way
)


def test_a_question_vector_is_the_one_encode_gives_to_the_bit():
    registry = ModelRegistry(ModelSettings.from_env())
    fresh = [registry.embed_queries([question], MODEL)[0] for question in QUESTIONS]
    model = registry._models[MODEL]
    encoded = model.encode(list(QUESTIONS), batch_size=1, normalize_embeddings=True, convert_to_numpy=True)
    for question, mine, theirs in zip(QUESTIONS, fresh, encoded, strict=True):
        assert mine.dtype == np.float32 and np.array_equal(mine, theirs), question[:40]


def test_one_question_does_not_go_through_encode_and_a_batch_does(monkeypatch):
    registry = ModelRegistry(ModelSettings.from_env())
    registry.embed_queries(["load the model"], MODEL)
    model = registry._models[MODEL]
    batches = []
    original = model.encode

    def counted(texts, **options):
        batches.append(len(texts))
        return original(texts, **options)

    monkeypatch.setattr(model, "encode", counted)
    registry.embed_queries(["where do I live?"], MODEL)
    registry.embed_documents(["I live in Porto.", "I moved to Lisbon."], MODEL)
    assert batches == [2]
