"""Builds pause the cyclic garbage collector, and give it back exactly as they found it."""

import gc
import threading
from types import SimpleNamespace

import pytest
from recall_lib.cache import CacheSettings, RecallCache
from recall_lib.gcpause import CollectorPause


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_paused_inside_and_resumed_after(collector_on):
    pause = CollectorPause()
    with pause.during():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_and_overlapping_builds_resume_only_when_the_last_ends(collector_on):
    pause = CollectorPause()
    first_inside, second_may_end, seen = threading.Event(), threading.Event(), []

    def first() -> None:
        with pause.during():
            first_inside.set()
            second_may_end.wait(5)
        seen.append(("first ended", gc.isenabled()))

    thread = threading.Thread(target=first)
    thread.start()
    first_inside.wait(5)
    with pause.during():
        assert not gc.isenabled()
    seen.append(("second ended", gc.isenabled()))  # the first build still runs
    second_may_end.set()
    thread.join(5)
    assert seen == [("second ended", False), ("first ended", True)]


def test_a_collector_disabled_by_someone_else_stays_disabled(collector_on):
    gc.disable()
    with CollectorPause().during():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_error_inside_still_resumes_the_collector(collector_on):
    with pytest.raises(RuntimeError), CollectorPause().during():
        raise RuntimeError("build failed")
    assert gc.isenabled()


def test_switched_off_it_leaves_the_collector_alone(collector_on):
    with CollectorPause(enabled=False).during():
        assert gc.isenabled()


@pytest.mark.parametrize(("raw", "expected"), [("", True), ("1", True), ("0", False), ("off", False)])
def test_the_setting_reads_from_the_environment(raw, expected):
    settings = CacheSettings.from_env({"RECALL_CACHE_PAUSE_GC": raw})
    assert settings.pause_gc is expected and settings.problem is None


def test_a_bad_setting_is_reported_and_the_default_kept():
    settings = CacheSettings.from_env({"RECALL_CACHE_PAUSE_GC": "maybe"})
    assert settings.pause_gc is True
    assert "RECALL_CACHE_PAUSE_GC must be 1 or 0, got 'maybe'" in settings.problem


@pytest.mark.parametrize("pause_gc", [True, False])
def test_the_cache_builds_with_the_collector_paused_as_configured(collector_on, pause_gc):
    cache = RecallCache(CacheSettings(pause_gc=pause_gc))
    during = []

    def make(*args):
        during.append(gc.isenabled())
        return SimpleNamespace(nbytes=1), "builds"

    cache._make = make
    user = SimpleNamespace(id=1, properties={"user_id": "ana"})
    cache.snapshot(graph=None, user=user, model="m", dim=4)
    assert during == [not pause_gc]
    assert gc.isenabled()
