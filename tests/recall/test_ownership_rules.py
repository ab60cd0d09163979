"""Each ownership rule on small fake vertices (no mgp, no runtime): the rule's check refuses what it must,
and the walk down, growth and the upward check all apply it. Removing any single rule's condition from
`recall_lib.ownership` makes a test here fail; the hypothesis oracle (test_recall_scoping) checks the
whole set end to end."""

import gc
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from recall_lib.ownership import (
    Candidates,
    OwnedAction,
    Upward,
    action_skip,
    admit_actions,
    agent_skip,
    collect_owned,
    fact_ends,
    memory_skip,
    mention_skip,
    session_skip,
)
from recall_lib.structure import read_structure


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(eq=False)
class FakeVertex:
    id: int
    labels: tuple
    properties: dict
    in_edges: list = field(default_factory=list)
    out_edges: list = field(default_factory=list)


@dataclass(eq=False)
class FakeEdge:
    id: int
    type: Name
    from_vertex: Any
    to_vertex: Any
    properties: dict = field(default_factory=dict)


class Graph:
    def __init__(self) -> None:
        self.vertices: list[FakeVertex] = []
        self.edges = 0

    def v(self, label: str | None = None, **props: Any) -> FakeVertex:
        vertex = FakeVertex(len(self.vertices), (Name(label),) if label else (), props)
        self.vertices.append(vertex)
        return vertex

    def e(self, start: FakeVertex, rel: str, end: FakeVertex, **props: Any) -> FakeEdge:
        edge = FakeEdge(self.edges, Name(rel), start, end, props)
        self.edges += 1
        start.out_edges.append(edge)
        end.in_edges.append(edge)
        return edge

    def lookup(self, vertex_id: int) -> FakeVertex | None:
        vertex = self.vertices[vertex_id] if 0 <= vertex_id < len(self.vertices) else None
        return None if vertex is None or vertex.properties.get("deleted") else vertex


def two_users():
    g = Graph()
    ann, bob = g.v("User", user_id="ann"), g.v("User", user_id="bob")
    mine, theirs = g.v("Session", session_id="s1"), g.v("Session", session_id="s2")
    g.e(ann, "HAD_SESSION", mine)
    g.e(bob, "HAD_SESSION", theirs)
    return g, ann, bob, mine, theirs


def test_a_session_is_the_users_only_when_they_are_its_sole_parent():
    g, ann, bob, mine, theirs = two_users()
    assert session_skip(mine, ann.id) is None
    assert session_skip(theirs, ann.id) == "session_with_another_parent"
    g.e(bob, "HAD_SESSION", mine)  # now shared
    assert session_skip(mine, ann.id) == "session_with_another_parent"
    assert session_skip(g.v("Agent"), ann.id) == "session_link_to_a_non_session"
    owned = collect_owned(ann, True, g.lookup)
    assert not owned.sessions and owned.skipped["session_with_another_parent"] == 1


def test_an_agent_counts_only_when_every_session_linking_it_is_the_users():
    g, ann, bob, mine, theirs = two_users()
    agent = g.v("Agent")
    g.e(mine, "HAS_AGENT", agent)
    action = g.v("Action", action_id="a1", text="by the agent")
    g.e(agent, "HAS_ACTION", action)
    assert agent_skip(agent, {mine.id}) is None
    assert [a.action_id for a in collect_owned(ann, True, g.lookup).actions] == ["a1"]
    g.e(theirs, "HAS_AGENT", agent)
    assert agent_skip(agent, {mine.id}) == "agent_shared_with_another_user"
    owned = collect_owned(ann, True, g.lookup)
    assert owned.actions == [] and owned.skipped["agent_shared_with_another_user"] == 1
    upward = Upward(ann)
    assert upward.action(action, "a1") is None  # the upward check applies the same rule


def test_an_action_counts_only_under_the_users_holders_and_with_an_id():
    g, ann, bob, mine, theirs = two_users()
    action = g.v("Action", action_id="a1", text="hi")
    g.e(mine, "HAS_ACTION", action)
    assert action_skip(action, {mine.id}) is None
    g.e(theirs, "HAS_ACTION", action)
    assert action_skip(action, {mine.id}) == "action_under_another_users_session"
    assert Upward(ann).action(action, "a1") is None
    no_id = g.v("Action", text="no id")
    g.e(mine, "HAS_ACTION", no_id)
    assert action_skip(no_id, {mine.id}) == "action_without_id"
    assert action_skip(g.v("Chunk"), {mine.id}) == "action_link_to_a_non_action"


