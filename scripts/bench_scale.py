#!/usr/bin/env python
"""Scale benchmark: `recall.render` latency on the embedded runtime as one user's history grows.

For each size, a child process builds a synthetic graph (the target user with that many messages
among other users holding as many again; build time not counted), loads it into an embedded
`Runtime`, loads the model on another user's call, and measures on the target user:
- cold: the first call after the user's data changed (model loaded; after `recall.invalidate` when
  the module has it, else the very first call),
- warm: repeated calls with different questions, with the question text (embedding included) and with
  a precomputed `query_vector` (embedding excluded); the question embedding time on its own,
- refresh: the first call after one new session was written to the store,
- forget: the first call after one of the user's sessions (and its messages) was deleted,
- for each of these four, the procedure-API calls one such call makes (`Runtime.call(api_counts=)`,
  in a separate call: counting slows a call), so a real server's time can be estimated from per-call
  costs measured there, and the time Python's cyclic collector took inside the timed calls,
- concurrency: 4 threads calling at once on a warm cache,
- the read floor: a minimal procedure that only walks the user's sessions to every message and reads
  its text, time, type, speaker, id and vectors (packed into one float32 buffer), on the same graph:
  what any full read through the procedure API pays before ownership checks, facts or indexes,
- the limit: numpy brute-force cosine top-k over the same user's vectors (passages, entities, facts,
  notes) plus BM25 over the same messages (prebuilt index), the floor any exact recall pays per question,
- peak RSS of the child (build included) and RSS after loading.
Each size runs twice, in fresh processes: as a server would run (the collector never paused), and with
the embedded host pausing the collector around each procedure call (`Runtime(pause_gc=True)`), to show
what the collector costs on the stand-in's heap (`--no-paused-run` skips the second).
These are embedded-runtime figures, not Memgraph's.

    python scripts/bench_scale.py --sizes 1000,10000,100000 --json out.json
"""

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (  # noqa: E402
    ROOT,
    configure_model,
    markdown_table,
    model_folder,
    ms,
    peak_rss_mb,
    provenance,
    provenance_lines,
    rss_mb,
    timed,
    use_recall_lib,
)

TARGETS_AT = 100_000
#: Issue #13's bar on the stand-in at 100k messages, with no collector pause anywhere (and forget <= cold).
TARGETS = {"cold_ms": 5000.0, "warm_median_ms": 120.0, "refresh_ms": 300.0}
PHASES = ("cold", "warm", "refresh", "forget")
API_KINDS = ("vertices", "edges", "properties", "labels", "types", "ids", "arguments", "total")
COLD_SAMPLES = 5
REFRESH_SAMPLES = 5
FORGET_SAMPLES = 3
THREADS = 4
TOP_K = 8  # the turns lane's default width
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (p95 of 20 values is the 19th smallest)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * share // 1))
    return ordered[int(rank) - 1]


class Limit:
    """Exact per-question work with everything prebuilt: brute-force cosine top-k over all the user's
    vectors (message passages, entities, facts, notes), and BM25 top-k over the user's messages."""

    def __init__(self, vectors, texts: list[str]) -> None:
        import numpy as np

        use_recall_lib()
        from recall_lib.textindex import BM25Index, query_terms

        self.np = np
        self.matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        self.index = BM25Index.build(texts)
        self.query_terms = query_terms

    def __call__(self, question: str, vector) -> None:
        np = self.np
        scores = self.matrix @ vector
        top = np.argpartition(-scores, TOP_K)[:TOP_K]
        top[np.argsort(-scores[top])]
        self.index.search(self.query_terms(question, self.index), TOP_K)


class CollectorClock:
    """Seconds Python's cyclic collector has run since this was made (through `gc.callbacks`), so a
    timed call can say how much of it was the collector's. Process-wide: read around one call at a time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started

    def close(self) -> None:
        gc.callbacks.remove(self._callback)


@dataclass
class Samples:
    """One phase's timed calls: wall, calling-thread CPU and collector seconds, and what the cache did."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    collector: list[float] = field(default_factory=list)
    cache: Counter = field(default_factory=Counter)

    def median_ms(self, which: str = "wall") -> float:
        return ms(statistics.median(getattr(self, which)))


