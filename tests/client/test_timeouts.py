"""The `timeout` setting family: checked once, named in every error, applied by both backends."""

import math

import pytest
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets import sample
from memgraph_recall.errors import RecallTimeoutError
from memgraph_recall.timeouts import DEFAULT_CALL, DEFAULT_CONNECT, Timeouts


def test_defaults_and_the_longest_wait():
    assert Timeouts.of() == Timeouts(DEFAULT_CALL, DEFAULT_CONNECT) == Timeouts(60.0, 10.0)
    assert Timeouts.of(5, 2.5).longest_wait == 7.5


@pytest.mark.parametrize(("timeout", "connect_timeout", "named"), [
    (0, None, "timeout"), (-1, None, "timeout"), (math.nan, None, "timeout"), (True, None, "timeout"),
    ("60", None, "timeout"), (None, math.inf, "connect_timeout"), (None, 10 ** 6, "connect_timeout"),
])
def test_bad_values_are_refused_by_name(timeout, connect_timeout, named):
    with pytest.raises(ValueError, match=f"^{named}: expected"):
        Timeouts.of(timeout, connect_timeout)


def test_the_client_constructors_check_them_too():
    with pytest.raises(ValueError, match="^connect_timeout: expected"):
        RecallClient.connect("localhost", connect_timeout=0)
    with pytest.raises(ValueError, match="^timeout: expected"):
        RecallClient.from_url("bolt://localhost", timeout=-5)
    assert RecallClient.from_url("bolt://localhost", timeout=5).backend.timeouts == Timeouts(5.0, 10.0)


def test_the_embedded_backend_applies_the_call_timeout_as_the_transaction_timeout():
    """A call that outlives `timeout` fails the way Memgraph fails a transaction past its timeout."""
    client = RecallClient.embedded(sample.elements(), timeout=1e-6)
    with pytest.raises(RecallTimeoutError, match="recall.render: the database aborted the call at its "
                       "transaction timeout"):
        client.render("maya", "When is my trip to Lisbon?")
