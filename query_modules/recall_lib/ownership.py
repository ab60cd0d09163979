"""Who owns what: the security boundary of recall, failing closed. Each rule is stated once, here.

The rules, each a small check on one vertex or edge below (`*_skip`: None when the rule holds, else
the reason it does not, which `recall.status` counts):
- a Session is the user's only when its sole HAD_SESSION parent is the user's vertex;
- an Agent's actions count only when every Session with HAS_AGENT to it is the user's;
- an Action counts only when every HAS_ACTION parent is one of the user's Sessions or Agents and it has
  an `action_id` (a string, or an integer read as its digits);
- an entity is the user's when one of its MENTIONED_IN edges, into a chunk of one of the user's
  Actions, lists a user's action id in `sources`;
- a fact (any non-structural relationship with `source_id`, between entities or an entity and this
  User) is the user's when `source_id` is one of the user's action ids;
- a Memory (a note) is the user's when its sole HAS_MEMORY parent is the user's vertex.
Nothing reachable only through shared chunks, entities or agents is ever collected.

Turns and notes are the user's by structure alone. Entities and facts are the user's through an
action_id, which names one Action only when no other Action holds it: a check over every Action of the
graph, which a Python procedure cannot make (no index access, and no full pass can be trusted to have
seen every vertex: ids have gaps, commits land out of order). So they are **attributed only where the
database enforces unique action_ids** (`attribute`: the `(:Action) action_id IS UNIQUE` constraint that
`memgraph-recall setup` creates and records on the RecallMeta, or the operator's word,
`RECALL_ACTION_IDS_UNIQUE=true`), and then only through string ids on both sides: Memgraph's constraint
tells `7` from `"7"`, so an integer id could be another user's string one. A citation is text, and a
writer who cites its integer id 7 writes `"7"`, which is another user's string id: so text that reads as
an integer attributes only where Memgraph also holds every action_id to be a string (`IS TYPED STRING`,
which setup creates and records too; `Attribution.TYPED`). Elsewhere they are not collected at all, and
recall says why.

Three callers apply the same checks: the full walk down from the User (`collect_owned`), the growth of
a cached user by new sessions and messages (`expand_sessions` + `admit_actions`), and the upward check
of a row before it is returned (`Upward`). Works on mgp-like objects (`.id`, `.labels[*].name`,
`.properties.get`, `.in_edges`, `.out_edges`, `edge.type.name`, `.from_vertex`, `.to_vertex`) without
importing mgp, so it is testable on small fakes.
"""

import re
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import chain, repeat
from typing import Any, NamedTuple

from . import schema as s
from . import walklog as w
from .walklog import WalkLog

_ABORT_EVERY = 512
#: A MENTIONED_IN `sources` list longer than this is malformed (read, it would cost every call).
MAX_SOURCES = 10_000


def _no_abort() -> None:
    return None


class Attribution(IntEnum):
    """How far entities and facts may be attributed through action ids in a database (module docstring).
    False only when `OFF`, so `if attribute:` still reads "collect them"."""

    OFF = 0  # action_ids not known unique: nothing attributed
    UNIQUE = 1  # unique: through string ids, but not text that reads as an integer
    TYPED = 2  # unique, and every action_id a string (IS TYPED STRING): through every string id


#: What `int()` reads as an integer (signs, spaces, underscores, any Unicode digit): the text another
#: Action's integer id can be cited as.
_INTEGER_TEXT = re.compile(r"\s*[+-]?\d+(?:_\d+)*\s*")


def reads_as_integer(action_id: str) -> bool:
    return _INTEGER_TEXT.fullmatch(action_id) is not None


def attributes(action_id: str, stored_as_integer: Container[str], attribute: Attribution) -> bool:
    """Whether a citation of the user's `action_id` (text) attributes to the user: never when some owned
    Action stores it as an integer, nor, unless every action_id is typed a string, when the text reads
    as an integer (another user's integer id cited as text)."""
    if not attribute or action_id in stored_as_integer:
        return False
    return attribute == Attribution.TYPED or not reads_as_integer(action_id)


def labels_of(vertex: Any) -> frozenset[str]:
    return frozenset(label.name for label in vertex.labels)


def has_label(vertex: Any, name: str) -> bool:
    for label in vertex.labels:  # a loop, not any(<generator>): this runs once per vertex walked
        if label.name == name:
            return True
    return False


