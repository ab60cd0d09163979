"""The per-database directory on small fake graphs (no mgp, no runtime): what it finds at once, what
the sweep finds within one cycle, and that reads on older snapshots never erase newer knowledge."""

from dataclasses import dataclass, field
from typing import Any

from recall_lib import directory as d
from recall_lib.directory import Directory


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(eq=False)
class V:
    id: int
    labels: tuple
    properties: dict
    out_edges: list = field(default_factory=list)
    in_edges: list = field(default_factory=list)


class Graph:
    """Vertices by id with gaps, as Memgraph's ids after deletions and aborted writes."""

    def __init__(self) -> None:
        self.by_id: dict[int, V] = {}
        self.next_id = 0
        self.lookups = 0

    def add(self, label: str | None = None, at: int | None = None, **props: Any) -> V:
        vertex_id = self.next_id if at is None else at
        vertex = V(vertex_id, (Name(label),) if label else (), props)
        self.by_id[vertex_id] = vertex
        self.next_id = max(self.next_id, vertex_id + 1)
        return vertex

    def skip(self, count: int) -> None:
        """Ids used up by a write that aborted (or was deleted): never handed out again."""
        self.next_id += count

    def lookup(self, vertex_id: int) -> V | None:
        self.lookups += 1
        return self.by_id.get(vertex_id)

    @property
    def vertices(self) -> list[V]:
        return [self.by_id[i] for i in sorted(self.by_id)]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def no_abort() -> None:
    return None


def scanned(g: Graph, clock: Clock | None = None, **kwargs: Any) -> Directory:
    return Directory.scan(g.vertices, no_abort, clock or Clock(), **kwargs)


def test_a_scan_files_users_and_tokens_and_never_action_ids():
    """Nothing that decides whose a row is rests on the directory: it holds no action_id at all."""
    g = Graph()
    meta = g.add("RecallMeta", token="t-1")
    ana = g.add("User", user_id="ana")
    g.add("Action", action_id="a1"), g.add("Action", action_id=7)
    g.add("Session", session_id="s1")
    directory = scanned(g)
    assert directory.users_of("ana") == (ana.id,) and directory.users_of("bob") == ()
    assert directory.metas() == {meta.id: "t-1"} and directory.top == 4 and directory.size == 2
    assert not hasattr(directory, "holders_of")


def test_new_vertices_are_read_on_the_next_advance_across_a_few_missing_ids():
    g = Graph()
    g.add("User", user_id="ana")
    directory = scanned(g)
    g.skip(d.GAP - 1)  # an aborted write used up ids
    bob = g.add("User", user_id="bob")
    directory.advance(g.lookup, no_abort)
    assert directory.users_of("bob") == (bob.id,) and directory.top == bob.id


def test_nothing_new_costs_gap_probes_not_a_scan():
    g = Graph()
    for i in range(500):
        g.add("User", user_id=f"u{i}")
    directory = scanned(g)
    g.lookups = 0
    assert directory.advance(g.lookup, no_abort) == d.GAP
    assert g.lookups == d.GAP  # whatever the graph's size


def test_beyond_a_long_run_of_missing_ids_a_vertex_is_found_once_seen_or_by_the_far_probes():
    g = Graph()
    g.add("User", user_id="ana")
    directory = scanned(g)
    g.skip(10 * d.GAP)
    far = g.add("User", user_id="far")
    directory.advance(g.lookup, no_abort)
    assert directory.users_of("far") == ()  # past GAP missing ids: not by the upward probe alone
    directory.saw(far.id)  # e.g. the asking user's new Action was read through its session's edge
    directory.advance(g.lookup, no_abort)
    assert directory.users_of("far") == (far.id,)
    # Never seen: the end of each sweep cycle probes far above the top (top + GAP * 2**k), so a block
    # of new vertices there (an import after a large deleted range) is found within one cycle.
    block = far.id + d.GAP * 512
    for offset in range(-4, 4):
        g.add("Action", action_id=f"imported {offset}", at=block + offset)
    g.add("User", user_id="farther", at=block + 4)
    calls = 0
    while not directory.users_of("farther"):
        directory.sweep(g.lookup, no_abort)
        directory.advance(g.lookup, no_abort)
        calls += 1
        assert calls <= directory.reach // d.SWEEP + 1 + block // d.ADVANCE_MAX + 1


