"""What the cache guarantees (README "What the cache guarantees"), each case of issue #38 reproduced:
isolation that never rests on having read every vertex, every change seen within its stated bound, and
no call that reads the whole graph (but the string form's one pass per database).

Writes go through the store as an application's would: committed, rolled back (ids used up, a gap),
ids taken before others commit (`at=`, a late commit), and property edits.
"""

import time

import pytest
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import ApiCounts, ConstraintViolation, Runtime
from memgraph_recall.embedded.prelude import fast_shape
from recall_kit import MODEL, QUERY_MODULES, axis, rows_of, runtime
from recall_lib import directory as d

VEC = {"passage_embeddings": [axis(1)], "embedding_model": MODEL}
TS = "2024-01-01T10:00:00Z"
WIDE = {"turns_k": 50, "text_k": 50, "facts_k": 50, "entities_k": 50, "user_facts_k": 50, "fact_turns_k": 50,
        "query_vector": [0.5 if i in (1, 4) else 0.0 for i in range(384)]}
FORMS = ("string", "node", "fast")


def call(rt: Runtime, form: str, user_id: str, question: str = "Paris trip door code", **config) -> dict:
    """One render naming the user in `form`; None when the fast shape finds no such user."""
    rest = (question, None, {**WIDE, **config})
    if form == "fast":
        rows = rt.call("recall.render", prelude=lambda store: _shape(store, user_id, rest))
    elif form == "node":
        ids = rt.store.find_vertices("User", "user_id", user_id)
        rows = rt.call("recall.render", rt.vertex(ids[0]), *rest) if ids else []
    else:
        rows = rt.call("recall.render", user_id, *rest)
    return rows[0] if rows else None


def _shape(store, user_id, rest):
    shape = fast_shape(store, user_id)
    return None if shape is None else (shape, *rest)


def shown(rt: Runtime, form: str, user_id: str, question: str = "Paris trip door code", **config) -> str:
    row = call(rt, form, user_id, question, **config)
    return "" if row is None else "\n".join(rows_of(row["text"]))


def counters(rt: Runtime) -> dict[str, int]:
    """The cache's counters, read from the module (`recall.status` is itself a string-form call)."""
    return dict(rt.modules["recall"].CACHE.counts)


def roll_back(rt: Runtime, vertices: int) -> None:
    """An aborted import: its ids are used up and never handed out again."""
    with pytest.raises(RuntimeError, match="aborted"), rt.store.transaction():
        for i in range(vertices):
            rt.store.create_vertex(["Person"], {"name": f"imported {i}"})
        raise RuntimeError("aborted import")


def paris_world() -> MemoryGraph:
    """x said "k" (planning a trip to Paris, the entity Paris mentioned there); y has one message."""
    g = MemoryGraph()
    g.recall_meta()
    x, y = g.user("x"), g.user("y")
    k = g.message(g.session(x, "x-s1"), "k", "x is planning a trip to Paris", TS, **VEC)
    paris = g.entity("Paris", embedding=axis(4), embedding_model=MODEL)
    g.mention(paris, g.chunk(k, "trip to Paris"), "k")
    g.message(g.session(y, "y-s1"), "y-1", "y says hello", TS, **VEC)
    return g


def y_takes_k(rt: Runtime) -> None:
    """y's ingest, one transaction: an Action with x's action_id "k", and a fact on Paris read from it."""
    store = rt.store
    paris = next(v for v in store.vertices.values() if v.props.get("text") == "Paris")
    (session,) = store.find_vertices("Session", "session_id", "y-s1")
    with store.transaction():
        action = store.create_vertex(["Action"], {"action_id": "k", "action_type": "user_message",
                                                  "text": "y moved", "timestamp": TS, **VEC})
        store.create_edge(store.get_vertex(session), action, "HAS_ACTION")
        street = store.create_vertex(["Entity"], {"text": "12 Rue Cler", "embedding": axis(4),
                                                  "embedding_model": MODEL})
        store.create_edge(paris, street, "LIVES_AT", {
            "source_id": "k", "text": "y lives at 12 Rue Cler, door code 4711", "valid_at": "2024-01-02",
            "role": "user", "confidence": 0.9, "embedding": axis(4), "embedding_model": MODEL})