def id_text(value: Any) -> str | None:
    """An id property as text (`"7"` and `7` are the same id); anything else is no id."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value if value else None
    if isinstance(value, int):
        return str(value)
    return None


def text_id(value: Any) -> str | None:
    """An id that attributes (a fact's `source_id`, a mention's source): a non-empty string only, as
    Memgraph's unique constraint tells `7` from `"7"` (see the module docstring)."""
    return value if type(value) is str and value else None


def only_parents(
    vertex: Any,
    rel_type: str,
    allowed: Container[int],
    known: Container[int] = frozenset(),
    every_id: list[int] | None = None,
    other_types: list[int] | None = None,
) -> bool:
    """`vertex` has a `rel_type` edge in, and every one comes from a vertex in `allowed`. `known`: ids
    of edges already known to be such (the walk arrived through them): only their ids are read.
    `every_id` (when given) gets each in-edge's id as read, all of them, in order, when this is True;
    `other_types` the ids of in-edges of another type."""
    found = False
    for edge in vertex.in_edges:
        edge_id = edge.id
        if every_id is not None:
            every_id.append(edge_id)
        if edge_id in known:
            found = True
        elif edge.type.name == rel_type:
            if edge.from_vertex.id not in allowed:
                return False
            found = True
        elif other_types is not None:
            other_types.append(edge_id)
    return found


def children(vertex: Any, rel_type: str) -> dict[int, Any]:
    """The distinct targets of `vertex`'s `rel_type` edges by vertex id, in edge order."""
    found: dict[int, Any] = {}
    for edge in vertex.out_edges:
        if edge.type.name == rel_type:
            target = edge.to_vertex
            found.setdefault(target.id, target)
    return found


# -- the rules --------------------------------------------------------------------------------------
def session_skip(
    vertex: Any, user_id: int, known: Container[int] = frozenset(), in_ids: list[int] | None = None
) -> str | None:
    """`known`: ids of HAD_SESSION edges from the user the caller arrived through; `in_ids`: as
    `only_parents`' `every_id`."""
    if not has_label(vertex, s.SESSION):
        return "session_link_to_a_non_session"
    if not only_parents(vertex, s.HAD_SESSION, {user_id}, known, in_ids):
        return "session_with_another_parent"
    return None


def agent_skip(
    vertex: Any,
    session_ids: Container[int],
    known: Container[int] = frozenset(),
    in_ids: list[int] | None = None,
) -> str | None:
    """`known`: ids of HAS_AGENT edges from `session_ids` the caller arrived through; `in_ids`: as
    `only_parents`' `every_id`."""
    if not has_label(vertex, s.AGENT):
        return "agent_link_to_a_non_agent"
    if not only_parents(vertex, s.HAS_AGENT, session_ids, known, in_ids):
        return "agent_shared_with_another_user"
    return None


def action_check(
    vertex: Any,
    holder_ids: Container[int],
    known: Container[int] = frozenset(),
    in_ids: list[int] | None = None,
    other_types: list[int] | None = None,
) -> tuple[str | None, str | None, bool]:
    """(None, its action_id, whether it is stored as text) when the Action passes, else (the reason,
    None, False). `known`: ids of HAS_ACTION edges from `holder_ids` the caller arrived through;
    `in_ids`, `other_types`: as `only_parents`'."""
    if not has_label(vertex, s.ACTION):
        return "action_link_to_a_non_action", None, False
    if not only_parents(vertex, s.HAS_ACTION, holder_ids, known, in_ids, other_types):
        return "action_under_another_users_session", None, False
    stored = vertex.properties.get(s.ACTION_ID)
    action_id = id_text(stored)
    if action_id is None:
        return "action_without_id", None, False
    return None, action_id, type(stored) is str


def action_skip(vertex: Any, holder_ids: Container[int], known: Container[int] = frozenset()) -> str | None:
    return action_check(vertex, holder_ids, known)[0]


def memory_skip(vertex: Any, user_id: int, known: Container[int] = frozenset()) -> str | None:
    """`known`: ids of HAS_MEMORY edges from the user the caller arrived through."""
    if not has_label(vertex, s.MEMORY):
        return "note_link_to_a_non_memory"
    if not only_parents(vertex, s.HAS_MEMORY, {user_id}, known):
        return "note_shared_with_another_user"
    return None


