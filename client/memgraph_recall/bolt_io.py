"""Move graphs between a Memgraph server and local `export_util.json` files.

`export_graph` streams the server's graph through MAGE's own `export_util.json` (so the file is
exactly what Memgraph writes) into a local file the embedded runtime reads: recall offline on a copy
of production memory. `load_graph` goes the other way from the client's side, so the file need not
be on the server's disk (MAGE's `import_util.json` reads server paths only). Values always travel
as parameters.
"""

import json
import re
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Protocol

from memgraph_recall.client import BoltBackend, RecallClient

EXPORT_QUERY = "CALL export_util.json('', {stream: true}) YIELD data RETURN data"
BATCH = 1000
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LOAD_INDEX = "CREATE INDEX ON :__RecallLoad(__recall_load_id)"
DROP_LOAD_INDEX = "DROP INDEX ON :__RecallLoad(__recall_load_id)"
CREATE_NODES = ("UNWIND $rows AS row CREATE (n{labels}:__RecallLoad {{__recall_load_id: row.id}}) "
                "SET n += row.props")
CREATE_RELATIONSHIPS = ("UNWIND $rows AS row "
                        "MATCH (a:__RecallLoad {{__recall_load_id: row.start}}), "
                        "(b:__RecallLoad {{__recall_load_id: row.end}}) "
                        "CREATE (a)-[r:`{type}`]->(b) SET r += row.props")
CLEAN_UP = "MATCH (n:__RecallLoad) REMOVE n:__RecallLoad, n.__recall_load_id"


def _server(client: RecallClient, command: str) -> BoltBackend:
    if not isinstance(client.backend, BoltBackend):
        raise ValueError(f"{command}: needs a Memgraph server (--bolt URL), not the embedded runtime")
    return client.backend


def export_graph(client: RecallClient, output: Path) -> int:
    """Write the server's whole graph to `output`; returns the number of elements written."""
    rows = _server(client, "export").run("export_util.json", EXPORT_QUERY)
    elements = json.loads(rows[0]["data"]) if rows else []
    output.write_text(json.dumps(elements), encoding="utf-8")
    return len(elements)


class Runner(Protocol):
    def run(self, what: str, query: str, parameters: dict | None = None) -> list[dict]: ...


def read_graph_file(source: Path) -> list[dict]:
    """An `export_util.json` file's elements, checked (ids, labels, references) before any is written."""
    from memgraph_recall.embedded.interchange import build_store, read_elements

    elements = read_elements(source)
    build_store(elements)
    return elements


def load_graph(client: RecallClient, elements: list[dict]) -> tuple[int, int]:
    """Create the nodes and relationships of checked elements (`read_graph_file`) on the server (appends)."""
    return load_elements(_server(client, "load"), elements)


def load_elements(runner: Runner, elements: list[dict], batch: int = BATCH) -> tuple[int, int]:
    """Create `elements` through `runner`: nodes per label set, then relationships per type.

    Labels and types cannot be query parameters, so they are checked to be plain identifiers and
    back-quoted; every value travels as a parameter. A per-load token on a temporary label and an
    index on it let relationships find their ends quickly; both are removed at the end.
    """
    from memgraph_recall.embedded.interchange import decode_value

    token = uuid.uuid4().hex
    nodes: dict[tuple[str, ...], list[dict]] = defaultdict(list)
    relationships: dict[str, list[dict]] = defaultdict(list)
    for element in elements:
        props = {key: decode_value(value) for key, value in (element.get("properties") or {}).items()}
        if element.get("type") == "node":
            labels = tuple(_identifier(label, "label") for label in element.get("labels") or ())
            nodes[labels].append({"id": f"{token}:{element['id']}", "props": props})
        else:
            relationships[_identifier(element["label"], "relationship type")].append(
                {"start": f"{token}:{element['start']}", "end": f"{token}:{element['end']}", "props": props})
    runner.run("load", LOAD_INDEX)
    try:
        for labels, rows in nodes.items():
            query = CREATE_NODES.format(labels="".join(f":`{label}`" for label in labels))
            for start in range(0, len(rows), batch):
                runner.run("load", query, {"rows": rows[start:start + batch]})
        for rel_type, rows in relationships.items():
            query = CREATE_RELATIONSHIPS.format(type=rel_type)
            for start in range(0, len(rows), batch):
                runner.run("load", query, {"rows": rows[start:start + batch]})
    finally:
        runner.run("load", CLEAN_UP)
        runner.run("load", DROP_LOAD_INDEX)
    return sum(map(len, nodes.values())), sum(map(len, relationships.values()))


def _identifier(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"load: {what} {name!r} is not a plain identifier (letters, digits, _)")
    return name
