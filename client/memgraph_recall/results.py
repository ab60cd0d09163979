"""Typed, immutable views of what the `recall.*` procedures return, the same for both backends.

The procedures return Cypher maps; over Bolt they arrive as dicts with driver objects, in the embedded
runtime as dicts with snapshot objects. These classes read either into one shape, keep the original
map for `to_json()`, and turn temporal values into ISO strings so results serialise as they are.
"""

from dataclasses import dataclass, field, fields
from datetime import date, datetime, time, timedelta
from typing import Any


def json_ready(value: Any) -> Any:
    """Turn a procedure value into plain JSON types (temporals become ISO strings, tuples lists)."""
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, GraphElement):
        return {"id": value.id, "labels": list(value.labels), "type": value.type,
                "properties": json_ready(value.properties)}
    return value


def _from_map(cls: type, data: dict) -> Any:
    """Build a dataclass from a map, ignoring keys it does not declare (the module may add more)."""
    known = {f.name for f in fields(cls) if f.name != "raw"}
    return cls(**{k: json_ready(v) for k, v in data.items() if k in known}, raw=json_ready(data))


@dataclass(frozen=True)
class Turn:
    """A message of the user's past, shown whole or as the passages that matched."""

    action_id: str = ""
    session_id: str | None = None
    timestamp: str | None = None
    speaker: str | None = None
    text: str = ""
    passages: Any = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Fact:
    """A relationship read from one of the user's turns: `head -[type @ valid_at]-> tail`."""

    head: str | None = None
    type: str = ""
    tail: str | None = None
    valid_at: str | None = None
    speaker: str | None = None
    sentence: str | None = None
    turn: str | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Memory:
    """A note the user saved deliberately (`(:User)-[:HAS_MEMORY]->(:Memory)`)."""

    path: str = ""
    updated_at: str | None = None
    text: str = ""
    passages: Any = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Recalled:
    """One `recall.render` answer: the text an LLM reads, and the rows behind it."""

    text: str
    question: str
    turns: tuple[Turn, ...]
    facts: tuple[Fact, ...]
    memories: tuple[Memory, ...]
    vector_lanes_off: Any
    raw: dict = field(default_factory=dict, repr=False, compare=False)
    user_found: bool | None = None
    """False when the backend said the user does not exist (no row), None when it did not say."""

    @classmethod
    def from_row(cls, row: dict) -> "Recalled":
        recalled = dict(row.get("recalled") or {})
        return cls(
            text=row.get("text") or "",
            question=recalled.get("question") or "",
            turns=tuple(_from_map(Turn, t) for t in recalled.get("turns") or ()),
            facts=tuple(_from_map(Fact, f) for f in recalled.get("facts") or ()),
            memories=tuple(_from_map(Memory, m) for m in recalled.get("memories") or ()),
            vector_lanes_off=json_ready(recalled.get("vector_lanes_off")),
            raw=json_ready(recalled),
        )

    @property
    def empty(self) -> bool:
        return not (self.turns or self.facts or self.memories)

    def to_json(self) -> dict:
        """The `recalled` map in the upstream `to_json()` shape, with plain JSON values."""
        return dict(self.raw)


@dataclass(frozen=True)
class GraphElement:
    """A node or relationship a lane hit points at, detached from the backend that produced it."""

    id: int
    labels: tuple[str, ...] = ()
    type: str | None = None
    properties: dict = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, value: Any) -> "GraphElement | None":
        """Read an embedded-runtime snapshot; the Bolt backend already delivers `GraphElement`s."""
        if value is None or isinstance(value, GraphElement):
            return value
        rel_type = getattr(value, "type", None)
        return cls(id=value.id, labels=tuple(sorted(getattr(value, "labels", ()) or ())),
                   type=rel_type if isinstance(rel_type, str) else None, properties=dict(value.properties))


@dataclass(frozen=True)
class LaneHit:
    """One row of `recall.lanes`: a hit of one lane, before merging and rendering."""

    lane: str
    rank: int
    score: float
    key: str
    text: str
    turn: str | None = None
    passage: int | None = None
    node: GraphElement | None = None
    relationship: GraphElement | None = None

    @classmethod
    def from_row(cls, row: dict) -> "LaneHit":
        return cls(lane=row["lane"], rank=row["rank"], score=row["score"], key=row["key"], text=row["text"],
                   turn=row.get("turn"), passage=row.get("passage"), node=GraphElement.of(row.get("node")),
                   relationship=GraphElement.of(row.get("relationship")))


@dataclass(frozen=True)
class EmbedProgress:
    """What one `recall.embed` call did; `remaining` is what is left for the next call. `prose`: the
    prose vectors of messages holding code (a server from before them reports none)."""

    messages: int
    entities: int
    edges: int
    memories: int
    remaining: int
    model: str
    prose: int = 0

    @classmethod
    def from_row(cls, row: dict) -> "EmbedProgress":
        return cls(**{f.name: row[f.name] for f in fields(cls) if f.name in row or f.name != "prose"})

    @property
    def embedded(self) -> int:
        return self.messages + self.entities + self.edges + self.memories + self.prose

    def __add__(self, other: "EmbedProgress") -> "EmbedProgress":
        return EmbedProgress(self.messages + other.messages, self.entities + other.entities,
                             self.edges + other.edges, self.memories + other.memories, other.remaining,
                             other.model, self.prose + other.prose)