def cites(sources: Any, action_ids: Container[str]) -> bool | None:
    """Whether a mention's `sources` cite one of `action_ids`; None when they cannot be read."""
    if not isinstance(sources, (list, tuple)) or len(sources) > MAX_SOURCES:
        return None
    return any(text_id(source) in action_ids for source in sources)


def mention_skip(edge: Any, action_ids: Container[str], entity: Any = None) -> str | None:
    """A MENTIONED_IN edge makes its entity (`edge.from_vertex`, or `entity` when the caller holds it)
    the user's (None) or not (a reason; "" for no mention)."""
    found = cites(edge.properties.get(s.SOURCES), action_ids)
    if found is None:
        return "mention_with_unreadable_sources"
    if not found:
        return ""
    if labels_of(entity if entity is not None else edge.from_vertex) & s.STRUCTURAL_LABELS:
        return "entity_with_structural_label"
    return None


def fact_ends(
    edge: Any,
    user_id: int,
    holder: Any = None,
    holder_is_head: bool = True,
    entity_ids: Container[int] = frozenset(),
) -> tuple[bool, bool, tuple[Any, Any]] | None:
    """(head is the User, tail is the User, (head, tail)) of a fact edge, each end handed out once;
    None when an end is neither the User nor an entity, or both are the User. `holder`: the end the
    caller reached the edge from (its head when `holder_is_head`), the User or an entity that passed
    the structural-label rule already: that end is neither handed out nor read again. `entity_ids`:
    vertices this call saw pass that rule (the user's entities): their labels are not read again."""
    ends, vertices = [], []
    for is_head in (True, False):
        if holder is not None and is_head == holder_is_head:
            vertex = holder
        else:
            vertex = edge.from_vertex if is_head else edge.to_vertex
        vertices.append(vertex)
        vertex_id = vertex.id
        if vertex_id == user_id:
            ends.append(True)
        elif vertex is not holder and vertex_id not in entity_ids and labels_of(vertex) & s.STRUCTURAL_LABELS:
            return None
        else:
            ends.append(False)
    return None if ends[0] and ends[1] else (ends[0], ends[1], (vertices[0], vertices[1]))


# -- walking down from the User ---------------------------------------------------------------------
class OwnedAction(NamedTuple):
    """An Action the user owns, by id (it holds no live object: vertices are looked up again by id)."""

    action_id: str
    session_id: str | None
    vertex_id: int


class OwnedActions(Sequence[OwnedAction]):
    """The Actions a user owns as three columns; iterating gives `OwnedAction`s made on the way.

    Why columns: the collector never stops tracking a tuple subclass (it untracks only exact tuples of
    plain values), so 100k `OwnedAction`s held through a build were all moved to the old generation,
    and about one full collection of the whole heap per 100k-message build was theirs."""

    __slots__ = ("action_ids", "session_ids", "vertex_ids", "numeric")

    def __init__(self) -> None:
        self.action_ids: list[str] = []
        self.session_ids: list[str | None] = []
        self.vertex_ids: list[int] = []
        self.numeric: set[str] = set()  # ids some of these Actions store as an integer: never attribute

    def columns(self) -> tuple[list[str], list[str | None], list[int]]:
        return self.action_ids, self.session_ids, self.vertex_ids

    def add(self, action_id: str, session_id: str | None, vertex_id: int) -> None:
        self.action_ids.append(action_id)
        self.session_ids.append(session_id)
        self.vertex_ids.append(vertex_id)

    def __len__(self) -> int:
        return len(self.vertex_ids)

    def __getitem__(self, index: int) -> OwnedAction:  # type: ignore[override]
        return OwnedAction(self.action_ids[index], self.session_ids[index], self.vertex_ids[index])

    def __iter__(self) -> Iterator[OwnedAction]:
        return map(OwnedAction, *self.columns())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (OwnedActions, list)) else NotImplemented


@dataclass(frozen=True)
class OwnedFact:
    edge: Any
    source_id: str
    head_is_user: bool
    tail_is_user: bool
    ends: tuple[Any, Any]  # (head, tail) vertices as `fact_ends` read them