class Bench:
    """One size's runtime and target user: timed calls (with the collector's share and the cache's
    counters) and API-counted calls."""

    def __init__(self, runtime, data, config: dict, today: str) -> None:
        self.runtime, self.data, self.config, self.today = runtime, data, config, today
        self.clock = CollectorClock()

    def render(self, question: str, extra: dict | None = None, api_counts=None) -> None:
        self.runtime.call("recall.render", self.data.user_id, question, self.today,
                          {**self.config, **(extra or {})}, api_counts=api_counts)

    def cache_counters(self) -> Counter:
        """The module's cache counters (what `recall.status` shows in section "cache"), read from the
        module object: `recall.status` itself scans the whole graph, too slow to call between samples."""
        cache = getattr(self.runtime.modules.get("recall"), "CACHE", None)
        return Counter(getattr(cache, "counts", {}))

    def sample(self, samples: Samples, call: Callable[[], object]) -> None:
        cache, collector = self.cache_counters(), self.clock.seconds
        wall, cpu = time.perf_counter(), time.thread_time()
        call()
        samples.wall.append(time.perf_counter() - wall)
        samples.cpu.append(time.thread_time() - cpu)
        samples.collector.append(self.clock.seconds - collector)
        samples.cache += self.cache_counters() - cache

    def api_calls(self, question: str) -> dict[str, int]:
        """The procedure-API calls of one render call (counted in its own call)."""
        from memgraph_recall.embedded import ApiCounts

        counts = ApiCounts()
        self.render(question, api_counts=counts)
        return counts.as_dict()


# A procedure that reads what a full recall build must read for each message and nothing else.
FLOOR_MODULE = """
import struct

import mgp


@mgp.read_proc
def read_messages(ctx: mgp.ProcCtx, user_vertex_id: int) -> mgp.Record(messages=int, vector_rows=int):
    user = ctx.graph.get_vertex_by_id(user_vertex_id)
    buffer, messages, rows, packers = bytearray(), 0, 0, {}
    for session_edge in user.out_edges:
        if session_edge.type.name != "HAD_SESSION":
            continue
        for edge in session_edge.to_vertex.out_edges:
            if edge.type.name != "HAS_ACTION":
                continue
            props = edge.to_vertex.properties
            for name in ("action_id", "action_type", "text", "speaker", "timestamp", "embedding_model"):
                props.get(name)
            messages += 1
            for row in props.get("passage_embeddings") or ():
                size = len(row)
                pack = packers.get(size) or packers.setdefault(size, struct.Struct(f"<{size}f").pack)
                buffer += pack(*row)
                rows += 1
    return mgp.Record(messages=messages, vector_rows=rows)
"""


def read_floor(runtime, data, samples: int = 3) -> tuple[float, dict[str, int]]:
    """Median seconds of `FLOOR_MODULE` over the target user, hosted on the same store, and its API calls."""
    from memgraph_recall.embedded import ApiCounts, Runtime

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "floor.py").write_text(FLOOR_MODULE)
        floor = Runtime(folder, pause_gc=runtime.pause_gc)
        if floor.load_errors:
            raise SystemExit(f"the floor module failed to load: {floor.load_errors}")
        floor.store = runtime.store  # the same store (graph and lock), served under the floor module
        user = runtime.store.find_vertices("User", "user_id", data.user_id)[0]
        times = [timed(lambda: floor.call("floor.read_messages", user)) for _ in range(samples)]
        counts = ApiCounts()
        floor.call("floor.read_messages", user, api_counts=counts)
        return statistics.median(times), counts.as_dict()


