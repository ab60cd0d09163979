"""`Runtime(pause_gc=True)`: the cyclic collector is off while procedures run, and only then."""

import gc
import threading

import pytest
from memgraph_recall.embedded import ProcedureError, Runtime

MODULE = '''
import gc
import threading

import mgp

STARTED, RELEASE = threading.Event(), threading.Event()


@mgp.read_proc
def enabled() -> mgp.Record(enabled=bool):
    return mgp.Record(enabled=gc.isenabled())


@mgp.read_proc
def hold() -> mgp.Record(enabled=bool):
    """Runs until the test releases it."""
    STARTED.set()
    RELEASE.wait(10)
    return mgp.Record(enabled=gc.isenabled())


@mgp.read_proc
def fail() -> mgp.Record(enabled=bool):
    raise ValueError(f"collector enabled: {gc.isenabled()}")
'''


@pytest.fixture
def modules(tmp_path):
    (tmp_path / "collector.py").write_text(MODULE)
    return tmp_path


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_off_by_default_the_collector_keeps_running(modules):
    runtime = Runtime(modules)
    assert runtime.pause_gc is False
    assert runtime.call("collector.enabled") == [{"enabled": True}]


def test_paused_during_a_call_and_restored_after(modules):
    runtime = Runtime(modules, pause_gc=True)
    assert runtime.call("collector.enabled") == [{"enabled": False}]
    assert gc.isenabled()


def test_a_collector_the_application_turned_off_stays_off(modules):
    runtime = Runtime(modules, pause_gc=True)
    gc.disable()
    assert runtime.call("collector.enabled") == [{"enabled": False}]
    assert not gc.isenabled()


def test_overlapping_calls_resume_the_collector_when_the_last_ends(modules):
    runtime = Runtime(modules, pause_gc=True)
    module = runtime.modules["collector"]
    results = []
    holder = threading.Thread(target=lambda: results.extend(runtime.call("collector.hold")))
    holder.start()
    try:
        assert module.STARTED.wait(10)
        assert runtime.call("collector.enabled") == [{"enabled": False}]
        assert not gc.isenabled()  # the other call still runs
    finally:
        module.RELEASE.set()
        holder.join(10)
    assert results == [{"enabled": False}] and gc.isenabled()


def test_a_procedure_that_raises_restores_the_collector(modules):
    runtime = Runtime(modules, pause_gc=True)
    with pytest.raises(ProcedureError, match="ValueError: collector enabled: False"):
        runtime.call("collector.fail")
    assert gc.isenabled()


def test_pause_gc_must_be_a_bool(modules):
    with pytest.raises(TypeError, match="pause_gc must be True or False, got 'yes'"):
        Runtime(modules, pause_gc="yes")