@dataclass
class OwnedGraph:
    """What one user owns: live objects (and a lookup of vertices by id), valid only during the
    procedure call that collected them."""

    user: Any
    lookup: Callable[[int], Any]  # the calling transaction's vertex by id
    actions: OwnedActions = field(default_factory=OwnedActions)
    entities: list[Any] = field(default_factory=list)
    facts: list[OwnedFact] = field(default_factory=list)
    notes: list[Any] = field(default_factory=list)
    ontologies: list[Any] = field(default_factory=list)
    holders: dict[int, str | None] = field(default_factory=dict)  # owned Session/Agent id -> session_id
    sessions: set[int] = field(default_factory=set)  # the owned Session ids (the other holders are Agents)
    out_edge_ids: dict[int, tuple[int, ...]] = field(default_factory=dict)  # User and holders, as walked
    in_edge_ids: dict[int, tuple[int, ...]] = field(default_factory=dict)  # holders, as their checks read
    skipped: Counter = field(default_factory=Counter)  # rule -> how many it turned away

    attribute: Attribution = Attribution.OFF  # how entities and facts are attributed (module docstring)
    watched: set[int] = field(default_factory=set)  # Sessions and Agents reached but turned away
    log: WalkLog = field(default_factory=WalkLog)  # what the walk read besides (`walklog`)

    @property
    def action_ids(self) -> frozenset[str]:
        return frozenset(self.actions.action_ids)

    @property
    def attributing_ids(self) -> frozenset[str]:
        """The action ids entities and facts are attributed through (`attributes`)."""
        if not self.attribute:
            return frozenset()
        numeric, attribute = self.actions.numeric, self.attribute
        return frozenset(i for i in set(self.actions.action_ids) if attributes(i, numeric, attribute))


class Candidates:
    """Actions found under the user's holders, by vertex id: the session each stands for (the first found
    wins), the ids of the HAS_ACTION edges it was found through (so checking its parents reads only
    those edges' ids) and the vertex the edge handed out, valid for the calling transaction, so admitting
    it needs no second lookup (a cold build then hands each Action out once)."""

    def __init__(self) -> None:
        self.sessions: dict[int, str | None] = {}
        self.edges: dict[int, list[int]] = {}
        self.vertices: dict[int, Any] = {}

    def add(self, vertex: Any, session_id: str | None, edge_id: int) -> None:
        vertex_id = vertex.id
        self.sessions.setdefault(vertex_id, session_id)
        self.edges.setdefault(vertex_id, []).append(edge_id)
        self.vertices.setdefault(vertex_id, vertex)

    def __len__(self) -> int:
        return len(self.sessions)

    def without(self, held: Container[int]) -> "Candidates":
        """These candidates but those in `held`."""
        rest = Candidates()
        for vertex_id, session_id in self.sessions.items():
            if vertex_id not in held:
                rest.sessions[vertex_id] = session_id
                rest.edges[vertex_id] = self.edges[vertex_id]
                rest.vertices[vertex_id] = self.vertices[vertex_id]
        return rest


def out_edges_of(
    vertex: Any,
    types: Container[str],
    every_id: list[int] | None = None,
    read: Iterable[tuple[Any, int]] | None = None,
) -> list[tuple[str, int, Any]]:
    """(type, edge id, target) of `vertex`'s out-edges of `types`, in edge order: one pass over them,
    which also appends every out-edge's id to `every_id` when given (the cache's structure). `read`:
    the out-edges and their ids as this call already read them (not read again)."""
    found = []
    for edge, edge_id in zip(vertex.out_edges, repeat(None)) if read is None else read:
        name = edge.type.name
        if every_id is None and name not in types:
            continue  # an id not needed is not read
        if edge_id is None:
            edge_id = edge.id
        if every_id is not None:
            every_id.append(edge_id)
        if name in types:
            found.append((name, edge_id, edge.to_vertex))
    return found


_SESSION_CHILDREN = frozenset({s.HAS_ACTION, s.HAS_AGENT})


def agent_action_session(
    action: Any, agent_session: str | None, edge_id: int | None = None, log: WalkLog | None = None
) -> str | None:
    """The session an Action under an Agent stands for: its own `session_id`, else the Agent's. `log`
    (with the HAS_ACTION `edge_id` it was found through) notes its own session_id by that edge (the
    Action's id would cost a read)."""
    own = id_text(action.properties.get(s.SESSION_ID))
    if log is not None:
        log.agent_edges.setdefault(edge_id, own)
    return own or agent_session


