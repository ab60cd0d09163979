#!/usr/bin/env python
"""Scale benchmark: `recall.render` on the embedded runtime as one user's history grows, in both call forms.

For each size, a child process builds a synthetic graph (the target user with that many messages
among other users holding as many again, and the database's RecallMeta; build time not counted), loads
it into an embedded `Runtime`, runs `memgraph_recall.client.setup_store` on it (the indexes
`memgraph-recall setup` creates on a server), loads the model on another user's call, and measures the
target user in two call forms, alternating them call by call:
- bare: the string form, `CALL recall.render($user, $q, $today, $config)`;
- fast: the fast call shape as the client sends it (`memgraph_recall.shape`): its Cypher prelude
  (`memgraph_recall.embedded.prelude.fast_shape`, through the indexes) finds the User and the
  RecallMeta and passes each holder's signature, so the procedure reads only holders that changed.
Phases, each for both forms:
- cold: the first call after `recall.invalidate` (model loaded, the database's directory built),
- warm: repeated calls with different questions, with the question text (embedding included), and
  warm_vector: the same with a precomputed `query_vector` (embedding excluded),
- refresh: the first call after one new session was written to the store,
- forget: the first call after one of the user's sessions (and its messages) was deleted,
- renew: the first call after the entry's maximum age with nothing changed (the module's clock moved
  past it): the rolling check reads every unit due, at most `RECALL_CACHE_CHECK_READS` of them a call,
  and renews nothing,
- for each: wall time, the calling thread's CPU time (in Memgraph the GIL is held for a whole Python
  procedure call, so CPU per call bounds the throughput of an instance: one core), the time Python's
  cyclic collector took inside the timed calls, and, in a separate call (counting slows a call), the
  procedure-API calls one such call makes (`ApiCounts`, the argument values Memgraph converts to hand
  the call its arguments included); for the fast form also the prelude's own time and counts
  (`PreludeCounts`: the Cypher side, index lookups and edges expanded, not procedure-API calls),
- concurrency: 4 threads calling at once on a warm cache,
- the read floor: a minimal procedure that only walks the user's sessions to every message and reads
  its text, time, type, speaker, id and vectors (packed into one float32 buffer), on the same graph:
  what any full read through the procedure API pays before ownership checks, facts or indexes; one
  sample after each round of cold calls, so a shared machine's drift falls on both alike,
- the limit: numpy brute-force cosine top-k over the same user's vectors (passages, entities, facts,
  notes) plus BM25 over the same messages (prebuilt index), the floor any exact recall pays per question;
  timed right after each warm question's calls,
- peak RSS of the child (build included) and RSS after loading; the load average at its start and end,
- with `--profile`: cProfile of a cold bare call and of warm fast-shape calls (`profile.md`).
Each size runs twice, in fresh processes: as a server would run (the collector never paused), and with
the embedded host pausing the collector around each procedure call (`Runtime(pause_gc=True)`), to show
what the collector costs on the stand-in's heap (`--no-paused-run` skips the second).
These are embedded-runtime figures, not Memgraph's.

    python scripts/bench_scale.py --sizes 1000,10000,100000 --profile --json out.json
"""

import argparse
import cProfile
import gc
import itertools
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (  # noqa: E402
    ROOT,
    CollectorClock,
    configure_model,
    load_average,
    markdown_table,
    model_folder,
    ms,
    peak_rss_mb,
    percentile,
    provenance,
    provenance_lines,
    rss_mb,
    timed,
    use_recall_lib,
)

TARGETS_AT = 100_000
FORMS = ("bare", "fast")
FORM_NAMES = {"bare": "bare string form", "fast": "fast call shape"}
PHASES = ("cold", "warm", "warm_vector", "refresh", "forget", "renew")
PHASE_NAMES = {"cold": "cold", "warm": "warm", "warm_vector": "warm, vector given", "refresh": "refresh",
               "forget": "after a deletion", "renew": "past the max age"}
API_KINDS = ("vertices", "edges", "properties", "labels", "types", "ids", "arguments", "total")
PRELUDE_KINDS = ("lookups", "scanned", "holders", "edges")
COLD_SAMPLES = 5
REFRESH_SAMPLES = 5
RENEW_SAMPLES = 5
#: As many as the cold calls it is compared with: a full collection (~0.7 s over the stand-in's graph at
#: 100k, one build in four or five) then moves both medians alike; with 3 samples two such hits out of
#: three made the median of an otherwise 25% cheaper rebuild exceed cold's.
FORGET_SAMPLES = COLD_SAMPLES
THREADS = 4
TOP_K = 8  # the turns lane's default width
PROFILE_WARM_CALLS = 10
PROFILE_ROWS = 30
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def in_turn(index: int) -> tuple[str, ...]:
    """The forms in the order the `index`-th round calls them (alternating which goes first, so
    whatever the first call of a round warms up falls on both alike)."""
    return FORMS if index % 2 == 0 else FORMS[::-1]


class Limit:
    """Exact per-question work with everything prebuilt: brute-force cosine top-k over all the user's
    vectors (message passages, entities, facts, notes), and BM25 top-k over the user's messages."""

    def __init__(self, vectors, texts: list[str]) -> None:
        import numpy as np

        use_recall_lib()
        from recall_lib.textindex import BM25Index, query_terms, tokenize

        self.np = np
        self.matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        self.index = BM25Index.build(texts)
        self.query_terms, self.tokenize = query_terms, tokenize

    def __call__(self, question: str, vector) -> None:
        np = self.np
        scores = self.matrix @ vector
        top = np.argpartition(-scores, TOP_K)[:TOP_K]
        top[np.argsort(-scores[top])]
        self.index.search(self.query_terms(self.tokenize(question), self.index), TOP_K)


