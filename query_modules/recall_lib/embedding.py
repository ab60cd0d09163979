"""The units recall embeds, in the upstream's shapes, and the `recall.embed` catch-up over them.

Units: a message's passages (`passage_embeddings`), an entity's `text` (`embedding`), a fact's
`"<head or 'user'> <type words> <tail or 'user'>. <text>"` (`embedding`), a note's passages
(`passage_embeddings`), and the prose of a message that holds fenced code (`prose_embedding`, with
its own `prose_embedding_model`: recall's vector, not the upstream's). A unit needs embedding unless
it holds a current vector from the model (`vectors.classify`), so a model change re-embeds instead of
mixing vectors.

`plan_embedding` + `compute_vectors` + `write_vectors` keep "compute everything, then write": a failure
or an abort while the model runs leaves the graph exactly as it was.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import schema as s
from .kinds import ENTITY, FACT, KINDS, NOTE, PROSE, PUBLIC_NAMES, TURN
from .ownership import OwnedGraph, collect_owned, labels_of
from .prose import made_from, prose_digest, prose_text
from .reading import USER_END, fact_embedding_text, passages_of, relation_descriptions, utc_time
from .vectors import CURRENT, MISSING, classify

_VECTOR_KEY = {
    TURN: s.PASSAGE_EMBEDDINGS,
    NOTE: s.PASSAGE_EMBEDDINGS,
    ENTITY: s.EMBEDDING,
    FACT: s.EMBEDDING,
    PROSE: s.PROSE_EMBEDDING,
}
#: The property naming the model of a kind's vectors: a message's prose vector has its own, as it is
#: written apart from (and may lag) the message's passage vectors.
MODEL_KEY = {kind: s.PROSE_EMBEDDING_MODEL if kind == PROSE else s.EMBEDDING_MODEL for kind in KINDS}


@dataclass(frozen=True)
class Unit:
    """One thing that carries vectors: the live vertex/edge and the texts its vectors are of."""

    kind: str
    target: Any
    texts: tuple[str, ...]

    @property
    def by_passage(self) -> bool:
        return _VECTOR_KEY[self.kind] == "passage_embeddings"

    def stored(self) -> tuple[Any, Any]:
        props = self.target.properties
        return props.get(MODEL_KEY[self.kind]), props.get(_VECTOR_KEY[self.kind])

    def status(self, model: str, dim: int | None) -> str:
        stored_model, vectors = self.stored()
        if self.kind == PROSE and vectors is not None and not self.fresh_prose():
            return MISSING  # made from the text before an edit: made again
        passages = len(self.texts) if self.by_passage else None
        return classify(stored_model, vectors, model, dim, passages)[0]

    def fresh_prose(self) -> bool:
        """Whether a prose unit's stored digest is its prose's (`prose.prose_digest`)."""
        return made_from(self.target.properties, self.texts[0])


@dataclass
class Units:
    units: list[Unit]
    malformed: Counter
    skipped: Counter = field(default_factory=Counter)  # ownership rule -> items it turned away
    sessions: list[Any] = field(default_factory=list)  # the Session vertices in scope


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _message_units(vertex: Any, malformed: Counter) -> list[Unit]:
    """A message's passages, and its prose when it holds fenced code (`prose.prose_text`)."""
    text = _text(vertex.properties.get(s.TEXT))
    if text is None:
        if vertex.properties.get(s.ACTION_TYPE) in s.MESSAGE_TYPES:
            malformed["message: no text"] += 1
        return []
    timestamp = vertex.properties.get("timestamp")
    if timestamp is not None and utc_time(timestamp) is None:
        malformed["message: unreadable time"] += 1  # still recalled (by its words), without a time
    prose = prose_text(text)
    passages = Unit(TURN, vertex, passages_of(text))
    return [passages] if prose is None else [passages, Unit(PROSE, vertex, (prose,))]


def _entity_unit(vertex: Any, malformed: Counter) -> Unit | None:
    text = _text(vertex.properties.get(s.TEXT))
    if text is None:
        malformed["entity: no text"] += 1
        return None
    return Unit(ENTITY, vertex, (text,))


