"""`UserMemory`: a plain-data snapshot of one user's recallable data for one embedding model.

This is the seam for the per-user cache: lanes run over a `UserMemory` and the question only, and the
snapshot holds no mgp objects (those die with the procedure call), just ids, strings and numpy arrays.
`build_user_memory` is the one place that reads the graph for recall.
"""

import json
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from typing import Any

import numpy as np

from .ownership import GraphIndex, OwnedAction, OwnedFact, OwnedGraph, collect_owned, id_text
from .passages import PASSAGE_CHARS, split_passages
from .ranking import TurnFacts, neighbour_links
from .textindex import BM25Index, tokenize
from .timeparse import to_utc
from .turn_table import Turn, TurnTable, time_order
from .vector_rows import VectorCollector, VectorSet

MESSAGE_TYPES = ("user_message", "assistant_message")
_DEFAULT_SPEAKERS = {"user_message": "user", "assistant_message": "assistant"}


@dataclass(frozen=True, slots=True)
class Entity:
    vertex_id: int
    text: str
    facts: tuple[int, ...]  # indices into UserMemory.facts, most confident first


@dataclass(frozen=True, slots=True)
class Fact:
    edge_id: int
    head_vertex_id: int
    tail_vertex_id: int
    head: str  # entity text, or "user"
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


@dataclass(frozen=True)
class FilterArrays:
    """Times and sessions of a list of items as arrays, so `since`/`until`/`exclude_sessions` are numpy."""

    epoch: np.ndarray  # float64 UTC seconds, NaN when unknown
    session: np.ndarray  # int64 index into `sessions`, -1 when unknown
    sessions: tuple[str, ...]

    @classmethod
    def of(cls, times: Sequence[datetime | None], sessions: Sequence[str | None]) -> "FilterArrays":
        names = tuple(sorted({s for s in sessions if s is not None}))
        code = {name: i for i, name in enumerate(names)}
        epoch = np.fromiter(
            (t.timestamp() if t is not None else np.nan for t in times), dtype=np.float64, count=len(times)
        )
        session = np.fromiter(
            (code.get(s, -1) if s is not None else -1 for s in sessions), dtype=np.int64, count=len(sessions)
        )
        return cls(epoch, session, names)

    def mask(self, since: datetime | None, until: datetime | None, excluded: Collection[str]) -> np.ndarray:
        """Items inside the window (an unknown time is never inside a set window), not in `excluded`."""
        keep = np.ones(len(self.epoch), dtype=bool)
        if since is not None:
            keep &= self.epoch >= since.timestamp()  # NaN compares False
        if until is not None:
            keep &= self.epoch <= until.timestamp()
        codes = [i for i, name in enumerate(self.sessions) if name in excluded]
        if codes:
            keep &= ~np.isin(self.session, codes)
        return keep


@dataclass(frozen=True)
class UserMemory:
    user_vertex_id: int
    user_id: str | None
    model: str
    dimension: int | None  # None when the model is not loaded: no vectors are used
    turns: TurnTable  # in time order (no timestamp last)
    turn_vectors: VectorSet
    entities: tuple[Entity, ...]
    entity_vectors: VectorSet
    facts: tuple[Fact, ...]
    fact_vectors: VectorSet
    memories: tuple[Note, ...]
    memory_vectors: VectorSet
    text_index: BM25Index  # over turn texts
    memory_text_index: BM25Index  # over note contents
    turn_by_action: Mapping[str, int]
    action_sessions: Mapping[str, str | None]  # every owned action id -> its session id
    relation_descriptions: Mapping[str, str]
    turns_without_vectors: int
    malformed: Mapping[str, int]

    @cached_property
    def turn_filter(self) -> "FilterArrays":
        """Per turn: UTC epoch seconds (NaN when unknown) and session code, for vectorised filters."""
        return FilterArrays.of(self.turns.timestamps, self.turns.session_ids)

    @cached_property
    def turn_facts(self) -> TurnFacts:
        """What the ranking's signals read per turn: session, time, neighbours in the session, speaker."""
        filters = self.turn_filter
        previous, following = neighbour_links(filters.session)
        return TurnFacts(filters.session, filters.epoch, previous, following, self.turns.speakers)

    @cached_property
    def participants(self) -> dict[str, tuple[str, ...]]:
        """Each distinct speaker of this user's turns -> its name's words (to see it named in a question)."""
        return {name: tuple(tokenize(name)) for name in set(self.turns.speakers)}

    @cached_property
    def fact_filter(self) -> "FilterArrays":
        """Per fact: `valid_at` (else its source turn's time) and the source action's session."""
        times, sessions = [], []
        for fact in self.facts:
            turn = self.turn_by_action.get(fact.source_id)
            times.append(fact.valid_at or (self.turns.timestamps[turn] if turn is not None else None))
            sessions.append(self.action_sessions.get(fact.source_id))
        return FilterArrays.of(times, sessions)

    @cached_property
    def fact_types(self) -> tuple[tuple[str, ...], np.ndarray]:
        """The relation types present, sorted, and each fact's index into them."""
        names = tuple(sorted({f.type for f in self.facts}))
        code = {name: i for i, name in enumerate(names)}
        return names, np.fromiter((code[f.type] for f in self.facts), dtype=np.int64, count=len(self.facts))

    @classmethod
    def empty(cls, user_vertex_id: int, user_id: str | None, model: str, dim: int | None) -> "UserMemory":
        """The memory of a user with nothing recallable (an unknown user is an empty memory)."""
        none = VectorSet.empty(dim)
        return cls(
            user_vertex_id,
            user_id,
            model,
            dim,
            TurnTable(),
            none,
            (),
            none,
            (),
            none,
            (),
            none,
            BM25Index.build([]),
            BM25Index.build([]),
            {},
            {},
            {},
            0,
            {},
        )

    @property
    def has_vectors(self) -> bool:
        return any(
            len(v) for v in (self.turn_vectors, self.entity_vectors, self.fact_vectors, self.memory_vectors)
        )

    @property
    def has_units(self) -> bool:
        return bool(self.turns or self.entities or self.facts or self.memories)

    def fact_session(self, fact: Fact) -> str | None:
        return self.action_sessions.get(fact.source_id)

    def fact_turn(self, fact: Fact) -> int | None:
        return self.turn_by_action.get(fact.source_id)


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


