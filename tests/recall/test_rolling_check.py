"""The rolling check (issue #48): every change is seen within the maximum age, at a price that follows the
time that passes, read a slice per call (`recall_lib.rolling`, `recall_lib.recheck`).

The schedule is tested on plain data; the end-to-end tests run both call forms with the cache's clock
held still and moved by hand, so that "within the maximum age" and "past it" are exact. Each edit is
made where no row shows it before the maximum age (a shown row would fail verification and build the
user afresh, which is another promise), so only the rolling check can make it seen.
"""

import gc
import math
from collections import Counter
from datetime import datetime, timezone

import numpy as np
import pytest
from cache_kit import add_message, add_session
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded.prelude import fast_shape
from recall_kit import MODEL, axis, rows_of, runtime
from recall_lib.recheck import Kind, raw_digest
from recall_lib.rolling import UNLEARNED, Rota, Units

TS = "2024-01-01T10:00:00Z"
VEC = {"passage_embeddings": [axis(1)], "embedding_model": MODEL}
FORMS = ("fast", "string")
NOTHING = "(nothing in memory matched)"
OKAPI = ("okapi", None, {"query_vector": [1.0] + [0.0] * 383, "lanes": ["text"]})
MAX_AGE = 60.0
#: Every lane wide; the question's vector finds turns (axis 1) and entities and facts (axis 4), not notes.
ALL = {"turns_k": 50, "text_k": 50, "facts_k": 50, "entities_k": 50, "user_facts_k": 50, "memories_k": 20,
       "fact_turns_k": 50, "min_score": 0.1,
       "query_vector": [0.5 if i in (1, 4) else 0.0 for i in range(384)]}


# -- the schedule, on plain data ----------------------------------------------------------------------
def ring(weights: list[int], now: float = 0.0) -> Rota:
    rows = [(0, vertex_id, 0, 0, weight) for vertex_id, weight in enumerate(weights)]
    return Rota.fresh(Units.of(rows), now)


def read(rota: Rota, now: float, max_age: float = 60.0, cap: int = 10**9) -> list[int]:
    """One call: the vertex ids it reads, settled."""
    due = rota.due(now, max_age, cap)
    taken = rota.units.ids[due.positions].tolist()
    rota.settle(due, now)
    return taken


def test_nothing_is_read_right_after_a_build():
    rota = ring([5] * 10, now=100.0)
    assert read(rota, 100.0) == []


def test_calls_in_quick_succession_read_even_slices_and_every_unit_once_per_maximum_age():
    rota = ring([5] * 120, now=0.0)
    seen: dict[int, list[float]] = {}
    for step in range(1, 241):  # a call every half second, two maximum ages
        now = step * 0.5
        taken = read(rota, now)
        assert len(taken) <= 2  # 120 units x 0.5 s / 60 s = 1 per call: no spike
        for vertex_id in taken:
            seen.setdefault(vertex_id, []).append(now)
    assert sorted(seen) == list(range(120))
    for times in seen.values():  # never more than a maximum age between two readings
        assert times[0] <= MAX_AGE and all(b - a <= MAX_AGE for a, b in zip(times, times[1:], strict=False))


def test_with_a_slice_calls_read_nothing_until_the_credit_pays_for_one_and_each_unit_within_the_max_age():
    rota = ring([5] * 120, now=0.0)  # 600 weight; a call every half second earns 5
    seen: dict[int, list[float]] = {}
    reading = 0
    for step in range(1, 241):  # two maximum ages
        now = step * 0.5
        due = rota.due(now, 60.0, 10**9, least=100)
        taken = rota.units.ids[due.positions].tolist()
        rota.settle(due, now)
        assert taken == [] or 19 <= len(taken) <= 20  # nothing, or a slice: 100 weight, 20 units
        reading += bool(taken)
        for vertex_id in taken:
            seen.setdefault(vertex_id, []).append(now)
    assert reading <= 240 // 19
    assert sorted(seen) == list(range(120))
    for times in seen.values():
        assert times[0] <= MAX_AGE and all(b - a <= MAX_AGE for a, b in zip(times, times[1:], strict=False))


def test_a_slice_larger_than_the_ring_or_the_cap_waits_for_the_smaller():
    rota = ring([5] * 10, now=0.0)  # 50 weight
    assert rota.due(30.0, 60.0, 10**9, least=1000).positions.size == 0  # 25 earned of the ring's 50
    assert rota.due(60.0, 60.0, 10**9, least=1000).positions.size == 10  # the whole ring, also due
    rota = ring([5] * 10, now=0.0)
    assert rota.due(12.0, 60.0, 10, least=1000).positions.size == 2  # the cap: 10 weight earned


