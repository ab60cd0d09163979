"""Concurrent calls: reads run in parallel, and each call sees the graph before or after a write."""

import sys
import threading
import time

from memgraph_recall.embedded import Runtime

READERS, READS_PER_THREAD, COUNTERS = 8, 200, 50


def test_reads_beside_a_writer_never_see_a_half_done_write(runtime: Runtime):
    for _ in range(COUNTERS):
        runtime.store.add_vertex(["Counter"], {"version": 0})
    errors: list[BaseException] = []
    seen_versions: set[int] = set()
    readers_done = threading.Event()
    writes = []

    def reader() -> None:
        last = 0
        try:
            for _ in range(READS_PER_THREAD):
                versions = {row["value"] for row in runtime.call("sample.values", "Counter", "version")}
                assert len(versions) == 1, f"a read saw a mix of versions {sorted(versions)}"
                [version] = versions
                assert version >= last, f"a later read saw an older version ({version} after {last})"
                last = version
                seen_versions.add(version)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted in the main thread
            errors.append(exc)

    def writer() -> None:
        try:
            while not readers_done.is_set():
                writes.append(runtime.call("sample.bump", "Counter", "version")[0]["version"])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(READERS)]
    write_thread = threading.Thread(target=writer)
    write_thread.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    readers_done.set()
    write_thread.join()
    assert errors == [], errors[:3]
    assert writes == list(range(1, len(writes) + 1))
    assert len(seen_versions) > 2, "the writer never ran between reads: the test proved nothing"
    assert "mgp" not in sys.modules


def test_read_procedures_run_at_the_same_time(runtime: Runtime):
    started = time.perf_counter()
    threads = [threading.Thread(target=runtime.call, args=("sample.slow", 0.3)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert time.perf_counter() - started < 0.9  # serialised, four calls would take >= 1.2 s


def test_a_write_waits_for_running_reads_and_blocks_new_ones(runtime: Runtime, ids):
    order = []
    reader = threading.Thread(target=lambda: (runtime.call("sample.slow", 0.3), order.append("read")))
    reader.start()
    time.sleep(0.05)
    runtime.call("sample.add_message", runtime.vertex(ids["bob"]), "after the read")
    order.append("write")
    reader.join()
    assert order == ["read", "write"]