# -- 1. isolation never rests on the directory being complete ------------------------------------------
@pytest.mark.parametrize("form", FORMS)
def test_without_the_constraint_a_colliding_id_after_a_gap_never_shows_the_other_users_fact(form):
    """The issue's leak, as reproduced: no uniqueness constraint, the directory built, a rolled-back
    write of 100 vertices, then y's Action with x's id "k" and a fact on Paris read from it."""
    rt = Runtime(QUERY_MODULES)
    rt.load_elements(paris_world().elements())  # a RecallMeta, but no constraint recorded on it
    assert "trip to Paris" in shown(rt, "string", "x")  # the directory is built
    roll_back(rt, 100)
    y_takes_k(rt)
    for _ in range(2):
        text = shown(rt, form, "x")
        assert "4711" not in text and "12 Rue Cler" not in text
        assert "trip to Paris" in text  # x's own turn: x's by structure
        rt.call("recall.invalidate", "x")
    row = call(rt, form, "x")
    assert "constraint" in row["recalled"]["facts_off_reason"] and row["recalled"]["facts"] == []


@pytest.mark.parametrize("form", FORMS)
def test_with_the_constraint_setup_records_a_colliding_id_is_refused_and_facts_are_shown(form):
    rt = runtime(paris_world().elements())  # setup: the constraint, recorded on the RecallMeta
    street_fact = {"facts_k": 50}
    assert "trip to Paris" in shown(rt, form, "x", **street_fact)
    roll_back(rt, 100)
    with pytest.raises(ConstraintViolation):
        y_takes_k(rt)  # the whole ingest: no Action, no fact
    rt.call("recall.invalidate", "x")
    text = shown(rt, form, "x")
    assert "4711" not in text and "trip to Paris" in text
    assert call(rt, form, "x")["recalled"]["facts_off_reason"] is None


def test_an_integer_action_id_attributes_nothing_as_the_constraint_tells_7_from_the_text_7():
    g = MemoryGraph()
    g.recall_meta()
    x, y = g.user("x"), g.user("y")
    seven = g.message(g.session(x, "x-s1"), 7, "x is planning a trip to Paris", TS, **VEC)
    paris = g.entity("Paris", embedding=axis(4), embedding_model=MODEL)
    g.mention(paris, g.chunk(seven, "trip to Paris"), 7)
    y_seven = g.message(g.session(y, "y-s1"), "7", "y says hello", TS, **VEC)  # allowed: 7 is not "7"
    g.fact(paris, "LIVES_AT", g.entity("12 Rue Cler", embedding=axis(4), embedding_model=MODEL), "7",
           "y lives at 12 Rue Cler, door code 4711", valid_at="2024-01-02", role="user", confidence=0.9,
           embedding=axis(4), embedding_model=MODEL)
    assert y_seven.key == "7"
    rt = runtime(g.elements())
    for form in FORMS:
        text = shown(rt, form, "x")
        assert "4711" not in text and "trip to Paris" in text


# -- 2. a user created after a long run of missing ids is found ----------------------------------------
def test_a_user_created_after_a_rolled_back_import_is_found_by_the_string_form_within_a_sweep_cycle():
    rt = runtime(paris_world().elements())
    assert shown(rt, "string", "x")  # the directory is built: one pass
    roll_back(rt, 100)
    store = rt.store
    z = store.add_vertex(["User"], {"user_id": "z"})
    session = store.add_vertex(["Session"], {"session_id": "z-s1"})
    store.add_edge(z, session, "HAD_SESSION")
    message = store.add_vertex(["Action"], {"action_id": "z-1", "action_type": "user_message",
                                            "text": "z plans a trip to Lisbon", "timestamp": TS, **VEC})
    store.add_edge(session, message, "HAS_ACTION")
    assert "Lisbon" in shown(rt, "fast", "z")  # through the index: at once
    reach = 2 * store.next_vertex_id + d.GAP
    calls = 1
    while "Lisbon" not in shown(rt, "string", "z"):
        calls += 1
        assert calls <= reach // d.SWEEP + 1, "z was not found by the string form within a sweep cycle"
    assert counters(rt)["scans"] == 1


