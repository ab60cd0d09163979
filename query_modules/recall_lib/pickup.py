"""Vectors written after a snapshot was built, picked up without a rebuild.

A snapshot remembers which items it holds without a usable vector from its model
(`snapshot.Awaiting`). Whoever writes their vectors later (`recall.embed`, an ingest client), the next
call looks at up to `limit` of them, from where the last look stopped, and reads those that now name
the model (each is then no longer awaited, even if what it holds is malformed). Nothing awaited: no
cost. Many awaited: a bounded cost per call, the rest on later calls.
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from . import schema as s
from .kinds import ENTITY, FACT, NOTE, PROSE, TURN
from .prose import made_from, prose_text
from .snapshot import UserSnapshot
from .vector_rows import VectorCollector

#: kind -> (the snapshot's VectorSet field, the property holding the vectors, the one naming their
#: model, per passage?)
_KINDS = {
    TURN: ("turn_vectors", s.PASSAGE_EMBEDDINGS, s.EMBEDDING_MODEL, True),
    ENTITY: ("entity_vectors", s.EMBEDDING, s.EMBEDDING_MODEL, False),
    FACT: ("fact_vectors", s.EMBEDDING, s.EMBEDDING_MODEL, False),
    NOTE: ("note_vectors", s.PASSAGE_EMBEDDINGS, s.EMBEDDING_MODEL, True),
    PROSE: ("prose_vectors", s.PROSE_EMBEDDING, s.PROSE_EMBEDDING_MODEL, False),
}
#: The fields of the snapshot itself (the others are its fact part's).
_TURN_FIELDS = ("turn_vectors", "prose_vectors")


def pick_up(
    snapshot: UserSnapshot, properties_of: Callable[[str, int], Any], start: int, limit: int
) -> tuple[UserSnapshot | None, int]:
    """(the snapshot with every vector found among `limit` awaited items from position `start`, or None
    when none was found; where the next look starts). `properties_of(kind, index)` gives an item's live
    properties, or None when it is gone (verification deals with that)."""
    awaiting = snapshot.awaiting
    queue = [(kind, int(i)) for kind in _KINDS for i in getattr(awaiting, kind)]
    if not queue:
        return None, 0
    start %= len(queue)
    looked = (queue[start:] + queue[:start])[:limit]
    found: dict[str, list[tuple[int, Any]]] = {kind: [] for kind in _KINDS}
    for kind, index in looked:
        props = properties_of(kind, index)
        if props is None or props.get(_KINDS[kind][2]) != snapshot.model:
            continue
        if _fresh(snapshot, kind, index, props):
            found[kind].append((index, props))
    after = (start + len(looked)) % len(queue)
    if not any(found.values()) or snapshot.dimension is None:
        return None, after
    changes: dict[str, Any] = {}
    done: dict[str, np.ndarray] = {}
    turns_with_vectors = 0
    malformed: Counter = Counter()
    for kind, items in found.items():
        if not items:
            continue
        field, key, model_key, by_passage = _KINDS[kind]
        collector = VectorCollector(kind, snapshot.model, snapshot.dimension, malformed)
        for index, props in sorted(items, key=lambda item: item[0]):
            passages = _passages(snapshot, kind, index) if by_passage else None
            collector.add(index, props.get(model_key), props.get(key), passages)
        vectors, _ = collector.build()
        changes[field] = getattr(snapshot, field).with_rows(vectors)
        if kind == TURN:
            turns_with_vectors = len(np.unique(vectors.owner))
        done[kind] = np.asarray([index for index, _ in items], dtype=np.int64)
    part_fields = {f: v for f, v in changes.items() if f not in _TURN_FIELDS}
    picked = replace(
        snapshot,
        **{f: v for f, v in changes.items() if f in _TURN_FIELDS},
        part=replace(snapshot.part, **part_fields),
        turns_without_vectors=snapshot.turns_without_vectors - turns_with_vectors,
        awaiting=replace(
            awaiting,
            **{kind: np.setdiff1d(getattr(awaiting, kind), indices) for kind, indices in done.items()},
        ),
    )
    return picked, after


def _fresh(snapshot: UserSnapshot, kind: str, index: int, props: Any) -> bool:
    """Whether a prose vector was made from the turn's prose as held (`prose.prose_digest`); any other
    kind's vector is a function of what its reading holds."""
    if kind != PROSE:
        return True
    prose = prose_text(snapshot.turns.texts[index])
    return prose is not None and made_from(props, prose)


def _passages(snapshot: UserSnapshot, kind: str, index: int) -> int:
    if kind == TURN:
        return len(snapshot.turns.passages(index))
    return len(snapshot.notes[index].passages)