def test_a_key_set_on_an_old_vertex_is_found_within_one_sweep_cycle_and_each_call_is_bounded():
    clock = Clock()
    g = Graph()
    vertices = [g.add("Person", name=f"p{i}") for i in range(5000)]
    directory = scanned(g, clock)
    vertices[10].labels = (Name("User"),)
    vertices[10].properties["user_id"] = "late"
    calls = 0
    while not directory.users_of("late"):
        assert directory.sweep(g.lookup, no_abort) == d.SWEEP  # a fixed share per call
        calls += 1
    assert calls <= 5000 // d.SWEEP + 1  # within one cycle of the id range


def test_a_read_on_an_older_snapshot_never_erases_what_a_newer_one_saw():
    clock = Clock()
    g = Graph()
    ana = g.add("User", user_id="ana")
    directory = scanned(g, clock)
    clock.now += 5
    directory.read(ana.id, None)  # a transaction that started before ana was created: not there
    assert directory.users_of("ana") == (ana.id,)
    clock.now += d.SETTLE_SECONDS
    directory.read(ana.id, None)  # still missing long after it was last seen present: deleted
    assert directory.users_of("ana") == ()


def test_a_changed_key_keeps_the_old_one_until_it_settles():
    clock = Clock()
    g = Graph()
    ana = g.add("User", user_id="ana")
    directory = scanned(g, clock)
    ana.properties["user_id"] = "anna"
    clock.now += 1
    directory.read(ana.id, ana)
    assert directory.users_of("anna") == (ana.id,) and directory.users_of("ana") == (ana.id,)  # a superset
    clock.now += d.SETTLE_SECONDS
    directory.read(ana.id, ana)
    assert directory.users_of("ana") == () and directory.users_of("anna") == (ana.id,)


def test_the_sweep_of_an_empty_graph_reads_its_fixed_share():
    directory = Directory.scan([], no_abort, Clock())
    assert directory.sweep(Graph().lookup, no_abort) == d.SWEEP


def test_a_user_after_a_run_of_missing_ids_short_of_the_far_probes_is_found_within_one_cycle():
    """The issue's case: ids used up by a rolled-back import of 100 vertices, then a few new vertices
    short of the first far probe (top + 128): neither the upward probe nor a far probe reaches them."""
    for graph_size, gap, written in ((2000, 100, 20), (50, 100, 1), (5000, 4000, 3), (10, 900, 2)):
        g = Graph()
        for i in range(graph_size):
            g.add("Person", name=f"p{i}")
        directory = scanned(g)
        g.skip(gap)
        for i in range(written - 1):
            g.add("Action", action_id=f"y-{i}")
        g.add("User", user_id="late")
        directory.advance(g.lookup, no_abort)
        assert directory.users_of("late") == ()  # past GAP missing ids: the upward probe stops
        calls = 0
        while not directory.users_of("late"):
            directory.advance(g.lookup, no_abort)
            directory.sweep(g.lookup, no_abort)
            calls += 1
            assert calls <= directory.reach // d.SWEEP + 1, (graph_size, gap)


def test_a_transaction_that_cannot_see_the_seen_vertex_never_walks_past_vertices_it_cannot_see():
    g = Graph()
    g.add("User", user_id="ana")
    directory = scanned(g)
    g.skip(10 * d.GAP)
    far = g.add("User", user_id="far")
    directory.saw(far.id)  # seen by a newer transaction
    old_snapshot = Graph()  # an older transaction: none of the new vertices exist for it yet
    old_snapshot.by_id = {0: g.by_id[0]}
    directory.advance(old_snapshot.lookup, no_abort)
    assert directory.passed < far.id  # it walked no further than its own GAP probes
    directory.advance(g.lookup, no_abort)  # a transaction that sees `far`
    assert directory.users_of("far") == (far.id,)