def test_after_a_pause_longer_than_the_maximum_age_everything_is_read_at_once():
    rota = ring([5] * 50, now=0.0)
    assert read(rota, 10.0) == list(range(8))  # a share: 50 x 10 / 60 units, rounded down
    assert sorted(read(rota, 75.0)) == list(range(50))  # all overdue (and the credit is one ring)
    assert read(rota, 75.0) == []


def test_units_past_the_maximum_age_are_read_whatever_the_credit():
    rota = ring([5] * 10, now=0.0)
    rota.credit, rota.last = 0.0, 60.0  # no credit left, the last call just now
    assert read(rota, 60.0) == list(range(10))  # read at 0.0: exactly one maximum age ago


def test_a_heavy_ring_is_read_over_ceil_weight_over_cap_calls_never_more_than_the_cap_each():
    weights = [7] * 100 + [3] * 50  # 850 reads
    rota = ring(weights, now=0.0)
    cap = 100
    done: set[int] = set()
    calls = 0
    while len(done) < len(weights):
        calls += 1
        taken = read(rota, 1000.0 + calls * 0.001, cap=cap)
        assert 0 < sum(weights[i] for i in taken) <= cap
        done.update(taken)
    assert calls <= math.ceil(sum(weights) / (cap - max(weights))) and calls >= math.ceil(850 / cap)


def test_one_unit_heavier_than_the_cap_is_still_read():
    rota = ring([500, 5], now=0.0)
    assert read(rota, 100.0, cap=100) == [0]
    assert read(rota, 100.001, cap=100) == [1]


def test_units_added_go_behind_the_cursor_and_the_ring_stays_oldest_first():
    rota = ring([5] * 6, now=0.0)
    assert read(rota, 20.0) == [0, 1, 2, 3, 4, 5][:2]  # 6 x 20 / 60 = 2
    grown = rota.with_units(Units.of([(0, 100, 0, 0, 5), (0, 101, 0, 0, 5)]), 25.0)
    order = [(grown.cursor + k) % len(grown) for k in range(len(grown))]
    assert grown.units.ids[order].tolist() == [2, 3, 4, 5, 0, 1, 100, 101]
    assert list(grown.read_at[order]) == sorted(grown.read_at)


def test_a_replaced_kind_is_read_now_and_the_rest_keep_their_readings():
    rows = [(0, 1, 0, 0, 5), (1, 2, 0, 0, 5), (0, 3, 0, 0, 5), (1, 4, 0, 0, 5)]
    rota = Rota.fresh(Units.of(rows), 0.0)
    read(rota, 30.0)  # two read at 30
    replaced = rota.replaced({1}, Units.of([(1, 9, 0, 0, 5)]), 40.0)
    stamps = dict(zip(replaced.units.ids.tolist(), replaced.read_at.tolist(), strict=True))
    assert stamps == {1: 30.0, 3: 0.0, 9: 40.0}
    order = [(replaced.cursor + k) % len(replaced) for k in range(len(replaced))]
    assert list(replaced.read_at[order]) == sorted(replaced.read_at)


def test_a_build_that_took_units_over_keeps_their_last_reading():
    old = Rota.fresh(Units.of([(0, 1, 0, 0, 5), (0, 2, 0, 0, 5), (2, 3, 0, 0, 5)]), 0.0)
    old.last = 50.0  # the call that builds settled it
    new_units = Units.of([(0, 1, 0, 0, 5), (0, 2, 0, 0, 5), (2, 3, 0, 0, 5), (0, 4, 0, 0, 5)])
    carried = old.carried(new_units, {2, 3}, kind=0, now=50.0)  # Action 2 taken over; 3 is no Action
    stamps = dict(zip(carried.units.ids.tolist(), carried.read_at.tolist(), strict=True))
    assert stamps == {1: 50.0, 2: 0.0, 3: 50.0, 4: 50.0}
    assert carried.units.ids[carried.cursor] == 2  # the oldest first
    assert read(carried, 60.0) == [2]


def test_learned_digests_stay_with_their_units_and_a_build_carries_those_it_took_over():
    rota = Rota.fresh(Units.of([(0, 1, 0, 0, 5), (0, 2, 0, 0, 5), (2, 3, 0, 0, 5)]), 0.0)
    due = rota.due(60.0, 60.0, 10**9)
    rota.learn(due, {0: 11, 1: 22})  # positions in the slice read
    rota.settle(due, 60.0)
    digests = dict(zip(rota.units.ids.tolist(), rota.units.digests.tolist(), strict=True))
    assert digests == {1: 11, 2: 22, 3: UNLEARNED}
    grown = rota.with_units(Units.of([(0, 4, 0, 0, 5)]), 61.0)
    assert dict(zip(grown.units.ids.tolist(), grown.units.digests.tolist(), strict=True)) == {
        1: 11, 2: 22, 3: 0, 4: UNLEARNED}
    new_units = Units.of([(0, 1, 0, 0, 5), (0, 2, 0, 0, 5), (2, 3, 0, 0, 5)])
    carried = rota.carried(new_units, {2}, kind=0, now=70.0)  # only Action 2 taken over unread
    assert dict(zip(carried.units.ids.tolist(), carried.units.digests.tolist(), strict=True)) == {
        1: UNLEARNED, 2: 22, 3: UNLEARNED}
    assert not new_units.digests.any()  # the build's own units are not changed in place