def test_an_action_found_before_its_agent_is_admitted_once_the_agent_is_the_users():
    """The cold walk admits an Action the moment it finds it; one under a session and an Agent the walk
    has not reached yet is checked again at the end (`Admission`), read once, counted nowhere."""
    g, ann, bob, mine, theirs = two_users()
    later = g.v("Session", session_id="s3")
    g.e(ann, "HAD_SESSION", later)
    agent = g.v("Agent")
    g.e(later, "HAS_AGENT", agent)
    both = g.v("Action", action_id="a1", text="in a session and by its agent")
    g.e(mine, "HAS_ACTION", both)  # found first, from `mine`, before `later`'s agent is accepted
    g.e(agent, "HAS_ACTION", both)
    visited = []
    owned = collect_owned(ann, True, g.lookup, visit=lambda item, vertex: visited.append(item))
    assert [(a.action_id, a.session_id) for a in owned.actions] == [("a1", "s1")]  # the first found wins
    assert [a.action_id for a in visited] == ["a1"] and not owned.skipped
    g.e(theirs, "HAS_AGENT", agent)  # the agent is now shared: the action is no one's
    owned = collect_owned(ann, True, g.lookup)
    assert owned.actions == []
    assert owned.skipped == {"agent_shared_with_another_user": 1, "action_under_another_users_session": 1}


def test_an_action_under_another_users_session_is_refused_and_counted_once():
    g, ann, bob, mine, theirs = two_users()
    shared = g.v("Action", action_id="a1", text="two parents")
    g.e(mine, "HAS_ACTION", shared)
    g.e(theirs, "HAS_ACTION", shared)
    visited = []
    owned = collect_owned(ann, True, g.lookup, visit=lambda item, vertex: visited.append(item))
    assert owned.actions == [] and visited == []
    assert owned.skipped == {"action_under_another_users_session": 1}


def test_a_walk_keeps_its_actions_as_columns_not_as_objects_the_collector_tracks():
    """The collector never untracks a tuple subclass: holding an `OwnedAction` per Action through a
    100k-message build moved 100k objects to the old generation (a full collection per build)."""
    g, ann, bob, mine, theirs = two_users()
    for i in range(300):
        g.e(mine, "HAS_ACTION", g.v("Action", action_id=f"a{i}", text="hi"))

    def tracked() -> int:  # counted before and after: another test may hold some
        return sum(type(o) is OwnedAction for o in gc.get_objects())

    before = tracked()
    owned = collect_owned(ann, True, g.lookup, visit=lambda item, vertex: None)
    assert tracked() == before
    seventh = mine.out_edges[7].to_vertex.id
    assert len(owned.actions) == 300 and owned.actions[7] == OwnedAction("a7", "s1", seventh)


def test_an_action_id_held_by_another_user_leaves_the_turns_to_their_structure():
    """A turn is the user's by structure alone: another user's Action with the same action_id takes
    nothing from it and adds nothing to it (which facts an id attributes is `attribute`'s matter)."""
    g, ann, bob, mine, theirs = two_users()
    own, foreign = g.v("Action", action_id="x", text="mine"), g.v("Action", action_id="x", text="theirs")
    g.e(mine, "HAS_ACTION", own)
    g.e(theirs, "HAS_ACTION", foreign)
    skipped: Counter = Counter()
    candidates = Candidates()
    candidates.add(own, "s1", mine.out_edges[0].id)
    assert [a.vertex_id for a in admit_actions(candidates, {mine.id}, skipped)] == [own.id]
    assert not skipped
    assert Upward(ann).action(own, "x") == ["s1"] and Upward(ann).action(foreign, "x") is None
    assert [a.vertex_id for a in collect_owned(ann, False, g.lookup).actions] == [own.id]


def entity_and_fact(g, session, action_id, stored=None):
    """An Action of `session` mentioning Zoe, and a fact on Zoe sourced from it (ids as `stored`)."""
    action = g.v("Action", action_id=action_id if stored is None else stored, text="I met Zoe")
    g.e(session, "HAS_ACTION", action)
    chunk = g.v("Chunk")
    g.e(action, "HAS_CHUNK", chunk)
    zoe = g.v(text="Zoe")
    g.e(zoe, "MENTIONED_IN", chunk, sources=[action_id])
    other = g.v(text="Lisbon")
    return action, g.e(zoe, "VISITED", other, source_id=action_id, text="Zoe visited Lisbon")


