"""Who owns what: the security boundary of recall, failing closed.

Works on mgp-like objects (`.id`, `.labels[*].name`, `.properties.get`, `.in_edges`, `.out_edges`,
`edge.type.name`, `.from_vertex`, `.to_vertex`) without importing mgp, so it is testable anywhere.

Rules (issue 3, "Ownership"):
- a Session is the user's only when its sole HAD_SESSION parent is the user's vertex;
- an Agent's actions count only when every Session with HAS_AGENT to it is the user's;
- an Action counts only when every HAS_ACTION parent is one of the user's Sessions or Agents, and its
  `action_id` is held by no Action outside that set anywhere in the graph (a collision belongs to neither);
- an entity is the user's when one of its MENTIONED_IN edges lists a user's action id in `sources`;
- a fact (any relationship with `source_id`, between entities or an entity and this User) is the
  user's when `source_id` is one of the user's action ids;
- a Memory is the user's when its sole HAS_MEMORY parent is the user's vertex.
Nothing reachable only through shared chunks, entities or agents is ever collected.
"""

from collections import Counter, defaultdict
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

STRUCTURAL_LABELS = frozenset({"User", "Session", "Action", "Agent", "Chunk", "Memory", "OntologyVersion"})
STRUCTURAL_TYPES = frozenset(
    {"HAD_SESSION", "HAS_ACTION", "HAS_AGENT", "HAS_CHUNK", "MENTIONED_IN", "HAS_MEMORY", "ADOPTED"}
)
_ABORT_EVERY = 512


def labels_of(vertex: Any) -> frozenset[str]:
    return frozenset(label.name for label in vertex.labels)


def id_text(value: Any) -> str | None:
    """An id property as text (`"7"` and `7` are the same id); anything else is no id."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value if value else None
    if isinstance(value, int):
        return str(value)
    return None


def _no_abort() -> None:
    return None


@dataclass(frozen=True)
class GraphIndex:
    """The global view ownership needs: User vertices by user_id, Action vertices by action_id.

    Built by one full vertex scan; the per-user cache can keep it and verify entries on use.
    """

    users: Mapping[str, tuple[int, ...]]
    action_holders: Mapping[str, tuple[int, ...]]

    @classmethod
    def scan(cls, vertices: Iterable[Any], abort: Callable[[], None] = _no_abort) -> "GraphIndex":
        users: dict[str, list[int]] = defaultdict(list)
        holders: dict[str, list[int]] = defaultdict(list)
        for count, vertex in enumerate(vertices):
            if count % _ABORT_EVERY == 0:
                abort()
            for label in vertex.labels:
                name = label.name
                if name == "Action":
                    key = id_text(vertex.properties.get("action_id"))
                    if key is not None:
                        holders[key].append(vertex.id)
                elif name == "User":
                    key = id_text(vertex.properties.get("user_id"))
                    if key is not None:
                        users[key].append(vertex.id)
        return cls({k: tuple(v) for k, v in users.items()}, {k: tuple(v) for k, v in holders.items()})


@dataclass(frozen=True, slots=True)
class OwnedAction:
    vertex: Any
    action_id: str
    session_id: str | None
    vertex_id: int  # `vertex.id`, read once (the id getter is an API call)


@dataclass(frozen=True)
class OwnedFact:
    edge: Any
    source_id: str
    head_is_user: bool
    tail_is_user: bool


@dataclass
class OwnedGraph:
    """The live objects one user owns, valid only during the procedure call that collected them."""

    user: Any
    actions: list[OwnedAction] = field(default_factory=list)
    entities: list[Any] = field(default_factory=list)
    facts: list[OwnedFact] = field(default_factory=list)
    memories: list[Any] = field(default_factory=list)
    ontologies: list[Any] = field(default_factory=list)
    action_ids: frozenset[str] = frozenset()
    holders: dict[int, str | None] = field(default_factory=dict)  # owned Session/Agent id -> session_id
    sessions: set[int] = field(default_factory=set)  # the owned Session ids (the other holders are Agents)
    skipped: Counter = field(default_factory=Counter)


def _has_label(vertex: Any, name: str) -> bool:
    for label in vertex.labels:  # a loop, not any(<generator>): this runs once per vertex walked
        if label.name == name:
            return True
    return False


def _only_parents(vertex: Any, rel_type: str, allowed: Container[int]) -> bool:
    """Every `rel_type` edge into `vertex` comes from a vertex in `allowed` (hot path: no sets built)."""
    for edge in vertex.in_edges:
        if edge.type.name == rel_type and edge.from_vertex.id not in allowed:
            return False
    return True


def _children(vertex: Any, rel_type: str) -> dict[int, Any]:
    """The distinct targets of `vertex`'s `rel_type` edges by vertex id, in edge order."""
    found: dict[int, Any] = {}
    for edge in vertex.out_edges:
        if edge.type.name == rel_type:
            target = edge.to_vertex
            found.setdefault(target.id, target)
    return found