@pytest.mark.parametrize("old, new", [
    (("2024-01-01T10:00:00Z", "x", "user_message"), ("2024-06-01T10:00:00Z", "x", "user_message")),
    ((1, None, "t"), (True, None, "t")),  # equal, but not the same stored value
    ((1, None, "t"), ("1", None, "t")),
    ((1.0, None, "t"), (1, None, "t")),
    ((None, "x", "t"), (None, "t", "x")),  # a value moved to another property
    (([1, 2], None, "t"), ([2, 1], None, "t")),  # lists and maps: by their repr
    (({"a": 1}, None, "t"), ({"a": 2}, None, "t")),
])
def test_a_raw_digest_tells_stored_values_apart(old, new):
    assert raw_digest(*old) != raw_digest(*new)


@pytest.mark.parametrize("read", [  # each call a new reading: new objects of equal values
    lambda: ("2024-01-01T10:00:00Z", "x", "user_message"),
    lambda: (float("nan"), None, None),  # a NaN is not equal to itself, nor hashed alike
    lambda: ([1, {"a": [2]}], {}, 3.5),
    lambda: (datetime(2024, 1, 1, tzinfo=timezone.utc), "x", None),
])
def test_a_raw_digest_is_the_same_for_the_same_values_read_again_and_never_unlearned(read):
    first, again = read(), read()
    assert first[0] is not again[0] or isinstance(first[0], str)
    assert raw_digest(*first) == raw_digest(*again) != UNLEARNED


# -- end to end: each change seen within the maximum age, in both call forms ------------------------
def world(more: int = 0) -> MemoryGraph:
    """x: a diary, a zebra, a message shared with y's session (turned away), a note, an entity (the
    harbor) mentioned in x-1, and `more` messages; y: one message."""
    g = MemoryGraph()
    g.recall_meta()
    x, y = g.user("x"), g.user("y")
    xs, ys = g.session(x, "x-s1"), g.session(y, "y-s1")
    diary = g.message(xs, "x-1", "x keeps a diary at the harbor", TS, **VEC)
    g.message(xs, "x-2", "x packed the zebra", TS, **VEC)
    shared = g.message(xs, "x-3", "a shared walnut", TS, **VEC)
    g.relationship(ys, "HAS_ACTION", shared)
    g.message(xs, "x-4", "x sailed at dawn", TS, **VEC)
    for i in range(more):
        g.message(xs, f"x-more-{i}", f"x wrote message {i}", TS, **VEC)
    g.message(ys, "y-1", "y keeps notes", TS, **VEC)
    g.memory(x, "x-m1", "notes/x.md", "a note about paddles", passage_embeddings=[axis(3)],
             embedding_model=MODEL)
    harbor = g.entity("harbor", embedding=axis(4), embedding_model=MODEL)
    g.mention(harbor, g.chunk(diary, "the harbor"), "x-1")
    town = g.node(["Place"], text="Porto")  # a fact's end that no chunk of x's mentions
    g.fact(harbor, "IN_TOWN", town, "x-1", "the harbor is in town", valid_at="2024-01-02", role="user",
           confidence=0.9, embedding=axis(5), embedding_model=MODEL)
    unlabelled = g.node([], session_id="x-s9")  # under x by HAD_SESSION, but no Session: turned away
    g.relationship(x, "HAD_SESSION", unlabelled)
    g.message(unlabelled, "x-9", "a forgotten gondola", TS, **VEC)
    g.relationship(x, "ADOPTED", g.node(["OntologyVersion"], pool='{"relation_types": []}'))
    return g


def started(form: str, more: int = 0):
    """A runtime over `world(more)` whose cache clock is held at 1000 s, x's entry built by a first call."""
    rt = runtime(world(more).elements())
    cache = rt.modules["recall"].CACHE
    now = [1000.0]
    cache.clock = lambda: now[0]
    shown(rt, form, "x", "diary")
    return rt, cache, now


def shown(rt, form: str, user_id: str, question: str, **config) -> str:
    """The rendered rows and every lane's hits (an entity shows in the latter)."""
    rest = (question, None, {**ALL, **config})
    lanes_rest = (question, {**ALL, **config})
    if form == "fast":
        rows = rt.call("recall.render", prelude=lambda store: (fast_shape(store, user_id), *rest))
        hits = rt.call("recall.lanes", prelude=lambda store: (fast_shape(store, user_id), *lanes_rest))
    else:
        rows = rt.call("recall.render", user_id, *rest)
        hits = rt.call("recall.lanes", user_id, *lanes_rest)
    return "\n".join([*rows_of(rows[0]["text"]), *(hit["text"] for hit in hits)])