@dataclass
class Samples:
    """One phase's timed calls in one form: wall, calling-thread CPU, collector and prelude seconds,
    and what the cache did."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    collector: list[float] = field(default_factory=list)
    prelude: list[float] = field(default_factory=list)
    cache: Counter = field(default_factory=Counter)

    def median_ms(self, which: str = "wall") -> float:
        return ms(statistics.median(getattr(self, which)))


class Bench:
    """One size's runtime and target user in one call form: timed calls (with the collector's share,
    the prelude's time and the cache's counters) and API-counted calls."""

    def __init__(self, runtime, data, config: dict, today: str, form: str, clock: CollectorClock) -> None:
        self.runtime, self.data, self.config, self.today = runtime, data, config, today
        self.form, self.clock = form, clock
        self.prelude_seconds = 0.0  # the fast shape's prelude, summed over this form's calls

    def render(self, question: str, extra: dict | None = None, api_counts=None, prelude_counts=None) -> None:
        config = {**self.config, **(extra or {})}
        if self.form == "bare":
            self.runtime.call("recall.render", self.data.user_id, question, self.today, config,
                              api_counts=api_counts)
            return
        from memgraph_recall.embedded.prelude import fast_shape

        def prelude(store) -> tuple | None:  # as the client's `EmbeddedBackend` sends the fast shape
            started = time.perf_counter()
            shape = fast_shape(store, self.data.user_id, prelude_counts)
            self.prelude_seconds += time.perf_counter() - started
            return None if shape is None else (shape, question, self.today, config)

        self.runtime.call("recall.render", prelude=prelude, api_counts=api_counts)

    def cache_counters(self) -> Counter:
        """The module's cache counters (what `recall.status` shows in section "cache"), read from the
        module object: `recall.status` itself scans the whole graph, too slow to call between samples."""
        cache = getattr(self.runtime.modules.get("recall"), "CACHE", None)
        return Counter(getattr(cache, "counts", {}))

    def sample(self, samples: Samples, question: str, extra: dict | None = None) -> None:
        cache, collector, prelude = self.cache_counters(), self.clock.seconds, self.prelude_seconds
        wall, cpu = time.perf_counter(), time.thread_time()
        self.render(question, extra)
        samples.wall.append(time.perf_counter() - wall)
        samples.cpu.append(time.thread_time() - cpu)
        samples.collector.append(self.clock.seconds - collector)
        samples.prelude.append(self.prelude_seconds - prelude)
        samples.cache += self.cache_counters() - cache

    def api_calls(self, question: str, extra: dict | None = None,
                  handouts: Counter | None = None) -> tuple[dict, dict, dict]:
        """The procedure-API calls of one render call (counted in its own call), its prelude's counts
        (all zero for the bare form, which has none) and what the cache did in it; `handouts` (when
        given) gets how often each vertex was handed out."""
        from memgraph_recall.embedded import ApiCounts
        from memgraph_recall.embedded.prelude import PreludeCounts

        counts, prelude, cache = ApiCounts(handouts=handouts), PreludeCounts(), self.cache_counters()
        self.render(question, extra, api_counts=counts, prelude_counts=prelude)
        return counts.as_dict(), prelude.as_dict(), dict(self.cache_counters() - cache)

    def invalidate(self) -> None:
        self.runtime.call("recall.invalidate", self.data.user_id)


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


class Floor:
    """`FLOOR_MODULE` over the target user, hosted on the same store: timed calls (taken between the cold
    rounds, so a shared machine's drift falls on both alike) and its API calls."""

    def __init__(self, runtime, data) -> None:
        from memgraph_recall.embedded import Runtime

        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "floor.py").write_text(FLOOR_MODULE)
            self.runtime = Runtime(folder, pause_gc=runtime.pause_gc)
        if self.runtime.load_errors:
            raise SystemExit(f"the floor module failed to load: {self.runtime.load_errors}")
        self.runtime.store = runtime.store  # the same store (graph and lock), served under the floor module
        self.user = runtime.store.find_vertices("User", "user_id", data.user_id)[0]
        self.seconds: list[float] = []

    def sample(self) -> None:
        self.seconds.append(timed(lambda: self.runtime.call("floor.read_messages", self.user)))

    def api_calls(self) -> dict[str, int]:
        from memgraph_recall.embedded import ApiCounts

        counts = ApiCounts()
        self.runtime.call("floor.read_messages", self.user, api_counts=counts)
        return counts.as_dict()


def user_graph(store, user_id: str) -> dict[int, str]:
    """The distinct vertices of the user's graph (the User, its Sessions, Agents, Actions, their Chunks,
    the entities mentioned in them, notes and ontologies) by id, each with its first label ("" for none):
    what a build that reads each vertex once hands out."""
    use_recall_lib()
    from recall_lib import schema as s

    user = store.get_vertex(store.find_vertices(s.USER, s.USER_ID, user_id)[0])
    seen = {user.id}
    pending = [(user, (s.HAD_SESSION, s.HAS_MEMORY, s.ADOPTED))]
    follow = {s.SESSION: (s.HAS_ACTION, s.HAS_AGENT), s.AGENT: (s.HAS_ACTION,), s.ACTION: (s.HAS_CHUNK,)}
    while pending:
        vertex, types = pending.pop()
        for edge in vertex.out_edges:
            if edge.deleted or edge.type not in types or edge.end.id in seen:
                continue
            seen.add(edge.end.id)
            label = next((name for name in edge.end.labels if name in follow), None)
            if label is not None:
                pending.append((edge.end, follow[label]))
            elif s.CHUNK in edge.end.labels:
                seen.update(e.start.id for e in edge.end.in_edges
                            if e.type == s.MENTIONED_IN and not e.deleted)
    return {vertex_id: next(iter(store.get_vertex(vertex_id).labels), "") for vertex_id in seen}


@contextmanager
def directory_sweep_paused():
    """The module's directory re-reads a fixed 16 ids of the database per call, a different 16 each time
    (~50 API calls): paused while a rebuild's calls are compared with a cold build's."""
    directory = sys.modules["recall_lib.directory"]  # the runtime's own load of the helper package
    sweep, directory.SWEEP = directory.SWEEP, 0
    try:
        yield
    finally:
        directory.SWEEP = sweep


def aged_clock(runtime) -> Callable[[], None]:
    """Moves the module's cache clock one maximum age (and a second) ahead on each call, so that the next
    call finds every unit of the entry due, as after a pause: no sleeping through the maximum age."""
    cache = runtime.modules["recall"].CACHE
    clock, offset = cache.clock, [0.0]
    cache.clock = lambda: clock() + offset[0]

    def age() -> None:
        offset[0] += cache.settings.max_age + 1

    return age


def delete_session(runtime, data, number: int) -> None:
    """Delete the target user's `number`-th session and its messages (a user asking to forget it)."""
    store = runtime.store
    user = store.get_vertex(store.find_vertices("User", "user_id", data.user_id)[0])
    sessions = [e.end for e in user.out_edges if e.type == "HAD_SESSION" and not e.deleted]
    if not sessions:
        raise SystemExit(f"delete_session: user {data.user_id!r} has no session left to delete")
    session = sessions[number % len(sessions)]  # a small history may have fewer than the samples ask
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


