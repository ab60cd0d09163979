"""Detached graph values: what callers pass in and get back, never live procedure objects.

`Node`, `Relationship` and `GraphPath` look like a Bolt driver's results (plain ids, labels or type,
and a property dict with lists). `VertexRef`/`EdgeRef` name an element to pass as an argument, as
Cypher does after a `MATCH`; the call turns them into live `mgp.Vertex`/`mgp.Edge` objects.
"""

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Node:
    """A vertex as it was when the call returned."""

    id: int
    labels: frozenset[str]
    properties: dict[str, Any] = field(default_factory=dict)

    _cypher_kind = "NODE"

    def get(self, key: str, default: Any = None) -> Any:
        return self.properties.get(key, default)

    def __hash__(self) -> int:
        return hash(("node", self.id))


@dataclass(frozen=True)
class Relationship:
    """An edge as it was when the call returned; `start_id`/`end_id` are vertex ids."""

    id: int
    type: str
    start_id: int
    end_id: int
    properties: dict[str, Any] = field(default_factory=dict)

    _cypher_kind = "RELATIONSHIP"

    def get(self, key: str, default: Any = None) -> Any:
        return self.properties.get(key, default)

    def __hash__(self) -> int:
        return hash(("relationship", self.id))


@dataclass(frozen=True)
class GraphPath:
    """A path: `nodes[i]` and `nodes[i + 1]` are joined by `relationships[i]`."""

    nodes: tuple[Node, ...]
    relationships: tuple[Relationship, ...]

    _cypher_kind = "PATH"


@dataclass(frozen=True)
class VertexRef:
    """A vertex to pass as a procedure argument (see `Runtime.vertex`)."""

    id: int

    _cypher_kind = "NODE"


@dataclass(frozen=True)
class EdgeRef:
    """An edge to pass as a procedure argument (see `Runtime.edge`)."""

    id: int

    _cypher_kind = "RELATIONSHIP"