def vertex(rt, label: str, key: str, value: str) -> int:
    (found,) = rt.store.find_vertices(label, key, value)
    return found


def edit_zebra_same_length(rt) -> None:
    assert len("zebra") == len("okapi")
    rt.store.set_vertex_property(vertex(rt, "Action", "action_id", "x-2"), "text", "x packed the okapi")


def remove_the_second_parent(rt) -> None:
    shared = vertex(rt, "Action", "action_id", "x-3")
    ys = vertex(rt, "Session", "session_id", "y-s1")
    (edge,) = [e.id for e in rt.store.get_vertex(shared).in_edges if e.start.id == ys]
    rt.store.delete_edge(edge)


def extract_a_fact_later(rt) -> None:
    """An extraction run after the build: the lighthouse near the harbor, read from x-1."""
    store = rt.store
    lighthouse = store.add_vertex(["Entity"], {"text": "lighthouse", "embedding": axis(4),
                                               "embedding_model": MODEL})
    store.add_edge(vertex(rt, "Entity", "text", "harbor"), lighthouse, "NEAR", {
        "source_id": "x-1", "text": "the lighthouse stands near the harbor", "valid_at": "2024-01-02",
        "role": "user", "confidence": 0.9, "embedding": axis(4), "embedding_model": MODEL})


def extract_an_entity_later(rt) -> None:
    """A chunk and an entity found later in x-4, which had none."""
    store = rt.store
    chunk = store.add_vertex(["Chunk"], {"text": "sailed at dawn", "hash": "dawn"})
    store.add_edge(vertex(rt, "Action", "action_id", "x-4"), chunk, "HAS_CHUNK")
    schooner = store.add_vertex(["Entity"], {"text": "schooner", "embedding": axis(4),
                                             "embedding_model": MODEL})
    store.add_edge(schooner, chunk, "MENTIONED_IN", {"sources": ["x-4"]})


def edit_the_note(rt) -> None:
    note = vertex(rt, "Memory", "memory_id", "x-m1")
    rt.store.set_vertex_property(note, "content", "a note about lanterns")


def mention_a_new_entity_in_a_chunk_held(rt) -> None:
    """An extraction that finds one more entity in the chunk x-1 already has."""
    store = rt.store
    (chunk,) = [e.end.id for e in store.get_vertex(vertex(rt, "Action", "action_id", "x-1")).out_edges
                if e.type == "HAS_CHUNK"]
    buoy = store.add_vertex(["Entity"], {"text": "buoy", "embedding": axis(4), "embedding_model": MODEL})
    store.add_edge(buoy, chunk, "MENTIONED_IN", {"sources": ["x-1"]})


def rename_a_fact_end(rt) -> None:
    rt.store.set_vertex_property(vertex(rt, "Place", "text", "Porto"), "text", "Lisbon")


def label_the_turned_away_session(rt) -> None:
    rt.store.add_vertex_label(_parent(rt, "x-9"), "Session")


def rename_the_session(rt) -> None:
    rt.store.set_vertex_property(vertex(rt, "Session", "session_id", "x-s1"), "session_id", "x-renamed")


EDITS = {  # edit -> (question, what shows only after it is seen, what no longer shows then)
    "same_length_text": (edit_zebra_same_length, "okapi", "x packed the okapi", "zebra"),
    "second_parent_removed": (remove_the_second_parent, "walnut", "a shared walnut", None),
    "fact_extracted_later": (extract_a_fact_later, "lighthouse", "the lighthouse stands near the harbor",
                             None),
    "entity_extracted_later": (extract_an_entity_later, "schooner", "schooner", None),
    "note_edited": (edit_the_note, "lanterns", "a note about lanterns", "paddles"),
    "entity_mentioned_later_in_a_chunk_held": (mention_a_new_entity_in_a_chunk_held, "buoy", "buoy", None),
    "fact_end_renamed": (rename_a_fact_end, "Lisbon", "Lisbon", "Porto"),
    "turned_away_session_labelled": (label_the_turned_away_session, "gondola", "a forgotten gondola", None),
    "session_renamed": (rename_the_session, "diary", "session x-renamed", None),
}