def _where(code: tuple[str, int, str]) -> str:
    """A profiled function as `path:line(name)`, the path relative to the repository when inside it."""
    filename, line, name = code
    if filename == "~":  # a builtin
        return name
    path = Path(filename)
    try:
        filename = str(path.resolve().relative_to(ROOT))
    except (OSError, ValueError):
        filename = path.name if path.suffix == ".py" else filename
    return f"{filename}:{line}({name})"


def profiled(calls: Callable[[], object], count: int) -> dict:
    """cProfile of `calls` (which makes `count` render calls): the top functions by cumulative and by
    own time, in ms per call."""
    profile = cProfile.Profile()
    profile.enable()
    calls()
    profile.disable()
    stats = pstats.Stats(profile).stats

    def top(position: int) -> list[list]:
        ranked = sorted(stats.items(), key=lambda item: -item[1][position])[:PROFILE_ROWS]
        return [[_where(code), nc, round(1000 * tt / count, 2), round(1000 * ct / count, 2)]
                for code, (_cc, nc, tt, ct, _callers) in ranked]

    total = sum(tt for _cc, _nc, tt, _ct, _callers in stats.values())
    return {"calls": count, "total_ms": round(1000 * total / count, 2), "cumulative": top(3), "self": top(2)}


def profiles(benches: dict[str, Bench], cold_question: str, warm_questions: list[str]) -> dict:
    """A cold bare call (after `recall.invalidate`) and PROFILE_WARM_CALLS warm fast-shape calls,
    profiled after every timed call."""
    bare, fast = benches["bare"], benches["fast"]
    bare.invalidate()
    cold = profiled(lambda: bare.render(cold_question), 1)
    fast.render(warm_questions[0])  # the entry, current again after the cold call
    warm = warm_questions[:PROFILE_WARM_CALLS]
    return {"cold_bare": cold, "warm_fast": profiled(lambda: [fast.render(q) for q in warm], len(warm))}


def form_figures(phases: dict[str, Samples], counted: dict[str, tuple], latencies: list[float]) -> dict:
    """One form's figures: per phase the median (and p95) wall, CPU, collector and prelude times, the
    samples of the rarer phases, the cache's counters, and from the counted call (`Bench.api_calls`) its
    API calls, prelude counts and what the cache did in it; the 4 callers."""
    return {
        "median_ms": {phase: phases[phase].median_ms() for phase in PHASES},
        "p95_ms": {phase: ms(percentile(phases[phase].wall, 0.95)) for phase in PHASES},
        "cpu_ms": {phase: phases[phase].median_ms("cpu") for phase in PHASES},
        "collector_ms": {phase: phases[phase].median_ms("collector") for phase in PHASES},
        "prelude_ms": {phase: phases[phase].median_ms("prelude") for phase in PHASES},
        "samples_ms": {phase: [ms(s) for s in phases[phase].wall] for phase in ("cold", "refresh", "forget")},
        "collector_samples_ms": {phase: [ms(s) for s in phases[phase].collector]
                                 for phase in ("cold", "refresh", "forget")},
        "cache": {phase: dict(phases[phase].cache) for phase in PHASES},
        "api_calls": {phase: counted[phase][0] for phase in PHASES},
        "prelude_counts": {phase: counted[phase][1] for phase in PHASES},
        "api_cache": {phase: counted[phase][2] for phase in PHASES},
        "concurrent4_median_ms": ms(statistics.median(latencies)),
        "concurrent4_p95_ms": ms(percentile(latencies, 0.95)),
        "concurrent4_calls": len(latencies),
    }


