"""Move graphs between a Memgraph server and local `export_util.json` files.

`export_graph` streams the server's graph through MAGE's own `export_util.json` (so the file is
exactly what Memgraph writes) into a local file the embedded runtime reads: recall offline on a copy
of production memory. `load_graph` goes the other way from the client's side, so the file need not
be on the server's disk (MAGE's `import_util.json` reads server paths only). Values always travel
as parameters.

A load writes in batches, one transaction each. Every node and relationship carries a per-load id
while the load runs and each batch MERGEs on it, so a batch repeated after a serialization conflict
or after a commit whose answer was lost finds what it already wrote instead of duplicating it: the
batches are retried with backoff. The ids are removed at the end.
"""

import json
import re
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Protocol

from memgraph_recall.client import BoltBackend, RecallClient
from memgraph_recall.errors import RecallConflictError, RecallConnectionError, RecallError, RecallTimeoutError
from memgraph_recall.retry import Backoff, retrying

EXPORT_QUERY = "CALL export_util.json('', {stream: true}) YIELD data RETURN data"
BATCH = 1000
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LOAD_LABEL, LOAD_KEY = "__RecallLoad", "__recall_load_id"
LOAD_INDEX = "CREATE INDEX ON :__RecallLoad(__recall_load_id)"
DROP_LOAD_INDEX = "DROP INDEX ON :__RecallLoad(__recall_load_id)"
MERGE_NODES = ("UNWIND $rows AS row MERGE (n{labels}:__RecallLoad {{__recall_load_id: row.id}}) "
               "SET n += row.props")
MERGE_RELATIONSHIPS = ("UNWIND $rows AS row "
                       "MATCH (a:__RecallLoad {{__recall_load_id: row.start}}), "
                       "(b:__RecallLoad {{__recall_load_id: row.end}}) "
                       "MERGE (a)-[r:`{type}` {{__recall_load_id: row.id}}]->(b) SET r += row.props")
CLEAN_UP_RELATIONSHIPS = ("MATCH (n:__RecallLoad)-[r]->() WHERE n.__recall_load_id STARTS WITH $token "
                          "AND r.__recall_load_id IS NOT NULL REMOVE r.__recall_load_id")
CLEAN_UP = ("MATCH (n:__RecallLoad) WHERE n.__recall_load_id STARTS WITH $token "
            "REMOVE n:__RecallLoad, n.__recall_load_id")
RETRIED = (RecallConflictError, RecallConnectionError, RecallTimeoutError)


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


def load_elements(runner: Runner, elements: list[dict], batch: int = BATCH,
                  retry: Backoff | None = None) -> tuple[int, int]:
    """Create `elements` through `runner`: nodes per label set, then relationships per type.

    Labels and types cannot be query parameters, so they are checked to be plain identifiers and
    back-quoted; every value travels as a parameter. The per-load ids (on a temporary label, with
    an index) make each batch idempotent, so failed batches are retried (`retry`); a load that still
    fails says how far it got. Returns the numbers of nodes and relationships in `elements`.
    """
    token = uuid.uuid4().hex
    nodes, relationships = _batches_of(elements, token)
    progress = _Progress(runner, batch, retry or Backoff(), sum(map(len, nodes.values())),
                         sum(map(len, relationships.values())))
    runner.run("load", LOAD_INDEX)
    try:
        for labels, rows in nodes.items():
            label_text = "".join(f":`{label}`" for label in labels)
            progress.write(f"{label_text or 'unlabelled'} node", MERGE_NODES.format(labels=label_text), rows)
        for rel_type, rows in relationships.items():
            progress.write(f":`{rel_type}` relationship", MERGE_RELATIONSHIPS.format(type=rel_type), rows)
    except RecallError as exc:
        cleaned = _clean_up(runner, token, quietly=True)
        raise type(exc)(progress.failure(exc, cleaned)) from exc
    _clean_up(runner, token, quietly=False)
    return progress.totals["node"], progress.totals["relationship"]


def _batches_of(elements: list[dict], token: str) -> tuple[dict[tuple[str, ...], list[dict]],
                                                            dict[str, list[dict]]]:
    """Rows per label set and per relationship type, with decoded values and per-load ids."""
    from memgraph_recall.embedded.interchange import decode_value

    nodes: dict[tuple[str, ...], list[dict]] = defaultdict(list)
    relationships: dict[str, list[dict]] = defaultdict(list)
    for element in elements:
        props = {key: decode_value(value) for key, value in (element.get("properties") or {}).items()
                 if key != LOAD_KEY}
        if element.get("type") == "node":
            labels = tuple(_identifier(label, "label") for label in element.get("labels") or ()
                           if label != LOAD_LABEL)
            nodes[labels].append({"id": f"{token}:{element['id']}", "props": props})
        else:
            relationships[_identifier(element["label"], "relationship type")].append(
                {"id": f"{token}:r{element['id']}", "start": f"{token}:{element['start']}",
                 "end": f"{token}:{element['end']}", "props": props})
    return nodes, relationships


class _Progress:
    """Writes a load's batches, each retried, and counts what is written for a part-way failure."""

    def __init__(self, runner: Runner, batch: int, retry: Backoff, nodes: int, relationships: int) -> None:
        self.runner, self.batch, self.retry = runner, batch, retry
        self.totals = {"node": nodes, "relationship": relationships}
        self.written = {"node": 0, "relationship": 0}
        self.at = ""

    def write(self, what: str, query: str, rows: list[dict]) -> None:
        """All `rows` (of one label set or type, named by `what`) through `query`, a batch at a time."""
        kind = what.rsplit(" ", 1)[1]
        count = -(-len(rows) // self.batch)
        for number, start in enumerate(range(0, len(rows), self.batch), 1):
            chunk = rows[start:start + self.batch]
            self.at = f"{what}s, batch {number} of {count}"
            retrying(lambda chunk=chunk: self.runner.run("load", query, {"rows": chunk}), "load", RETRIED,
                     self.retry)
            self.written[kind] += len(chunk)

    def failure(self, exc: RecallError, cleaned: bool) -> str:
        left = "" if cleaned else (f"; the temporary {LOAD_LABEL} labels and {LOAD_KEY} properties could not "
                                   f"be removed: MATCH (n:{LOAD_LABEL}) REMOVE n:{LOAD_LABEL}, n.{LOAD_KEY}")
        written = " and ".join(f"{self.written[kind]} of {self.totals[kind]} {kind}s" for kind in self.totals)
        return (f"load stopped at {self.at}: {written} were written and stay on the server (loading the "
                f"file again adds them again){left}. Cause: {exc}")


def _clean_up(runner: Runner, token: str, quietly: bool) -> bool:
    """Remove this load's temporary ids and label, then the index; False if that failed (when quiet)."""
    try:
        runner.run("load", CLEAN_UP_RELATIONSHIPS, {"token": token})
        runner.run("load", CLEAN_UP, {"token": token})
        runner.run("load", DROP_LOAD_INDEX)
    except RecallError:
        if not quietly:
            raise
        return False
    return True


def _identifier(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"load: {what} {name!r} is not a plain identifier (letters, digits, _)")
    return name
