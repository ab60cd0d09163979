"""`UserSnapshot`: one user's recallable data for one embedding model, as plain data the lanes run over.

The snapshot holds no mgp objects (those die with the procedure call), only ids, strings and numpy
arrays, so the cache can keep it between calls. It is built from what `ownership.collect_owned` found
(`build_snapshot`), and derived from an older one in two cheap ways the cache uses: new turns appended
(`with_new_turns`) and facts, entities, notes and ontologies read again (`with_facts_reread`). Every
field is computed when the snapshot is made; nothing is filled in later.
"""

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from . import schema as s
from .kinds import ENTITY, FACT, NOTE
from .layered import Layered
from .ownership import OwnedAction, OwnedGraph, id_text
from .prose import prose_text
from .ranking import TurnFacts, neighbour_links, session_openers, session_order
from .reading import (
    Entity,
    Fact,
    Note,
    TurnReader,
    read_entities,
    read_facts,
    read_notes,
    read_turns,
    relation_descriptions,
)
from .textindex import BM25Index, tokenize
from .turn_table import TurnTable, time_order
from .vector_rows import VectorSet


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

    def __add__(self, other: "FilterArrays") -> "FilterArrays":
        """This list's items, then `other`'s, `other`'s session codes renumbered into one table."""
        known = set(self.sessions)
        names = self.sessions + tuple(name for name in other.sessions if name not in known)
        code = {name: i for i, name in enumerate(names)}
        renumber = np.array([code[name] for name in other.sessions] + [-1], dtype=np.int64)  # -1 stays
        return FilterArrays(
            np.concatenate([self.epoch, other.epoch]),
            np.concatenate([self.session, renumber[other.session]]),
            names,
        )

    def mask(self, since: datetime | None, until: datetime | None, excluded: Collection[str]) -> np.ndarray:
        """Items inside the window (an unknown time is never inside a set window), not in `excluded`."""
        keep = np.ones(len(self.epoch), dtype=bool)
        if since is not None:
            keep &= self.epoch >= since.timestamp()  # NaN compares False
        if until is not None:
            keep &= self.epoch <= until.timestamp()
        codes = [i for i, name in enumerate(self.sessions) if name in excluded] if excluded else []
        if codes:
            keep &= ~np.isin(self.session, codes)
        return keep


@dataclass(frozen=True)
class Awaiting:
    """Items held without a usable vector from the model: the cache looks for vectors written since
    on later calls (`pickup`)."""

    turn: np.ndarray  # indices into the snapshot's turns
    entity: np.ndarray
    fact: np.ndarray
    note: np.ndarray
    prose: np.ndarray  # indices into the snapshot's turns: those holding code, without a prose vector


@dataclass(frozen=True)
class FactPart:
    """The facts, entities, notes and ontology descriptions of a snapshot (re-read together)."""

    entities: tuple[Entity, ...]
    entity_vectors: VectorSet
    facts: tuple[Fact, ...]
    fact_vectors: VectorSet
    notes: tuple[Note, ...]
    note_vectors: VectorSet
    note_text_index: BM25Index
    relation_descriptions: Mapping[str, str]


@dataclass(frozen=True)
class UserSnapshot:
    user_vertex_id: int
    user_id: str | None
    model: str
    dimension: int | None  # None when the model is not loaded: no vectors are used
    turns: TurnTable  # in time order (no timestamp last)
    turn_vectors: VectorSet
    prose_vectors: VectorSet  # of the turns holding fenced code (`prose`): the turns lane's in their place
    text_index: BM25Index  # over turn texts
    turn_filter: FilterArrays
    turn_facts: TurnFacts  # what the ranking's signals read per turn
    participants: Mapping[str, tuple[str, ...]]  # each speaker of the turns -> its name's words
    turn_by_action: Mapping[str, int]
    action_sessions: Mapping[str, str | None]  # every owned action id -> its session id
    part: FactPart
    fact_filter: FilterArrays
    fact_types: tuple[tuple[str, ...], np.ndarray]  # relation types present (sorted), each fact's code
    turns_without_vectors: int
    awaiting: Awaiting
    malformed: Mapping[str, int]
    skipped: Mapping[str, int]  # ownership rule -> items it turned away

    # The fact part's fields, read as the snapshot's own.
    entities = property(lambda self: self.part.entities)
    entity_vectors = property(lambda self: self.part.entity_vectors)
    facts = property(lambda self: self.part.facts)
    fact_vectors = property(lambda self: self.part.fact_vectors)
    notes = property(lambda self: self.part.notes)
    note_vectors = property(lambda self: self.part.note_vectors)
    note_text_index = property(lambda self: self.part.note_text_index)
    relation_descriptions = property(lambda self: self.part.relation_descriptions)

    @property
    def has_vectors(self) -> bool:
        return any(
            len(v) for v in (self.turn_vectors, self.entity_vectors, self.fact_vectors, self.note_vectors)
        )

    @property
    def has_units(self) -> bool:
        return bool(self.turns or self.entities or self.facts or self.notes)

    def fact_turn(self, fact: Fact) -> int | None:
        return self.turn_by_action.get(fact.source_id)


