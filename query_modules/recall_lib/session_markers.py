"""The Session-level embedding markers the upstream writer (PyPI `sessions-graph`) reads, set by recall.embed.

Why: upstream's catch-up (`sessions-graph embed --pending`) lists every Session whose markers do not say
`embedding_status = 'completed'`, the same `embedding_model` and `embedding_scheme = 'passages-1200'`,
and embeds it again. After `recall.embed` has embedded a session completely, it sets those markers so
that sweep skips it. "Completely" is upstream's definition of a session's units, which is wider than
recall's: every Action under the Session or under an Agent it links (other users' actions on a shared
Agent included) with a `text`, every entity MENTIONED_IN a Chunk of those Actions, and every fact edge
on such an entity whose `chunk` is one of those Chunks' `hash`; each must name the model. A session
that is not complete is left unmarked (upstream then embeds what is missing); `'failed'` is never
written (a failed `recall.embed` writes nothing at all).
"""

from collections.abc import Iterable
from typing import Any

from . import schema as s
from .ownership import children, has_label
from .passages import PASSAGE_CHARS

#: Upstream's scheme name for its passage split, which `passages.split_passages` reproduces.
PASSAGE_SCHEME = f"passages-{PASSAGE_CHARS}"


def sessions_of(targets: Iterable[Any]) -> dict[int, Any]:
    """The Sessions above the given Actions (directly, or through an Agent), by vertex id."""
    found: dict[int, Any] = {}
    for target in targets:
        for edge in getattr(target, "in_edges", ()):
            if edge.type.name != s.HAS_ACTION:
                continue
            parent = edge.from_vertex
            if has_label(parent, s.SESSION):
                found.setdefault(parent.id, parent)
            for link in parent.in_edges:
                if link.type.name == s.HAS_AGENT:
                    found.setdefault(link.from_vertex.id, link.from_vertex)
    return found


def complete(session: Any, model: str) -> bool:
    """Whether every unit of `session`, as upstream counts them, holds vectors named `model`."""
    actions = dict(children(session, s.HAS_ACTION))
    for agent in children(session, s.HAS_AGENT).values():
        actions.update(children(agent, s.HAS_ACTION))
    chunks: dict[int, Any] = {}
    for action in actions.values():
        props = action.properties
        if props.get(s.TEXT) is not None and not _embedded(props, s.PASSAGE_EMBEDDINGS, model):
            return False
        chunks.update(children(action, s.HAS_CHUNK))
    hashes = {chunk.properties.get(s.HASH) for chunk in chunks.values()} - {None}
    for chunk in chunks.values():
        for mention in chunk.in_edges:
            if mention.type.name != s.MENTIONED_IN:
                continue
            entity = mention.from_vertex
            if entity.properties.get(s.TEXT) is not None and not _embedded(
                entity.properties, s.EMBEDDING, model
            ):
                return False
            for edge in (*entity.out_edges, *entity.in_edges):
                props = edge.properties
                if props.get(s.CHUNK_HASH) in hashes and props.get(s.TEXT) is not None:
                    if not _embedded(props, s.EMBEDDING, model):
                        return False
    return True


def _embedded(props: Any, key: str, model: str) -> bool:
    return props.get(key) is not None and props.get(s.EMBEDDING_MODEL) == model


def mark_complete_sessions(sessions: Iterable[Any], model: str) -> int:
    """Set the markers on each complete session not marked so already; how many were set."""
    wanted = {
        s.EMBEDDING_STATUS: "completed",
        s.EMBEDDING_MODEL: model,
        s.EMBEDDING_SCHEME: PASSAGE_SCHEME,
        s.EMBEDDING_ERROR: None,
    }
    marked = 0
    for session in sessions:
        props = session.properties
        if all(props.get(key) == value for key, value in wanted.items()) or not complete(session, model):
            continue
        for key, value in wanted.items():
            props.set(key, value)
        marked += 1
    return marked