def measure(size: int, seed: int, n_questions: int, pause_gc: bool = False, profile: bool = False) -> dict:
    """Every figure for one history size, both call forms (run in its own process, so peak RSS is this
    size's)."""
    import numpy as np
    import torch
    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets.synthetic import SyntheticSpec, build, questions
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import query_modules_dir
    from sentence_transformers import SentenceTransformer

    load_start = load_average()
    model = configure_model()
    start = time.perf_counter()
    data = build(SyntheticSpec(messages=size, seed=seed))
    runtime = Runtime(query_modules_dir(), pause_gc=pause_gc)
    if runtime.load_errors:
        raise SystemExit(f"query modules failed to load: {runtime.load_errors}")
    runtime.load_elements(data.elements)
    setup_store(runtime.store)  # as `memgraph-recall setup`: the indexes the fast shape's prelude uses
    counts = {user: vars(c) for user, c in data.counts.items()}
    data.elements = []
    gc.collect()
    build_s = time.perf_counter() - start
    rss_loaded = rss_mb()
    graph_of_user = user_graph(runtime.store, data.user_id)
    user_vertices = len(graph_of_user)

    asked = questions(seed, n_questions + COLD_SAMPLES + REFRESH_SAMPLES + 2 * THREADS * 10)
    warm_q, asked = asked[:n_questions], asked[n_questions:]
    cold_q, asked = asked[:COLD_SAMPLES], asked[COLD_SAMPLES:]
    refresh_q, thread_q = asked[:REFRESH_SAMPLES], asked[REFRESH_SAMPLES:]
    today = (data.last_time + timedelta(days=30)).date().isoformat()
    clock = CollectorClock()
    config = {"embedding_model": model}
    benches = {form: Bench(runtime, data, config, today, form, clock) for form in FORMS}
    phases = {form: {phase: Samples() for phase in PHASES} for form in FORMS}
    counted: dict[str, dict[str, tuple[dict, dict, dict]]] = {form: {} for form in FORMS}

    def count(form: str, phase: str, question: str, extra: dict | None = None) -> None:
        counted[form][phase] = benches[form].api_calls(question, extra)

    torch.set_num_threads(1)
    encoder = SentenceTransformer(str(model_folder(model)), device="cpu")
    encoder.encode(["warm up"])
    embed_s = [timed(lambda q=q: encoder.encode([q], normalize_embeddings=True)) for q in warm_q]
    vectors = {q: encoder.encode([q], normalize_embeddings=True)[0] for q in warm_q}
    given = {q: {"query_vector": vector.tolist()} for q, vector in vectors.items()}

    # loads the model and builds the database's directory (one full pass), on another user
    runtime.call("recall.render", data.other_user_ids[0], "model warm-up", today, config)
    floor = Floor(runtime, data)
    limit = Limit(np.concatenate([data.user_passages, data.user_item_vectors]), data.user_texts)
    limit_s: list[float] = []
    first = True
    for number, question in enumerate(cold_q):
        for form in in_turn(number):
            if not first:  # the very first call of the user is cold already
                benches[form].invalidate()
            first = False
            benches[form].sample(phases[form]["cold"], question)
        floor.sample()  # one per round: the yardstick of the cold calls beside it
    floor_api = floor.api_calls()
    handed: dict[str, dict] = {}
    for form in FORMS:
        benches[form].invalidate()
        call, build = Counter(), Counter()
        with handouts_of_builds(runtime, call, build):
            counted[form]["cold"] = benches[form].api_calls(cold_q[0], handouts=call)
        handed[form] = {"build": handout_figures(build, graph_of_user),
                        "call": handout_figures(call, graph_of_user)}
    for form in FORMS:
        benches[form].render(warm_q[0])  # settle after the cold calls
    for phase, extras in (("warm", {}), ("warm_vector", given)):
        for number, question in enumerate(warm_q):
            for form in in_turn(number):
                benches[form].sample(phases[form][phase], question, extras.get(question))
            limit_s.append(timed(lambda q=question: limit(q, vectors[q])))  # beside the calls it bounds
        for form in FORMS:
            benches[form].render(warm_q[0])  # settles: an entry past its max age is renewed here
            count(form, phase, warm_q[1], extras.get(warm_q[1]))

    latencies = {form: concurrent_latencies(benches[form], thread_q[i::2]) for i, form in enumerate(FORMS)}

    sessions = itertools.count()
    for number, question in enumerate(refresh_q):
        for form in in_turn(number):
            benches[form].render(warm_q[0])  # settles, so the refresh pays no max-age re-read
            write_session(runtime, data, next(sessions))
            benches[form].sample(phases[form]["refresh"], question)
    for form in FORMS:
        benches[form].render(warm_q[0])
        write_session(runtime, data, next(sessions))
        count(form, "refresh", refresh_q[0])
    deleted = itertools.count()
    for number in range(FORGET_SAMPLES):
        for form in in_turn(number):
            delete_session(runtime, data, next(deleted))
            benches[form].sample(phases[form]["forget"], refresh_q[0])
    reference = {}  # a cold build of the graph the counted deletion saw (the phases changed its size)
    for form in FORMS:
        delete_session(runtime, data, next(deleted))
        with directory_sweep_paused():  # a fixed share of other ids per call, differing call by call
            count(form, "forget", refresh_q[0])
            benches[form].invalidate()
            reference[form] = benches[form].api_calls(refresh_q[0])[0]
    # Last: past the maximum age a user heavier than the cap is read over its next calls, which would
    # otherwise fall on the phases after it.
    past_max_age = aged_clock(runtime)
    for number in range(RENEW_SAMPLES):
        for form in in_turn(number):
            benches[form].render(warm_q[0])  # current: what the next call reads is what the age made due
            past_max_age()
            benches[form].sample(phases[form]["renew"], warm_q[number % len(warm_q)])
    for form in FORMS:
        benches[form].render(warm_q[0])
        past_max_age()
        count(form, "renew", warm_q[1])
    profile_figures = profiles(benches, cold_q[0], warm_q) if profile else None
    clock.close()

    figures = {
        "forms": {form: {**form_figures(phases[form], counted[form], latencies[form]),
                         "cold_reference_api_calls": reference[form], "cold_handouts": handed[form]}
                  for form in FORMS},
        "question_embed_ms": ms(statistics.median(embed_s)), "limit_ms": ms(statistics.median(limit_s)),
        "read_floor_ms": ms(statistics.median(floor.seconds)), "read_floor_api_calls": floor_api,
        "peak_rss_mb": peak_rss_mb(),
        "details": {
            "pause_gc": pause_gc, "questions": len(warm_q), "rss_after_load_mb": rss_loaded,
            "build_and_load_s": round(build_s, 1), "counts": counts, "user_vertices": user_vertices,
            "limit_vectors": int(limit.matrix.shape[0]), "load": [load_start, load_average()],
        },
    }
    if profile_figures is not None:
        figures["profile"] = profile_figures
    return figures


@contextmanager
def handouts_of_builds(runtime, call: Counter, build: Counter):
    """While inside: `build` gets the handouts (of `call`, the counted call's tally) made inside the
    module's cache builds, apart from the rest of the call (its verification looks the returned rows up
    again by id). Benchmark instrumentation: wraps the module's cache object, restored on exit."""
    cache = runtime.modules["recall"].CACHE
    original = cache._build

    def counted(*args, **kwargs):
        before = Counter(call)
        try:
            return original(*args, **kwargs)
        finally:
            build.update(call - before)

    cache._build = counted
    try:
        yield
    finally:
        del cache._build


def handout_figures(handouts: Counter, graph: dict[int, str]) -> dict:
    """What a counted cold build handed out against the user's graph: the Actions' handouts (each Action
    once when they equal the Actions), the distinct vertices, and the repeated handouts by kind."""
    actions = [vertex_id for vertex_id, kind in graph.items() if kind == "Action"]
    repeats: Counter = Counter()
    for vertex_id, times in handouts.items():
        if times > 1:
            repeats[graph.get(vertex_id, "outside the user's graph")] += times - 1
    return {"actions": len(actions), "action_handouts": sum(handouts[a] for a in actions),
            "most_per_action": max((handouts[a] for a in actions), default=0),
            "distinct_vertices": len(handouts), "repeats_by_kind": dict(repeats.most_common())}


def ratio(value: float, base: float) -> float:
    return round(value / base, 2) if base else float("inf")