def delete_session(runtime, data, number: int) -> None:
    """Delete the target user's `number`-th session and its messages (a user asking to forget it)."""
    store = runtime.store
    user = store.get_vertex(store.find_vertices("User", "user_id", data.user_id)[0])
    session = [e.end for e in user.out_edges if e.type == "HAD_SESSION" and not e.deleted][number]
    with store.transaction():
        for edge in list(session.out_edges):
            if edge.type == "HAS_ACTION" and not edge.deleted:
                store.remove_vertex(edge.end, detach=True)
        store.remove_vertex(session, detach=True)


def write_session(runtime, data, number: int) -> None:
    """One new session of the target user, written through the store API (as a client's writes would)."""
    from memgraph_recall.datasets.synthetic import new_session

    store = runtime.store
    user = store.find_vertices("User", "user_id", data.user_id)[0]
    session = store.add_vertex(["Session"], {"session_id": f"{data.user_id}:new{number}"})
    store.add_edge(user, session, "HAD_SESSION")
    for message in new_session(data, number):
        action = store.add_vertex(["Action"], {
            "action_id": message.action_id, "action_type": message.action_type, "text": message.text,
            "timestamp": message.timestamp, "passage_embeddings": message.passage_embeddings,
            "embedding_model": data.spec.model})
        store.add_edge(session, action, "HAS_ACTION")


