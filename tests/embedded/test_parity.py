"""Where Memgraph fails, the embedded runtime fails the same way (issue 14's table, one test per row).

Each rule is read from memgraph/memgraph: `include/mgp.py` (the error classes and `_wrap_exceptions`,
which wraps functions and properties but not generator steps), `src/query/procedure/py_module.cpp`
(the `_mgp` error bases, `PyObjectToMgpValue`'s type checks, `PyArg_ParseTuple("l")` for vertex ids,
`PySequence_DelSlice` on results, the traceback in the error text) and `mg_procedure_impl.cpp`
(which accessors refuse a deleted object).
"""

import numpy
import pytest
from memgraph_recall.embedded import ProcedureError, ResultError
from memgraph_recall.embedded.host import mgp_module

_BASES = {
    "UnknownError": RuntimeError,
    "UnableToAllocateError": MemoryError,
    "InsufficientBufferError": BufferError,
    "OutOfRangeError": BufferError,
    "LogicErrorError": RuntimeError,
    "DeletedObjectError": RuntimeError,
    "InvalidArgumentError": ValueError,
    "KeyAlreadyExistsError": RuntimeError,
    "ImmutableObjectError": RuntimeError,
    "ValueConversionError": RuntimeError,
    "SerializationError": RuntimeError,
    "AuthorizationError": RuntimeError,
}


# -- error classes and their bases ------------------------------------------------------------------
@pytest.mark.parametrize(("name", "base"), sorted(_BASES.items()))
def test_mgp_errors_subclass_the_raw_mgp_classes_and_their_builtin_bases(name, base):
    mgp = mgp_module()
    wrapped = getattr(mgp, name)
    raw = getattr(mgp._mgp, name)
    assert wrapped.__bases__ == (raw,)
    assert raw.__bases__ == (base,)
    assert (raw.__module__, raw.__qualname__) == ("_mgp", name)
    for plain in (mgp.InvalidContextError, mgp.AbortError, mgp.UnsupportedTypingError):
        assert plain.__bases__ == (Exception,)


def test_module_code_catches_mgp_errors_by_their_builtin_base(misbehaving):
    alice = misbehaving.find_vertex("User", "name", "alice")
    [row] = misbehaving.call("parity.catch_write", alice)
    assert row == {"caught": "ImmutableObjectError", "message": "Cannot modify immutable object."}
    assert ("error", "Immutable object error during mg API call: Cannot set a property on an immutable "
                     "vertex!") in misbehaving.logs


# -- objects deleted in the same transaction --------------------------------------------------------
_WRAPPED, _RAW = "mgp.DeletedObjectError", "_mgp.DeletedObjectError"


@pytest.mark.parametrize(("accessor", "outcome"), [
    ("id", "no error"),
    ("labels", _WRAPPED),
    ("properties.get", _WRAPPED),
    ("properties[]", _WRAPPED),
    ("in", _WRAPPED),
    ("len", _WRAPPED),
    ("add_label", _WRAPPED),
    ("remove_label", _WRAPPED),
    ("set", _WRAPPED),
    ("set_properties", _WRAPPED),
    # generators: mgp's _wrap_exceptions never sees their steps, so the raw class escapes
    ("items", _RAW),
    ("keys", _RAW),
    ("values", _RAW),
    ("iter", _RAW),
    ("out_edges", _RAW),
    ("in_edges", _RAW),
])
def test_every_accessor_of_a_deleted_vertex_fails_as_in_memgraph(misbehaving, accessor, outcome):
    alice = misbehaving.find_vertex("User", "name", "alice")
    [row] = misbehaving.call("parity.deleted_vertex", alice, accessor)
    assert row == {"outcome": outcome}


@pytest.mark.parametrize(("accessor", "outcome"), [
    ("id", "no error"), ("type", "no error"), ("from_vertex", "no error"), ("to_vertex", "no error"),
    ("properties.get", _WRAPPED), ("set", _WRAPPED), ("items", _RAW),
])
def test_every_accessor_of_a_deleted_edge_fails_as_in_memgraph(misbehaving, accessor, outcome):
    alice = misbehaving.find_vertex("User", "name", "alice")
    [row] = misbehaving.call("parity.deleted_edge", alice, accessor)
    assert row == {"outcome": outcome}


def test_deleting_an_already_deleted_element_is_a_no_op(misbehaving):
    alice = misbehaving.find_vertex("User", "name", "alice")
    assert misbehaving.call("parity.delete_twice", alice) == [{"vertices": 4}]
    assert misbehaving.store.vertex_count() == 4


def test_raw_errors_from_generator_steps_escape_except_mgp_deleted_object_error(misbehaving):
    alice = misbehaving.find_vertex("User", "name", "alice")
    with pytest.raises(ProcedureError) as caught:
        misbehaving.call("parity.edges_of_deleted", alice)
    cause = caught.value.__cause__
    mgp = mgp_module()
    assert type(cause) is mgp._mgp.DeletedObjectError and not isinstance(cause, mgp.DeletedObjectError)
    assert isinstance(cause, RuntimeError)
    assert str(caught.value).endswith("_mgp.DeletedObjectError: Accessing deleted object.\n")
    assert ("error", "Deleted object error during mg API call: Cannot get the outbound edges of a "
                     "deleted vertex!") in misbehaving.logs
    assert misbehaving.store.node(alice.id).labels == frozenset({"User"})  # rolled back


