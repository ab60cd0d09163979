"""Write procedures are all-or-nothing; successful writes are visible and saved."""

import json

import pytest
from memgraph_recall.embedded import ProcedureError, QueryTimeoutError, Runtime
from memgraph_recall.embedded.interchange import store_elements


def _state(runtime: Runtime) -> str:
    """The graph's contents (not the id counters: an aborted write leaves a gap, as in Memgraph)."""
    store = runtime.store
    adjacency = {v.id: ([e.id for e in v.out_edges], [e.id for e in v.in_edges])
                 for v in store.vertices.values()}
    return json.dumps([list(store_elements(store)), adjacency], sort_keys=True)


def test_failed_write_procedure_leaves_the_store_exactly_as_before(runtime, ids):
    before = _state(runtime)
    with pytest.raises(ProcedureError, match=r"(?s)^sample\.churn: Traceback .*\nValueError: churn failed\n"):
        runtime.call("sample.churn", runtime.vertex(ids["alice"]), True)
    assert _state(runtime) == before


def test_successful_write_procedure_commits_every_change(runtime, ids, tmp_path):
    [row] = runtime.call("sample.churn", runtime.vertex(ids["alice"]), False)
    assert row == {"deleted": 5}  # 2 SENT edges, then 3 messages (bob's edge goes with m3)
    alice = runtime.store.node(ids["alice"])
    assert alice.labels == frozenset({"Touched"})
    assert alice.properties == {"name": "renamed", "new": [1, 2, 3]}
    assert runtime.store.vertex_count() == 3 and runtime.store.edge_count() == 1
    assert runtime.call("sample.values", "Message", "text") == []
    runtime.save_graph(tmp_path / "after.json")
    saved = json.loads((tmp_path / "after.json").read_text())
    assert {tuple(e["labels"]) for e in saved if e["type"] == "node"} == {("Touched",), ("User",), ("Extra",)}
    assert [e["label"] for e in saved if e["type"] == "relationship"] == ["LINK"]


def test_created_elements_are_returned_and_visible_to_later_calls(runtime, ids):
    [row] = runtime.call("sample.add_message", runtime.vertex(ids["bob"]), "new text")
    message, edge = row["message"], row["edge"]
    assert message.labels == frozenset({"Message"})
    assert message.properties == {"text": "new text", "tags": ["a", "b"], "meta": {"n": 1}}
    assert (edge.type, edge.start_id, edge.end_id, edge.properties) == ("SENT", ids["bob"], message.id,
                                                                        {"weight": 0.5})
    assert message.id == max(ids.values()) + 1
    texts = sorted(r["value"] for r in runtime.call("sample.values", "Message", "text"))
    assert texts == ["again", "hello", "hi", "new text"]


def test_failed_creation_leaves_no_orphan_and_an_id_gap(runtime, ids):
    before, edges = _state(runtime), runtime.store.edge_count()
    with pytest.raises(ProcedureError, match="failed after writing"):
        runtime.call("sample.add_message", runtime.vertex(ids["bob"]), "lost", True)
    assert _state(runtime) == before
    [row] = runtime.call("sample.add_message", runtime.vertex(ids["bob"]), "kept")
    assert row["message"].id == max(ids.values()) + 2  # the aborted message's id stays unused
    assert row["edge"].id == edges + 1


def test_write_that_times_out_is_rolled_back(runtime, ids):
    before = _state(runtime)
    with pytest.raises(QueryTimeoutError):
        runtime.call("sample.bump", "Message", "version", timeout=1e-9)
    assert _state(runtime) == before


def test_bad_result_rolls_back_a_write(misbehaving):
    alice = misbehaving.find_vertex("User", "name", "alice")
    before = _state(misbehaving)
    with pytest.raises(ProcedureError):
        misbehaving.call("misbehaving.store_bad_value", alice, "set")
    assert _state(misbehaving) == before
