"""Loading a graph file over Bolt: fixed query shapes, values as parameters, identifiers checked."""

from datetime import date

import pytest
from memgraph_recall.bolt_io import CLEAN_UP, DROP_LOAD_INDEX, LOAD_INDEX, load_elements
from memgraph_recall.datasets import sample


class RecordingRunner:
    """Stands in for a server: records each query and its parameters."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def run(self, what: str, query: str, parameters: dict | None = None) -> list[dict]:
        self.calls.append((query, parameters or {}))
        return []


def test_every_element_is_created_with_decoded_values_and_the_temporary_index_removed():
    elements = sample.elements()
    runner = RecordingRunner()
    nodes, relationships = load_elements(runner, elements, batch=7)
    assert nodes == sum(e["type"] == "node" for e in elements)
    assert relationships == len(elements) - nodes
    queries = [query for query, _ in runner.calls]
    assert queries[0] == LOAD_INDEX and queries[-2:] == [CLEAN_UP, DROP_LOAD_INDEX]
    rows = [row for _, params in runner.calls for row in params.get("rows", [])]
    assert len(rows) == len(elements)
    created_ids = {row["id"] for row in rows if "id" in row}
    assert all(row["start"] in created_ids and row["end"] in created_ids for row in rows if "start" in row)
    assert any(row["props"].get("valid_at") == date(2024, 4, 10) for row in rows)  # date(...) decoded
    assert max(len(params.get("rows", [])) for _, params in runner.calls) == 7
    user_query = next(q for q in queries if ":`User`" in q)
    assert "maya" not in user_query  # values never enter the query text


def test_labels_that_are_not_identifiers_are_refused_before_anything_is_written():
    runner = RecordingRunner()
    bad = [{"id": 0, "labels": ["User`) DETACH DELETE (x"], "properties": {}, "type": "node"}]
    with pytest.raises(ValueError, match="is not a plain identifier"):
        load_elements(runner, bad)
    assert runner.calls == []