# -- building -----------------------------------------------------------------------------------------
def searched_texts(texts: Iterable[str]) -> list[str]:
    """What the text index holds of each turn: its prose when it holds fenced code (`prose`), else its
    text. Why: as for the prose vector, a question asks what was said, and the identifiers of pasted
    code match its words by accident ("score", "message", "time")."""
    return [prose_text(text) or text for text in texts]  # prose_text: None without a fence


def _turn_facts(turns: TurnTable, turn_filter: FilterArrays) -> TurnFacts:
    order = session_order(turn_filter.session)
    previous, following = neighbour_links(turn_filter.session, order)
    openers, near_opening, one_topic = session_openers(turn_filter.session, order)
    return TurnFacts(
        turn_filter.session,
        turn_filter.epoch,
        previous,
        following,
        turns.speakers,
        turns.action_types,
        openers,
        near_opening,
        one_topic,
    )


def _participants(speakers: Iterable[str], known: Mapping[str, tuple[str, ...]] | None = None) -> dict:
    """Each speaker -> its name's words (`known`: those already tokenised, kept)."""
    known = known or {}
    return {**known, **{name: tuple(tokenize(name)) for name in set(speakers) if name not in known}}


def _fact_derived(
    facts: Sequence[Fact],
    turns: TurnTable,
    turn_by_action: Mapping[str, int],
    sessions: Mapping[str, str | None],
) -> tuple[FilterArrays, tuple[tuple[str, ...], np.ndarray]]:
    """Per fact: `valid_at` (else its source turn's time) and session; and the relation types present."""
    times, stamps = [], list(turns.timestamps)  # a plain list: one lookup per fact
    for fact in facts:
        turn = turn_by_action.get(fact.source_id)
        times.append(fact.valid_at or (stamps[turn] if turn is not None else None))
    fact_filter = FilterArrays.of(times, [sessions.get(f.source_id) for f in facts])
    names = tuple(sorted({f.type for f in facts}))
    code = {name: i for i, name in enumerate(names)}
    return fact_filter, (names, np.fromiter((code[f.type] for f in facts), dtype=np.int64, count=len(facts)))


def read_fact_part(
    owned: OwnedGraph, model: str, dim: int | None, malformed: Counter
) -> tuple[FactPart, dict[str, np.ndarray]]:
    """The fact part of what `owned` holds, and per kind the items awaiting a vector."""
    facts, fact_vectors, facts_awaiting = read_facts(owned, model, dim, malformed)
    entities, entity_vectors, entities_awaiting = read_entities(owned, facts, model, dim, malformed)
    notes, note_vectors, notes_awaiting = read_notes(owned.notes, model, dim, malformed)
    part = FactPart(
        entities,
        entity_vectors,
        facts,
        fact_vectors,
        notes,
        note_vectors,
        BM25Index.build([n.content for n in notes]),
        relation_descriptions(owned.ontologies, malformed),
    )
    return part, {ENTITY: entities_awaiting, FACT: facts_awaiting, NOTE: notes_awaiting}


def build_snapshot(
    owned: OwnedGraph,
    model: str,
    dim: int | None,
    abort: Callable[[], None],
    reader: TurnReader | None = None,
) -> UserSnapshot:
    """The snapshot of everything `owned` holds (its live objects are read here, once). `reader`: the
    turns the walk already read (`ownership.collect_owned(visit=reader.add)`), else they are read here."""
    malformed: Counter = Counter()
    if reader is None:
        read = read_turns(owned.actions, owned.lookup, model, dim, malformed, abort)
    else:
        malformed.update(reader.malformed)
        read = reader.finish(set(owned.actions.vertex_ids))
    turns = read.turns
    part, awaiting = read_fact_part(owned, model, dim, malformed)
    abort()
    turn_filter = FilterArrays.of(turns.timestamps, turns.session_ids)
    turn_facts, participants = _turn_facts(turns, turn_filter), _participants(turns.speakers)
    turn_by_action = {action_id: i for i, action_id in enumerate(turns.action_ids)}
    sessions = dict(zip(owned.actions.action_ids, owned.actions.session_ids, strict=True))
    fact_filter, fact_types = _fact_derived(part.facts, turns, turn_by_action, sessions)
    return UserSnapshot(
        user_vertex_id=owned.user.id,
        user_id=id_text(owned.user.properties.get(s.USER_ID)),
        model=model,
        dimension=dim,
        turns=turns,
        turn_vectors=read.vectors,
        prose_vectors=read.prose,
        text_index=BM25Index.build(searched_texts(turns.texts)),
        turn_filter=turn_filter,
        turn_facts=turn_facts,
        participants=participants,
        turn_by_action=turn_by_action,
        action_sessions=sessions,
        part=part,
        fact_filter=fact_filter,
        fact_types=fact_types,
        turns_without_vectors=read.without,
        awaiting=Awaiting(read.awaiting, **awaiting, prose=read.prose_awaiting),
        malformed=dict(malformed),
        skipped=dict(owned.skipped),
    )