def _parent(rt, action_id: str) -> int:
    (edge,) = rt.store.get_vertex(vertex(rt, "Action", "action_id", action_id)).in_edges
    return edge.start.id


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(EDITS))
def test_an_edit_is_seen_at_the_first_call_past_the_maximum_age_not_by_verification(form, name):
    edit, question, expected, gone = EDITS[name]
    rt, cache, now = started(form)
    edit(rt)
    lanes = ["text", "facts", "entities", "memories"]
    before = dict(cache.counts)
    assert shown(rt, form, "x", "nothing at all", lanes=["text"]) == NOTHING  # no time passed: none read
    now[0] += MAX_AGE  # the maximum age since the build: every unit read again
    after_text = shown(rt, form, "x", question, lanes=lanes)
    assert expected in after_text, after_text
    after = dict(cache.counts)
    assert after["verify_failures"] == before["verify_failures"]  # seen by the rolling check
    assert after["renewals"] == before["renewals"] + 1
    if gone is not None:
        assert gone not in shown(rt, form, "x", gone, lanes=lanes)
    rt.call("recall.invalidate", "x")
    assert shown(rt, form, "x", question, lanes=lanes) == after_text  # what a cold build holds


def edit_zebra_time(rt) -> None:
    later = "2024-06-01T10:00:00Z"
    assert len(later) == len(TS)
    rt.store.set_vertex_property(vertex(rt, "Action", "action_id", "x-2"), "timestamp", later)


def edit_zebra_speaker(rt) -> None:
    rt.store.set_vertex_property(vertex(rt, "Action", "action_id", "x-2"), "speaker", "Zara")


def edit_zebra_type(rt) -> None:
    rt.store.set_vertex_property(vertex(rt, "Action", "action_id", "x-2"), "action_type", "assistant_message")


FIELD_EDITS = {  # an edit of x-2's fields -> (a question that shows x-2, what shows once the edit is seen)
    "same_length_text": (edit_zebra_same_length, "okapi", "x packed the okapi"),
    "time": (edit_zebra_time, "zebra", "2024-06-01"),
    "speaker": (edit_zebra_speaker, "zebra", "Zara"),
    "type": (edit_zebra_type, "zebra", "assistant"),
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(FIELD_EDITS))
def test_a_field_edit_after_a_reading_learned_the_digest_is_seen_within_the_maximum_age(form, name):
    """Once a reading found an Action as held, later readings compare a digest of its stored time,
    speaker and type instead of parsing them (`recheck.raw_digest`): an edit of any of them, or of the
    text at the same length, is still seen at the first call past the maximum age."""
    edit, question, expected = FIELD_EDITS[name]
    rt, cache, now = started(form)
    now[0] += MAX_AGE
    assert shown(rt, form, "x", "nothing at all", lanes=["text"]) == NOTHING  # every unit read again
    (entry,) = cache._entries.values()
    actions = entry.rota.units.kinds == Kind.ACTION
    assert actions.any() and (entry.rota.units.digests[actions] != UNLEARNED).all()  # digests learned
    edit(rt)
    before = dict(cache.counts)
    assert shown(rt, form, "x", "nothing at all", lanes=["text"]) == NOTHING  # no time passed: none read
    now[0] += MAX_AGE
    after_text = shown(rt, form, "x", question, lanes=["text"])
    assert expected in after_text, after_text
    after = dict(cache.counts)
    assert after["verify_failures"] == before["verify_failures"]  # seen by the rolling check
    assert after["renewals"] == before["renewals"] + 1


@pytest.mark.parametrize("form", FORMS)
def test_nothing_changed_every_unit_is_read_past_the_maximum_age_and_nothing_renewed(form):
    rt, cache, now = started(form)
    first = shown(rt, form, "x", "diary zebra walnut")
    (entry,) = cache._entries.values()
    before, units_read = dict(cache.counts), cache.units_read
    now[0] += MAX_AGE + 1
    assert shown(rt, form, "x", "diary zebra walnut") == first
    after = dict(cache.counts)
    assert cache.units_read - units_read == len(entry.rota)
    assert (after["renewals"], after["builds"]) == (before["renewals"], before["builds"])


@pytest.mark.parametrize("form", FORMS)
def test_a_user_called_often_reads_a_share_per_call_and_is_current_by_the_maximum_age(monkeypatch, form):
    """With no slice (`RECALL_CACHE_CHECK_SLICE=0`) every call reads its share."""
    monkeypatch.setenv("RECALL_CACHE_CHECK_SLICE", "0")
    rt, cache, now = started(form)
    (entry,) = cache._entries.values()
    total = entry.rota.total
    edit_zebra_same_length(rt)
    seen_at = None
    for step in range(1, 21):  # a call every twentieth of the maximum age
        now[0] += MAX_AGE / 20
        before = cache.units_read
        text = shown(rt, form, "x", "okapi", lanes=["text"])
        units = cache.units_read - before
        assert units <= 1 + len(entry.rota) / 20 + total / 20 / min(entry.rota.units.weights)
        if seen_at is None and "okapi" in text:
            seen_at = step
    assert seen_at is not None and seen_at <= 20