# -- 3. every change is seen within its bound ----------------------------------------------------------
def two_users() -> MemoryGraph:
    g = MemoryGraph()
    g.recall_meta()
    x, y = g.user("x"), g.user("y")
    g.message(g.session(x, "x-s1"), "x-1", "x keeps a diary", TS, **VEC)
    g.message(g.session(y, "y-s1"), "y-1", "y keeps notes", TS, **VEC)
    return g


def ids(rt: Runtime, label: str, key: str, value: str) -> int:
    (found,) = rt.store.find_vertices(label, key, value)
    return found


@pytest.mark.parametrize("form", FORMS)
def test_a_session_moved_by_adding_the_new_parent_first_is_seen_on_the_next_call(form):
    rt = runtime(two_users().elements())
    store = rt.store
    moved = ids(rt, "Session", "session_id", "y-s1")
    assert "y keeps notes" not in shown(rt, form, "x", "notes diary")
    edge = store.add_edge(ids(rt, "User", "user_id", "x"), moved, "HAD_SESSION")
    assert "y keeps notes" not in shown(rt, form, "x", "notes diary")  # two parents: neither's
    (old,) = [e.id for e in store.get_vertex(moved).in_edges if e.id != edge]
    store.delete_edge(old)
    assert "y keeps notes" in shown(rt, form, "x", "notes diary")


@pytest.mark.parametrize("form", FORMS)
def test_an_agent_whose_second_parent_goes_is_seen_on_the_next_call(form):
    rt = runtime(two_users().elements())
    store = rt.store
    agent = store.add_vertex(["Agent"], {"agent_id": "helper"})
    store.add_edge(ids(rt, "Session", "session_id", "x-s1"), agent, "HAS_AGENT")
    second = store.add_edge(ids(rt, "Session", "session_id", "y-s1"), agent, "HAS_AGENT")
    action = store.add_vertex(["Action"], {"action_id": "h-1", "action_type": "assistant_message",
                                           "text": "the helper drafted a diary entry", "timestamp": TS,
                                           **VEC})
    store.add_edge(agent, action, "HAS_ACTION")
    assert "helper drafted" not in shown(rt, form, "x", "diary")
    store.delete_edge(second)
    assert "helper drafted" in shown(rt, form, "x", "diary")


