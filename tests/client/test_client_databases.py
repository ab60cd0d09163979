"""RecallClient over several databases of one embedded runtime: each client answers from its own
database while the recall module (and its cache) is shared, as in one Memgraph instance."""

from datetime import date

import pytest
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets import sample

TRIP = "When is my trip to Lisbon and who am I going with?"
TODAY = date(2024, 5, 20)


def renamed(value):
    """The sample's values with Maya's sister Ana called Bea: the same graph shape and ids."""
    if isinstance(value, str):
        return value.replace("Ana", "Bea")
    if isinstance(value, list):
        return [renamed(v) for v in value]
    if isinstance(value, dict):
        return {k: renamed(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def clients() -> tuple[RecallClient, RecallClient]:
    other = [{**element, "properties": renamed(element["properties"])} for element in sample.elements()]
    main = RecallClient.embedded({"memgraph": sample.elements(), "other": other})
    return main, main.use("other")


def test_use_binds_a_client_of_the_same_runtime_to_another_database(clients):
    main, other = clients
    assert other.backend.runtime is main.backend.runtime  # one module state
    assert (main.backend.database, other.backend.database) == ("memgraph", "other")
    assert main.backend.runtime.databases() == ["memgraph", "other"]
    assert other.backend.description == "embedded runtime, database 'other'"
    assert other.use("memgraph").backend.database == "memgraph" and other.retry is main.retry


def test_alternating_calls_each_answer_from_their_own_database(clients):
    main, other = clients
    for _ in range(3):  # the same user, ids and question: only the database tells them apart
        from_main, from_other = main.render("maya", TRIP, TODAY).text, other.render("maya", TRIP, TODAY).text
        assert "Ana" in from_main and "Bea" not in from_main
        assert "Bea" in from_other and "Ana" not in from_other


def test_a_write_in_one_database_is_seen_there_only(clients):
    main, other = clients
    store = main.backend.runtime.database("other")
    fact = next(e for e in store.edges.values() if e.props.get("text") == "Maya travels to Lisbon with her "
                                                                         "sister Bea.")
    store.set_edge_property(fact.id, "text", "Maya travels to Lisbon with her cousin Cy.")
    assert "cousin Cy" in other.render("maya", TRIP, TODAY).text
    assert "cousin Cy" not in main.render("maya", TRIP, TODAY).text


def test_save_graph_writes_the_clients_own_database(clients, tmp_path):
    main, other = clients
    saved = RecallClient.embedded({"copy": other.save_graph(tmp_path / "other.json")}, database="copy")
    assert saved.backend.description == f"embedded runtime over {tmp_path / 'other.json'}, database 'copy'"
    assert "Bea" in saved.render("maya", TRIP, TODAY).text
    assert saved.use("memgraph").render("maya", TRIP, TODAY).empty  # the default database is empty


def test_unknown_databases_and_non_embedded_clients_are_refused(clients):
    main, _ = clients
    with pytest.raises(ValueError, match=r"database: there is no database named 'nope' in this runtime "
                                         r"\(databases: 'memgraph', 'other'\)"):
        main.use("nope")
    with pytest.raises(ValueError, match="database: there is no database named 'nope'"):
        RecallClient.embedded(sample.elements(), database="nope")
    with pytest.raises(ValueError, match="graph: create_database: a database name must be a non-empty"):
        RecallClient.embedded({"": sample.elements()})
    with pytest.raises(ValueError, match="use: only an embedded client switches databases here"):
        RecallClient.connect().use("other")