@pytest.mark.parametrize("form", FORMS)
def test_a_user_called_often_reads_slices_on_a_few_calls_and_is_current_by_the_max_age(monkeypatch, form):
    """With a slice, a call reads nothing until the credit pays for one, then what the credit pays for
    (the slice, less at most one unit): most calls read nothing, and an edit is still seen within the
    maximum age."""
    slice_weight = 40
    monkeypatch.setenv("RECALL_CACHE_CHECK_SLICE", str(slice_weight))
    rt, cache, now = started(form)
    (entry,) = cache._entries.values()
    weights = dict(zip(entry.rota.units.ids.tolist(), entry.rota.units.weights.tolist(), strict=True))
    total = entry.rota.total
    assert total > 2 * slice_weight
    edit_zebra_same_length(rt)
    seen_at, reading_calls = None, 0
    for step in range(1, 21):  # a call every twentieth of the maximum age
        now[0] += MAX_AGE / 20
        (entry,) = cache._entries.values()
        stamps, before = entry.rota.read_at.copy(), cache.units_read
        text = shown(rt, form, "x", "okapi", lanes=["text"])
        if cache.units_read > before:
            reading_calls += 1
            read = entry.rota.read_at != stamps  # the ring it read (a renewal replaces the entry after)
            taken = sum(weights[i] for i in entry.rota.units.ids[read].tolist())
            assert taken > slice_weight - max(weights.values())  # the credit paid for a slice
        if seen_at is None and "okapi" in text:
            seen_at = step
    assert seen_at is not None and seen_at <= 20
    assert 0 < reading_calls <= total // slice_weight + 1 < 20  # most calls read nothing


@pytest.mark.parametrize("form", FORMS)
def test_a_user_heavier_than_the_per_call_cap_is_read_within_its_bound_of_calls(monkeypatch, form):
    """RECALL_CACHE_CHECK_READS caps a call's reading: past the maximum age a heavier user is read over
    its next calls, every unit within ceil(weight / (cap - heaviest unit)) of them, each call within the
    cap (or one unit); an edit is seen by then."""
    cap = 100
    monkeypatch.setenv("RECALL_CACHE_CHECK_READS", str(cap))
    rt, cache, now = started(form, more=40)
    (entry,) = cache._entries.values()
    weights = dict(zip(entry.rota.units.ids.tolist(), entry.rota.units.weights.tolist(), strict=True))
    heaviest = max(weights.values())
    bound = math.ceil(entry.rota.total / (cap - heaviest))
    assert entry.rota.total > 2 * cap > 2 * heaviest  # heavier than the cap
    last = entry.rota.units.ids[np.flatnonzero(entry.rota.units.kinds == 0)[-1]]
    rt.store.set_vertex_property(int(last), "text", "the last message, edited: okapi")
    now[0] += MAX_AGE + 1
    calls = 0
    while True:
        calls += 1
        assert calls <= bound, "the edit was not seen within ceil(weight / (cap - heaviest)) calls"
        before = cache.units_read
        if form == "fast":
            rows = rt.call("recall.render", prelude=lambda store: (fast_shape(store, "x"), *OKAPI))
        else:
            rows = rt.call("recall.render", "x", *OKAPI)
        assert cache.units_read > before  # every call reads some, until the change is found
        if any("okapi" in row for row in rows_of(rows[0]["text"])):
            break
    assert calls > 1  # the first call past the maximum age did not read everything


@pytest.mark.parametrize("form", FORMS)
def test_a_build_after_a_removal_keeps_the_last_reading_of_the_turns_it_takes_over(form):
    """A deleted session makes the next call build again, taking over the turns held unread: they keep
    their last reading (an edit made before the build is still seen by the maximum age of that reading,
    not one after the build), and those due are read in that same call."""
    rt, cache, now = started(form)
    other = rt.store.add_vertex(["Session"], {"session_id": "x-s2"})
    rt.store.add_edge(vertex(rt, "User", "user_id", "x"), other, "HAD_SESSION")
    zebra = vertex(rt, "Action", "action_id", "x-2")
    edit_zebra_same_length(rt)
    now[0] += 1
    assert shown(rt, form, "x", "okapi", lanes=["text"]) == NOTHING  # a refresh; no row shown
    rt.store.delete_vertex(other, detach=True)
    builds = cache.counts["builds"]
    shown(rt, form, "x", "okapi", lanes=["text"])  # the same moment: no credit, nothing due
    assert cache.counts["builds"] == builds + 1  # built again, the zebra's turn taken over unread
    (entry,) = cache._entries.values()
    stamps = dict(zip(entry.rota.units.ids.tolist(), entry.rota.read_at.tolist(), strict=False))
    assert stamps[zebra] == 1000.0 < now[0]  # its reading at the first build, kept
    now[0] = 1000.0 + MAX_AGE  # its maximum age: read whatever the credit
    assert "okapi" in shown(rt, form, "x", "okapi", lanes=["text"])