def bar_checks(r: dict) -> list[tuple[str, str, float, float]]:
    """Issue #20's bars on one size's figures: (form, bar, measured, bar value), met when measured <=
    bar value. Times in ms, ratios as factors, counts as API calls."""
    bare, fast = r["forms"]["bare"], r["forms"]["fast"]
    vertices = r["details"]["user_vertices"]
    return [
        ("fast", "warm median incl. question embedding <= 80 ms", fast["median_ms"]["warm"], 80.0),
        ("fast", "warm median incl. question embedding <= 4x the numpy/BM25 limit (factor)",
         ratio(fast["median_ms"]["warm"], r["limit_ms"]), 4.0),
        ("fast", "warm procedure-API calls, the signature's conversion (arguments) included, <= 20,000",
         fast["api_calls"]["warm"]["total"], 20_000),
        ("bare", "warm median incl. question embedding <= 120 ms", bare["median_ms"]["warm"], 120.0),
        ("bare", "cold <= 5 s", bare["median_ms"]["cold"], 5000.0),
        ("bare", "cold <= 3x the read floor (factor)",
         ratio(bare["median_ms"]["cold"], r["read_floor_ms"]), 3.0),
        ("bare", "refresh after one new session <= 300 ms", bare["median_ms"]["refresh"], 300.0),
        ("bare", "first call after a deleted session <= cold (ms)", bare["median_ms"]["forget"],
         bare["median_ms"]["cold"]),
        *((form, "cold build reads each vertex of the user's graph once: vertices handed out <= the "
                 f"graph's {vertices:,}", r["forms"][form]["api_calls"]["cold"]["vertices"], vertices)
          for form in FORMS),
        *((form, f"cold build hands each of the user's {f['cold_handouts']['build']['actions']:,} Actions "
                 "out once: Action handouts inside the build <= the Actions",
           f["cold_handouts"]["build"]["action_handouts"], f["cold_handouts"]["build"]["actions"])
          for form, f in r["forms"].items()),
        *((form, "a deleted session's rebuild no dearer than cold: API calls <= a cold build's of the "
                 "same graph", f["api_calls"]["forget"]["total"], f["cold_reference_api_calls"]["total"])
          for form, f in r["forms"].items()),
        *((form, "first call past the max age (issue #48) <= 3x warm median (factor)",
           ratio(f["median_ms"]["renew"], f["median_ms"]["warm"]), 3.0) for form, f in r["forms"].items()),
        *((form, "first call past the max age builds nothing (builds in its calls)",
           f["cache"]["renew"].get("builds", 0) + f["api_cache"]["renew"].get("builds", 0), 0)
          for form, f in r["forms"].items()),
    ]


def headline(results: dict[str, dict], paused: dict[str, dict]) -> dict[str, dict]:
    """Per size: the shared figures, per form each phase's median wall and CPU and API calls in total,
    the paused run's times, and at the bars' size the bars with measured / met."""
    out = {}
    for size, r in results.items():
        row: dict = {k: r[k] for k in ("question_embed_ms", "limit_ms", "read_floor_ms", "peak_rss_mb")}
        for form in FORMS:
            f = r["forms"][form]
            row[form] = {"median_ms": f["median_ms"], "cpu_ms": f["cpu_ms"],
                         "api_calls": {phase: c["total"] for phase, c in f["api_calls"].items()}}
            if form == "fast":
                row[form]["prelude_edges"] = {phase: c["edges"] for phase, c in f["prelude_counts"].items()}
            if size in paused:
                row[form]["host_gc_pause_ms"] = paused[size]["forms"][form]["median_ms"]
        if int(size) == TARGETS_AT:
            row["bars"] = [{"form": form, "bar": bar, "measured": value, "bar_value": limit,
                            "met": value <= limit} for form, bar, value, limit in bar_checks(r)]
        out[size] = row
    return out


def bars_lines(results: dict[str, dict], paused: dict[str, dict]) -> list[str]:
    key = str(TARGETS_AT)
    if key not in results:
        return [f"The bars are set at {TARGETS_AT:,} messages, which this run did not measure."]
    other = bar_checks(paused[key]) if key in paused else None
    rows = []
    for number, (form, bar, value, limit) in enumerate(bar_checks(results[key])):
        rows.append([FORM_NAMES[form], bar, value, limit, "yes" if value <= limit else "**no**",
                     other[number][2] if other else "not run"])
    handed = [handouts_line(form, results[key]["forms"][form]["cold_handouts"]) for form in FORMS]
    return [markdown_table(["call form", f"bar at {TARGETS_AT:,} messages (collector running)", "measured",
                            "bar value", "met", "for comparison: host pauses the collector"], rows), "",
            *handed]


def handouts_line(form: str, handed: dict) -> str:
    """One form's cold-call handouts: inside the build, and over the whole call."""

    def repeats(h: dict) -> str:
        return ", ".join(f"{kind or 'no label'} {n:,}" for kind, n in h["repeats_by_kind"].items()) or "none"

    build, call = handed["build"], handed["call"]
    return (f"- Cold call, {FORM_NAMES[form]}: inside the build {build['distinct_vertices']:,} distinct "
            f"vertices handed out, each Action at most {build['most_per_action']} time(s), handouts beyond "
            f"a vertex's first by kind: {repeats(build)}; the whole call (its verification looks the rows "
            f"it returns up again) {call['distinct_vertices']:,} distinct, each Action at most "
            f"{call['most_per_action']} time(s), repeats: {repeats(call)}")


def runs_lines(results: dict[str, dict], paused: dict[str, dict]) -> list[str]:
    """Each child process's phase times at the bars' size (how much separate processes vary)."""
    key = str(TARGETS_AT)
    if key not in results:
        return []
    rows = [[mode, number + 1, FORM_NAMES[form], *(run[form][p] for p in PHASES), run[form]["warm_cpu"]]
            for mode, table in (("collector running", results), ("host pauses the collector", paused))
            if key in table for number, run in enumerate(table[key]["runs"]) for form in FORMS]
    return [f"Each run at {TARGETS_AT:,} messages (a fresh process; the figures above are the medians over "
            "the runs):", "",
            markdown_table(["mode", "run", "call form", *(PHASE_NAMES[p] for p in PHASES), "warm CPU"], rows),
            ""]


def main_lines(results: dict[str, dict]) -> list[str]:
    rows = []
    for size in sorted(results, key=int):
        for form in FORMS:
            f = results[size]["forms"][form]
            med, cpu = f["median_ms"], f["cpu_ms"]
            rows.append([f"{int(size):,}", FORM_NAMES[form], med["cold"], cpu["cold"], med["forget"],
                         med["warm"], f"**{cpu['warm']}**", round(1000 / cpu["warm"], 1), f["p95_ms"]["warm"],
                         med["warm_vector"], cpu["warm_vector"],
                         f["prelude_ms"]["warm"] if form == "fast" else "-", med["refresh"], med["renew"],
                         cpu["renew"], f["concurrent4_median_ms"], f["concurrent4_p95_ms"]])
    headers = ["messages", "call form", "cold", "cold, CPU", "after a session is deleted", "warm median",
               "**warm CPU**", "warm calls/s per core (1000 / warm CPU)", "warm p95",
               "warm median, vector given", "vector given, CPU", "of warm: the prelude", "refresh",
               "past the max age", "past the max age, CPU", "4 callers median", "4 callers p95"]
    shared = []
    for size in sorted(results, key=int):
        r, d = results[size], results[size]["details"]
        fast_warm = r["forms"]["fast"]["median_ms"]
        shared.append([f"{int(size):,}", r["read_floor_ms"], r["question_embed_ms"], r["limit_ms"],
                       f"{ratio(fast_warm['warm'], r['limit_ms'])}x",
                       f"{ratio(fast_warm['warm_vector'], r['limit_ms'])}x", f"{d['user_vertices']:,}",
                       d["rss_after_load_mb"], r["peak_rss_mb"],
                       ", ".join(f"{a:.2f} -> {b:.2f}"
                                 for a, b in zip(d["load"][::2], d["load"][1::2], strict=True))])
    return [markdown_table(headers, rows), "", markdown_table(
        ["messages", "read floor", "question embedding", "limit", "fast warm / limit",
         "fast warm, vector given / limit", "vertices of the user's graph", "RSS after load (MB)",
         "peak RSS (MB)", "load average (1 min), start -> end of each run"], shared)]