def build_user_memory(
    user: Any, index: GraphIndex, model: str, dim: int | None, abort: Callable[[], None]
) -> UserMemory:
    """Read everything `user` (a User vertex) owns into a UserMemory for `model` (dimension `dim`)."""
    return memory_from_owned(collect_owned(user, index, abort), model, dim, abort)


def memory_from_owned(
    owned: OwnedGraph, model: str, dim: int | None, abort: Callable[[], None]
) -> UserMemory:
    """The UserMemory of what `collect_owned` found (split out so the cache can keep the owned ids)."""
    user = owned.user
    malformed: Counter = Counter()
    turns, turn_vectors, without = read_turns(owned.actions, model, dim, malformed, abort)
    facts, fact_vectors = _read_facts(owned, model, dim, malformed)
    entities, entity_vectors = _read_entities(owned, facts, model, dim, malformed)
    memories, memory_vectors = read_memories(owned.memories, model, dim, malformed)
    abort()
    return UserMemory(
        user_vertex_id=user.id,
        user_id=id_text(user.properties.get("user_id")),
        model=model,
        dimension=dim,
        turns=turns,
        turn_vectors=turn_vectors,
        entities=entities,
        entity_vectors=entity_vectors,
        facts=facts,
        fact_vectors=fact_vectors,
        memories=memories,
        memory_vectors=memory_vectors,
        text_index=BM25Index.build(turns.texts),
        memory_text_index=BM25Index.build([n.content for n in memories]),
        turn_by_action={action_id: i for i, action_id in enumerate(turns.action_ids)},
        action_sessions={a.action_id: a.session_id for a in owned.actions},
        relation_descriptions=relation_descriptions(owned.ontologies, malformed),
        turns_without_vectors=without,
        malformed=dict(malformed),
    )


def turn_of(item: OwnedAction, malformed: Counter) -> Turn | None:
    """The Turn an owned Action reads as (None when it has no text); shared by builds and verification."""
    fields = _turn_fields(item.vertex.properties, malformed)
    if fields is None:
        return None
    timestamp, speaker, action_type, text = fields
    return Turn(
        item.vertex_id,
        item.action_id,
        item.session_id,
        timestamp,
        speaker,
        action_type,
        text,
        passages_of(text),
    )


def _turn_fields(props: Any, malformed: Counter) -> tuple[datetime | None, str, str, str] | None:
    """(timestamp, speaker, action_type, text) of an Action's properties; None when it has no text."""
    action_type = props.get("action_type")
    action_type = action_type if isinstance(action_type, str) else ""
    text = _text(props.get("text"))
    if text is None:
        if action_type in MESSAGE_TYPES:
            malformed["message: no text"] += 1
        return None
    speaker = _text(props.get("speaker")) or _DEFAULT_SPEAKERS.get(action_type) or action_type or "unknown"
    return _time(props.get("timestamp"), "message", malformed), speaker, action_type, text


