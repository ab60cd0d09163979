"""How stored data reads as recall's items: turns, facts, entities, notes and ontology descriptions.

Each reader takes live mgp-like objects (valid during one call) and returns plain data; a value that
is missing or malformed skips its item and is counted under a named reason (`malformed`), never fatal.
Full builds (`snapshot.build_snapshot`), growth and row verification use the same readers, so a row is
verified against exactly what a build would read.
"""

import json
import re
from collections import Counter
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import compress, repeat
from operator import is_not, itemgetter
from typing import Any, NamedTuple

import numpy as np

from . import schema as s
from .ownership import OwnedAction, OwnedFact, OwnedGraph, id_text
from .passages import PASSAGE_CHARS, split_passages
from .prose import FENCE, made_from, prose_text
from .timeparse import to_utc
from .turn_reuse import TurnReuse
from .turn_table import TurnTable, time_order_keys
from .vector_rows import VectorCollector, VectorSet

_DEFAULT_SPEAKERS = {"user_message": "user", "assistant_message": "assistant"}
#: What a fact's head or tail reads as when that end is the User.
USER_END = "user"


@dataclass(frozen=True, slots=True)
class Entity:
    vertex_id: int
    text: str
    facts: tuple[int, ...]  # indices into UserSnapshot.facts, most confident first


@dataclass(frozen=True, slots=True)
class Fact:
    edge_id: int
    head_vertex_id: int
    tail_vertex_id: int
    head: str  # entity text, or USER_END
    type: str
    tail: str
    source_id: str
    text: str
    valid_at: datetime | None
    role: str | None
    confidence: float | None

    @property
    def identity(self) -> str:
        return f"{self.head} -[{self.type}]-> {self.tail} @{self.source_id}"

    @property
    def embedding_text(self) -> str:
        return fact_embedding_text(self.head, self.type, self.tail, self.text)


@dataclass(frozen=True, slots=True)
class Note:
    """A Memory vertex: a note the user saved deliberately."""

    vertex_id: int
    memory_id: str
    path: str
    content: str
    updated_at: datetime | None
    passages: tuple[str, ...]


def fact_embedding_text(head: str, rel_type: str, tail: str, text: str) -> str:
    """The text a fact's vector is of, exactly as the upstream embeds it."""
    return f"{head} {rel_type.replace('_', ' ')} {tail}. {text}"


def passages_of(text: str) -> tuple[str, ...]:
    """Passages as the upstream cuts them; a text within one passage's length is its own passage."""
    return (text,) if len(text) <= PASSAGE_CHARS else tuple(split_passages(text))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


# `datetime.isoformat()` output with seconds and an optional `±HH:MM` offset: parsed identically by
# `datetime.fromisoformat` on every supported Python, ~25x faster than the general parser. Stored
# timestamps are nearly always in this shape, and 100k of them are parsed per cold build.
_CANONICAL = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{6})?(?:[+-]\d{2}:\d{2})?", re.ASCII)


def utc_time(value: Any) -> datetime | None:
    """`to_utc` with a fast path for canonical ISO strings (same results)."""
    if isinstance(value, str) and _CANONICAL.fullmatch(value):
        try:
            moment = datetime.fromisoformat(value)
            if moment.tzinfo is None:
                return moment.replace(tzinfo=timezone.utc)
            return moment.astimezone(timezone.utc)
        except (ValueError, OverflowError):
            pass
    return to_utc(value)


def _time(value: Any, kind: str, malformed: Counter) -> datetime | None:
    if value is None:
        return None
    parsed = utc_time(value)
    if parsed is None:
        malformed[f"{kind}: unreadable time"] += 1
    return parsed