def test_entities_and_facts_are_attributed_only_where_action_ids_are_unique():
    g, ann, bob, mine, theirs = two_users()
    _, fact = entity_and_fact(g, mine, "a1")
    unique = collect_owned(ann, True, g.lookup)
    assert [v.properties["text"] for v in unique.entities] == ["Zoe"]
    assert [f.edge.id for f in unique.facts] == [fact.id]
    unknown = collect_owned(ann, False, g.lookup)
    assert unknown.entities == [] and unknown.facts == [] and len(unknown.actions) == 1


def test_only_text_ids_attribute_as_memgraphs_constraint_tells_7_from_the_text_7():
    g, ann, bob, mine, theirs = two_users()
    entity_and_fact(g, mine, "7", stored=7)  # held as an integer: bob may hold the text "7"
    owned = collect_owned(ann, True, g.lookup)
    assert [a.action_id for a in owned.actions] == ["7"] and owned.actions.numeric == {"7"}
    assert owned.entities == [] and owned.facts == []
    g2, ann2, _, mine2, _ = two_users()
    entity_and_fact(g2, mine2, 8)  # sources and source_id as integers name no Action
    assert collect_owned(ann2, True, g2.lookup).facts == []


def test_a_note_is_the_users_only_when_they_are_its_sole_parent():
    g, ann, bob, *_ = two_users()
    note = g.v("Memory", memory_id="m", content="note")
    g.e(ann, "HAS_MEMORY", note)
    assert memory_skip(note, ann.id) is None and Upward(ann).note(note)
    g.e(bob, "HAS_MEMORY", note)
    assert memory_skip(note, ann.id) == "note_shared_with_another_user"
    assert not Upward(ann).note(note)
    assert collect_owned(ann, True, g.lookup).skipped["note_shared_with_another_user"] == 1


def test_entities_come_by_a_mention_citing_the_users_action_and_facts_by_source_id():
    g, ann, bob, mine, theirs = two_users()
    action = g.v("Action", action_id="a1", text="I met Zoe")
    g.e(mine, "HAS_ACTION", action)
    chunk = g.v("Chunk")
    g.e(action, "HAS_CHUNK", chunk)
    zoe, ghost = g.v(text="Zoe"), g.v("Session", text="not an entity")
    mention = g.e(zoe, "MENTIONED_IN", chunk, sources=["a1"])
    g.e(ghost, "MENTIONED_IN", chunk, sources=["a1"])
    assert mention_skip(mention, {"a1"}) is None and mention_skip(mention, {"b9"}) == ""
    assert (
        mention_skip(g.e(zoe, "MENTIONED_IN", chunk, sources="a1"), {"a1"})
        == "mention_with_unreadable_sources"
    )
    fact = g.e(ann, "KNOWS", zoe, source_id="a1", text="Ann knows Zoe")
    g.e(ann, "KNOWS", zoe, source_id="b9", text="not from Ann's action")
    g.e(zoe, "VISITED", ghost, source_id="a1", text="a structural end")
    assert fact_ends(fact, ann.id)[:2] == (True, False)
    owned = collect_owned(ann, True, g.lookup)
    assert [v.properties["text"] for v in owned.entities] == ["Zoe"]
    assert [f.edge.id for f in owned.facts] == [fact.id]
    assert (
        owned.skipped["entity_with_structural_label"] == 1 and owned.skipped["fact_with_a_foreign_end"] == 1
    )
    assert fact_ends(g.e(ann, "SELF", ann), ann.id) is None  # a fact needs an entity on one end


class EndCountingEdge:
    """A fact edge that counts how often each end is handed out."""

    def __init__(self, head: Any, tail: Any) -> None:
        self.head, self.tail, self.handed = head, tail, Counter()

    @property
    def from_vertex(self) -> Any:
        self.handed["head"] += 1
        return self.head

    @property
    def to_vertex(self) -> Any:
        self.handed["tail"] += 1
        return self.tail


def test_fact_ends_hands_out_only_the_end_the_caller_did_not_arrive_from():
    g, ann, _, _, _ = two_users()
    zoe, ghost = g.v(text="Zoe"), g.v("Session")
    from_user = EndCountingEdge(ann, zoe)
    assert fact_ends(from_user, ann.id, ann, holder_is_head=True) == (True, False, (ann, zoe))
    assert from_user.handed == Counter(tail=1)
    into_zoe = EndCountingEdge(ann, zoe)
    assert fact_ends(into_zoe, ann.id, zoe, holder_is_head=False) == (True, False, (ann, zoe))
    assert into_zoe.handed == Counter(head=1)
    # the end read is still held to the rules: a structural vertex or the User on both ends is no fact
    assert fact_ends(EndCountingEdge(zoe, ghost), ann.id, zoe, holder_is_head=True) is None
    assert fact_ends(EndCountingEdge(ann, ann), ann.id, ann, holder_is_head=False) is None
    # without a holder both ends are read, as the upward check does
    both = EndCountingEdge(ann, zoe)
    assert fact_ends(both, ann.id)[:2] == (True, False) and both.handed == Counter(head=1, tail=1)


