"""Property-based checks: any Cypher value survives the store and an export/import round trip."""

import json
from datetime import date, datetime, time, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from memgraph_recall.embedded import GraphStore
from memgraph_recall.embedded.interchange import build_store, store_elements
from memgraph_recall.embedded.values import plain_value, read_value

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
FLOATS = st.floats(allow_nan=False)
TEMPORALS = st.one_of(
    st.dates(),
    st.times(),
    st.datetimes(),
    st.datetimes(timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=5, minutes=30)),
                                            timezone(timedelta(hours=-8))])),
    st.timedeltas(min_value=timedelta(days=-10**5), max_value=timedelta(days=10**5)),
)
# Text that cannot be mistaken for a temporal prefix (the format itself cannot tell those apart).
TEXT = st.text(max_size=20).filter(lambda s: not s.endswith(")"))
SCALARS = st.one_of(st.booleans(), INT64, FLOATS, TEXT, TEMPORALS)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.lists(FLOATS, min_size=16, max_size=40),
                            st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4)),
    max_leaves=20,
)


def _as_read(value):
    """What a procedure should read back: lists as tuples, maps as dicts."""
    if isinstance(value, list):
        return tuple(_as_read(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_read(v) for k, v in value.items()}
    return value


def _as_plain(value):
    """What a client should get back: lists stay lists."""
    if isinstance(value, list):
        return [_as_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_plain(v) for k, v in value.items()}
    return value


@settings(max_examples=100, deadline=None)
@given(VALUES)
def test_store_reads_back_what_was_written(value):
    store = GraphStore()
    vertex = store.add_vertex(["V"], {"p": value})
    stored = store.vertices[vertex].props["p"]
    assert read_value(stored) == _as_read(value)
    assert plain_value(stored) == _as_plain(value)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), VALUES, max_size=5),
       st.lists(st.text(min_size=1, max_size=6), max_size=3, unique=True))
def test_export_import_round_trip(properties, labels):
    store = GraphStore()
    a = store.add_vertex(labels, properties, id=5)
    store.add_edge(a, a, "SELF", properties, id=5)
    text = json.dumps(list(store_elements(store)))
    again = build_store(json.loads(text))
    assert again.node(5) == store.node(5)
    assert again.relationship(5) == store.relationship(5)
    assert isinstance(again.vertices[5].props, dict)


def test_temporal_types_are_distinct_after_round_trip():
    store = GraphStore()
    store.add_vertex([], {"d": date(2024, 1, 1), "t": time(1), "dt": datetime(2024, 1, 1)})
    again = build_store(json.loads(json.dumps(list(store_elements(store)))))
    props = again.vertices[0].props
    assert (type(props["d"]), type(props["t"]), type(props["dt"])) == (date, time, datetime)
