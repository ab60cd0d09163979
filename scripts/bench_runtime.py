"""Benchmark the embedded runtime (issue 2): `python scripts/bench_runtime.py [--quick]`.

Measures what recall leans on: loading a 1M-element export without vectors (time, peak RSS, in a
fresh subprocess), walking 100k vertices through their edges reading one string property, reading a
384-float list property from 100k vertices, and the overhead of calling an empty procedure.
These are the embedded runtime's figures on this machine, not Memgraph's. Writes
results/bench_runtime.md.
"""

import argparse
import json
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memgraph_recall.embedded import Runtime

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "bench_runtime.md"

BENCH_MODULE = '''
import mgp


@mgp.read_proc
def noop() -> mgp.Record():
    return None


@mgp.read_proc
def noop_args(ctx: mgp.ProcCtx, user_id: str, k: int, config: mgp.Map = {}) -> mgp.Record(ok=bool):
    return mgp.Record(ok=True)


@mgp.read_proc
def walk(ctx: mgp.ProcCtx, user: mgp.Vertex) -> mgp.Record(vertices=int, chars=int):
    """user -> sessions -> messages, reading each message's text (recall's cold-cache walk)."""
    vertices = chars = 0
    for to_session in user.out_edges:
        for to_message in to_session.to_vertex.out_edges:
            text = to_message.to_vertex.properties.get("text")
            vertices += 1
            chars += len(text)
    return mgp.Record(vertices=vertices, chars=chars)


@mgp.read_proc
def read_vectors(ctx: mgp.ProcCtx, key: str) -> mgp.Record(vectors=int, dims=int):
    vectors = dims = 0
    for vertex in ctx.graph.vertices:
        vector = vertex.properties.get(key)
        if vector is not None:
            vectors += 1
            dims += len(vector)
    return mgp.Record(vectors=vectors, dims=dims)
'''

LOAD_CHILD = '''
import json, resource, sys, time
from memgraph_recall.embedded import Runtime
rt = Runtime(sys.argv[2])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
start = time.perf_counter()
rt.load_graph(sys.argv[1])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_rss_mib": peak, "base_rss_mib": before,
                  "vertices": rt.store.vertex_count(), "edges": rt.store.edge_count()}))
'''


def write_export(path: Path, elements: int, seed: int = 7) -> None:
    """A memory-shaped export (users, sessions, messages with text and timestamps), streamed to disk:
    about 40% vertices and 60% relationships, no vectors."""
    rng = random.Random(seed)
    words = [f"word{i}" for i in range(5000)]
    vertices = int(elements * 0.4)
    edges = elements - vertices
    with path.open("w") as out:
        out.write("[\n")
        for vid in range(vertices):
            if vid % 1000 == 0:
                node = {"id": vid, "labels": ["User"], "properties": {"user_id": f"u{vid}"}}
            elif vid % 50 == 0:
                node = {"id": vid, "labels": ["Session"], "properties": {"session_id": f"s{vid}"}}
            else:
                node = {"id": vid, "labels": ["Action", "Message"], "properties": {
                    "action_id": f"a{vid}", "role": rng.choice(["user", "assistant"]),
                    "text": " ".join(rng.choices(words, k=12)),
                    "created_at": f"localDateTime(2024-0{1 + vid % 9}-1{vid % 10}T10:{vid % 60:02d}:00)"}}
            node["type"] = "node"
            out.write(json.dumps(node) + ",\n")
        for eid in range(edges):
            start, end = rng.randrange(vertices), rng.randrange(vertices)
            label = rng.choice(["NEXT", "MENTIONS", "IN_SESSION"])
            rel = {"id": eid, "start": start, "end": end, "label": label,
                   "properties": {"weight": rng.random()}, "type": "relationship"}
            out.write(json.dumps(rel) + (",\n" if eid < edges - 1 else "\n"))
        out.write("]\n")