@pytest.mark.parametrize("form", ("string", "fast"))
def test_whatever_was_turned_away_or_edited_is_seen_within_the_maximum_age(monkeypatch, form):
    """An Action's second parent removed; an action_id, a text and an Action label set after a call saw
    the vertex without; a message's text edited; a fact sourced from an action_id edited onto one."""
    monkeypatch.setenv("RECALL_CACHE_MAX_AGE", "0.2")
    rt = runtime(two_users().elements())
    store = rt.store
    xs, ys = ids(rt, "Session", "session_id", "x-s1"), ids(rt, "Session", "session_id", "y-s1")

    def message(props: dict, labels=("Action",)) -> int:
        props = {"action_type": "user_message", "timestamp": TS, **VEC, **props}
        vertex = store.add_vertex(list(labels), props)
        store.add_edge(xs, vertex, "HAS_ACTION")
        return vertex

    shared = message({"action_id": "x-2", "text": "shared walnut"})
    second = store.add_edge(ys, shared, "HAS_ACTION")
    no_id = message({"text": "idless hazelnut"})
    no_label = message({"action_id": "x-4", "text": "labelless chestnut"}, labels=())
    edited = message({"action_id": "x-5", "text": "original almond"})
    source = message({"action_id": "x-6", "text": "pistachio source"})
    farm = store.add_vertex(["Entity"], {"text": "pistachio farm", "embedding": axis(4),
                                         "embedding_model": MODEL})
    store.add_edge(ids(rt, "User", "user_id", "x"), farm, "VISITED", {
        "source_id": "x-7", "text": "x visited a pistachio farm", "valid_at": "2024-01-02", "role": "user",
        "confidence": 0.9, "embedding": axis(4), "embedding_model": MODEL})
    # Nothing of these is shown before the edits (so no row's verification forces a rebuild): the
    # words of the question are only in what the edits make the user's, and in the edited text.
    before = shown(rt, form, "x", "walnut hazelnut chestnut cashew farm", lanes=["text"])
    assert before == "(nothing in memory matched)", before
    question = "walnut hazelnut chestnut cashew pistachio farm"
    store.delete_edge(second)
    store.set_vertex_property(no_id, "action_id", "x-3")
    store.add_vertex_label(no_label, "Action")
    store.set_vertex_property(edited, "text", "edited cashew")
    store.set_vertex_property(source, "action_id", "x-7")
    time.sleep(0.25)
    after = shown(rt, form, "x", question, lanes=["text", "facts", "user_facts"])
    assert counters(rt)["verify_failures"] == 0  # seen by the re-read, not by a failed row
    for expected in ("shared walnut", "idless hazelnut", "labelless chestnut", "edited cashew",
                     "x visited a pistachio farm"):
        assert expected in after, (expected, after)
    assert "original almond" not in after, after
    text_only = shown(rt, form, "x", "cashew", lanes=["text"])
    assert "edited cashew" in text_only  # the new text is what is searched


def test_a_user_read_again_at_the_maximum_age_renders_the_same_rows(monkeypatch):
    """Past the maximum age every check unit is read again (nothing changed: nothing renewed)."""
    monkeypatch.setenv("RECALL_CACHE_MAX_AGE", "0.1")
    rt = runtime(two_users().elements())
    first = shown(rt, "fast", "x", "diary")
    (entry,) = rt.modules["recall"].CACHE._entries.values()
    before, units_read = counters(rt), rt.modules["recall"].CACHE.units_read
    time.sleep(0.15)
    rt.call("recall.render", prelude=lambda store: _shape(store, "x", ("diary", None, WIDE)))
    after = counters(rt)
    assert rt.modules["recall"].CACHE.units_read - units_read == len(entry.rota) > 0
    assert after["renewals"] == before["renewals"] and after["builds"] == before["builds"]
    assert shown(rt, "fast", "x", "diary") == first


# -- 4. explain names no deleted fact -----------------------------------------------------------------
def test_explain_never_names_a_deleted_fact_even_one_no_row_shows():
    """The facts lane's pool finds a turn (`fact_turns`, named in `recalled.turns[].lanes[].via`) while
    no FACT row is shown (`facts_k` 0): the fact named there is verified like a row."""
    g = MemoryGraph()
    g.recall_meta()
    x = g.user("x")
    k = g.message(g.session(x, "x-s1"), "k", "x adopted a cat called Mochi", TS, **VEC)
    g.message(g.session(x, "x-s2"), "k2", "x bought bread", TS, **VEC)
    mochi = g.entity("Mochi", embedding=axis(4), embedding_model=MODEL)
    g.mention(mochi, g.chunk(k, "a cat called Mochi"), "k")
    for n in range(4):  # between entities: deleting them changes no edge of the user's holders
        g.fact(mochi, "HAS_PET", g.entity(f"cat {n}", embedding=axis(4), embedding_model=MODEL), "k",
               f"Mochi is cat number {n}", valid_at="2024-01-02", role="user", confidence=0.9,
               embedding=axis(4), embedding_model=MODEL)
    rt = runtime(g.elements())
    config = {"explain": True, "facts_k": 0, "user_facts_k": 0, "lanes": ["turns", "text", "facts"]}

    def named() -> list[str]:
        turns = call(rt, "fast", "x", "cat", **config)["recalled"]["turns"]
        return [lane["via"] for turn in turns for lane in turn["lanes"] if lane["via"]]

    assert any("HAS_PET" in via for via in named())
    for edge in list(rt.store.edges.values()):
        if edge.type == "HAS_PET":
            rt.store.delete_edge(edge.id)
    assert not any("HAS_PET" in via for via in named())