def api_lines(results: dict[str, dict]) -> list[str]:
    rows = []
    for size in sorted(results, key=int):
        r = results[size]
        for form in FORMS:
            f = r["forms"][form]
            for phase in PHASES:
                counts = f["api_calls"][phase]
                rows.append([f"{int(size):,}", FORM_NAMES[form], PHASE_NAMES[phase], f["median_ms"][phase],
                             f["cpu_ms"][phase], *(f"{counts[k]:,}" for k in API_KINDS)])
            counts = f["cold_reference_api_calls"]
            rows.append([f"{int(size):,}", FORM_NAMES[form], "cold, on the graph after the deletion", "-",
                         "-", *(f"{counts[k]:,}" for k in API_KINDS)])
        floor = r["read_floor_api_calls"]
        rows.append([f"{int(size):,}", "-", "read floor", r["read_floor_ms"], "-",
                     *(f"{floor[k]:,}" for k in API_KINDS)])
    return [markdown_table(["messages", "call form", "call", "wall (ms)", "CPU (ms)", *API_KINDS], rows)]


def prelude_lines(results: dict[str, dict]) -> list[str]:
    rows = []
    for size in sorted(results, key=int):
        f = results[size]["forms"]["fast"]
        for phase in PHASES:
            counts = f["prelude_counts"][phase]
            rows.append([f"{int(size):,}", PHASE_NAMES[phase], f["prelude_ms"][phase], f["median_ms"][phase],
                         *(f"{counts[k]:,}" for k in PRELUDE_KINDS)])
    return [markdown_table(["messages", "call", "prelude (ms, median)", "whole call (ms, median)",
                            *PRELUDE_KINDS], rows)]


def per_action_lines(results: dict[str, dict]) -> list[str]:
    """A full read's API calls per admitted Action (the user's messages), beside the read floor's."""
    rows = []
    for size in sorted(results, key=int):
        r = results[size]
        actions = r["details"]["counts"]["synth-0"]["messages"]
        floor = r["read_floor_api_calls"]
        for form in FORMS:
            for phase in ("cold", "forget"):
                counts = r["forms"][form]["api_calls"][phase]
                rows.append([f"{int(size):,}", FORM_NAMES[form], PHASE_NAMES[phase],
                             *(round(counts[k] / actions, 2) for k in API_KINDS),
                             f"{ratio(counts['total'], floor['total'])}x"])
        rows.append([f"{int(size):,}", "-", "read floor", *(round(floor[k] / actions, 2) for k in API_KINDS),
                     "1.0x"])
    return [markdown_table(["messages", "call form", "call", *API_KINDS, "total / the floor's"], rows)]


def collector_lines(results: dict[str, dict], paused: dict[str, dict]) -> list[str]:
    rows = []
    for size in sorted(results, key=int):
        for form in FORMS:
            f, p = results[size]["forms"][form], paused.get(size)
            for phase in PHASES:
                rows.append([f"{int(size):,}", FORM_NAMES[form], PHASE_NAMES[phase], f["median_ms"][phase],
                             f["collector_ms"][phase],
                             p["forms"][form]["median_ms"][phase] if p else "not run"])
    return [markdown_table(["messages", "call form", "call", "median", "collector inside (median)",
                            "median, host pauses the collector"], rows)]


def cache_line(results: dict[str, dict]) -> str:
    """What the cache did at the largest size (its counters' increase), per form and phase: in the timed
    calls, and in the API-counted call."""
    size = max(results, key=int)

    def done(counters: dict) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(counters.items()) if v) or "nothing"

    parts = [f"{form} {PHASE_NAMES[phase]}: {done(f['cache'].get(phase, {}))} (counted call: "
             f"{done(f['api_cache'].get(phase, {}))})"
             for form, f in results[size]["forms"].items() for phase in PHASES]
    return (f"- What the cache did in the timed calls at {int(size):,} messages (its counters, as "
            f"`recall.status` shows them; in parentheses, in the API-counted call): {'; '.join(parts)}. A "
            "settling call precedes each counted warm call and each refresh's write, so that no measured "
            "call but those past the max age reads the whole entry again (`RECALL_CACHE_MAX_AGE`, 60 s), "
            "which inside a refresh the counters would not show.")


def profile_lines(profile: dict, size: str) -> list[str]:
    """The profile report: for each profiled call, the top functions by cumulative and by own time."""
    lines = [f"# Profiles at {int(size):,} messages", "",
             "cProfile (deterministic; it slows Python function calls, so the times are inflated and only "
             "their proportions count) of calls made after every timed call of the same run, collector "
             "running. Times are ms per call; `ncalls` is over all profiled calls.", ""]
    titles = {"cold_bare": "A cold call in the bare string form (after `recall.invalidate`)",
              "warm_fast": "Warm calls through the fast call shape (question embedding included)"}
    for name, title in titles.items():
        p = profile[name]
        lines += [f"## {title}", "", f"{p['calls']} call(s), {p['total_ms']} ms per call under the profiler.",
                  ""]
        for order, what in (("cumulative", "cumulative time"), ("self", "own time")):
            lines += [f"Top {PROFILE_ROWS} by {what}:", "",
                      markdown_table(["function", "ncalls", "own ms per call", "cumulative ms per call"],
                                     p[order]), ""]
    return lines


