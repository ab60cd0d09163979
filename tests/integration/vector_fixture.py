"""The integration fixture: a graph with stored vectors, so server and embedded answers can be compared
without either side running the model on the data or the question.

It is the bundled sample re-keyed with a `fx-` prefix (users, sessions, actions, notes), so it can sit
beside the sample on one server without sharing an id, with the vectors `recall.embed` itself writes
when its model is a deterministic stand-in: a hashed bag of words (each content word adds ±1 to one
of 384 dimensions chosen by a BLAKE2 hash, then the vector is normalised). The vectors are stored
under the packaged MiniLM's name and dimension, the model the test image is built with, so recall
on either side treats them as current; questions get `hashed_vector(question)` as their
`query_vector`. Similarity then means shared words, the same on any machine and any torch.

Regenerate after a change to what recall embeds (tests/integration/test_vector_fixture.py fails
until then):  python tests/integration/vector_fixture.py
"""

import hashlib
import json
import re
import sys
from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).with_name("fixtures") / "sample_with_vectors.json"
PREFIX = "fx-"
DIMENSION = 384
# Lanes wide enough to return every hit above `min_score` in this small graph, so no list is cut
# inside a run of equal scores; all relation types, so the user_facts lane's choice of types (the
# one place the model scores label texts at query time) does not decide which facts come back.
COMPARE_CONFIG = {"memories_k": 20, "turns_k": 60, "text_k": 60, "entities_k": 60, "edges_per_entity": 20,
                  "facts_k": 60, "fact_turns_k": 60, "user_fact_types": 60, "user_facts_k": 60,
                  "min_score": 0.01}
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the i im my me mine is am are was be to of and or in on at for with it its that "
                  "this we you your do did what when who how".split())
_ID_KEYS = ("user_id", "session_id", "action_id", "memory_id", "source_id")


def hashed_vector(text: str) -> list[float]:
    """The stand-in model: a unit vector of hashed content words (never all zero)."""
    words = _WORD.findall(text.lower())
    words = [w for w in words if w not in _STOP] or words or [text]
    vector = np.zeros(DIMENSION, dtype=np.float64)
    for word in words:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % DIMENSION
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = np.linalg.norm(vector)
    if norm == 0:  # words that cancel out: fall back to the first word alone
        vector[int.from_bytes(hashlib.blake2b(words[0].encode(), digest_size=4).digest(), "little")
               % DIMENSION] = 1.0
        norm = 1.0
    return (vector / norm).astype(np.float32).tolist()


class _StandInModel:
    """What recall's ModelRegistry needs of a SentenceTransformer."""

    def encode(self, texts, **_kwargs) -> np.ndarray:
        return np.asarray([hashed_vector(t) for t in texts], dtype=np.float32)

    def get_embedding_dimension(self) -> int:
        return DIMENSION


def rekeyed(elements: list[dict], prefix: str = PREFIX) -> list[dict]:
    """The elements with every id-like property (and MENTIONED_IN sources) prefixed."""
    out = []
    for element in elements:
        props = dict(element.get("properties") or {})
        for key in _ID_KEYS:
            if isinstance(props.get(key), str):
                props[key] = prefix + props[key]
        if isinstance(props.get("sources"), list):
            props["sources"] = [prefix + s for s in props["sources"]]
        out.append({**element, "properties": props})
    return out


def questions() -> list[tuple[str, str, str, list[float]]]:
    """(fixture user, question, today, query_vector) for each of the sample's demo questions."""
    from memgraph_recall.datasets import sample

    return [(PREFIX + q.user, q.question, q.today.isoformat(), hashed_vector(q.question))
            for q in sample.DEMO_QUESTIONS]


def generate(path: Path = FIXTURE) -> Path:
    """Write the fixture: the re-keyed sample, embedded by recall.embed with the stand-in model."""
    from memgraph_recall.datasets import sample
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import PACKAGED_MODEL, query_modules_dir

    runtime = Runtime(query_modules_dir())
    runtime.load_elements(rekeyed(sample.elements(chatter_sessions=0)))
    recall = runtime.modules["recall"]
    registry_module = sys.modules[type(recall.MODELS).__module__]

    class StandInRegistry(type(recall.MODELS)):
        def _load(self, name: str) -> object:
            return _StandInModel()

    recall.MODELS = StandInRegistry(registry_module.ModelSettings({}, PACKAGED_MODEL, 1))
    [row] = runtime.call("recall.embed", {"limit": 10_000})
    if row["remaining"] != 0 or row["model"] != PACKAGED_MODEL:
        raise RuntimeError(f"recall.embed left the fixture incomplete: {row}")
    path.parent.mkdir(parents=True, exist_ok=True)
    runtime.save_graph(path)
    return path


def elements(path: Path = FIXTURE) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def with_sample(path: Path = FIXTURE) -> list[dict]:
    """The bundled sample (no vectors) and the fixture in one element list, the fixture's ids moved
    past the sample's: the graph the image tests load on both sides."""
    from memgraph_recall.datasets import sample

    first = sample.elements(chatter_sessions=0)  # the hand-written sample the image tests expect
    node_shift = 1 + max(e["id"] for e in first if e["type"] == "node")
    edge_shift = 1 + max((e["id"] for e in first if e["type"] == "relationship"), default=-1)
    moved = []
    for element in elements(path):
        if element["type"] == "node":
            moved.append({**element, "id": element["id"] + node_shift})
        else:
            moved.append({**element, "id": element["id"] + edge_shift, "start": element["start"] + node_shift,
                          "end": element["end"] + node_shift})
    nodes = [e for e in first + moved if e["type"] == "node"]
    return nodes + [e for e in first + moved if e["type"] == "relationship"]


if __name__ == "__main__":
    print(generate(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURE))
