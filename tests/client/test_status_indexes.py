"""`status` says whether the fast call shape's indexes exist (a procedure cannot see indexes)."""

from memgraph_recall.client import RecallClient, index_rows
from memgraph_recall.datasets.memory_graph import MemoryGraph


def test_an_embedded_database_is_set_up_and_a_dropped_index_is_reported_missing():
    g = MemoryGraph()
    g.message(g.session(g.user("ana"), "s"), "a1", "hello", "2024-01-01T00:00:00Z")
    client = RecallClient.embedded(g.elements())
    rows = {r["name"]: r for r in client.status() if r["section"] == "index"}
    assert rows[":User(user_id)"]["detail"] == "present" and rows[":RecallMeta"]["detail"] == "present"
    client.backend.runtime.store.drop_label_property_index("User", "user_id")
    rows = {r["name"]: r for r in client.status() if r["section"] == "index"}
    assert rows[":User(user_id)"]["detail"].startswith("missing") and rows[":User(user_id)"]["count"] == 0


def test_show_index_info_rows_in_either_property_shape():
    """Memgraph lists a label-property index's property as a name or a one-name list by version."""
    for prop in ("user_id", ["user_id"]):
        found = index_rows([{"index type": "label+property", "label": "User", "property": prop},
                            {"index type": "label", "label": "RecallMeta", "property": None}])
        assert [r["detail"] for r in found] == ["present", "present"]
    assert all(r["detail"].startswith("missing") for r in index_rows([]))