def expand_sessions(
    sessions: Mapping[int, Any],
    session_ids: Container[int],
    holders: dict[int, str | None],
    found: Callable[[Any, str | None, int], None],
    skipped: Counter,
    abort: Callable[[], None] = _no_abort,
    out_edge_ids: dict[int, tuple[int, ...]] | None = None,
    in_edge_ids: dict[int, tuple[int, ...]] | None = None,
    turned_away: set[int] | None = None,
    log: WalkLog | None = None,
) -> None:
    """Add the user's `sessions` (vertex id -> Session) and their Agents to `holders` (vertex id ->
    session id), and hand each Action under them to `found` (the Action, the session it stands for,
    the HAS_ACTION edge's id: `Candidates.add` or `Admission.found`); `out_edge_ids` (when given) gets
    each holder's out-edge ids, `in_edge_ids` each Agent's in-edge ids (as its check read them),
    `turned_away` each Agent the rules turned away (the cache watches its edges), `log` the own
    session_id of each Action under an Agent.

    One pass over each session's edges; each Agent is expanded once (an SDK Agent shared by thousands
    of sessions would otherwise be walked once per session).
    """

    def ids_of(holder_id: int) -> list[int] | None:
        if out_edge_ids is None:
            return None
        ids: list[int] = []
        out_edge_ids[holder_id] = ids  # filled by the pass, made a tuple at the end
        return ids

    for session_id, session in sessions.items():
        abort()
        sid = id_text(session.properties.get(s.SESSION_ID))
        holders[session_id] = sid
        agents = []
        for name, edge_id, target in out_edges_of(session, _SESSION_CHILDREN, ids_of(session_id)):
            if name == s.HAS_ACTION:
                found(target, sid, edge_id)
            else:
                agents.append((target, edge_id))
        for agent, edge_id in agents:
            agent_id = agent.id
            if agent_id in holders:
                continue
            in_ids: list[int] | None = None if in_edge_ids is None else []
            reason = agent_skip(agent, session_ids, (edge_id,), in_ids)
            if reason:
                skipped[reason] += 1
                if turned_away is not None:
                    turned_away.add(agent_id)
                if log is not None:
                    log.watched_agents.add(agent_id)
                continue
            if in_edge_ids is not None:
                in_edge_ids[agent_id] = tuple(in_ids)
            holders[agent_id] = sid
            for _, edge_id, action in out_edges_of(agent, (s.HAS_ACTION,), ids_of(agent_id)):
                found(action, agent_action_session(action, sid, edge_id, log), edge_id)
    if out_edge_ids is not None:
        for holder_id, ids in out_edge_ids.items():
            out_edge_ids[holder_id] = tuple(ids)


#: Called with each Action that passes `action_skip`, while its vertex is at hand (the vertex the walk
#: handed out serves the check and the reading); the collision rule may still turn it away afterwards.
ActionVisit = Callable[["OwnedAction", Any], None]


def admit_actions(
    candidates: Candidates,
    holders: Container[int],
    skipped: Counter,
    abort: Callable[[], None] = _no_abort,
    *,
    visit: ActionVisit | None = None,
    chunks: dict[int, tuple[tuple[int, Any], ...]] | None = None,
    log: WalkLog | None = None,
) -> OwnedActions:
    """The `candidates` that are the user's Actions (`action_check`), each checked on the vertex the walk
    handed out (`visit` reads it then): the growth of a cached user, whose holders are all known before
    its candidates. `chunks`, `log`: as `Admission`'s."""
    admission = Admission(holders, skipped, visit, chunks, log=log)
    for count, (vertex_id, session_id) in enumerate(candidates.sessions.items()):
        if count % _ABORT_EVERY == 0:
            abort()
        action, known = candidates.vertices[vertex_id], candidates.edges[vertex_id]
        admission.check(action, vertex_id, session_id, known, final=True)
    return admission.finish()