class LabelCountingVertex(FakeVertex):
    """A vertex that counts how often its labels are read."""

    reads = 0

    def __getattribute__(self, name: str) -> Any:
        if name == "labels":
            object.__setattr__(self, "reads", object.__getattribute__(self, "reads") + 1)
        return object.__getattribute__(self, name)


def test_fact_ends_read_no_labels_of_an_end_this_call_already_admitted_as_an_entity():
    g, ann, _, _, _ = two_users()
    zoe, max_ = g.v(text="Zoe"), g.v(text="Max")
    admitted = LabelCountingVertex(max_.id, (), {"text": "Max"})
    assert fact_ends(EndCountingEdge(zoe, admitted), ann.id, zoe, True, {admitted.id}) == (
        False,
        False,
        (zoe, admitted),
    )
    assert admitted.reads == 0
    other = LabelCountingVertex(max_.id, (), {"text": "Max"})
    assert fact_ends(EndCountingEdge(zoe, other), ann.id, zoe, True)[:2] == (False, False)
    assert other.reads == 1
    # an end not among the admitted entities is still held to the structural-label rule
    ghost = g.v("Session")
    assert fact_ends(EndCountingEdge(zoe, ghost), ann.id, zoe, True, {admitted.id}) is None


def test_the_walk_records_every_holders_in_edges_as_a_fresh_read_finds_them():
    """The cache's baseline takes each Session's and Agent's in-edge ids from the ownership checks
    instead of looking the holder up again: they must be all of them, in graph order."""
    g, ann, bob, mine, _ = two_users()
    other = g.v("Session", session_id="s3")
    g.e(ann, "HAD_SESSION", other)
    g.e(ann, "HAD_SESSION", mine)  # a second edge to the same session
    note = g.v("Memory", text="a note")
    g.e(note, "ABOUT", mine)  # an in-edge of another type
    agent = g.v("Agent")
    g.e(mine, "HAS_AGENT", agent)
    g.e(other, "HAS_AGENT", agent)  # shared by two of Ann's sessions
    action = g.v("Action", action_id="a1", text="hi")
    g.e(agent, "HAS_ACTION", action)
    owned = collect_owned(ann, True, g.lookup)
    assert set(owned.in_edge_ids) == {mine.id, other.id, agent.id} == set(owned.holders)
    for holder, ids in owned.in_edge_ids.items():
        assert ids == tuple(edge.id for edge in g.vertices[holder].in_edges)
    looked_up: list[int] = []

    def lookup(vertex_id: int) -> FakeVertex | None:
        looked_up.append(vertex_id)
        return g.lookup(vertex_id)

    walked = read_structure(ann, lookup, owned.holders, owned.out_edge_ids, owned.in_edge_ids)
    assert looked_up == []
    assert walked == read_structure(ann, g.lookup, owned.holders)


class StartCountingEdge:
    """An edge that counts how often its start vertex is handed out."""

    def __init__(self, edge: FakeEdge) -> None:
        self.id, self.type, self.to_vertex = edge.id, edge.type, edge.to_vertex
        self.properties = edge.properties
        self._start, self.starts = edge.from_vertex, 0

    @property
    def from_vertex(self) -> FakeVertex:
        self.starts += 1
        return self._start


def test_a_parent_check_reads_no_end_of_the_edge_the_walk_arrived_through():
    g, ann, bob, mine, _ = two_users()
    note, shared = g.v("Memory", text="mine"), g.v("Memory", text="shared")
    edges = []
    for target in (mine, note, shared):
        edge = next(e for e in ann.out_edges if e.to_vertex is target) if target is mine else None
        edge = edge or g.e(ann, "HAS_MEMORY", target)
        counting = StartCountingEdge(edge)
        ann.out_edges[ann.out_edges.index(edge)] = counting
        target.in_edges[target.in_edges.index(edge)] = counting
        edges.append(counting)
    g.e(bob, "HAS_MEMORY", shared)  # a second parent: the note is nobody's
    owned = collect_owned(ann, True, g.lookup)
    assert owned.sessions == {mine.id} and [n.properties["text"] for n in owned.notes] == ["mine"]
    assert owned.skipped["note_shared_with_another_user"] == 1
    assert [edge.starts for edge in edges] == [0, 0, 0]