def plot(path: Path, results: dict[str, dict], paused: dict[str, dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(int(s) for s in results)
    fig, ax = plt.subplots(figsize=(8, 5))
    colours = {"cold": "#2b6cb0", "forget": "#805ad5", "refresh": "#2f855a", "warm": "#c05621",
               "warm_vector": "#b7791f", "renew": "#2c7a7b"}
    for form, style in (("bare", "-"), ("fast", "--")):
        for phase in PHASES:
            ax.plot(sizes, [results[str(s)]["forms"][form]["median_ms"][phase] for s in sizes], marker="o",
                    linestyle=style, color=colours[phase], label=f"{form}: {PHASE_NAMES[phase]}")
    ax.plot(sizes, [results[str(s)]["limit_ms"] for s in sizes], marker="o", linestyle=":", color="grey",
            label="limit: numpy cosine + BM25")
    if all(str(s) in paused for s in sizes):
        ax.plot(sizes, [paused[str(s)]["forms"]["bare"]["median_ms"]["cold"] for s in sizes], marker=".",
                linestyle=":", color="#2b6cb0", alpha=0.5, label="bare: cold, host pauses the collector")
    bars = [5000.0, 300.0, 120.0, 80.0]
    ax.scatter([TARGETS_AT] * len(bars), bars, marker="_", s=400, color="#c53030", zorder=3,
               label="bars at 100k (bare cold, refresh, warm; fast warm)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("messages in the user's history")
    ax.set_ylabel("median latency (ms)")
    ax.set_title("recall.render on the embedded runtime (not Memgraph figures)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(out_dir: Path, info: dict, results: dict[str, dict], paused: dict[str, dict],
                 profile: dict | None = None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = sorted(results, key=int)
    first = results[sizes[0]]["details"]
    lines = ["# Scale benchmark: `recall.render` as one user's history grows, in both call forms", "",
             "**Embedded-runtime figures** (the in-process stand-in for Memgraph's procedure host, one "
             "Python process), **not Memgraph's**. Times in ms. One target user among other users holding "
             "as many messages again; synthetic text and topic-structured 384-d vectors (no model cost at "
             "build); the graph carries its RecallMeta and `setup_store` created the indexes, as "
             "`memgraph-recall setup` does on a server. Two call forms, alternating call by call on the "
             "same runtime: the **bare string form** (`CALL recall.render($user, $q, $today, $config)`) and "
             "the **fast call shape** as the client sends it (`memgraph_recall.shape`: a Cypher prelude "
             "finds the User and the RecallMeta through the indexes and passes each holder's degree and "
             "edge-id sum, computed here by `memgraph_recall.embedded.prelude.fast_shape` under the call's "
             "read lock; its time is part of the call's). Python's cyclic collector runs as a server's "
             "would (never paused) unless a table says otherwise. The machine is shared: other work may "
             "run during a measurement (the load average at each run's start and end is in the second "
             "table; each run's figures at 100k, below, show how much separate processes differ).", "",
             *provenance_lines(info), "", *main_lines(results), "",
             f"- Warm: median and p95 over {first['questions']} different questions, question embedding "
             "included; `vector given` passes a precomputed `query_vector` (embedding excluded). `question "
             "embedding`: all-MiniLM-L6-v2, one question, torch threads = 1.",
             "- **CPU**: the calling thread's CPU time in the same calls. In Memgraph a Python procedure "
             "holds the GIL for its whole call, so CPU per call is the throughput figure: one core per "
             "instance serves at most `1000 / warm CPU` warm calls a second, however many callers wait. "
             "For the fast form it includes the prelude, which in Memgraph is Cypher (C++, no GIL); "
             "`of warm: the prelude` is its median share of the warm call.",
             f"- Cold: first call after `recall.invalidate` (the very first call of the user is the first "
             f"sample), model loaded and the database's directory built, {COLD_SAMPLES} per form. After a "
             f"session is deleted: first call after one of the user's sessions and its messages were "
             f"deleted, median of {FORGET_SAMPLES}. Refresh: first call after one new session (30 turns) "
             f"was written, median of {REFRESH_SAMPLES}. Past the max age: first call after the entry's "
             "maximum age with nothing changed (the module's clock moved past it after a settling call, so "
             "every check unit is due: the rolling check reads them, at most `RECALL_CACHE_CHECK_READS` a "
             f"call), median of {RENEW_SAMPLES}. The forms alternate, each round starting with the other "
             "one.",
             "- Read floor: a minimal procedure on the same graph that walks the user's sessions to every "
             "message and reads its id, type, text, speaker, time, model name and vectors (packed into one "
             "float32 buffer), nothing else (no ownership checks, facts, parsing or indexes); median of "
             f"{COLD_SAMPLES}, one after each round of cold calls. What any full read through the procedure "
             "API pays; a cold build adds the rest.",
             f"- Limit: numpy brute-force cosine top-{TOP_K} over all the user's vectors (message passages, "
             f"entities, facts, notes: {first['limit_vectors']:,} at the smallest size) plus BM25 "
             f"top-{TOP_K} over the user's messages (indexes prebuilt), no embedding; timed once per warm "
             "question, right after that question's calls (both warm phases).",
             "- Vertices of the user's graph: the User, its Sessions, Agents, Actions, their Chunks, the "
             "entities mentioned in them, notes and ontologies, each once: what a build that reads each "
             "vertex once hands out.",
             f"- 4 callers: {THREADS} threads calling at once on a warm cache (embedding included), "
             f"{results[sizes[0]]['forms']['bare']['concurrent4_calls']} calls per form.",
             "- Peak RSS: the measuring process's high-water mark, graph build included.",
             f"- Runs: {len(results[sizes[0]]['runs'])} fresh process(es) per size and mode, the modes "
             "alternating; each figure is the median over them.",
             f"- BLAS threads in the measuring process: {info['blas_threads']} (recall and the limit alike); "
             "torch threads as the module sets them (`RECALL_TORCH_THREADS`, default 1).", "",
             "## Bars (issue #20)", "", *bars_lines(results, paused), "",
             "- Each bar is met when the measured figure is at most the bar value; factors are the two "
             "figures' ratio in the same run. `warm procedure-API calls` is the warm call's total below, "
             "`arguments` included (the fast shape's signature lists are converted for every call). "
             "\"Reads each Action once\" is checked as the cold build's vertex handouts against the "
             "vertices of the user's graph (each handed out once); per admitted Action below. The Action "
             "bar counts handouts of the user's Action vertices alone (each vertex's handouts tallied by "
             "`ApiCounts(handouts=...)`); the repeats below the bars say which vertices are handed out "
             "more than once: mgp's Edge gives its ends only as Vertex objects, so an entity mentioned in "
             "k chunks is handed out k times, once per MENTIONED_IN edge. A deleted "
             "session's rebuild is compared with a cold build counted right after it on the same graph (the "
             "refresh and forget phases change the user's size by a few dozen messages), the module's "
             "directory sweep paused for both (it re-reads a different 16 ids of the database each call).",
             "",
             *runs_lines(results, paused),
             "## Procedure-API calls per call", "",
             "How many calls of Memgraph's procedure API (one C-extension call each in its `mgp.py`) "
             "one call makes, counted by the embedded runtime (`Runtime.call(api_counts=...)`, in a "
             "separate call of the same kind right after the timed ones). `vertices`/`edges`: objects "
             "handed out (lookups by id, `from_vertex`/`to_vertex`, each `in_edges`/`out_edges` step, "
             "the vertex scan); `properties`/`labels`: values read; `types`: `edge.type`; `ids`: `.id`; "
             "`arguments`: the values Memgraph converts to hand the call its arguments (each argument, "
             "list element, map key and value: the fast shape's `holders`, `degrees` and `id_sums` lists, "
             "a given `query_vector`). Multiplied by per-call costs measured on a real server, they "
             "estimate its time; the stand-in's own per-call costs are not Memgraph's. Beside them, the "
             "phase's median wall time and the calling thread's median CPU time (from the table above).", "",
             *api_lines(results), "",
             "Per admitted Action (the user's messages; all are admitted in this graph), and the total "
             "against the read floor's:", "",
             *per_action_lines(results), "",
             "## The fast shape's prelude (Cypher, not procedure-API calls)", "",
             "What the fast shape's Cypher prelude does before the procedure runs (`PreludeCounts`, in the "
             "same API-counted calls): index lookups (`:User(user_id)`, `:RecallMeta`), vertices a missing "
             "index made a lookup scan, holders (the User, its Sessions and Agents) whose edges it "
             "expanded, and the edges those expands read (finding the holders included). In Memgraph this "
             "is the query's Cypher part; here it is Python over the store, timed inside the call.", "",
             *prelude_lines(results), "",
             "## The collector", "",
             "Median milliseconds of each call, the part of it Python's cyclic collector ran "
             "(`gc.callbacks`, inside the same timed calls), and the same call in a second run where the "
             "embedded host paused the collector around each procedure call (`Runtime(pause_gc=True)`; "
             "collections deferred by the pause happen after the call). The pause is off by default: the "
             "collector's work here is mostly the module's own objects, which a real server's heap holds "
             "too, and the switch is process-wide.", "",
             *collector_lines(results, paused), "",
             cache_line(results), "",
             *(["Profiles of a cold bare call and of warm fast-shape calls: [profile.md](profile.md).", ""]
               if profile else []),
             "![latency against history size](scale.png)", ""]
    (out_dir / "README.md").write_text("\n".join(lines))
    if profile:
        (out_dir / "profile.md").write_text("\n".join([*profile_lines(profile["figures"], profile["size"]),
                                                       *provenance_lines(info), ""]))
    plot(out_dir / "scale.png", results, paused)
    (out_dir / "details.json").write_text(json.dumps(
        {"provenance": info, "results": results, "host_gc_pause": paused, "profile": profile}, indent=1))


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 1000,10000, got {text!r}") \
            from None
    if not sizes or min(sizes) < 100:
        raise argparse.ArgumentTypeError(f"expected sizes >= 100, got {text!r}")
    return sizes


def run_child(size: int, args: argparse.Namespace, env: dict, folder: Path, pause_gc: bool,
              profile: bool) -> dict:
    out = folder / f"{size}-{'paused' if pause_gc else 'running'}.json"
    command = [sys.executable, __file__, "--one-size", str(size), "--seed", str(args.seed),
               "--questions", str(args.questions), "--out", str(out)]
    command += (["--pause-gc"] if pause_gc else []) + (["--profile"] if profile else [])
    subprocess.run(command, check=True, env=env)
    return json.loads(out.read_text())


def combined(runs: list[dict]) -> dict:
    """One size's figures over several child processes (the same process varies less than two do):
    each number the median over the runs, sample lists joined, the rest as the first run has it, and
    every run's phase times (and warm CPU) per form kept under `runs`."""

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
    figures["runs"] = [{form: {**r["median_ms"], "warm_cpu": r["cpu_ms"]["warm"]}
                        for form, r in run["forms"].items()} for run in runs]
    return figures


def measured(size: int, args: argparse.Namespace, env: dict,
             folder: Path) -> tuple[dict[bool, dict], dict | None]:
    """`args.runs` child processes per mode for one size, the modes alternating (so other work on the
    machine falls on both alike), combined per mode, and the first collector-running run's profile
    (with `--profile`); each run's phase times printed."""
    modes = (False,) if args.no_paused_run else (False, True)
    runs: dict[bool, list[dict]] = {mode: [] for mode in modes}
    profile = None
    for number in range(args.runs):
        for pause_gc in modes:
            r = run_child(size, args, env, folder, pause_gc, args.profile and number == 0 and not pause_gc)
            profile = r.pop("profile", profile)
            runs[pause_gc].append(r)
            for form in FORMS:
                med = r["forms"][form]["median_ms"]
                print(f"  {'host pauses the collector: ' if pause_gc else ''}{form}: cold {med['cold']} ms, "
                      f"warm median {med['warm']} ms (CPU {r['forms'][form]['cpu_ms']['warm']} ms), refresh "
                      f"{med['refresh']} ms, after a deletion {med['forget']} ms; "
                      f"peak RSS {r['peak_rss_mb']} MB",
                      flush=True)
    return {mode: combined(mode_runs) for mode, mode_runs in runs.items()}, profile


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
    parser.add_argument("--profile", action="store_true",
                        help="profile a cold bare call and warm fast-shape calls after the timed ones (first "
                             "collector-running run of each size); profile.md shows the largest size")
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
        args.out.write_text(json.dumps(measure(args.one_size, args.seed, args.questions, args.pause_gc,
                                               args.profile)))
        return 0

    info = provenance(sys.argv if argv is None else ["scripts/bench_scale.py", *argv])
    info["blas_threads"] = str(args.blas_threads)
    env = {**os.environ, **{name: str(args.blas_threads) for name in BLAS_THREAD_VARIABLES}}
    results: dict[str, dict] = {}
    paused: dict[str, dict] = {}
    profile = None
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            print(f"measuring {size:,} messages ...", flush=True)
            figures, size_profile = measured(size, args, env, Path(tmp))
            results[str(size)] = figures[False]
            if True in figures:
                paused[str(size)] = figures[True]
            if size_profile is not None and (profile is None or size > int(profile["size"])):
                profile = {"size": str(size), "figures": size_profile}
    write_report(args.results, info, results, paused, profile)
    if args.json:
        args.json.write_text(json.dumps(headline(results, paused), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