class Admission:
    """Admits Actions the moment a walk finds them (`found`), so a cold build holds no candidate list:
    100k vertex objects and edge-id lists kept alive until the walk ends were ~200k more objects for
    every young collection to move and every full one to walk.

    An Action passes `action_check` against the holders accepted so far (`holders`, filled by the walk,
    and the user's Sessions, all known before it); holders only grow, so a pass stays a pass. One that
    fails may be under an Agent the walk has not reached yet: it is checked again, with every edge it
    was found through, by `finish`, which also applies the collision rule. `chunks` (when given) gets
    each admitted Action's HAS_CHUNK targets (ids and vertices of the calling transaction); `log` (when
    given) each admitted Action's in-edge ids and chunk edges, and each Action turned away."""

    def __init__(
        self,
        holders: Container[int],
        skipped: Counter,
        visit: ActionVisit | None = None,
        chunks: dict[int, tuple[tuple[int, Any], ...]] | None = None,
        abort: Callable[[], None] = _no_abort,
        log: WalkLog | None = None,
    ) -> None:
        self.holders, self.skipped, self.visit, self.chunks = holders, skipped, visit, chunks
        self.abort, self.log = abort, log
        self.passed = OwnedActions()
        self.seen: set[int] = set()
        self.deferred = Candidates()

    def found(self, action: Any, session_id: str | None, edge_id: int) -> None:
        """The walk reached `action` through the HAS_ACTION edge `edge_id` of a holder standing for
        `session_id` (the first found wins)."""
        vertex_id = action.id
        if vertex_id in self.seen:
            if vertex_id in self.deferred.sessions:
                self.deferred.add(action, session_id, edge_id)
            return
        if len(self.seen) % _ABORT_EVERY == 0:
            self.abort()
        self.seen.add(vertex_id)
        if not self.check(action, vertex_id, session_id, (edge_id,), final=False):
            self.deferred.add(action, session_id, edge_id)

    def check(
        self, action: Any, vertex_id: int, session_id: str | None, known: Container[int], final: bool
    ) -> bool:
        """Admit `action` when it passes; a failure counts in `skipped` (and the log) only when `final`."""
        log = self.log
        in_ids: list[int] | None = None if log is None else []
        others: list[int] | None = None if log is None else []
        reason, action_id, as_text = action_check(action, self.holders, known, in_ids, others)
        if reason:
            if final:
                self.skipped[reason] += 1
                if log is not None:
                    log.turned_away.append(vertex_id)
            return False
        self.passed.add(action_id, session_id, vertex_id)
        if not as_text:
            self.passed.numeric.add(action_id)
        if log is not None:
            log.parents[vertex_id] = tuple(in_ids)
            if others:
                log.other_parents.add(vertex_id)
            if not as_text:
                log.integer_ids.append(vertex_id)
        if self.visit is not None:
            self.visit(OwnedAction(action_id, session_id, vertex_id), action)
        if self.chunks is not None:
            found = [(edge_id, chunk.id, chunk) for _, edge_id, chunk in out_edges_of(action, (s.HAS_CHUNK,))]
            if found:
                self.chunks[vertex_id] = tuple((chunk_id, chunk) for _, chunk_id, chunk in found)
                if log is not None:
                    log.chunks[vertex_id] = tuple((edge_id, chunk_id) for edge_id, chunk_id, _ in found)
        return True

    def finish(self) -> OwnedActions:
        """The admitted Actions, deferred ones checked again."""
        deferred, self.deferred = self.deferred, Candidates()
        for vertex_id, session_id in deferred.sessions.items():
            action, known = deferred.vertices[vertex_id], deferred.edges[vertex_id]
            self.check(action, vertex_id, session_id, known, final=True)
        return self.passed


class _Either:
    """Membership in either of two containers, without building their union."""

    def __init__(self, first: Container[int], second: Container[int]) -> None:
        self.first, self.second = first, second

    def __contains__(self, item: object) -> bool:
        return item in self.first or item in self.second


def owned_notes(user: Any, skipped: Counter, log: WalkLog | None = None) -> list[Any]:
    """The user's Memory vertices (`memory_skip`); `log` gets every Memory vertex's id, theirs or not."""
    notes, seen = [], set()
    for _, edge_id, note in out_edges_of(user, (s.HAS_MEMORY,)):
        note_id = note.id
        if note_id in seen:
            continue  # a second edge to the same note
        seen.add(note_id)
        reason = memory_skip(note, user.id, (edge_id,))
        if log is not None:
            log.notes[note_id] = not reason
        if reason:
            skipped[reason] += 1
        else:
            notes.append(note)
    return notes


