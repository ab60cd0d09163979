"""Read procedures see an immutable graph; graph objects die with their call."""

import pytest
from memgraph_recall.embedded import ProcedureError, QueryError


@pytest.mark.parametrize("action",
                         ["create_vertex", "set_property", "add_label", "delete_vertex", "create_edge"])
def test_writes_in_read_procedures_raise_immutable_object_error(misbehaving, action):
    before = _dump(misbehaving)
    alice = misbehaving.find_vertex("User", "name", "alice")
    with pytest.raises(ProcedureError, match=r"^misbehaving\.tamper: mgp\.ImmutableObjectError: ") as caught:
        misbehaving.call("misbehaving.tamper", alice, action)
    assert type(caught.value.__cause__).__name__ == "ImmutableObjectError"
    assert _dump(misbehaving) == before


@pytest.mark.parametrize("what", ["ctx", "vertex", "edge", "vertices"])
def test_objects_kept_after_their_call_raise_invalid_context_error(misbehaving, what):
    misbehaving.call("misbehaving.stash", misbehaving.find_vertex("User", "name", "alice"))
    with pytest.raises(ProcedureError, match=r"^misbehaving\.use_stash: mgp\.InvalidContextError") as caught:
        misbehaving.call("misbehaving.use_stash", what)
    assert type(caught.value.__cause__).__name__ == "InvalidContextError"


def test_stashed_objects_are_invalid_outside_any_call(misbehaving):
    misbehaving.call("misbehaving.stash", misbehaving.find_vertex("User", "name", "alice"))
    stash = misbehaving.modules["misbehaving"]._STASH
    assert not stash["vertex"].is_valid() and not stash["ctx"].is_valid()
    with pytest.raises(Exception) as caught:
        stash["vertex"].properties.get("name")
    assert type(caught.value).__name__ == "InvalidContextError"


def test_procedure_exceptions_become_query_errors_with_the_cause(misbehaving):
    with pytest.raises(QueryError, match=r"^misbehaving\.give: KeyError: 'no-such-case'$") as caught:
        misbehaving.call("misbehaving.give", "no-such-case")
    assert isinstance(caught.value.__cause__, KeyError)


def test_write_errors_map_to_mgp_exceptions(misbehaving):
    alice = misbehaving.find_vertex("User", "name", "alice")
    for what in ("vertex", "set", "overflow"):
        with pytest.raises(ProcedureError, match=r"mgp\.ValueConversionError"):
            misbehaving.call("misbehaving.store_bad_value", alice, what)
    with pytest.raises(ProcedureError, match=r"mgp\.LogicErrorError: vertex \d+ still has 2 relationships"):
        misbehaving.call("misbehaving.delete_linked", alice)
    assert "bad" not in misbehaving.store.node(alice.id).properties


def _dump(runtime):
    from memgraph_recall.embedded import interchange

    with runtime.store.lock.read():
        return list(interchange.store_elements(runtime.store))
