"""Read procedures see an immutable graph; graph objects die with their call."""

import pytest
from memgraph_recall.embedded import ProcedureError, QueryError


@pytest.mark.parametrize("action",
                         ["create_vertex", "set_property", "add_label", "delete_vertex", "create_edge"])
def test_writes_in_read_procedures_raise_immutable_object_error(misbehaving, action):
    before = _dump(misbehaving)
    alice = misbehaving.find_vertex("User", "name", "alice")
    with pytest.raises(ProcedureError) as caught:
        misbehaving.call("misbehaving.tamper", alice, action)
    assert str(caught.value).endswith("\nmgp.ImmutableObjectError: Cannot modify immutable object.\n")
    assert type(caught.value.__cause__).__name__ == "ImmutableObjectError"
    assert _dump(misbehaving) == before


@pytest.mark.parametrize("what", ["ctx", "vertex", "edge", "vertices"])
def test_objects_kept_after_their_call_raise_invalid_context_error(misbehaving, what):
    misbehaving.call("misbehaving.stash", misbehaving.find_vertex("User", "name", "alice"))
    with pytest.raises(ProcedureError) as caught:
        misbehaving.call("misbehaving.use_stash", what)
    assert str(caught.value).endswith("\nmgp.InvalidContextError\n")
    assert type(caught.value.__cause__).__name__ == "InvalidContextError"


def test_stashed_objects_are_invalid_outside_any_call(misbehaving):
    misbehaving.call("misbehaving.stash", misbehaving.find_vertex("User", "name", "alice"))
    stash = misbehaving.modules["misbehaving"]._STASH
    assert not stash["vertex"].is_valid() and not stash["ctx"].is_valid()
    with pytest.raises(Exception) as caught:
        stash["vertex"].properties.get("name")
    assert type(caught.value).__name__ == "InvalidContextError"


def test_procedure_exceptions_become_query_errors_with_the_cause(misbehaving):
    last_line = r"(?s)^misbehaving\.give: Traceback .*\nKeyError: 'no-such-case'\n$"
    with pytest.raises(QueryError, match=last_line) as caught:
        misbehaving.call("misbehaving.give", "no-such-case")
    assert isinstance(caught.value.__cause__, KeyError)


def test_write_errors_map_to_mgp_exceptions(misbehaving):
    alice = misbehaving.find_vertex("User", "name", "alice")
    for what, last_line in (("vertex", "mgp.ValueConversionError: Value conversion failed."),
                            ("set", "ValueError: Unsupported PyObject conversion: set is not a Cypher value"),
                            ("overflow", "OverflowError: Python integer is out of range: "
                                         "1180591620717411303424 does not fit in 64 bits")):
        with pytest.raises(ProcedureError) as caught:
            misbehaving.call("misbehaving.store_bad_value", alice, what)
        assert str(caught.value).endswith(f"\n{last_line}\n")
    with pytest.raises(ProcedureError, match=r"\nmgp\.LogicErrorError: Logic error\.\n$"):
        misbehaving.call("misbehaving.delete_linked", alice)
    detail = "Logic error during mg API call: Cannot remove a vertex that has edges!"
    assert ("error", detail) in misbehaving.logs
    assert "bad" not in misbehaving.store.node(alice.id).properties


def _dump(runtime):
    from memgraph_recall.embedded import interchange

    with runtime.store.lock.read():
        return list(interchange.store_elements(runtime.store))