def _memory_unit(vertex: Any, malformed: Counter) -> Unit | None:
    content = _text(vertex.properties.get("content"))
    if content is None:
        malformed["memory: no content"] += 1
        return None
    return Unit(NOTE, vertex, passages_of(content))


def _fact_unit(edge: Any, head_is_user: bool, tail_is_user: bool, malformed: Counter) -> Unit | None:
    text = _text(edge.properties.get(s.TEXT))
    head = USER_END if head_is_user else _text(edge.from_vertex.properties.get(s.TEXT))
    tail = USER_END if tail_is_user else _text(edge.to_vertex.properties.get(s.TEXT))
    if text is None or head is None or tail is None:
        malformed["fact: no text (or an endpoint without text)"] += 1
        return None
    return Unit(FACT, edge, (fact_embedding_text(head, edge.type.name, tail, text),))


def owned_units(owned: OwnedGraph) -> Units:
    """One user's units (what recall would read for them); unreadable ontology pools are counted too."""
    malformed: Counter = Counter()
    relation_descriptions(owned.ontologies, malformed)
    units: list[Unit | None] = [
        unit for action in owned.actions for unit in _message_units(owned.lookup(action.vertex_id), malformed)
    ]
    units += [_entity_unit(v, malformed) for v in owned.entities]
    units += [_fact_unit(f.edge, f.head_is_user, f.tail_is_user, malformed) for f in owned.facts]
    units += [_memory_unit(v, malformed) for v in owned.notes]
    in_scope = [owned.lookup(i) for i in owned.sessions]
    return Units([u for u in units if u is not None], malformed, Counter(owned.skipped), in_scope)


def units_of(graph: Any, cache: Any, user_id: str | None) -> Units:
    """One user's units (by user_id, found through the database's directory: only that user's data
    is read), or with None every unit in the graph whoever owns it (a full pass)."""
    if user_id is None:
        return all_units(graph.vertices, graph.abort)
    place = cache.place(graph, by_user_id=True)
    vertex = cache.find_user(place, graph, user_id)
    if vertex is None:
        return Units([], Counter())
    return owned_units(collect_owned(vertex, place.attribute, graph.vertex, graph.abort))


def all_units(vertices: Iterable[Any], abort: Callable[[], None]) -> Units:
    """Every unit in the graph, whoever owns it (the default of `recall.embed`)."""
    malformed: Counter = Counter()
    found: dict[str, list[Unit | None]] = {kind: [] for kind in KINDS}
    sessions = []
    for count, vertex in enumerate(vertices):
        if count % 512 == 0:
            abort()
        names = labels_of(vertex)
        if s.SESSION in names:
            sessions.append(vertex)
        if s.ACTION in names:
            for unit in _message_units(vertex, malformed):
                found[unit.kind].append(unit)
        elif s.MEMORY in names:
            found[NOTE].append(_memory_unit(vertex, malformed))
        elif not names & s.STRUCTURAL_LABELS and any(e.type.name == s.MENTIONED_IN for e in vertex.out_edges):
            found[ENTITY].append(_entity_unit(vertex, malformed))
        if names & s.STRUCTURAL_LABELS and s.USER not in names:
            continue
        for edge in vertex.out_edges:
            if edge.type.name in s.STRUCTURAL_TYPES or edge.properties.get(s.SOURCE_ID) is None:
                continue
            head_user, tail_user = s.USER in names, s.USER in labels_of(edge.to_vertex)
            if labels_of(edge.to_vertex) & s.STRUCTURAL_LABELS and not tail_user:
                continue
            if head_user and tail_user:
                continue
            found[FACT].append(_fact_unit(edge, head_user, tail_user, malformed))
    return Units([u for kind in KINDS for u in found[kind] if u is not None], malformed, sessions=sessions)


