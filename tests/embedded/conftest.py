"""Runtimes over the test module folders, with a small memory-shaped graph."""

from pathlib import Path

import pytest
from memgraph_recall.embedded import Runtime

HERE = Path(__file__).parent
GOOD = HERE / "modules_good"
BAD = HERE / "modules_bad"
MISBEHAVING = HERE / "modules_misbehaving"


def seed(runtime: Runtime) -> dict[str, int]:
    """alice -SENT-> two messages, bob -SENT-> one; ids returned by name."""
    store = runtime.store
    ids = {
        "alice": store.add_vertex(["User"], {"name": "alice", "vector": [0.5, 0.25]}),
        "bob": store.add_vertex(["User"], {"name": "bob"}),
    }
    for name, user, text in (("m1", "alice", "hello"), ("m2", "alice", "again"), ("m3", "bob", "hi")):
        ids[name] = store.add_vertex(["Message"], {"text": text})
        store.add_edge(ids[user], ids[name], "SENT", {"weight": 1.0})
    return ids


@pytest.fixture
def runtime() -> Runtime:
    rt = Runtime(GOOD)
    assert rt.load_errors == {}
    return rt


@pytest.fixture
def ids(runtime: Runtime) -> dict[str, int]:
    return seed(runtime)


@pytest.fixture
def misbehaving() -> Runtime:
    rt = Runtime(MISBEHAVING)
    assert rt.load_errors == {}
    seed(rt)
    return rt
