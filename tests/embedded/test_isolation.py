"""Each Runtime runs its own copy of every module; our mgp is visible only while modules run."""

import sys
import threading
import time
from pathlib import Path

from memgraph_recall.embedded import Runtime

GOOD = Path(__file__).parent / "modules_good"


def test_two_runtimes_never_share_module_state():
    first, second = Runtime(GOOD), Runtime(GOOD)
    assert first.modules["sample"] is not second.modules["sample"]
    assert [first.call("sample.count_calls")[0]["calls"] for _ in range(3)] == [1, 2, 3]
    assert second.call("sample.count_calls") == [{"calls": 1}]
    assert first.modules["sample"]._CALLS is not second.modules["sample"]._CALLS
    assert "sample" not in sys.modules


def test_graphs_of_two_runtimes_are_separate(runtime):
    other = Runtime(GOOD)
    runtime.store.add_vertex(["User"], {"name": "only here"})
    assert other.call("sample.values", "User", "name") == []


def test_module_sees_a_module_named_mgp():
    mgp = Runtime(GOOD).modules["sample"].mgp
    assert mgp.__name__ == "mgp"
    assert mgp.Vertex.__module__ == "mgp" and mgp.Record.__module__ == "mgp"


def test_sys_modules_mgp_is_ours_only_while_modules_run(monkeypatch):
    sentinel = object()
    monkeypatch.setitem(sys.modules, "mgp", sentinel)
    runtime = Runtime(GOOD)
    assert sys.modules["mgp"] is sentinel
    ours = runtime.modules["sample"].mgp
    seen = []
    worker = threading.Thread(target=runtime.call, args=("sample.slow", 0.2))
    worker.start()
    time.sleep(0.1)
    seen.append(sys.modules["mgp"])
    worker.join()
    assert seen == [ours]
    assert sys.modules["mgp"] is sentinel
