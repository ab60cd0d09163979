"""Several databases in one Runtime, as in one Memgraph instance: each its own graph, ids from 0 and
lock; one set of modules, so module state is shared by all of them."""

import threading
import time
from pathlib import Path

import pytest
from memgraph_recall.embedded import ArgumentError, Runtime, VertexRef

TENANTS = Path(__file__).parent / "modules_tenants"


@pytest.fixture
def runtime() -> Runtime:
    """"memgraph": alice, bob, carol (ids 0-2) and an edge; "tenant": zed (id 0)."""
    rt = Runtime(TENANTS)
    assert rt.load_errors == {}
    main = rt.store
    for name in ("alice", "bob", "carol"):
        main.add_vertex(["User"], {"name": name})
    main.add_edge(0, 1, "KNOWS")
    rt.create_database("tenant").add_vertex(["User"], {"name": "zed"})
    return rt


def names(rt: Runtime, database: str) -> dict[int, str]:
    return {row["id"]: row["name"] for row in rt.call("tenants.names", database=database)}


def slow_write_in_background(rt: Runtime, database: str, seconds: float,
                             name: str = "new") -> threading.Thread:
    """Start `tenants.slow_create` in `database` and return once it holds that database's write lock."""
    writing = rt.modules["tenants"]._STATE.setdefault("writing", {})[name] = threading.Event()
    thread = threading.Thread(target=rt.call, args=("tenants.slow_create", name, seconds),
                              kwargs={"database": database})
    thread.start()
    assert writing.wait(5)
    return thread


def test_each_database_has_its_own_graph_with_ids_from_zero(runtime):
    assert runtime.databases() == ["memgraph", "tenant"]
    assert runtime.database("memgraph") is runtime.store
    assert names(runtime, "memgraph") == {0: "alice", 1: "bob", 2: "carol"}
    assert names(runtime, "tenant") == {0: "zed"}  # the same id 0, another vertex
    assert runtime.call("tenants.names") == runtime.call("tenants.names", database="memgraph")  # the default
    assert runtime.database("tenant").add_edge(0, 0, "SELF") == 0  # edge ids start at 0 too
    assert runtime.store.edge_count() == 1


def test_a_call_never_sees_another_databases_vertices(runtime):
    assert runtime.call("tenants.name_by_id", 2, database="tenant") == [{"name": None, "found": False}]
    assert runtime.call("tenants.name_by_id", 0, database="tenant") == [{"name": "zed", "found": True}]
    assert runtime.call("tenants.name_by_id", 0) == [{"name": "alice", "found": True}]
    carol = runtime.vertex(2)
    with pytest.raises(ArgumentError, match="missing graph element: there is no vertex with id 2"):
        runtime.call("tenants.name_of", carol, database="tenant")
    # a ref is only an id, as in Memgraph: id 0 names the vertex 0 of the database called
    alice = runtime.find_vertex("User", "name", "alice")
    assert alice == VertexRef(0) == runtime.find_vertex("User", "name", "zed", database="tenant")
    assert runtime.call("tenants.name_of", alice, database="tenant") == [{"name": "zed"}]
    with pytest.raises(LookupError, match="no vertex"):
        runtime.find_vertex("User", "name", "alice", database="tenant")
    with pytest.raises(LookupError, match="there is no vertex with id 1"):
        runtime.vertex(1, database="tenant")
    with pytest.raises(LookupError, match="there is no edge with id 0"):
        runtime.edge(0, database="tenant")
    assert runtime.edge(0) is not None


def test_module_state_is_shared_by_every_database_and_survives_a_drop(runtime):
    calls = [runtime.call("tenants.count_calls", database=db)[0]["calls"]
             for db in ("memgraph", "tenant", "memgraph", "tenant")]
    assert calls == [1, 2, 3, 4]
    runtime.drop_database("tenant")
    runtime.create_database("tenant")
    assert runtime.call("tenants.count_calls", database="tenant") == [{"calls": 5}]
    assert runtime.modules["tenants"]._STATE == {"calls": 5}