def _confidence(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def turn_fields(props: Any, malformed: Counter) -> tuple[datetime | None, str, str, str] | None:
    """(timestamp, speaker, action_type, text) of an Action's properties; None when it has no text
    (then neither its time nor its speaker is read)."""
    action_type, text = props.get(s.ACTION_TYPE), props.get(s.TEXT)
    if _text(text) is None:
        return fields_of(None, None, action_type, text, malformed)
    return fields_of(props.get(s.TIMESTAMP), props.get(s.SPEAKER), action_type, text, malformed)


def fields_of(
    timestamp: Any, speaker: Any, action_type: Any, text: Any, malformed: Counter
) -> tuple[datetime | None, str, str, str] | None:
    """`turn_fields` of an Action's four property values as stored."""
    action_type = action_type if isinstance(action_type, str) else ""
    text = _text(text)
    if text is None:
        if action_type in s.MESSAGE_TYPES:
            malformed["message: no text"] += 1
        return None
    speaker = _text(speaker) or _DEFAULT_SPEAKERS.get(action_type) or action_type or "unknown"
    return _time(timestamp, "message", malformed), speaker, action_type, text


class ReadTurns(NamedTuple):
    """What `TurnReader.finish` gives: the turns in time order and their vectors."""

    turns: TurnTable
    vectors: VectorSet  # passage vectors, owner = turn index
    without: int  # turns without a usable passage vector from the model
    awaiting: np.ndarray  # turn indices without passage vectors (a vector may come later)
    prose: VectorSet  # prose vectors of the turns holding code (`prose`), owner = turn index
    prose_awaiting: np.ndarray  # turn indices holding code without a usable prose vector


class TurnReader:
    """Reads Actions into turns one vertex at a time, as a walk admits them (`ownership.ActionVisit`):
    each stored vector is packed the moment it is read (see `vector_rows`), so neither the vectors'
    Python floats nor the Properties objects outlive their turn."""

    def __init__(
        self, model: str, dim: int | None, malformed: Counter, reuse: TurnReuse | None = None
    ) -> None:
        """`reuse`: the turns an old entry read, taken instead of reading them again (`turn_reuse`)."""
        self.malformed, self.dim, self.reuse = malformed, dim, reuse
        self.rows: list[tuple] = []  # TurnTable's columns, then the passages of a text longer than one
        self.collector = VectorCollector("message", model, dim, malformed)
        self.prose = VectorCollector("prose", model, dim, malformed)
        self.coded: list[int] = []  # the rows whose text holds prose of its own (`prose.prose_text`)
        self.model = model
        self._vectored: list[bool] = []
        self.reused: set[int] = set()  # the Actions (vertex ids) whose turns were taken over unread

    def add(self, item: OwnedAction, vertex: Any) -> None:
        if self.reuse is not None and self.collector.pack is not None:
            kept = self.reuse.row(item.vertex_id, item.action_id, item.session_id)
            if kept is not None:
                row, start, end = kept
                matrix = self.reuse.vectors.matrix
                self._vectored.append(self.collector.add_taken(len(self.rows), matrix, start, end))
                self.rows.append(row)
                self.reused.add(item.vertex_id)
                return
        props = vertex.properties
        fields = turn_fields(props, self.malformed)
        if fields is None:
            return
        text = fields[3]
        passages = passages_of(text) if len(text) > PASSAGE_CHARS else None
        stored_model = props.get(s.EMBEDDING_MODEL)
        vectors = props.get(s.PASSAGE_EMBEDDINGS) if stored_model == self.model else None
        count = len(passages) if passages else 1
        self._vectored.append(self.collector.add(len(self.rows), stored_model, vectors, count))
        if FENCE in text:
            self._add_prose(props, text)
        self.rows.append((item.vertex_id, item.action_id, item.session_id, *fields, passages))

    def _add_prose(self, props: Any, text: str) -> None:
        """The prose vector of the row being added, when its text holds prose of its own and the vector
        stored was made from that prose by the model (`prose.prose_digest`)."""
        prose = prose_text(text)
        if prose is None:
            return
        self.coded.append(len(self.rows))
        if made_from(props, prose):
            stored = props.get(s.PROSE_EMBEDDING_MODEL), props.get(s.PROSE_EMBEDDING)
            self.prose.add(len(self.rows), *stored, None)

    def finish(self, keep: Container[int] | None = None) -> ReadTurns:
        """The turns read (of Action vertex ids in `keep`, when given) in time order, their vectors, how
        many lack one from the model, and which (positions) have none (a vector may come later); the
        same of the prose vectors of those holding code."""
        rows = self.rows
        kept = range(len(rows)) if keep is None else [i for i, row in enumerate(rows) if row[0] in keep]
        keys = time_order_keys(list(map(itemgetter(3), rows)), list(map(itemgetter(1), rows)))
        order = sorted(kept, key=keys.__getitem__)
        vectors, bad = self.collector.build()
        prose, _ = self.prose.build()
        coded = np.zeros(len(rows), dtype=bool)
        coded[self.coded] = True
        if order != list(range(len(rows))):
            at = np.asarray(order, dtype=np.int64)
            vectors, prose = vectors.renumbered(at, len(rows)), prose.renumbered(at, len(rows))
            coded = coded[at]
        with_vectors = sum(map(self._vectored.__getitem__, order))
        bad_kept = len(bad.intersection(order)) if bad else 0
        rows = list(map(rows.__getitem__, order))
        without = len(rows) - with_vectors + bad_kept if self.dim is not None else len(rows)
        # Column by column: `zip(*rows)` would hold an iterator per row, 100k objects for the collector.
        columns = [list(map(itemgetter(k), rows)) for k in range(8)] if rows else []
        passages = columns.pop() if rows else []
        split = {
            i: passages[i]
            for i in compress(range(len(rows)), map(is_not, passages, repeat(None)))
            if passages[i] != (columns[6][i],)
        }
        prose_awaiting = np.setdiff1d(np.flatnonzero(coded), prose.owner) if self.dim is not None else []
        return ReadTurns(
            TurnTable(*columns, split=split), vectors, without, vectors.without_rows(len(rows)), prose,
            np.asarray(prose_awaiting, dtype=np.int64),
        )


def read_turns(
    actions: Sequence[OwnedAction],
    lookup: Callable[[int], Any],
    model: str,
    dim: int | None,
    malformed: Counter,
    abort: Callable[[], None],
) -> ReadTurns:
    """The turns of `actions` (looked up by id) in time order: `TurnReader.finish`."""
    reader = TurnReader(model, dim, malformed)
    for count, item in enumerate(actions):
        if count % 512 == 0:
            abort()
        vertex = lookup(item.vertex_id)
        if vertex is not None:  # else deleted while this call ran: verification would refuse it anyway
            reader.add(item, vertex)
    return reader.finish()


def fact_of(item: OwnedFact, malformed: Counter) -> Fact | None:
    """The Fact an owned fact edge reads as (None without its texts); shared by builds and verification."""
    edge = item.edge
    head_vertex, tail_vertex = item.ends
    text, valid_at, role, confidence = fact_fields(edge.properties, malformed)
    head = USER_END if item.head_is_user else entity_text(head_vertex.properties)
    tail = USER_END if item.tail_is_user else entity_text(tail_vertex.properties)
    if text is None or head is None or tail is None:
        malformed["fact: no text (or an endpoint without text)"] += 1
        return None
    return Fact(
        edge.id, head_vertex.id, tail_vertex.id, head, edge.type.name, tail, item.source_id, text, valid_at,
        role, confidence,
    )


def fact_fields(
    props: Any, malformed: Counter
) -> tuple[str | None, datetime | None, str | None, float | None]:
    """(text, valid_at, role, confidence) of a fact edge's properties, as its Fact holds them."""
    return (
        _text(props.get(s.TEXT)),
        _time(props.get(s.VALID_AT), "fact", malformed),
        _text(props.get(s.ROLE)),
        _confidence(props.get(s.CONFIDENCE)),
    )


def entity_text(props: Any) -> str | None:
    """An entity's (or a fact end's) text as recall holds it; None: it has none (malformed)."""
    return _text(props.get(s.TEXT))


def read_facts(
    owned: OwnedGraph, model: str, dim: int | None, malformed: Counter
) -> tuple[tuple[Fact, ...], VectorSet, np.ndarray]:
    facts: list[Fact] = []
    collector = VectorCollector("fact", model, dim, malformed)
    for item in owned.facts:
        fact = fact_of(item, malformed)
        if fact is not None:
            props = item.edge.properties
            collector.add(len(facts), props.get(s.EMBEDDING_MODEL), props.get(s.EMBEDDING), None)
            facts.append(fact)
    vectors, _ = collector.build()
    return tuple(facts), vectors, vectors.without_rows(len(facts))


def read_entities(
    owned: OwnedGraph, facts: tuple[Fact, ...], model: str, dim: int | None, malformed: Counter
) -> tuple[tuple[Entity, ...], VectorSet, np.ndarray]:
    by_vertex: dict[int, list[int]] = {}
    for i, fact in enumerate(facts):
        by_vertex.setdefault(fact.head_vertex_id, []).append(i)
        if fact.tail_vertex_id != fact.head_vertex_id:
            by_vertex.setdefault(fact.tail_vertex_id, []).append(i)
    entities: list[Entity] = []
    collector = VectorCollector("entity", model, dim, malformed)
    for vertex in owned.entities:
        props = vertex.properties
        text = entity_text(props)
        if text is None:
            malformed["entity: no text"] += 1
            continue
        ranked = sorted(
            by_vertex.get(vertex.id, ()),
            key=lambda i: (-(facts[i].confidence if facts[i].confidence is not None else -1.0), i),
        )
        collector.add(len(entities), props.get(s.EMBEDDING_MODEL), props.get(s.EMBEDDING), None)
        entities.append(Entity(vertex.id, text, tuple(ranked)))
    vectors, _ = collector.build()
    return tuple(entities), vectors, vectors.without_rows(len(entities))


def note_of(vertex: Any, malformed: Counter) -> Note | None:
    """The Note a Memory vertex reads as (None without content or id); shared by builds and verification."""
    props = vertex.properties
    content = _text(props.get(s.CONTENT))
    memory_id = id_text(props.get(s.MEMORY_ID))
    if content is None or memory_id is None:
        malformed["memory: no content or memory_id"] += 1
        return None
    return Note(
        vertex.id,
        memory_id,
        _text(props.get(s.PATH)) or memory_id,
        content,
        _time(props.get(s.UPDATED_AT), "memory", malformed),
        passages_of(content),
    )


def read_notes(
    vertices: Sequence[Any], model: str, dim: int | None, malformed: Counter
) -> tuple[tuple[Note, ...], VectorSet, np.ndarray]:
    """The notes of the user's Memory `vertices` and their passage vectors."""
    notes: list[Note] = []
    collector = VectorCollector("memory", model, dim, malformed)
    for vertex in vertices:
        note = note_of(vertex, malformed)
        if note is None:
            continue
        props = vertex.properties
        collector.add(
            len(notes), props.get(s.EMBEDDING_MODEL), props.get(s.PASSAGE_EMBEDDINGS), len(note.passages)
        )
        notes.append(note)
    vectors, _ = collector.build()
    return tuple(notes), vectors, vectors.without_rows(len(notes))


#: The longest ontology `pool` read (a JSON string or a map); a longer one is skipped as malformed.
MAX_POOL_CHARS = 1_000_000
#: The most relation types read from one pool.
MAX_RELATION_TYPES = 10_000


def relation_descriptions(ontologies: Sequence[Any], malformed: Counter) -> dict[str, str]:
    """Relation type -> description from the user's adopted ontologies (first description wins).

    A pool is stored data anyone with write access shaped: it is size-limited, parsed with recursion
    errors caught (a pool nested thousands deep), and only its top two levels are looked at; anything
    else is skipped and counted.
    """
    descriptions: dict[str, str] = {}
    for vertex in ontologies:
        types = _relation_types(vertex)
        if types is None:
            malformed["ontology: unreadable pool"] += 1
            continue
        for item in types[:MAX_RELATION_TYPES]:
            if isinstance(item, dict) and _text(item.get("label")) and _text(item.get("description")):
                descriptions.setdefault(item["label"], item["description"].strip())
    return descriptions


def _relation_types(vertex: Any) -> list | tuple | None:
    """The `relation_types` list of an ontology vertex's pool, or None when it cannot be read."""
    try:
        pool = vertex.properties.get(s.POOL)
        if isinstance(pool, str):
            if len(pool) > MAX_POOL_CHARS:
                return None
            pool = json.loads(pool)
    except (ValueError, RecursionError):
        return None
    types = pool.get("relation_types", []) if isinstance(pool, dict) else None
    return types if isinstance(types, (list, tuple)) else None