@dataclass(frozen=True)
class EmbedPlan:
    todo: list[Unit]
    remaining: int
    unembeddable: int  # units skipped because a text of theirs cannot be embedded (not in `remaining`)


def encodable(text: str) -> bool:
    """Whether `text` is valid Unicode a tokenizer accepts: a lone UTF-16 surrogate (which a Bolt client
    can send inside a string) makes tokenizers raise for the whole batch it is in."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def plan_embedding(
    units: Sequence[Unit], model: str, dim: int, limit: int, embeddable: Callable[[str], bool] = encodable
) -> EmbedPlan:
    """The first `limit` units without a current vector from `model`, and how many are left after them.

    A unit with a text `embeddable` refuses is skipped and counted, never tried: one bad message must
    not block the others (or other users) on every call.
    """
    missing, skipped = [], 0
    for unit in units:
        if unit.status(model, dim) == CURRENT:
            continue
        if all(map(embeddable, unit.texts)):
            missing.append(unit)
        else:
            skipped += 1
    return EmbedPlan(missing[:limit], max(0, len(missing) - limit), skipped)


class EmbedBatchError(RuntimeError):
    """A model returned vectors that do not match the texts it was given: nothing is written."""


def compute_vectors(
    todo: Sequence[Unit],
    embed: Callable[[list[str]], np.ndarray],
    batch_size: int,
    abort: Callable[[], None],
    model: str,
    dim: int,
) -> list[list[list[float]]]:
    """Each unit's vectors (one per text), as plain float lists; nothing is written here.

    Every batch's output is checked before anything is kept: as many rows as texts, each of the
    model's dimension, finite and not zero. A model that returns fewer vectors would otherwise shift
    every later vector onto the wrong message.
    """
    texts = [t for unit in todo for t in unit.texts]
    parts = []
    for number, start in enumerate(range(0, len(texts), batch_size), 1):
        abort()
        batch = texts[start : start + batch_size]
        parts.append(checked_batch(embed(batch), len(batch), dim, model, number))
    abort()
    flat = np.concatenate(parts).tolist() if parts else []
    vectors, cursor = [], 0
    for unit in todo:
        vectors.append(flat[cursor : cursor + len(unit.texts)])
        cursor += len(unit.texts)
    return vectors


def checked_batch(output: Any, texts: int, dim: int, model: str, number: int) -> np.ndarray:
    """`output` as a float32 matrix of `texts` rows of `dim`, or an EmbedBatchError naming the model,
    the batch and what was wrong."""

    def fail(problem: str) -> EmbedBatchError:
        return EmbedBatchError(
            f"embedding model {model!r} returned {problem} for batch {number} ({texts} texts); "
            "recall.embed wrote nothing"
        )

    try:
        matrix = np.asarray(output, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise fail(f"something that is not a matrix of numbers ({exc})") from exc
    if matrix.ndim != 2 or matrix.shape[0] != texts:
        raise fail(f"an array of shape {matrix.shape}, expected {texts} vectors")
    if matrix.shape[1] != dim:
        raise fail(f"vectors of dimension {matrix.shape[1]}, expected the model's {dim}")
    if not np.isfinite(matrix).all():
        raise fail("vectors with NaN or infinite values")
    if not np.linalg.norm(matrix, axis=1).all():
        raise fail("an all-zero vector")
    return matrix


def write_vectors(todo: Sequence[Unit], vectors: Sequence[list[list[float]]], model: str) -> dict[str, int]:
    """Store the computed vectors and the model name; counts per kind (every kind named)."""
    counts = dict.fromkeys(PUBLIC_NAMES.values(), 0)
    for unit, unit_vectors in zip(todo, vectors, strict=True):
        props = unit.target.properties
        props.set(_VECTOR_KEY[unit.kind], unit_vectors if unit.by_passage else unit_vectors[0])
        props.set(MODEL_KEY[unit.kind], model)
        if unit.kind == PROSE:
            props.set(s.PROSE_DIGEST, prose_digest(unit.texts[0]))
        counts[PUBLIC_NAMES[unit.kind]] += 1
    return counts