def empty_snapshot(user_vertex_id: int, user_id: str | None, model: str, dim: int | None) -> UserSnapshot:
    """The snapshot of a user with nothing recallable (an unknown user is an empty snapshot)."""
    return build_snapshot(
        OwnedGraph(_NoUser(user_vertex_id, user_id), lambda _: None), model, dim, lambda: None
    )


class _NoUser:
    """Stands in for a User vertex no one owns anything under."""

    def __init__(self, vertex_id: int, user_id: str | None) -> None:
        self.id, self.properties = vertex_id, {s.USER_ID: user_id}


# -- deriving from an older snapshot ----------------------------------------------------------------
def with_new_turns(
    snapshot: UserSnapshot,
    actions: Sequence[OwnedAction],
    lookup: Callable[[int], Any],
    skipped: Mapping[str, int],
    abort: Callable[[], None],
) -> UserSnapshot | None:
    """`snapshot` with the turns of `actions` (new Actions the user owns) appended, as a full build
    would order them; None when one sorts before a turn already held (a back-filled session): then
    the caller builds in full rather than renumbering every index."""
    malformed: Counter = Counter(snapshot.malformed)
    read = read_turns(actions, lookup, snapshot.model, snapshot.dimension, malformed, abort)
    turns = read.turns
    held = snapshot.turns
    if not turns:
        return replace(snapshot, malformed=dict(malformed), skipped=_added(snapshot.skipped, skipped))
    if held and time_order(turns.timestamps[0], turns.action_ids[0]) < time_order(
        held.timestamps[-1], held.action_ids[-1]
    ):
        return None
    offset = len(held)
    all_turns = held + turns
    turn_filter = snapshot.turn_filter + FilterArrays.of(turns.timestamps, turns.session_ids)
    turn_by_action = Layered.over(
        snapshot.turn_by_action, {a: offset + i for i, a in enumerate(turns.action_ids)}
    )
    return replace(
        snapshot,
        turns=all_turns,
        turn_vectors=snapshot.turn_vectors.extended(read.vectors, offset),
        prose_vectors=snapshot.prose_vectors.extended(read.prose, offset),
        text_index=snapshot.text_index.extended(searched_texts(turns.texts)),
        turn_filter=turn_filter,
        turn_facts=_turn_facts(all_turns, turn_filter),
        participants=_participants(turns.speakers, snapshot.participants),
        turn_by_action=turn_by_action,
        action_sessions=Layered.over(snapshot.action_sessions, {a.action_id: a.session_id for a in actions}),
        turns_without_vectors=snapshot.turns_without_vectors + read.without,
        awaiting=replace(
            snapshot.awaiting,
            turn=np.concatenate([snapshot.awaiting.turn, read.awaiting + offset]),
            prose=np.concatenate([snapshot.awaiting.prose, read.prose_awaiting + offset]),
        ),
        malformed=dict(malformed),
        skipped=_added(snapshot.skipped, skipped),
    )


def with_fact_part(
    snapshot: UserSnapshot, part: FactPart, awaiting: Mapping[str, np.ndarray]
) -> UserSnapshot:
    """`snapshot` with its facts, entities, notes and ontology descriptions replaced (turns untouched)."""
    fact_filter, fact_types = _fact_derived(
        part.facts, snapshot.turns, snapshot.turn_by_action, snapshot.action_sessions
    )
    return replace(
        snapshot,
        part=part,
        fact_filter=fact_filter,
        fact_types=fact_types,
        awaiting=replace(snapshot.awaiting, **awaiting),
    )


def _added(first: Mapping[str, int], second: Mapping[str, int]) -> dict[str, int]:
    total = Counter(first)
    total.update(second)
    return dict(total)