# -- property values the C layer refuses before storage sees them --------------------------------------
@pytest.mark.parametrize(("what", "outcome"), [
    ("set", "builtins.ValueError: Unsupported PyObject conversion: set is not a Cypher value"),
    ("numpy_float32_in_list",
     "builtins.ValueError: Unsupported PyObject conversion: numpy.float32 is not a Cypher value"),
    ("bad_key", "builtins.ValueError: Dictionary keys must be strings, got int 1"),
    ("overflow", "builtins.OverflowError: Python integer is out of range: 1180591620717411303424 does "
                 "not fit in 64 bits"),
    ("vertex", "mgp.ValueConversionError: Value conversion failed."),
    ("vertex_in_list", "mgp.ValueConversionError: Value conversion failed."),
    ("numpy_float64_in_list", "stored"),
    ("str_subclass", "stored"),
])
def test_unconvertible_property_values_raise_what_memgraph_raises(misbehaving, what, outcome):
    alice = misbehaving.find_vertex("User", "name", "alice")
    assert misbehaving.call("parity.store_value", alice, what) == [{"outcome": outcome}]


def test_subclass_property_values_are_stored_as_their_base_type(misbehaving):
    alice = misbehaving.find_vertex("User", "name", "alice")
    misbehaving.call("parity.store_value", alice, "numpy_float64_in_list")
    with misbehaving.store.lock.read():
        stored = misbehaving.store.get_vertex(alice.id).props["stored"]
    assert stored == (0.5, 1.0) and [type(v) for v in stored] == [float, float]
    misbehaving.call("parity.store_value", alice, "str_subclass")
    assert type(misbehaving.store.node(alice.id).properties["stored"]) is str


# -- vertex ids ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "outcome", "found"), [
    ("string", "TypeError: 'str' object cannot be interpreted as an integer", None),
    ("float", "TypeError: 'float' object cannot be interpreted as an integer", None),
    ("bool", "found", 0),
    ("numpy_int64", "found", 0),
    ("missing", "IndexError: Unable to find the vertex with given ID.", None),
    ("negative", "IndexError: Unable to find the vertex with given ID.", None),
    ("beyond_int64", "OverflowError: Python int too large to convert to C long", None),
])
def test_get_vertex_by_id_parses_the_id_as_a_c_long(misbehaving, kind, outcome, found):
    assert misbehaving.call("parity.lookup", kind) == [{"outcome": outcome, "found": found}]


# -- results ---------------------------------------------------------------------------------------------
def test_a_tuple_of_records_is_refused_because_memgraph_would_abort(misbehaving):
    with pytest.raises(ResultError) as caught:
        misbehaving.call("misbehaving.give", "tuple")
    message = str(caught.value)
    assert message.startswith("misbehaving.give: the procedure returned a tuple of records. Memgraph "
                              "would abort the whole server on this")
    assert "PySequence_DelSlice" in message and "Return a list of mgp.Record instead." in message


def test_a_returned_list_is_emptied_after_its_records_are_read(misbehaving):
    assert misbehaving.call("parity.kept_records", 2) == [{"n": 0}, {"n": 1}]
    assert misbehaving.call("parity.kept_size") == [{"size": 0}]


def test_float_and_str_subclasses_pass_as_memgraphs_c_checks_pass_them(misbehaving):
    [row] = misbehaving.call("misbehaving.give", "numpy_float64")
    assert row == {"text": "x", "number": 1.5, "anything": {"k": [0.25, True]}}
    assert type(row["text"]) is str and type(row["number"]) is float
    assert type(row["anything"]["k"][0]) is float
    assert numpy.float64 is not float  # a subclass, not float itself: the check is not by exact type


@pytest.mark.parametrize(("case", "kind"),
                         [("numpy_scalar", "numpy.float32"), ("numpy_int64", "numpy.int64")])
def test_numpy_scalars_that_are_not_float_subclasses_are_still_refused(misbehaving, case, kind):
    with pytest.raises(ResultError, match=f"Unsupported PyObject conversion: {kind} is not a Cypher value"):
        misbehaving.call("misbehaving.give", case)


def test_a_float_subclass_default_registers_and_arrives_as_a_float(misbehaving):
    assert misbehaving.call("parity.subclass_default") == [{"ratio": 0.5, "kind": "float"}]
    [row] = [p for p in misbehaving.procedures() if p["name"] == "parity.subclass_default"]
    assert row["signature"].startswith("parity.subclass_default(ratio = 0.5 :: FLOAT)")


# -- the error text of a procedure that raises -------------------------------------------------------------
def test_a_procedure_that_raises_reports_its_python_traceback(misbehaving):
    with pytest.raises(ProcedureError) as caught:
        misbehaving.call("misbehaving.give", "no-such-case")
    message = str(caught.value)
    assert message.startswith("misbehaving.give: Traceback (most recent call last):\n  File \"")
    assert 'misbehaving.py", line ' in message and ", in give\n" in message
    assert "host.py" not in message  # the host's frame is skipped, as Memgraph skips mgp's wrapper
    assert message.endswith("\nKeyError: 'no-such-case'\n")
