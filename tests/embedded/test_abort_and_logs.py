"""Time limits through ctx.check_must_abort(), and mgp.Logger output captured."""

import logging
import time

import pytest
from memgraph_recall.embedded import QueryTimeoutError


def test_timeout_makes_check_must_abort_raise(runtime):
    started = time.perf_counter()
    with pytest.raises(QueryTimeoutError, match=r"^sample\.slow: Transaction was asked to abort because of "
                                                r"transaction timeout\.$") as caught:
        runtime.call("sample.slow", 5, timeout=0.1)
    assert time.perf_counter() - started < 1.0
    assert type(caught.value.__cause__).__name__ == "AbortError"


def test_call_within_its_time_limit_succeeds(runtime):
    assert runtime.call("sample.slow", 0.01, timeout=5)[0]["steps"] >= 1


def test_call_that_ends_after_its_time_limit_fails(runtime):
    with pytest.raises(QueryTimeoutError):
        runtime.call("sample.echo", None, timeout=1e-9)


@pytest.mark.parametrize("timeout", [0, -1, "1", True])
def test_timeout_must_be_a_positive_number(runtime, timeout):
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        runtime.call("sample.echo", None, timeout=timeout)


def test_logger_output_is_captured(runtime, caplog):
    assert ("info", "sample loaded") in runtime.logs  # module-level Logger, at import
    with caplog.at_level(logging.DEBUG, logger="memgraph_recall.embedded"):
        for level in ("trace", "debug", "info", "warning", "error", "critical"):
            runtime.call("sample.say", level, f"{level} message")
    assert list(runtime.logs)[-6:] == [(level, f"{level} message") for level in
                                       ("trace", "debug", "info", "warning", "error", "critical")]
    records = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    assert ("memgraph_recall.embedded.sample", "WARNING", "warning message") in records
    assert ("memgraph_recall.embedded.sample", "CRITICAL", "critical message") in records