def test_a_write_in_one_database_does_not_block_reads_in_another(runtime):
    writer = slow_write_in_background(runtime, "tenant", 1.0)
    begin = time.perf_counter()
    other = names(runtime, "memgraph")
    assert writer.is_alive(), "the read waited for the write in another database"
    same = names(runtime, "tenant")  # waits for the write, in the same database
    waited = time.perf_counter() - begin
    writer.join()
    assert other == {0: "alice", 1: "bob", 2: "carol"}
    assert same == {0: "zed", 1: "new"} and waited > 0.5


def test_writes_in_two_databases_run_at_the_same_time(runtime):
    first = slow_write_in_background(runtime, "memgraph", 1.0, "first")
    second = slow_write_in_background(runtime, "tenant", 0.01, "second")  # returns once it writes
    assert first.is_alive(), "the second write waited for the first, in another database"
    first.join()
    second.join()
    assert names(runtime, "memgraph")[3] == "first" and names(runtime, "tenant")[1] == "second"


def test_create_and_drop_databases(runtime):
    with pytest.raises(ValueError, match="create_database: database 'tenant' already exists"):
        runtime.create_database("tenant")
    for bad in ("", None, 3):
        with pytest.raises(TypeError, match="create_database: a database name must be a non-empty string"):
            runtime.create_database(bad)
    with pytest.raises(ValueError, match="drop_database: cannot delete the default database 'memgraph'"):
        runtime.drop_database("memgraph")
    with pytest.raises(LookupError, match="drop_database: database 'nope' does not exist"):
        runtime.drop_database("nope")
    runtime.drop_database("tenant")
    assert runtime.databases() == ["memgraph"]
    for attempt in (lambda: runtime.call("tenants.names", database="tenant"),
                    lambda: runtime.database("tenant"), lambda: runtime.vertex(0, database="tenant"),
                    lambda: runtime.load_elements([], database="tenant")):
        with pytest.raises(LookupError, match=r"database: there is no database named 'tenant' \(databases: "
                                              r"'memgraph'\)"):
            attempt()
    fresh = runtime.create_database("tenant")
    assert fresh.add_vertex() == 0 and names(runtime, "tenant") == {0: None}  # a new database: ids from 0


def test_a_database_in_use_is_not_dropped(runtime):
    writer = slow_write_in_background(runtime, "tenant", 0.3)
    with pytest.raises(RuntimeError, match="cannot delete 'tenant', it is currently being used"):
        runtime.drop_database("tenant")
    writer.join()
    runtime.drop_database("tenant")
    assert runtime.databases() == ["memgraph"]


def test_graph_files_and_indexes_are_per_database(runtime, tmp_path):
    runtime.load_elements([{"id": 7, "labels": ["User"], "properties": {"name": "yan"}, "type": "node"}],
                          database="tenant")
    assert names(runtime, "tenant") == {7: "yan"} and len(names(runtime, "memgraph")) == 3
    runtime.save_graph(tmp_path / "tenant.json", database="tenant")
    runtime.create_database("copy")
    runtime.load_graph(tmp_path / "tenant.json", database="copy")
    assert names(runtime, "copy") == {7: "yan"}
    runtime.database("copy").create_label_property_index("User", "name")
    assert runtime.database("copy").index_lookup("User", "name", "yan").used_index
    assert not runtime.database("tenant").index_lookup("User", "name", "yan").used_index
    assert runtime.database("tenant").indexes() == []
    assert runtime.call_function("tenants.shout", "hi", database="tenant") == "HI"
    with pytest.raises(LookupError, match="there is no database named 'nope'"):
        runtime.call_function("tenants.shout", "hi", database="nope")


def test_another_runtimes_store_can_be_served_as_the_default_database(runtime):
    other = Runtime(TENANTS)
    other.store = runtime.database("tenant")  # its modules over this runtime's tenant graph
    assert names(other, "memgraph") == {0: "zed"} and other.database("memgraph") is other.store
    assert runtime.call("tenants.count_calls") == [{"calls": 1}]  # two runtimes: two module states
    assert other.call("tenants.count_calls") == [{"calls": 1}]
    with pytest.raises(TypeError, match="store: expected a GraphStore, got dict"):
        other.store = {}