# -- 5 and 6. no call reads the whole graph ------------------------------------------------------------
def crowd(users: int) -> MemoryGraph:
    g = MemoryGraph()
    g.recall_meta()
    for u in range(users):
        user = g.user(f"u{u}")
        session = g.session(user, f"u{u}-s1")
        for m in range(3):
            g.message(session, f"u{u}-{m}", f"u{u} message {m}", TS, **VEC)
    return g


@pytest.mark.parametrize("shape", [{}, {"users": []}, "users-only", "no-metas"])
def test_a_fast_shape_map_that_lacks_what_the_module_needs_is_refused_before_any_read(shape):
    rt = runtime(crowd(20).elements())
    user = rt.vertex(rt.store.find_vertices("User", "user_id", "u1")[0])
    if shape == "users-only":
        shape = {"users": [user]}
    elif shape == "no-metas":
        shape = {"users": [user], "metas": [], "holders": [], "degrees": [], "id_sums": []}
    counts = ApiCounts()
    with pytest.raises(Exception, match=r"user: the call shape's map lacks|user\['metas'\] is empty"):
        rt.call("recall.render", shape, "message", None, {}, api_counts=counts)
    assert counts.vertices == 0 and counters(rt)["scans"] == 0


@pytest.mark.parametrize("form", ("fast", "node"))
def test_a_databases_first_call_and_the_first_after_invalidate_read_only_the_user(form):
    rt = runtime(crowd(300).elements())  # ~1,500 vertices
    every = len(rt.store.vertices)
    for _ in range(2):
        counts = ApiCounts()
        if form == "fast":
            rt.call("recall.render", prelude=lambda store: _shape(store, "u7", ("message", None, {})),
                    api_counts=counts)
        else:
            vertex = rt.vertex(rt.store.find_vertices("User", "user_id", "u7")[0])
            rt.call("recall.render", vertex, "message", None, {}, api_counts=counts)
        assert counts.vertices < every // 10, counts.as_dict()
        assert counters(rt)["scans"] == 0
        assert rt.call("recall.invalidate") == [{"dropped": 1}]


def test_the_string_form_keeps_one_pass_per_database_even_after_invalidate():
    rt = runtime(crowd(50).elements())
    shown(rt, "string", "u1", "message")
    rt.call("recall.invalidate")
    shown(rt, "string", "u2", "message")
    assert counters(rt)["scans"] == 1


def known(rt: Runtime, user_id: str) -> bool:
    """Whether a string-form call finds the user (`recall.status` says so, and keeps the directory)."""
    rows = rt.call("recall.status", {"user": user_id})
    return not any("(not found)" in str(r["detail"]) for r in rows if r["name"] == "user")


def test_a_late_commit_below_the_highest_id_and_an_edited_user_id_are_found_by_the_sweep():
    """A transaction that took its ids before others and committed after them (`id=` below the top),
    and a user_id set on an old vertex: neither is above the top, both are read within a cycle."""
    rt = runtime(crowd(30).elements())
    shown(rt, "string", "u1", "message")
    roll_back(rt, 10)  # ids used up: the late writer's
    late = rt.store.next_vertex_id - 5
    rt.store.add_vertex(["Person"], {"name": "after"})  # a later vertex commits first
    rt.store.add_vertex(["User"], {"user_id": "late"}, id=late)
    (old,) = rt.store.find_vertices("User", "user_id", "u3")
    rt.store.set_vertex_property(old, "user_id", "renamed")
    cycle = (2 * rt.store.next_vertex_id + d.GAP) // d.SWEEP + 2
    waiting = {"late", "renamed"}
    for _ in range(cycle):
        waiting = {user_id for user_id in waiting if not known(rt, user_id)}
        if not waiting:
            break
    assert not waiting
    assert counters(rt)["scans"] == 1
