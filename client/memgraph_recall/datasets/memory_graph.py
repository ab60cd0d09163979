"""Build agent-memory graphs in the exact shape sessions-graph / actions-graph write.

The output is a list of Memgraph `export_util.json` elements, so the same graph can be loaded by the
embedded runtime, saved as a file, or imported into a real Memgraph. Loaders (bundled sample, LoCoMo,
synthetic scale data) and tests all go through this one builder so the shape is defined once.
"""

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Ref:
    """A vertex created by the builder: its export id and, for Actions, its action_id."""

    id: int
    key: str = ""


def encode_value(value: Any) -> Any:
    """Encode a property value the way `export_util.json` writes it (temporal prefixes, NaN kept).

    numpy arrays and scalars become plain lists and numbers in one C-level `tolist()`, so large
    synthetic graphs do not pay a Python call per vector component.
    """
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, datetime):
        return f"localDateTime({value.isoformat()})"
    if isinstance(value, date):
        return f"date({value.isoformat()})"
    if isinstance(value, timedelta):
        return f"duration({value})"
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {k: encode_value(v) for k, v in value.items()}
    return value


def _vector(values: Sequence[float] | None) -> Any:
    """A vector property: numpy arrays are kept for `encode_value`, other sequences become lists."""
    if values is None or hasattr(values, "tolist"):
        return values
    return list(values)


def _vectors(rows: Sequence[Sequence[float]] | None) -> Any:
    """Per-passage vectors: a 2-D numpy array is kept for `encode_value`, else a list of lists."""
    if rows is None or hasattr(rows, "tolist"):
        return rows
    return [list(v) for v in rows]


def chunk_hash(text: str) -> str:
    """Content address of a chunk: equal text gives the same Chunk, shared between users."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class MemoryGraph:
    """Accumulates vertices and relationships; `elements()` returns them in export order."""

    def __init__(self, node_ids_from: int = 0, relationship_ids_from: int = 0) -> None:
        """Ids count from the given values, so the elements can be appended to a graph that has ids below."""
        self._first_node, self._first_rel = node_ids_from, relationship_ids_from
        self._nodes: list[dict] = []
        self._rels: list[dict] = []
        self._chunks: dict[str, Ref] = {}
        self._agents: dict[str, Ref] = {}
        self._mentions: dict[tuple[int, int], dict] = {}

    # -- generic -------------------------------------------------------------------------------
    def node(self, labels: Sequence[str], **properties: Any) -> Ref:
        ref = Ref(self._first_node + len(self._nodes))
        props = {k: encode_value(v) for k, v in properties.items() if v is not None}
        self._nodes.append({"id": ref.id, "labels": list(labels), "properties": props, "type": "node"})
        return ref

    def relationship(self, start: Ref, rel_type: str, end: Ref, **properties: Any) -> int:
        rel_id = self._first_rel + len(self._rels)
        props = {k: encode_value(v) for k, v in properties.items() if v is not None}
        self._rels.append(
            {"id": rel_id, "start": start.id, "end": end.id, "label": rel_type, "properties": props,
             "type": "relationship"}
        )
        return rel_id

    # -- the memory shape ----------------------------------------------------------------------
    def recall_meta(self, token: str | None = None) -> Ref:
        """The database's `(:RecallMeta {token})`, as `memgraph-recall setup` makes it (a random token
        unless one is given): how recall tells this database from others sharing its module state."""
        return self.node(["RecallMeta"], token=token or str(uuid.uuid4()))

    def user(self, user_id: str) -> Ref:
        return self.node(["User"], user_id=user_id)

    def session(self, user: Ref, session_id: str) -> Ref:
        ref = self.node(["Session"], session_id=session_id)
        self.relationship(user, "HAD_SESSION", ref)
        return ref

    def agent(self, session: Ref, name: str) -> Ref:
        """An Agent shared by name, as SDK adapters do: one vertex per name, linked from each session."""
        ref = self._agents.get(name)
        if ref is None:
            ref = self._agents[name] = self.node(["Agent"], name=name)
        self.relationship(session, "HAS_AGENT", ref)
        return ref

    def message(self, parent: Ref, action_id: str, text: str | None, timestamp: str | datetime | None,
                action_type: str = "user_message", speaker: str | None = None,
                passage_embeddings: Sequence[Sequence[float]] | None = None,
                embedding_model: str | None = None, **extra: Any) -> Ref:
        """An Action under a Session or an Agent (parent), optionally with stored vectors."""
        ref = self.node(["Action"], action_id=action_id, action_type=action_type, timestamp=timestamp,
                        text=text, speaker=speaker,
                        passage_embeddings=_vectors(passage_embeddings),
                        embedding_model=embedding_model, **extra)
        self.relationship(parent, "HAS_ACTION", ref)
        return Ref(ref.id, action_id)

    def chunk(self, action: Ref, text: str) -> Ref:
        """The content-addressed Chunk of `text`, linked from `action` by HAS_CHUNK."""
        key = chunk_hash(text)
        ref = self._chunks.get(key)
        if ref is None:
            ref = self._chunks[key] = self.node(["Chunk"], hash=key, text=text)
        self.relationship(action, "HAS_CHUNK", ref)
        return ref

    def entity(self, text: str, label: str = "Entity", embedding: Sequence[float] | None = None,
               embedding_model: str | None = None, **extra: Any) -> Ref:
        return self.node([label], text=text, embedding=_vector(embedding), embedding_model=embedding_model,
                         **extra)

    def mention(self, entity: Ref, chunk: Ref, action_id: str) -> None:
        """Entity MENTIONED_IN chunk, adding `action_id` to the edge's `sources` (one edge per pair)."""
        rel = self._mentions.get((entity.id, chunk.id))
        if rel is None:
            rel_id = self.relationship(entity, "MENTIONED_IN", chunk, sources=[])
            rel = self._mentions[(entity.id, chunk.id)] = self._rels[rel_id - self._first_rel]
        if action_id not in rel["properties"]["sources"]:
            rel["properties"]["sources"].append(action_id)

    def fact(self, head: Ref, rel_type: str, tail: Ref, source_id: str, text: str,
             valid_at: str | date | datetime | None = None, role: str | None = None,
             confidence: float | None = None, embedding: Sequence[float] | None = None,
             embedding_model: str | None = None) -> int:
        return self.relationship(head, rel_type, tail, source_id=source_id, text=text, valid_at=valid_at,
                                 role=role, confidence=confidence,
                                 embedding=_vector(embedding),
                                 embedding_model=embedding_model)

    def memory(self, user: Ref, memory_id: str, path: str, content: str,
               updated_at: str | datetime | None = None,
               passage_embeddings: Sequence[Sequence[float]] | None = None,
               embedding_model: str | None = None) -> Ref:
        ref = self.node(["Memory"], memory_id=memory_id, path=path, content=content, updated_at=updated_at,
                        passage_embeddings=_vectors(passage_embeddings),
                        embedding_model=embedding_model)
        self.relationship(user, "HAS_MEMORY", ref)
        return ref

    def ontology(self, user: Ref, model: str, relation_types: Sequence[dict[str, str]]) -> Ref:
        ref = self.node(["OntologyVersion"], model=model,
                        pool=json.dumps({"relation_types": list(relation_types)}))
        self.relationship(user, "ADOPTED", ref)
        return ref

    # -- output --------------------------------------------------------------------------------
    def elements(self) -> list[dict]:
        """All nodes, then all relationships: the order `export_util.json` writes."""
        return [*self._nodes, *self._rels]

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        with path.open("w", encoding="utf-8") as handle:
            json.dump(self.elements(), handle)
        return path