def owned_session(vertex: Any, user_id: int) -> bool:
    """`vertex` (reached by a HAD_SESSION edge from the User `user_id`) is that user's Session."""
    return _has_label(vertex, "Session") and _only_parents(vertex, "HAD_SESSION", {user_id})


def agent_action_session(action: Any, agent_session: str | None) -> str | None:
    """The session an Action under an Agent stands for: its own `session_id`, else the Agent's."""
    return id_text(action.properties.get("session_id")) or agent_session


def expand_sessions(
    sessions: Mapping[int, Any],
    session_ids: Container[int],
    holders: dict[int, str | None],
    candidates: dict[int, tuple[Any, str | None]],
    skipped: Counter,
    abort: Callable[[], None] = _no_abort,
) -> None:
    """Add the user's `sessions` (vertex id -> Session) and their Agents to `holders` (vertex id ->
    session id), and the Actions under them to `candidates` (vertex id -> (Action, session id)), first
    session first.

    An Agent counts only when every Session linking to it is in `session_ids`; each Agent is expanded
    once (an SDK Agent shared by thousands of sessions would otherwise be walked once per session).
    """
    for session_id, session in sessions.items():
        abort()
        sid = id_text(session.properties.get("session_id"))
        holders[session_id] = sid
        for action_id, action in _children(session, "HAS_ACTION").items():
            candidates.setdefault(action_id, (action, sid))
        for agent_id, agent in _children(session, "HAS_AGENT").items():
            if agent_id in holders:
                continue
            if not _has_label(agent, "Agent") or not _only_parents(agent, "HAS_AGENT", session_ids):
                skipped["agent_shared_with_another_user"] += 1
                continue
            holders[agent_id] = sid
            for action_id, action in _children(agent, "HAS_ACTION").items():
                candidates.setdefault(action_id, (action, agent_action_session(action, sid)))


def admit_actions(
    candidates: Mapping[int, tuple[Any, str | None]],
    holders: Container[int],
    index: GraphIndex,
    skipped: Counter,
    abort: Callable[[], None] = _no_abort,
    *,
    also_owned: Container[int] = frozenset(),
    unindexed_ok: bool = False,
) -> list[OwnedAction]:
    """The `candidates` that are the user's Actions: every HAS_ACTION parent in `holders`, an
    action_id, and no holder of that id (per `index`) outside the candidates and `also_owned`.

    An Action the index does not know fails closed (counted as `action_not_in_index`, so a cache can
    rescan) unless `unindexed_ok`, which the cache's incremental refresh uses for Actions newer than
    its index: they are then checked against the holders the index does know.
    """
    structural: dict[int, tuple[Any, str, str | None]] = {}
    for count, (vertex_id, (action, sid)) in enumerate(candidates.items()):
        if count % _ABORT_EVERY == 0:
            abort()
        if not _has_label(action, "Action") or not _only_parents(action, "HAS_ACTION", holders):
            skipped["action_shared_with_another_user"] += 1
            continue
        action_id = id_text(action.properties.get("action_id"))
        if action_id is None:
            skipped["action_without_id"] += 1
            continue
        structural[vertex_id] = (action, action_id, sid)
    admitted = []
    for vertex_id, (action, action_id, sid) in structural.items():
        known = index.action_holders.get(action_id, ())
        if known == (vertex_id,):  # the common case: the index knows this one holder, and only it
            admitted.append(OwnedAction(action, action_id, sid, vertex_id))
            continue
        if vertex_id not in known and not unindexed_ok:
            skipped["action_not_in_index"] += 1
            continue
        if any(h not in structural and h not in also_owned for h in known):
            skipped["action_id_held_by_another_user"] += 1
            continue
        admitted.append(OwnedAction(action, action_id, sid, vertex_id))
    return admitted