def owned_ontologies(user: Any, log: WalkLog | None = None) -> list[Any]:
    """The user's adopted ontologies; `log` gets the id of everything the User adopted."""
    adopted = children(user, s.ADOPTED)
    if log is not None:
        log.adopted.extend(adopted)
    return [o for o in adopted.values() if has_label(o, s.ONTOLOGY)]


def collect_owned(
    user: Any,
    attribute: Attribution,
    lookup: Callable[[int], Any],
    abort: Callable[[], None] = _no_abort,
    visit: ActionVisit | None = None,
    user_out: Iterable[tuple[Any, int]] | None = None,
) -> OwnedGraph:
    """Everything `user` (a User vertex) owns, by the rules in the module docstring; `lookup` gives a
    vertex of the calling transaction by id. `attribute`: how entities and facts are collected
    (`Attribution`; none when OFF). Each Action is read once (`visit`: a build's reader). `user_out`: the
    User's out-edges and ids as this call already read them (`structure.Removal`)."""
    owned = OwnedGraph(user, lookup, attribute=attribute)
    sessions = {}
    user_edges: list[int] = []
    seen: set[int] = set()
    for _, edge_id, session in out_edges_of(user, (s.HAD_SESSION,), user_edges, user_out):
        if session.id in seen:
            continue
        seen.add(session.id)
        in_ids: list[int] = []
        reason = session_skip(session, user.id, (edge_id,), in_ids)
        if reason:
            owned.skipped[reason] += 1
            owned.watched.add(session.id)
        else:
            sessions[session.id] = session
            owned.in_edge_ids[session.id] = tuple(in_ids)
    owned.sessions = set(sessions)
    chunks: dict[int, tuple[tuple[int, Any], ...]] | None = {} if attribute else None
    log = owned.log
    holders = _Either(owned.sessions, owned.holders)
    admission = Admission(holders, owned.skipped, visit, chunks, abort, log)
    expand_sessions(
        sessions,
        owned.sessions,
        owned.holders,
        admission.found,
        owned.skipped,
        abort,
        owned.out_edge_ids,
        owned.in_edge_ids,
        owned.watched,
        log,
    )
    owned.out_edge_ids[user.id] = tuple(user_edges)
    owned.actions = admission.finish()
    collect_entities_and_facts(owned, chunks or {}, abort)
    owned.notes = owned_notes(user, owned.skipped, log)
    owned.ontologies = owned_ontologies(user, log)
    return owned


def collect_entities_and_facts(
    owned: OwnedGraph,
    action_chunks: Mapping[int, tuple[tuple[int, Any], ...]],
    abort: Callable[[], None] = _no_abort,
) -> None:
    """Fill `owned.entities` and `owned.facts` from the chunks of `owned.actions` (`action_chunks`: each
    Action's (chunk id, chunk vertex) pairs, as the walk handed them out or the cache looked them up by
    id); nothing unless `owned.attribute`. `owned.log` gets what each chunk's in-edges and each fact
    holder's non-structural edges were (`walklog`)."""
    action_ids = owned.attributing_ids
    if not action_ids:
        owned.entities, owned.facts = [], []
        return
    log = owned.log
    entities: dict[int, Any] = {}
    chunks: dict[int, Any] = {}  # id -> chunk vertex, in order, each once
    for vertex_id in owned.actions.vertex_ids:
        for chunk_id, chunk in action_chunks.get(vertex_id, ()):
            chunks.setdefault(chunk_id, chunk)
    for count, (chunk_id, chunk) in enumerate(chunks.items()):
        if count % _ABORT_EVERY == 0:
            abort()
        read = log.mentions[chunk_id] = {}
        for edge in chunk.in_edges:
            edge_id = edge.id
            if edge.type.name != s.MENTIONED_IN:
                read[edge_id] = w.OTHER_EDGE
                continue
            entity = edge.from_vertex
            entity_id = entity.id
            if entity_id in entities:
                read[edge_id] = w.EARLIER
                continue
            reason = mention_skip(edge, action_ids, entity)
            if reason:
                owned.skipped[reason] += 1
            elif reason is None:
                entities[entity_id] = entity
            read[edge_id] = _MENTION_OUTCOMES.get(reason, w.NOT_CITING)
    owned.entities = list(entities.values())
    seen: set[int] = set()
    user_id = owned.user.id
    for count, (holder_id, holder) in enumerate([(user_id, owned.user), *entities.items()]):
        if count % _ABORT_EVERY == 0:
            abort()
        read = log.holder_edges[holder_id] = {}
        log.degrees[holder_id] = 0
        edges = chain(zip(holder.out_edges, repeat(True)), zip(holder.in_edges, repeat(False)))
        for edge, holder_is_head in edges:
            log.degrees[holder_id] += 1
            if edge.type.name in s.STRUCTURAL_TYPES:
                continue  # the type first: a mention or session edge needs no id read
            edge_id = edge.id
            if edge_id in seen:
                read[edge_id] = w.ELSEWHERE
                continue
            seen.add(edge_id)
            source_id = text_id(edge.properties.get(s.SOURCE_ID))
            if source_id is None or source_id not in action_ids:
                read[edge_id] = w.NOT_SOURCED
                continue
            ends = fact_ends(edge, user_id, holder, holder_is_head, entities)
            if ends is None:
                owned.skipped["fact_with_a_foreign_end"] += 1
                read[edge_id] = w.FOREIGN_END
            else:
                owned.facts.append(OwnedFact(edge, source_id, *ends))
                read[edge_id] = w.FACT