def test_reading_every_unit_again_costs_at_most_their_weights_and_less_than_a_build():
    """The weights the schedule pays with bound what reading the units costs; all of it is less than a
    cold build."""
    from memgraph_recall.embedded import ApiCounts

    rt, cache, now = started("string")
    (entry,) = cache._entries.values()
    now[0] += MAX_AGE + 1
    renewal = ApiCounts()
    rt.call("recall.render", "x", "diary", None, ALL, api_counts=renewal)
    rt.call("recall.invalidate", "x")
    cold = ApiCounts()
    rt.call("recall.render", "x", "diary", None, ALL, api_counts=cold)
    warm = ApiCounts()
    rt.call("recall.render", "x", "diary", None, ALL, api_counts=warm)
    assert renewal.total - warm.total <= entry.rota.total and renewal.total < cold.total
    assert np.all(entry.rota.units.weights > 0)



@pytest.mark.parametrize("form", FORMS)
def test_an_ontology_edited_later_is_read_within_the_maximum_age(form):
    rt, cache, now = started(form)
    (ontology,) = rt.store.label_lookup("OntologyVersion")
    pool = '{"relation_types": [{"label": "IN_TOWN", "description": "where a place lies"}]}'
    rt.store.set_vertex_property(ontology, "pool", pool)
    shown(rt, form, "x", "nothing at all", lanes=["text"])
    assert cache._entries[next(iter(cache._entries))].snapshot.relation_descriptions == {}
    now[0] += MAX_AGE
    shown(rt, form, "x", "nothing at all", lanes=["text"])
    (entry,) = cache._entries.values()
    assert entry.snapshot.relation_descriptions == {"IN_TOWN": "where a place lies"}


def test_a_row_the_rolling_check_read_in_the_same_call_is_still_walked_up_to_the_user(monkeypatch):
    """Verification takes an Action the rolling check read in its own call as read (label, id, fields),
    never its parents: a session given to another user, behind a stale fast-shape signature that hides
    it from the structure check, is refused."""
    monkeypatch.setenv("RECALL_CACHE_CHECK_SLICE", "0")  # the call reads exactly its share: the Actions
    rt, cache, now = started("fast")
    (fact,) = [e.id for e in rt.store.get_vertex(vertex(rt, "Place", "text", "Porto")).in_edges]
    rt.store.delete_edge(fact)  # no fact cites x-1: only turns are verified below
    rt.call("recall.invalidate", "x")
    shown(rt, "fast", "x", "diary")
    stale = fast_shape(rt.store, "x")
    session = vertex(rt, "Session", "session_id", "x-s1")
    (edge,) = [e.id for e in rt.store.get_vertex(session).in_edges if e.type == "HAD_SESSION"]
    rt.store.delete_edge(edge)
    rt.store.add_edge(vertex(rt, "User", "user_id", "y"), session, "HAD_SESSION")
    (entry,) = cache._entries.values()
    units = entry.rota.units
    actions = np.flatnonzero(units.kinds == 0)
    assert entry.rota.cursor == 0 and list(actions) == list(range(len(actions)))  # the Actions first
    now[0] += MAX_AGE * (units.weights[actions].sum() + 0.5) / entry.rota.total  # a share: the Actions
    before, units_read = dict(cache.counts), cache.units_read
    rest = ("diary", None, {**ALL, "lanes": ["text"]})
    rows = rt.call("recall.render", prelude=lambda store: (stale, *rest))
    assert cache.units_read == units_read + len(actions)  # read back as held, no holder
    assert cache.counts["verify_failures"] == before["verify_failures"] + 1
    assert "diary" not in "\n".join(rows_of(rows[0]["text"]))


def test_a_builds_action_units_as_columns():
    """`action_units` on a hand-built log: each owned Action's turn (or -1), in-edge count (BY_IDS with a
    parent from elsewhere, its ids kept), weight (its in-edges, its chunks' reads, and its own session_id
    under an Agent), then what was turned away."""
    from recall_lib.recheck import (
        ACTION_READS,
        BY_IDS,
        CHUNK_EDGE_READS,
        TURNED_AWAY_READS,
        Kind,
        action_units,
    )
    from recall_lib.walklog import WalkLog

    log = WalkLog(
        parents={10: (1,), 11: (2, 3), 12: (4,)},
        other_parents={11},
        chunks={12: ((7, 70), (8, 80))},
        agent_edges={4: "s-9"},
        turned_away=[13, 13],
    )
    parents, sessions, units = action_units(log, [10, 11, 12], [12, 10], offset=5)
    assert parents == {11: frozenset({2, 3})} and sessions == {12: "s-9"}
    assert units.kinds.tolist() == [Kind.ACTION] * 3 + [Kind.TURNED_AWAY]
    assert units.ids.tolist() == [10, 11, 12, 13]
    assert units.refs.tolist() == [6, -1, 5, 0]
    assert units.counts.tolist() == [1, BY_IDS, 1, 0]
    assert units.weights.tolist() == [
        ACTION_READS + 1,
        ACTION_READS + 2,
        ACTION_READS + 1 + 2 * CHUNK_EDGE_READS + 1,
        TURNED_AWAY_READS,
    ]