def bench_load(elements: int, modules: Path, workdir: Path) -> dict:
    path = workdir / "export.json"
    write_export(path, elements)
    size_mib = path.stat().st_size / 2**20
    child = subprocess.run([sys.executable, "-c", LOAD_CHILD, str(path), str(modules)], check=True,
                           capture_output=True, text=True)
    result = json.loads(child.stdout)
    result["file_mib"] = size_mib
    path.unlink()
    return result


def build_walk_graph(runtime: Runtime, messages: int, per_session: int = 100) -> int:
    store = runtime.store
    user = store.add_vertex(["User"], {"user_id": "bench"})
    rng = random.Random(3)
    words = [f"word{i}" for i in range(5000)]
    for s in range(messages // per_session):
        session = store.add_vertex(["Session"], {"session_id": f"s{s}"})
        store.add_edge(user, session, "HAD_SESSION")
        for _ in range(per_session):
            message = store.add_vertex(["Message"], {"text": " ".join(rng.choices(words, k=12))})
            store.add_edge(session, message, "HAS_MESSAGE")
    return user


def timed(fn, repeats: int) -> list[float]:
    fn()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x smaller sizes (a smoke run)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    n_load, n_walk, n_vec, n_calls = 1_000_000 // scale, 100_000 // scale, 100_000 // scale, 20_000 // scale
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        modules = Path(tmp) / "modules"
        modules.mkdir()
        (modules / "bench.py").write_text(BENCH_MODULE)

        load = bench_load(n_load, modules, Path(tmp))
        rows.append((f"load export_util.json, {n_load:,} elements ({load['vertices']:,} vertices, "
                     f"{load['edges']:,} edges, {load['file_mib']:.0f} MiB), no vectors",
                     f"{load['seconds']:.2f} s, peak RSS {load['peak_rss_mib']:.0f} MiB "
                     f"({load['base_rss_mib']:.0f} MiB before loading)", "report"))

        runtime = Runtime(modules)
        user = runtime.vertex(build_walk_graph(runtime, n_walk))
        walk = timed(lambda: runtime.call("bench.walk", user), 7)
        assert runtime.call("bench.walk", user)[0]["vertices"] == n_walk
        per = statistics.median(walk) / n_walk * 1e6
        rows.append((f"walk {n_walk:,} vertices via edges, read one string property each",
                     f"{statistics.median(walk) * 1000:.0f} ms ({per:.2f} us/vertex)", "< 300 ms (~2 us)"))

        runtime = Runtime(modules)
        rng = random.Random(5)
        for _ in range(n_vec):
            runtime.store.add_vertex(["Chunk"], {"embedding": [rng.random() for _ in range(384)]})
        vec = timed(lambda: runtime.call("bench.read_vectors", "embedding"), 5)
        assert runtime.call("bench.read_vectors", "embedding")[0]["dims"] == n_vec * 384
        rows.append((f"read a 384-float list property from {n_vec:,} vertices",
                     f"{statistics.median(vec) * 1000:.0f} ms", "< 1000 ms"))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows.append((f"peak RSS of this process (holds {n_vec:,} vectors of 384 floats)", f"{rss:.0f} MiB",
                     "report"))

        for name, call_args in (("bench.noop", ()), ("bench.noop_args", ("user-1", 10))):
            def batch(name=name, call_args=call_args):
                for _ in range(n_calls):
                    runtime.call(name, *call_args)
            per_call = statistics.median(timed(batch, 3)) / n_calls * 1e6
            label = "empty procedure" if not call_args else "empty procedure, 2 args + default map"
            rows.append((f"call overhead, {label}", f"{per_call:.1f} us/call", "< 50 us"))

    header = (f"# Embedded runtime benchmark\n\nThese are the **embedded runtime's** figures (Python "
              f"{platform.python_version()}, {platform.machine()}, one thread), **not Memgraph's**. "
              f"Command: `python scripts/bench_runtime.py{' --quick' if args.quick else ''}`.\n\n")
    table = "| measurement | result | target |\n|---|---|---|\n" + "".join(
        f"| {what} | {result} | {target} |\n" for what, result, target in rows)
    print(header + table)
    if not args.quick:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(header + table)
        print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
