"""Server and runtime error texts become exceptions that say what happened and what to do."""

import pytest
from memgraph_recall.errors import (
    RecallArgumentError,
    RecallNotLoaded,
    RecallProcedureError,
    from_server_message,
)


def test_missing_procedure_says_the_module_is_not_loaded():
    error = from_server_message("recall.render", "There is no procedure named 'recall.render'.")
    assert isinstance(error, RecallNotLoaded)
    assert "the recall module is not loaded: is this the memgraph-recall image?" in str(error)
    assert "mg.procedures()" in str(error)


@pytest.mark.parametrize("message", [
    "'recall.render' argument named 'question' at position 1 must be of type STRING.",
    "'recall.lanes' argument named 'config' at position 2 is not a value Cypher can pass: x.",
])
def test_cypher_argument_checks_are_argument_errors(message):
    error = from_server_message("recall.render", message)
    assert isinstance(error, RecallArgumentError) and isinstance(error, ValueError)


def test_a_value_error_in_the_procedure_keeps_the_module_message():
    traceback = ("recall.render: Traceback (most recent call last):\n  File \"recall.py\", line 3\n"
                 "ValueError: config key 'turns_kk' is not a recall config key")
    error = from_server_message("recall.render", traceback)
    assert isinstance(error, RecallArgumentError)
    assert str(error) == "recall.render: config key 'turns_kk' is not a recall config key"


def test_other_failures_are_procedure_errors_with_the_last_line():
    message = "recall.embed: RuntimeError: embedding_model 'x' could not load"
    error = from_server_message("recall.embed", message)
    assert isinstance(error, RecallProcedureError)
    assert "could not load" in str(error) and "Traceback" not in str(error)