@pytest.mark.parametrize("form", FORMS)
def test_a_renewing_calls_verification_compares_a_fact_with_what_its_units_read(monkeypatch, form):
    """Past the maximum age the FACTS and END units read each held fact's edge and ends; verification
    then compares the fact with those readings instead of reading the graph again. Each reading altered
    in turn (the graph untouched, so only the readings can fail it) must fail the fact; an end no unit
    read is read from the graph."""
    import recall_lib.pipeline as pipeline
    from recall_lib.kinds import FACT

    outcomes: dict[str, bool] = {}

    class Probe(pipeline.Verifier):
        def failing(self, items, abort=lambda: None):
            failed = super().failing(items, abort)
            for kind, index in items:
                fact = self.snapshot.facts[index] if kind == FACT else None
                read = None if fact is None else self.read_back.facts.get(fact.edge_id)
                if read is not None:
                    outcomes.update(self._altered(index, fact, read))
            return failed

        def _altered(self, index, fact, read):
            ends, facts = self.read_back.ends, self.read_back.facts
            found = {"as_read": self.holds(FACT, index)}
            for name, changed in {
                "text": read._replace(fields=("another text", *read.fields[1:])),
                "confidence": read._replace(fields=(*read.fields[:3], 0.5)),
                "type": read._replace(type="NEAR"),
                "source": read._replace(source_id="x-2"),
                "holder": read._replace(holder_id=read.holder_id + 1),
                "side": read._replace(holder_is_head=not read.holder_is_head),
            }.items():
                facts[fact.edge_id] = changed
                found[name] = self.holds(FACT, index)
            facts[fact.edge_id] = read
            tail_text = ends.pop(fact.tail_vertex_id)
            found["tail_unread"] = self.holds(FACT, index)
            ends[fact.tail_vertex_id] = "Lisbon"
            found["tail_text"] = self.holds(FACT, index)
            ends[fact.tail_vertex_id] = tail_text
            return found

    monkeypatch.setattr(pipeline, "Verifier", Probe)
    rt, cache, now = started(form)
    now[0] += MAX_AGE + 1
    assert "the harbor is in town" in shown(rt, form, "x", "harbor town", lanes=["facts"],
                                            query_vector=list(axis(5)))
    assert outcomes == {"as_read": True, "tail_unread": True, "text": False, "confidence": False,
                        "type": False, "source": False, "holder": False, "side": False, "tail_text": False}


# -- what a call leaves behind ------------------------------------------------------------------------
@pytest.mark.parametrize("form", FORMS)
def test_no_call_leaves_a_reference_cycle_holding_an_entry_or_the_calls_graph_objects(form):
    """Whatever a call did (a warm call, a share of the rolling check, a renewal, new turns, a fact read
    again, a shown row that fails verification, a build after a deletion), what it made is freed by
    reference counting when it returns. Why: a cycle is freed only by the cyclic collector, which
    reaches old objects rarely; meanwhile it holds the call's mgp objects past their call and the
    snapshot it referred to (a replaced snapshot of a 100k-message user is hundreds of MB). Recheck
    kept its readers as bound methods on itself."""
    rt, cache, now = started(form)
    session = add_session(rt, "x", "x-s2")  # written after the build, deleted last
    message = add_message(rt, session, "x-5", "x rowed across the bay", TS)
    steps = [
        lambda: None,  # the session just written: new turns
        lambda: now.__setitem__(0, now[0] + MAX_AGE / 3),  # a share of the units due
        lambda: (edit_zebra_same_length(rt), now.__setitem__(0, now[0] + MAX_AGE)),  # a turn renewed
        lambda: (extract_a_fact_later(rt), now.__setitem__(0, now[0] + MAX_AGE)),  # facts read again
        lambda: rt.store.set_vertex_property(  # a shown row fails verification
            vertex(rt, "Action", "action_id", "x-1"), "text", "x keeps a diary at the port"),
        lambda: (rt.store.delete_vertex(message, detach=True),  # forgotten: a build
                 rt.store.delete_vertex(session, detach=True)),
    ]
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds unreachable is kept in gc.garbage
    try:
        for step in steps:
            step()
            shown(rt, form, "x", "diary okapi lighthouse")
        gc.collect()
        left = Counter(type(o).__module__ + "." + type(o).__qualname__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    assert not left, left
    happened = {name for name, count in cache.counts.items() if count}
    assert {"refreshes", "renewals", "builds", "verify_failures"} <= happened