def concurrent_latencies(bench: Bench, questions: list[str]) -> list[float]:
    """Seconds of each call when THREADS threads call at once on a warm cache."""
    latencies: list[float] = []
    barrier = threading.Barrier(THREADS)

    def caller(mine: list[str]) -> None:
        barrier.wait()
        for question in mine:
            latencies.append(timed(lambda q=question: bench.render(q)))

    threads = [threading.Thread(target=caller, args=(questions[i::THREADS],)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def measure(size: int, seed: int, n_questions: int, pause_gc: bool = False) -> dict:
    """Every figure for one history size (run in its own process, so peak RSS is this size's)."""
    import numpy as np
    import torch
    from memgraph_recall.datasets.synthetic import SyntheticSpec, build, questions
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import query_modules_dir
    from sentence_transformers import SentenceTransformer

    model = configure_model()
    start = time.perf_counter()
    data = build(SyntheticSpec(messages=size, seed=seed))
    runtime = Runtime(query_modules_dir(), pause_gc=pause_gc)
    if runtime.load_errors:
        raise SystemExit(f"query modules failed to load: {runtime.load_errors}")
    runtime.load_elements(data.elements)
    counts = {user: vars(c) for user, c in data.counts.items()}
    data.elements = []
    gc.collect()
    build_s = time.perf_counter() - start
    rss_loaded = rss_mb()
    has_invalidate = any(p["name"] == "recall.invalidate" for p in runtime.procedures())

    asked = questions(seed, n_questions + COLD_SAMPLES + REFRESH_SAMPLES + THREADS * 10)
    warm_q, asked = asked[:n_questions], asked[n_questions:]
    cold_q, asked = asked[:COLD_SAMPLES], asked[COLD_SAMPLES:]
    refresh_q, thread_q = asked[:REFRESH_SAMPLES], asked[REFRESH_SAMPLES:]
    today = (data.last_time + timedelta(days=30)).date().isoformat()
    bench = Bench(runtime, data, {"embedding_model": model}, today)
    phases = {phase: Samples() for phase in PHASES}
    api: dict[str, dict[str, int]] = {}

    torch.set_num_threads(1)
    encoder = SentenceTransformer(str(model_folder(model)), device="cpu")
    encoder.encode(["warm up"])
    embed_s = [timed(lambda q=q: encoder.encode([q], normalize_embeddings=True)) for q in warm_q]
    vectors = {q: encoder.encode([q], normalize_embeddings=True)[0] for q in warm_q}

    runtime.call("recall.render", data.other_user_ids[0], "model warm-up", today, bench.config)  # loads it
    bench.sample(phases["cold"], lambda: bench.render(cold_q[0]))
    if has_invalidate:
        for question in cold_q[1:]:
            runtime.call("recall.invalidate", data.user_id)
            bench.sample(phases["cold"], lambda q=question: bench.render(q))
        runtime.call("recall.invalidate", data.user_id)
        api["cold"] = bench.api_calls(cold_q[0])
    bench.render(warm_q[0])  # settle after the cold calls
    for question in warm_q:
        bench.sample(phases["warm"], lambda q=question: bench.render(q))
    vector_s = [timed(lambda q=q: bench.render(q, {"query_vector": vectors[q].tolist()})) for q in warm_q]
    api["warm"] = bench.api_calls(warm_q[1])

    floor_s, floor_api = read_floor(runtime, data)
    limit = Limit(np.concatenate([data.user_passages, data.user_item_vectors]), data.user_texts)
    limit_s = [timed(lambda q=q: limit(q, vectors[q])) for q in warm_q]
    latencies = concurrent_latencies(bench, thread_q)

    for number, question in enumerate(refresh_q):
        write_session(runtime, data, number)
        bench.sample(phases["refresh"], lambda q=question: bench.render(q))
    write_session(runtime, data, REFRESH_SAMPLES)
    api["refresh"] = bench.api_calls(refresh_q[0])
    for number in range(FORGET_SAMPLES):
        delete_session(runtime, data, number)
        bench.sample(phases["forget"], lambda: bench.render(refresh_q[0]))
    delete_session(runtime, data, FORGET_SAMPLES)
    api["forget"] = bench.api_calls(refresh_q[0])
    bench.clock.close()

    warm, cold = phases["warm"], phases["cold"]
    return {
        "warm_median_ms": warm.median_ms(), "warm_p95_ms": ms(percentile(warm.wall, 0.95)),
        "cold_ms": cold.median_ms(), "refresh_ms": phases["refresh"].median_ms(),
        "forget_ms": phases["forget"].median_ms(),
        "question_embed_ms": ms(statistics.median(embed_s)), "limit_ms": ms(statistics.median(limit_s)),
        "concurrent4_p95_ms": ms(percentile(latencies, 0.95)), "peak_rss_mb": peak_rss_mb(),
        "api_calls": api,
        "details": {
            "pause_gc": pause_gc,
            "warm_vector_median_ms": ms(statistics.median(vector_s)),
            "warm_vector_p95_ms": ms(percentile(vector_s, 0.95)),
            "limit_ratio": round(statistics.median(vector_s) / statistics.median(limit_s), 2),
            "cold_via_invalidate": has_invalidate,
            "cpu_ms": {phase: phases[phase].median_ms("cpu") for phase in PHASES},
            "samples_ms": {phase: [ms(s) for s in phases[phase].wall] for phase in PHASES if phase != "warm"},
            "collector_ms": {phase: phases[phase].median_ms("collector") for phase in PHASES},
            "collector_samples_ms": {phase: [ms(s) for s in phases[phase].collector]
                                     for phase in PHASES if phase != "warm"},
            "cache": {phase: dict(phases[phase].cache) for phase in PHASES},
            "read_floor_ms": ms(floor_s), "read_floor_api_calls": floor_api,
            "concurrent4_median_ms": ms(statistics.median(latencies)), "concurrent4_calls": len(latencies),
            "questions": len(warm_q), "rss_after_load_mb": rss_loaded, "build_and_load_s": round(build_s, 1),
            "counts": counts, "limit_vectors": int(limit.matrix.shape[0]),
        },
    }


HEADLINE = ("warm_median_ms", "warm_p95_ms", "cold_ms", "refresh_ms", "forget_ms", "question_embed_ms",
            "limit_ms", "concurrent4_p95_ms", "peak_rss_mb")
PAUSED_HEADLINE = ("cold_ms", "warm_median_ms", "refresh_ms", "forget_ms")


def headline(results: dict[str, dict], paused: dict[str, dict]) -> dict[str, dict]:
    """Per size: the headline figures, each phase's API calls in total, and the paused run's times."""
    out = {}
    for size, r in results.items():
        out[size] = {k: r[k] for k in HEADLINE}
        out[size]["api_calls"] = {phase: c["total"] for phase, c in r["api_calls"].items()}
        if size in paused:
            out[size]["host_gc_pause"] = {k: paused[size][k] for k in PAUSED_HEADLINE}
    return out


def targets_lines(results: dict[str, dict], paused: dict[str, dict]) -> list[str]:
    key = str(TARGETS_AT)
    if key not in results:
        return [f"Targets are set at {TARGETS_AT:,} messages, which this run did not measure."]
    r, p = results[key], paused.get(key)
    checks = [
        ("cold <= 5 s", "cold_ms", r["cold_ms"] <= TARGETS["cold_ms"]),
        ("warm median incl. question embedding <= 120 ms", "warm_median_ms",
         r["warm_median_ms"] <= TARGETS["warm_median_ms"]),
        ("refresh after one new session <= 300 ms", "refresh_ms", r["refresh_ms"] <= TARGETS["refresh_ms"]),
        ("first call after a deleted session <= cold", "forget_ms", r["forget_ms"] <= r["cold_ms"]),
    ]
    rows = [[name, r[figure], "yes" if ok else "**no**", p[figure] if p else "not run"]
            for name, figure, ok in checks]
    return [markdown_table(["target at 100k messages (no collector pause anywhere)", "measured", "met",
                            "for comparison: host pauses the collector"], rows)]


def runs_lines(results: dict[str, dict], paused: dict[str, dict]) -> list[str]:
    """Each child process's phase times at the targets' size (how much separate processes vary)."""
    key = str(TARGETS_AT)
    if key not in results:
        return []
    rows = [[mode, number + 1, *(run[k] for k in PAUSED_HEADLINE)]
            for mode, table in (("collector running", results), ("host pauses the collector", paused))
            if key in table for number, run in enumerate(table[key]["runs"])]
    return [f"Each run at {TARGETS_AT:,} messages (a fresh process; the figures above are the medians over "
            "the runs):", "",
            markdown_table(["mode", "run", "cold", "warm median", "refresh", "after a deletion"], rows), ""]


def api_lines(results: dict[str, dict]) -> list[str]:
    rows = []
    for size in sorted(results, key=int):
        r = results[size]
        wall = {"cold": r["cold_ms"], "warm": r["warm_median_ms"], "refresh": r["refresh_ms"],
                "forget": r["forget_ms"]}
        for phase in PHASES:
            counts = r["api_calls"].get(phase)
            if counts:
                rows.append([f"{int(size):,}", phase, wall[phase], r["details"]["cpu_ms"][phase],
                             *(f"{counts[k]:,}" for k in API_KINDS)])
        floor = r["details"]["read_floor_api_calls"]
        rows.append([f"{int(size):,}", "read floor", r["details"]["read_floor_ms"], "-",
                     *(f"{floor[k]:,}" for k in API_KINDS)])
    return [markdown_table(["messages", "call", "wall (ms)", "CPU (ms)", *API_KINDS], rows)]


def collector_lines(results: dict[str, dict], paused: dict[str, dict]) -> list[str]:
    rows = []
    for size in sorted(results, key=int):
        r, p = results[size], paused.get(size)
        for phase, figure in zip(PHASES, PAUSED_HEADLINE, strict=True):
            rows.append([f"{int(size):,}", phase, r[figure], r["details"]["collector_ms"][phase],
                         p[figure] if p else "not run"])
    return [markdown_table(["messages", "call", "median", "collector inside (median)",
                            "median, host pauses the collector"], rows)]


def cache_line(results: dict[str, dict]) -> str:
    """What the cache did in the timed calls at the largest size (its counters' increase)."""
    size = max(results, key=int)
    parts = []
    for phase in PHASES:
        done = {k: v for k, v in results[size]["details"]["cache"].get(phase, {}).items() if v}
        parts.append(f"{phase}: " + (", ".join(f"{k} {v}" for k, v in sorted(done.items())) or "nothing"))
    return (f"- What the cache did in the timed calls at {int(size):,} messages (its counters, as "
            f"`recall.status` shows them): {'; '.join(parts)}.")


def plot(path: Path, results: dict[str, dict], paused: dict[str, dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(int(s) for s in results)
    series = {
        "cold": [results[str(s)]["cold_ms"] for s in sizes],
        "first call after a session is deleted": [results[str(s)]["forget_ms"] for s in sizes],
        "refresh (one new session)": [results[str(s)]["refresh_ms"] for s in sizes],
        "warm, incl. question embedding": [results[str(s)]["warm_median_ms"] for s in sizes],
        "warm, query_vector given": [results[str(s)]["details"]["warm_vector_median_ms"] for s in sizes],
        "limit: numpy cosine + BM25": [results[str(s)]["limit_ms"] for s in sizes],
    }
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, values in series.items():
        ax.plot(sizes, values, marker="o", linestyle="--" if name.startswith("limit") else "-", label=name)
    if all(str(s) in paused for s in sizes):
        ax.plot(sizes, [paused[str(s)]["cold_ms"] for s in sizes], marker=".", linestyle=":", color="grey",
                label="cold, host pauses the collector")
    targets = [TARGETS["cold_ms"], TARGETS["refresh_ms"], TARGETS["warm_median_ms"]]
    ax.scatter([TARGETS_AT] * len(targets), targets, marker="_", s=400, color="#c53030", zorder=3,
               label="targets at 100k (cold, refresh, warm)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("messages in the user's history")
    ax.set_ylabel("median latency (ms)")
    ax.set_title("recall.render on the embedded runtime (not Memgraph figures)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(out_dir: Path, info: dict, results: dict[str, dict], paused: dict[str, dict]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = sorted(results, key=int)
    rows = []
    for size in sizes:
        r, d = results[size], results[size]["details"]
        rows.append([f"{int(size):,}", r["cold_ms"], d["cpu_ms"]["cold"], d["read_floor_ms"],
                     r["forget_ms"], r["warm_median_ms"], r["warm_p95_ms"], d["warm_vector_median_ms"],
                     r["question_embed_ms"], r["limit_ms"], f"{d['limit_ratio']}x", r["refresh_ms"],
                     d["concurrent4_median_ms"], r["concurrent4_p95_ms"], d["rss_after_load_mb"],
                     r["peak_rss_mb"]])
    headers = ["messages", "cold", "cold, CPU", "read floor", "after a session is deleted", "warm median",
               "warm p95", "warm median, vector given", "question embedding", "limit", "warm/limit",
               "refresh", "4 callers median", "4 callers p95", "RSS after load (MB)", "peak RSS (MB)"]
    first = results[sizes[0]]["details"]
    lines = ["# Scale benchmark: `recall.render` as one user's history grows", "",
             "**Embedded-runtime figures** (the in-process stand-in for Memgraph's procedure host, one "
             "Python process), **not Memgraph's**. Times in ms. One target user among other users holding "
             "as many messages again; synthetic text and topic-structured 384-d vectors (no model cost at "
             "build). Python's cyclic collector runs as a server's would (never paused) unless a table "
             "says otherwise. The machine is shared: other work may run during a measurement (each "
             "run's figures at 100k, below, show how much separate processes differ; the calling "
             "thread's CPU time, shown beside wall time, tracks it closely on this virtual machine).", "",
             *provenance_lines(info), "", markdown_table(headers, rows), "",
             f"- Warm: median and p95 over {first['questions']} different questions, question embedding "
             "included; `vector given` passes a precomputed `query_vector` (embedding excluded). `question "
             "embedding`: all-MiniLM-L6-v2, one question, torch threads = 1.",
             "- Cold: first call after the user's data changed, model loaded (median of the very first call "
             "and " + ("the calls right after `recall.invalidate`" if first["cold_via_invalidate"]
                       else "nothing else: the module has no `recall.invalidate`")
             + f", {COLD_SAMPLES} in all; `cold, CPU`: the calling thread's CPU time in those calls). "
             "After a session is deleted: first call after one of the user's sessions and its messages were "
             f"deleted, median of {FORGET_SAMPLES}. Refresh: first call after one new session (30 turns) was "
             f"written, median of {REFRESH_SAMPLES}.",
             "- Read floor: a minimal procedure on the same graph that walks the user's sessions to every "
             "message and reads its id, type, text, speaker, time, model name and vectors (packed into one "
             "float32 buffer), nothing else (no ownership checks, facts, parsing or indexes); median of 3. "
             "What any full read through the procedure API pays; a cold build adds the rest.",
             f"- Limit: numpy brute-force cosine top-{TOP_K} over all the user's vectors (message passages, "
             f"entities, facts, notes: {first['limit_vectors']:,} at the smallest size) plus BM25 "
             f"top-{TOP_K} over the user's messages (indexes prebuilt); `warm/limit` uses the vector-given "
             "warm median.",
             f"- 4 callers: {THREADS} threads calling at once on a warm cache (embedding included), "
             f"{first['concurrent4_calls']} calls.",
             "- Peak RSS: the measuring process's high-water mark, graph build included.",
             f"- Runs: {len(results[sizes[0]]['runs'])} fresh process(es) per size and mode, the modes "
             "alternating; each figure is the median over them.",
             f"- BLAS threads in the measuring process: {info['blas_threads']} (recall and the limit alike); "
             "torch threads as the module sets them (`RECALL_TORCH_THREADS`, default 1).", "",
             "## Targets (issue #13)", "", *targets_lines(results, paused), "", *runs_lines(results, paused),
             "For reference, the upstream's exact Cypher scan inside Memgraph took 0.7 s at 10k and 6.7 s at "
             "100k messages.", "",
             "## Procedure-API calls per call", "",
             "How many calls of Memgraph's procedure API (one C-extension call each in its `mgp.py`) "
             "one call makes, counted by the embedded runtime (`Runtime.call(api_counts=...)`, in a "
             "separate call of the same kind right after the timed ones). `vertices`/`edges`: objects "
             "handed out (lookups by id, `from_vertex`/`to_vertex`, each `in_edges`/`out_edges` step, "
             "the vertex scan); `properties`/`labels`: values read; `types`: `edge.type`; `ids`: `.id`. "
             "Multiplied by per-call costs measured on a real server, they estimate its time; the "
             "stand-in's own per-call costs are not Memgraph's. Beside them, the phase's median wall time "
             "(from the table above) and the calling thread's median CPU time in the same calls.", "",
             *api_lines(results), "",
             "## The collector", "",
             "Median milliseconds of each call, the part of it Python's cyclic collector ran "
             "(`gc.callbacks`, inside the same timed calls), and the same call in a second run where the "
             "embedded host paused the collector around each procedure call (`Runtime(pause_gc=True)`; "
             "collections deferred by the pause happen after the call). The pause is off by default: the "
             "collector's work here is mostly the module's own objects, which a real server's heap holds "
             "too, and the switch is process-wide.", "",
             *collector_lines(results, paused), "",
             cache_line(results), "",
             "![latency against history size](scale.png)", ""]
    (out_dir / "README.md").write_text("\n".join(lines))
    plot(out_dir / "scale.png", results, paused)
    (out_dir / "details.json").write_text(json.dumps(
        {"provenance": info, "results": results, "host_gc_pause": paused}, indent=1))


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 1000,10000, got {text!r}") \
            from None
    if not sizes or min(sizes) < 100:
        raise argparse.ArgumentTypeError(f"expected sizes >= 100, got {text!r}")
    return sizes


def run_child(size: int, args: argparse.Namespace, env: dict, folder: Path, pause_gc: bool) -> dict:
    out = folder / f"{size}-{'paused' if pause_gc else 'running'}.json"
    command = [sys.executable, __file__, "--one-size", str(size), "--seed", str(args.seed),
               "--questions", str(args.questions), "--out", str(out)]
    subprocess.run(command + (["--pause-gc"] if pause_gc else []), check=True, env=env)
    return json.loads(out.read_text())


def combined(runs: list[dict]) -> dict:
    """One size's figures over several child processes (the same process varies less than two do):
    each number the median over the runs, sample lists joined, the rest as the first run has it, and
    every run's four phase times kept under `runs`."""

    def merge(values: list) -> object:
        first = values[0]
        if isinstance(first, dict):
            return {key: merge([v[key] for v in values if key in v]) for key in first}
        if isinstance(first, list):
            return [item for value in values for item in value]
        if isinstance(first, bool) or not isinstance(first, int | float):
            return first
        if isinstance(first, int):
            return statistics.median_low(values)
        return round(statistics.median(values), 2)

    figures = merge(runs)
    figures["runs"] = [{key: run[key] for key in PAUSED_HEADLINE} for run in runs]
    return figures


def measured(size: int, args: argparse.Namespace, env: dict, folder: Path) -> dict[bool, dict]:
    """`args.runs` child processes per mode for one size, the modes alternating (so other work on the
    machine falls on both alike), combined per mode; each run's phase times printed."""
    modes = (False,) if args.no_paused_run else (False, True)
    runs: dict[bool, list[dict]] = {mode: [] for mode in modes}
    for _ in range(args.runs):
        for pause_gc in modes:
            r = run_child(size, args, env, folder, pause_gc)
            runs[pause_gc].append(r)
            print(f"  {'host pauses the collector: ' if pause_gc else ''}cold {r['cold_ms']} ms, warm "
                  f"median {r['warm_median_ms']} ms, refresh {r['refresh_ms']} ms, after a deletion "
                  f"{r['forget_ms']} ms, peak RSS {r['peak_rss_mb']} MB", flush=True)
    return {mode: combined(mode_runs) for mode, mode_runs in runs.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=parse_sizes, default=parse_sizes("1000,10000,100000"),
                        help="history sizes in messages, comma-separated (default 1000,10000,100000)")
    parser.add_argument("--json", type=Path, help="write the headline figures here")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "scale",
                        help="folder for the markdown table and plot (default results/scale)")
    parser.add_argument("--questions", type=int, default=30, help="warm questions per size (>= 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads in the measuring process, for recall and the limit alike "
                             "(default 1: a gemv over one user's vectors is memory-bound, and idle BLAS "
                             "threads add wake-up jitter on a shared machine)")
    parser.add_argument("--runs", type=int, default=1,
                        help="child processes per size and mode; figures are the medians over them "
                             "(default 1)")
    parser.add_argument("--no-paused-run", action="store_true",
                        help="skip the second run per size in which the host pauses the collector")
    parser.add_argument("--one-size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pause-gc", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.questions < 20:
        parser.error(f"--questions: expected an integer >= 20, got {args.questions}")
    if args.blas_threads < 1:
        parser.error(f"--blas-threads: expected an integer >= 1, got {args.blas_threads}")
    if args.runs < 1:
        parser.error(f"--runs: expected an integer >= 1, got {args.runs}")
    if args.one_size is not None:  # child process: one size, figures to --out
        args.out.write_text(json.dumps(measure(args.one_size, args.seed, args.questions, args.pause_gc)))
        return 0

    info = provenance(sys.argv if argv is None else ["scripts/bench_scale.py", *argv])
    info["blas_threads"] = str(args.blas_threads)
    env = {**os.environ, **{name: str(args.blas_threads) for name in BLAS_THREAD_VARIABLES}}
    results: dict[str, dict] = {}
    paused: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            print(f"measuring {size:,} messages ...", flush=True)
            figures = measured(size, args, env, Path(tmp))
            results[str(size)] = figures[False]
            if True in figures:
                paused[str(size)] = figures[True]
    write_report(args.results, info, results, paused)
    if args.json:
        args.json.write_text(json.dumps(headline(results, paused), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