def read_turns(
    actions: Sequence[OwnedAction], model: str, dim: int | None, malformed: Counter, abort: Callable[[], None]
) -> tuple[TurnTable, VectorSet, int]:
    """The turns of `actions` in time order, their vectors, and how many lack one from `model`.

    Two passes: texts and times first, to sort; then vectors in that order, each packed as it is read
    (see `vector_rows`), so no reordering copy of the matrix is needed.
    """
    rows: list[tuple] = []  # TurnTable's columns, then the Properties to read vectors from
    for count, item in enumerate(actions):
        if count % 512 == 0:
            abort()
        props = item.vertex.properties
        fields = _turn_fields(props, malformed)
        if fields is not None:
            rows.append((item.vertex_id, item.action_id, item.session_id, *fields, props))
    rows.sort(key=lambda row: time_order(row[3], row[1]))
    collector = VectorCollector("message", model, dim, malformed)
    with_vectors = 0
    split = {}  # TurnTable keeps passages only where they are not the text itself
    for i, row in enumerate(rows):
        if len(row[6]) > PASSAGE_CHARS and (passages := passages_of(row[6])) != (row[6],):
            split[i] = passages
    for position, row in enumerate(rows):
        if position % 512 == 0:
            abort()
        props = row[7]
        stored_model = props.get("embedding_model")
        vectors = props.get("passage_embeddings") if stored_model == model else None
        passages = len(split[position]) if position in split else 1
        with_vectors += collector.add(position, stored_model, vectors, passages)
    vectors, bad = collector.build()
    without = len(rows) - with_vectors + len(bad) if dim is not None else len(rows)
    columns = [tuple(column) for column in zip(*rows, strict=True)][:7] if rows else []
    return TurnTable(*columns, split=split), vectors, without


def fact_of(item: OwnedFact, malformed: Counter) -> Fact | None:
    """The Fact an owned fact edge reads as (None without its texts); shared by builds and verification."""
    edge, props = item.edge, item.edge.properties
    text = _text(props.get("text"))
    head = "user" if item.head_is_user else _text(edge.from_vertex.properties.get("text"))
    tail = "user" if item.tail_is_user else _text(edge.to_vertex.properties.get("text"))
    if text is None or head is None or tail is None:
        malformed["fact: no text (or an endpoint without text)"] += 1
        return None
    return Fact(
        edge.id,
        edge.from_vertex.id,
        edge.to_vertex.id,
        head,
        edge.type.name,
        tail,
        item.source_id,
        text,
        _time(props.get("valid_at"), "fact", malformed),
        _text(props.get("role")),
        _confidence(props.get("confidence")),
    )


def _read_facts(
    owned: OwnedGraph, model: str, dim: int | None, malformed: Counter
) -> tuple[tuple[Fact, ...], VectorSet]:
    facts: list[Fact] = []
    collector = VectorCollector("fact", model, dim, malformed)
    for item in owned.facts:
        fact = fact_of(item, malformed)
        if fact is not None:
            props = item.edge.properties
            collector.add(len(facts), props.get("embedding_model"), props.get("embedding"), None)
            facts.append(fact)
    vectors, _ = collector.build()
    return tuple(facts), vectors


def _read_entities(
    owned: OwnedGraph, facts: tuple[Fact, ...], model: str, dim: int | None, malformed: Counter
) -> tuple[tuple[Entity, ...], VectorSet]:
    by_vertex: dict[int, list[int]] = {}
    for i, fact in enumerate(facts):
        by_vertex.setdefault(fact.head_vertex_id, []).append(i)
        if fact.tail_vertex_id != fact.head_vertex_id:
            by_vertex.setdefault(fact.tail_vertex_id, []).append(i)
    entities: list[Entity] = []
    collector = VectorCollector("entity", model, dim, malformed)
    for vertex in owned.entities:
        props = vertex.properties
        text = _text(props.get("text"))
        if text is None:
            malformed["entity: no text"] += 1
            continue
        ranked = sorted(
            by_vertex.get(vertex.id, ()),
            key=lambda i: (-(facts[i].confidence if facts[i].confidence is not None else -1.0), i),
        )
        collector.add(len(entities), props.get("embedding_model"), props.get("embedding"), None)
        entities.append(Entity(vertex.id, text, tuple(ranked)))
    vectors, _ = collector.build()
    return tuple(entities), vectors


def note_of(vertex: Any, malformed: Counter) -> Note | None:
    """The Note a Memory vertex reads as (None without content or id); shared by builds and verification."""
    props = vertex.properties
    content = _text(props.get("content"))
    memory_id = id_text(props.get("memory_id"))
    if content is None or memory_id is None:
        malformed["memory: no content or memory_id"] += 1
        return None
    return Note(
        vertex.id,
        memory_id,
        _text(props.get("path")) or memory_id,
        content,
        _time(props.get("updated_at"), "memory", malformed),
        passages_of(content),
    )


def read_memories(
    vertices: Sequence[Any], model: str, dim: int | None, malformed: Counter
) -> tuple[tuple[Note, ...], VectorSet]:
    """The notes of the user's Memory `vertices` and their passage vectors."""
    notes: list[Note] = []
    collector = VectorCollector("memory", model, dim, malformed)
    for vertex in vertices:
        note = note_of(vertex, malformed)
        if note is None:
            continue
        props = vertex.properties
        collector.add(
            len(notes), props.get("embedding_model"), props.get("passage_embeddings"), len(note.passages)
        )
        notes.append(note)
    vectors, _ = collector.build()
    return tuple(notes), vectors


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
        pool = vertex.properties.get("pool")
        if isinstance(pool, str):
            if len(pool) > MAX_POOL_CHARS:
                return None
            pool = json.loads(pool)
    except (ValueError, RecursionError):
        return None
    types = pool.get("relation_types", []) if isinstance(pool, dict) else None
    return types if isinstance(types, (list, tuple)) else None
