"""numpy vectors given to the shared builder are written as plain JSON lists."""

import json

import numpy as np
from memgraph_recall.datasets.memory_graph import MemoryGraph


def test_numpy_vectors_become_plain_lists():
    graph = MemoryGraph()
    user = graph.user("u")
    session = graph.session(user, "s")
    rows = np.array([[0.5, 0.25], [1.0, 0.0]], dtype=np.float32)
    graph.message(session, "a", "One. Two.", "2024-01-01T00:00:00", passage_embeddings=rows,
                  embedding_model="m")
    graph.entity("e", embedding=np.array([0.1, 0.2], dtype=np.float32))
    graph.entity("f", embedding=(0.3, 0.4))
    nodes = [e for e in graph.elements() if e["type"] == "node"]
    assert nodes[2]["properties"]["passage_embeddings"] == [[0.5, 0.25], [1.0, 0.0]]
    assert all(type(x) is float for row in nodes[2]["properties"]["passage_embeddings"] for x in row)
    assert nodes[3]["properties"]["embedding"] == [np.float32(0.1).item(), np.float32(0.2).item()]
    assert nodes[4]["properties"]["embedding"] == [0.3, 0.4]
    json.dumps(graph.elements())