#: A mention's outcome in the walk's log, by `mention_skip`'s answer (any other reason: it cites none).
_MENTION_OUTCOMES = {None: w.ATTRIBUTES, "entity_with_structural_label": w.STRUCTURAL}


# -- checking upward from a row ---------------------------------------------------------------------
class Upward:
    """The same rules checked from an item up to the User, memoised for one call: is this Action (its
    parents, their parents) still the user's, and which sessions does it stand for?"""

    def __init__(self, user: Any) -> None:
        self.user_id = user.id
        self._sessions: dict[int, str | None | bool] = {}  # Session vertex id -> session_id, or False
        self._agents: dict[int, list[str | None] | None] = {}  # Agent vertex id -> its sessions' ids
        self._actions: dict[int, list[str | None] | None] = {}  # Action vertex id -> `stands_for`

    def session(self, vertex: Any) -> str | None | bool:
        """The session_id of one of the user's Sessions (None when it has none); False when not theirs."""
        vertex_id = vertex.id  # each read of an id is a procedure-API call
        if vertex_id not in self._sessions:
            mine = session_skip(vertex, self.user_id) is None
            self._sessions[vertex_id] = id_text(vertex.properties.get(s.SESSION_ID)) if mine else False
        return self._sessions[vertex_id]

    def agent(self, vertex: Any) -> list[str | None] | None:
        """The session ids of the user's Sessions linking this Agent; None when it is not the user's."""
        vertex_id = vertex.id
        if vertex_id not in self._agents:
            parents = [e.from_vertex for e in vertex.in_edges if e.type.name == s.HAS_AGENT]
            ids = [self.session(p) for p in parents]
            mine = has_label(vertex, s.AGENT) and bool(parents) and all(i is not False for i in ids)
            self._agents[vertex_id] = ids if mine else None
        return self._agents[vertex_id]

    def action(self, vertex: Any, action_id: str) -> list[str | None] | None:
        """The session ids the user's Action stands for; None unless it is still theirs with this id."""
        if not has_label(vertex, s.ACTION) or id_text(vertex.properties.get(s.ACTION_ID)) != action_id:
            return None
        return self.stands_for(vertex)

    def stands_for(self, vertex: Any) -> list[str | None] | None:
        """The session ids an Action stands for through its parents; None unless they are all the user's
        (its label and action_id are the caller's to check). Walked once per Action per call: a shown
        message is often the source of a shown fact."""
        vertex_id = vertex.id
        if vertex_id not in self._actions:
            self._actions[vertex_id] = self._walk_up(vertex)
        return self._actions[vertex_id]

    def _walk_up(self, vertex: Any) -> list[str | None] | None:
        sessions: list[str | None] = []
        parents = [e.from_vertex for e in vertex.in_edges if e.type.name == s.HAS_ACTION]
        for parent in parents:
            if has_label(parent, s.SESSION):
                sid = self.session(parent)
                if sid is False:
                    return None
                sessions.append(sid)
                continue
            ids = self.agent(parent)  # None unless an Agent of the user's
            if ids is None:
                return None
            sessions.extend([agent_action_session(vertex, None), *ids])
        return sessions or None

    def note(self, vertex: Any) -> bool:
        return memory_skip(vertex, self.user_id) is None