def owned_memories(user: Any, skipped: Counter | None = None) -> list[Any]:
    """The user's Memory vertices: this User their only HAS_MEMORY parent."""
    memories = []
    for memory in _children(user, "HAS_MEMORY").values():
        if _has_label(memory, "Memory") and _only_parents(memory, "HAS_MEMORY", {user.id}):
            memories.append(memory)
        elif skipped is not None:
            skipped["memory_shared_with_another_user"] += 1
    return memories


def owned_ontologies(user: Any) -> list[Any]:
    return [o for o in _children(user, "ADOPTED").values() if _has_label(o, "OntologyVersion")]


def collect_owned(user: Any, index: GraphIndex, abort: Callable[[], None] = _no_abort) -> OwnedGraph:
    """Everything `user` (a User vertex) owns, by the rules in the module docstring."""
    owned = OwnedGraph(user)
    user_id = user.id
    sessions = {i: s for i, s in _children(user, "HAD_SESSION").items() if owned_session(s, user_id)}
    owned.sessions = set(sessions)
    candidates: dict[int, tuple[Any, str | None]] = {}
    expand_sessions(sessions, owned.sessions, owned.holders, candidates, owned.skipped, abort)
    owned.actions = admit_actions(candidates, owned.holders, index, owned.skipped, abort)
    owned.action_ids = frozenset(a.action_id for a in owned.actions)
    collect_entities_and_facts(owned, abort)
    owned.memories = owned_memories(user, owned.skipped)
    owned.ontologies = owned_ontologies(user)
    return owned


def collect_entities_and_facts(owned: OwnedGraph, abort: Callable[[], None] = _no_abort) -> None:
    """Fill `owned.entities` and `owned.facts` from `owned.actions` and `owned.action_ids` (the cache
    calls this alone, at its maximum age, over the actions it already holds)."""
    _collect_entities(owned, abort)
    _collect_facts(owned, abort)


def _collect_entities(owned: OwnedGraph, abort: Callable[[], None]) -> None:
    action_ids = owned.action_ids
    entities: dict[int, Any] = {}
    chunks: dict[int, Any] = {}
    for item in owned.actions:
        for chunk_id, chunk in _children(item.vertex, "HAS_CHUNK").items():
            chunks.setdefault(chunk_id, chunk)
    for count, chunk in enumerate(chunks.values()):
        if count % _ABORT_EVERY == 0:
            abort()
        for edge in chunk.in_edges:
            if edge.type.name != "MENTIONED_IN" or edge.from_vertex.id in entities:
                continue
            sources = edge.properties.get("sources")
            if not isinstance(sources, (list, tuple)):
                continue
            if any(id_text(s) in action_ids for s in sources):
                entity = edge.from_vertex
                if labels_of(entity) & STRUCTURAL_LABELS:
                    owned.skipped["entity_with_structural_label"] += 1
                else:
                    entities[entity.id] = entity
    owned.entities = list(entities.values())


def _collect_facts(owned: OwnedGraph, abort: Callable[[], None]) -> None:
    action_ids = owned.action_ids
    user_id = owned.user.id
    seen: set[int] = set()

    def endpoint(vertex: Any) -> str | None:
        if vertex.id == user_id:
            return "user"
        return None if labels_of(vertex) & STRUCTURAL_LABELS else "entity"

    for count, holder in enumerate([owned.user, *owned.entities]):
        if count % _ABORT_EVERY == 0:
            abort()
        for edge in (*holder.out_edges, *holder.in_edges):
            if edge.id in seen or edge.type.name in STRUCTURAL_TYPES:
                continue
            seen.add(edge.id)
            source = edge.properties.get("source_id")
            if source is None:
                continue
            source_id = id_text(source)
            if source_id not in action_ids:
                continue
            head, tail = endpoint(edge.from_vertex), endpoint(edge.to_vertex)
            if head is None or tail is None or (head == tail == "user"):
                owned.skipped["fact_with_foreign_endpoint"] += 1
                continue
            owned.facts.append(OwnedFact(edge, source_id, head == "user", tail == "user"))
