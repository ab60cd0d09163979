"""Move graphs between a Memgraph server and local `export_util.json` files.

`export_graph` streams the server's graph through MAGE's own `export_util.json` (so the file is
exactly what Memgraph writes) into a local file the embedded runtime reads: recall offline on a copy
of production memory. Every query here is fixed text; values travel as parameters.
"""

import json
from pathlib import Path

from memgraph_recall.client import BoltBackend, RecallClient

EXPORT_QUERY = "CALL export_util.json('', {stream: true}) YIELD data RETURN data"


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
