#!/usr/bin/env python
"""Two databases in one instance: what alternating calls between them cost (issue #18's bar).

Memgraph shares one module state between all the databases of an instance, so recall files what it
keeps under each database's RecallMeta token. The bar: alternating 100 warm calls between two
databases of 10k messages each costs no more than 1.3x the same calls against one database, in
procedure-API calls and in time.

One embedded `Runtime` hosts two databases, `a` and `b`, each a synthetic graph from the same
`SyntheticSpec` with seeds `seed` and `seed + 1`: the same user_ids in the same build order (the target
User is the same vertex id in both), other texts and vectors, and each its own RecallMeta token;
`setup_store` creates each one's indexes. A third, small database loads the model first, so no timed
call pays for it. Then, in both call forms (the bare string form and the fast call shape, as
`bench_scale.py` calls them):
- the first call in each database on a fresh module state (as after `CALL mg.load('recall')`): the
  string form pays that database's one full directory pass, the fast form reads only the user; and
  for comparison a cold call that finds the database known (after `recall.invalidate($user)`);
- `--calls` warm calls against `a` only, and the same calls alternating `a`, `b`, `a`, `b`, ...
  (the same questions in the same order), `--rounds` times, the two series interleaved in blocks of
  `--block` calls (which goes first alternating block by block and round by round), so that a shared
  machine's drift falls on both alike; each with wall and calling-thread CPU time per call and the
  collector's share, and in a separate pass of the same calls
  their procedure-API calls (`ApiCounts`, arguments included) and, for the fast shape, the prelude's
  own counts. The calls pass a precomputed `query_vector`: the question's embedding costs the same in
  both series and would only dilute the comparison. Before each series and each pass both entries are
  built afresh, so no call pays the cache's max-age re-read (`RECALL_CACHE_MAX_AGE`, 60 s).

    python scripts/bench_databases.py --messages 10000 --calls 100 --json results/databases/headline.json
"""

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (  # noqa: E402
    ROOT,
    CollectorClock,
    configure_model,
    fresh_module_state,
    load_average,
    markdown_table,
    model_folder,
    ms,
    peak_rss_mb,
    provenance,
    provenance_lines,
)

DATABASES = ("a", "b")
WARMUP_DATABASE = "model_warmup"
FORMS = ("bare", "fast")
FORM_NAMES = {"bare": "bare string form", "fast": "fast call shape"}
SERIES = ("single", "alternating")
SERIES_NAMES = {"single": "a only", "alternating": "alternating a, b"}
API_KINDS = ("vertices", "edges", "properties", "labels", "types", "ids", "arguments", "total")
PRELUDE_KINDS = ("lookups", "scanned", "holders", "edges")
BAR = 1.3
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class Caller:
    """`recall.render` for the target user in one database, in either call form, timed or counted."""

    def __init__(self, runtime, user_id: str, config: dict, today: str) -> None:
        self.runtime, self.user_id, self.config, self.today = runtime, user_id, config, today
        self.clock = CollectorClock()

    def call(
        self,
        form: str,
        database: str,
        question: str,
        extra: dict | None = None,
        api_counts=None,
        prelude_counts=None,
    ) -> None:
        config = {**self.config, **(extra or {})}
        if form == "bare":
            self.runtime.call(
                "recall.render",
                self.user_id,
                question,
                self.today,
                config,
                database=database,
                api_counts=api_counts,
            )
            return
        from memgraph_recall.embedded.prelude import fast_shape

        def prelude(store) -> tuple | None:  # as the client's `EmbeddedBackend` sends the fast shape
            shape = fast_shape(store, self.user_id, prelude_counts)
            return None if shape is None else (shape, question, self.today, config)

        self.runtime.call("recall.render", prelude=prelude, database=database, api_counts=api_counts)

    def timed(self, *args, **kwargs) -> tuple[float, float, float]:
        """(wall, calling-thread CPU, Python's cyclic collector inside) seconds of one call."""
        wall, cpu, collector = time.perf_counter(), time.thread_time(), self.clock.seconds
        self.call(*args, **kwargs)
        return time.perf_counter() - wall, time.thread_time() - cpu, self.clock.seconds - collector

    def counted(self, form: str, calls: Sequence[tuple[str, str, dict | None]]) -> tuple[dict, dict, dict]:
        """The procedure-API calls and prelude counts of `calls` (database, question, extra), summed,
        and what the cache did in them."""
        from memgraph_recall.embedded import ApiCounts
        from memgraph_recall.embedded.prelude import PreludeCounts

        counts, prelude, before = ApiCounts(), PreludeCounts(), self.cache_counters()
        for database, question, extra in calls:
            self.call(form, database, question, extra, api_counts=counts, prelude_counts=prelude)
        return counts.as_dict(), prelude.as_dict(), dict(self.cache_counters() - before)

    def fresh(self, form: str, question: str) -> None:
        """Both databases' entries built afresh, so the next minute's calls pay no max-age re-read
        (`RECALL_CACHE_MAX_AGE`, 60 s), which would fall on whichever series happens to run then."""
        for database in DATABASES:
            self.runtime.call("recall.invalidate", self.user_id, database=database)
            self.call(form, database, question)

    def cache_counters(self) -> Counter:
        return Counter(self.runtime.modules["recall"].CACHE.counts)


def forget(caller: Caller, kind: str, database: str) -> None:
    """What precedes a `first` call (a fresh module state) or a `cold` one (the user's entry dropped)."""
    if kind == "first":
        fresh_module_state(caller.runtime)
    else:
        caller.runtime.call("recall.invalidate", caller.user_id, database=database)


def first_calls(caller: Caller, form: str, question: str) -> dict[str, dict]:
    """Per database: the first call on a fresh module state (`bench_common.fresh_module_state`), and a
    cold call with the database known (`recall.invalidate($user)`); wall, CPU, API calls, cache
    counters."""
    out = {}
    for database in DATABASES:
        figures = {}
        for kind in ("first", "cold"):
            forget(caller, kind, database)
            before = caller.cache_counters()
            wall, cpu, _ = caller.timed(form, database, question)
            cache = dict(caller.cache_counters() - before)
            forget(caller, kind, database)
            api, prelude, _ = caller.counted(form, [(database, question, None)])
            figures[kind] = {
                "wall_ms": ms(wall),
                "cpu_ms": ms(cpu),
                "cache": cache,
                "api_calls": api,
                "prelude_counts": prelude,
            }
        out[database] = figures
    return out


def series_calls(series: str, questions: list[str], given: dict[str, dict]) -> list[tuple[str, str, dict]]:
    """The calls of one series: (database, question, extra), the same questions in the same order."""
    databases = (
        [DATABASES[0]] * len(questions)
        if series == "single"
        else [DATABASES[number % 2] for number in range(len(questions))]
    )
    return [
        (database, question, given[question]) for database, question in zip(databases, questions, strict=True)
    ]


def summary(samples: list[tuple[float, float, float]], rounds: int, counted: tuple, cache: Counter) -> dict:
    """One series in one form from its timed calls' (wall, CPU, collector) seconds: total (per round,
    median over rounds) and median wall and CPU per call, the collector's total and the slowest call;
    from the counted pass (`Caller.counted`) API calls and prelude counts per call and the cache's
    counters, and the cache's counters over the timed calls."""
    api, prelude, counted_cache = counted
    per_round = len(samples) // rounds
    walls, cpus, collectors = zip(*samples, strict=True)

    def per_round_total(values: Sequence[float]) -> list[float]:
        return [sum(values[r * per_round : (r + 1) * per_round]) for r in range(rounds)]

    totals = per_round_total(walls)
    return {
        "calls": per_round,
        "rounds": rounds,
        "total_ms": ms(statistics.median(totals)),
        "total_ms_rounds": [ms(t) for t in totals],
        "median_ms": ms(statistics.median(walls)),
        "cpu_total_ms": ms(statistics.median(per_round_total(cpus))),
        "cpu_median_ms": ms(statistics.median(cpus)),
        "collector_total_ms": ms(statistics.median(per_round_total(collectors))),
        "max_ms": ms(max(walls)),
        "api_per_call": {k: round(v / per_round, 1) for k, v in api.items()},
        "prelude_per_call": {k: round(v / per_round, 1) for k, v in prelude.items()},
        "cache": dict(cache),
        "counted_cache": counted_cache,
    }


def ratios(single: dict, alternating: dict) -> dict:
    """Alternating over single for each figure, and whether API calls and total time stay within the bar."""
    figures = {
        "total_ms": "total wall",
        "median_ms": "median wall",
        "cpu_total_ms": "total CPU",
        "cpu_median_ms": "median CPU",
    }
    out = {name: round(alternating[key] / single[key], 3) for key, name in figures.items()}
    out["api calls per call"] = round(
        alternating["api_per_call"]["total"] / single["api_per_call"]["total"], 3
    )
    out["met"] = out["api calls per call"] <= BAR and out["total wall"] <= BAR
    return out


def measure(messages: int, calls: int, rounds: int, seed: int, block: int) -> dict:
    """Every figure, in this process."""
    import torch
    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets.synthetic import SyntheticSpec, build, questions
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import query_modules_dir
    from sentence_transformers import SentenceTransformer

    load_start = load_average()
    model = configure_model()
    runtime = Runtime(query_modules_dir())
    if runtime.load_errors:
        raise SystemExit(f"query modules failed to load: {runtime.load_errors}")
    built, layouts = {}, {}
    for number, database in enumerate((*DATABASES, WARMUP_DATABASE)):
        size = messages if database in DATABASES else 50
        data = build(SyntheticSpec(messages=size, seed=seed + number))
        layouts[database] = {
            e["id"]: (tuple(e["labels"]), json.dumps(e["properties"].get("user_id")))
            for e in data.elements
            if e["type"] == "node"
        }
        runtime.create_database(database)
        runtime.load_elements(data.elements, database=database)
        store = runtime.database(database)
        setup_store(store)
        data.elements = []
        built[database] = {
            "seed": seed + number,
            "messages": data.counts[data.user_id].messages,
            "vertices": store.vertex_count(),
            "edges": store.edge_count(),
            "user_vertex": store.find_vertices("User", "user_id", data.user_id)[0],
            "tokens": [store.get_vertex(i).props["token"] for i in store.label_lookup("RecallMeta")],
            "user_id": data.user_id,
            "last_time": data.last_time,
        }
    a, b = (built[database] for database in DATABASES)
    if (
        a["user_id"] != b["user_id"]
        or a["user_vertex"] != b["user_vertex"]
        or set(a["tokens"]) & set(b["tokens"])
    ):
        raise SystemExit(
            f"expected the same target user at the same vertex id and distinct tokens, got {built}"
        )
    same_layout = sum(1 for i, labels in layouts["a"].items() if layouts["b"].get(i) == labels)

    today = (a["last_time"] + timedelta(days=30)).date().isoformat()
    caller = Caller(runtime, a["user_id"], {"embedding_model": model}, today)
    caller.call("bare", WARMUP_DATABASE, "model warm-up")  # loads the model (and that database's directory)
    torch.set_num_threads(1)
    encoder = SentenceTransformer(str(model_folder(model)), device="cpu")
    asked = questions(seed, calls + 1)
    given = {q: {"query_vector": encoder.encode([q], normalize_embeddings=True)[0].tolist()} for q in asked}
    first_question, asked = asked[0], asked[1:]

    firsts = {form: first_calls(caller, form, first_question) for form in FORMS}
    samples = {(form, kind): [] for form in FORMS for kind in SERIES}
    caches = {(form, kind): Counter() for form in FORMS for kind in SERIES}
    plans = {kind: series_calls(kind, asked, given) for kind in SERIES}
    for number in range(rounds):
        for form in FORMS:
            caller.fresh(form, first_question)
            for start in range(0, calls, block):  # the two series interleaved block by block
                turn = (number + start // block) % 2
                for kind in SERIES if turn == 0 else SERIES[::-1]:
                    before = caller.cache_counters()
                    for database, question, extra in plans[kind][start : start + block]:
                        samples[form, kind].append(caller.timed(form, database, question, extra))
                    caches[form, kind] += caller.cache_counters() - before
    results = {}
    for form in FORMS:
        results[form] = {}
        for kind in SERIES:
            caller.fresh(form, first_question)
            counted = caller.counted(form, plans[kind])
            results[form][kind] = summary(samples[form, kind], rounds, counted, caches[form, kind])
        results[form]["ratio"] = ratios(results[form]["single"], results[form]["alternating"])
    for database in built.values():
        database["last_time"] = database["last_time"].isoformat()
    return {
        "databases": built,
        "same_layout_vertices": same_layout,
        "first_calls": firsts,
        "series": results,
        "block": block,
        "peak_rss_mb": peak_rss_mb(),
        "load": [load_start, load_average()],
    }


def done(counters: dict) -> str:
    """A cache-counter delta as text."""
    return ", ".join(f"{k} {v}" for k, v in sorted(counters.items()) if v) or "nothing"


def report(out_dir: Path, info: dict, figures: dict) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    dbs = figures["databases"]
    a = dbs["a"]
    setup = [
        [
            name,
            d["seed"],
            ", ".join(d["tokens"]),
            f"{d['messages']:,}",
            f"{d['vertices']:,}",
            f"{d['edges']:,}",
            d["user_vertex"],
        ]
        for name, d in dbs.items()
    ]
    first_rows = []
    for form, per_db in figures["first_calls"].items():
        for database, kinds in per_db.items():
            for kind, f in kinds.items():
                cache = done(f["cache"])
                first_rows.append(
                    [
                        FORM_NAMES[form],
                        database,
                        "first call (fresh module state)" if kind == "first" else "cold, database known",
                        f["wall_ms"],
                        f["cpu_ms"],
                        cache,
                        *(f"{f['api_calls'][k]:,}" for k in API_KINDS),
                    ]
                )
    series_rows, ratio_rows = [], []
    for form in FORMS:
        for kind in SERIES:
            s = figures["series"][form][kind]
            cache = f"{done(s['cache'])} (counted: {done(s['counted_cache'])})"
            series_rows.append(
                [
                    FORM_NAMES[form],
                    SERIES_NAMES[kind],
                    s["calls"],
                    s["total_ms"],
                    s["median_ms"],
                    s["cpu_total_ms"],
                    s["cpu_median_ms"],
                    s["collector_total_ms"],
                    s["max_ms"],
                    cache,
                    *(f"{s['api_per_call'][k]:,}" for k in API_KINDS),
                    s["prelude_per_call"]["edges"] if form == "fast" else "-",
                ]
            )
        r = figures["series"][form]["ratio"]
        ratio_rows.append(
            [
                FORM_NAMES[form],
                *(
                    f"{r[k]}x"
                    for k in ("api calls per call", "total wall", "median wall", "total CPU", "median CPU")
                ),
                "yes" if r["met"] else "**no**",
            ]
        )
    calls = figures["series"]["bare"]["single"]["calls"]
    rounds = figures["series"]["bare"]["single"]["rounds"]
    lines = [
        "# Two databases in one instance: alternating calls (issue #18)",
        "",
        "**Embedded-runtime figures** (the in-process stand-in for Memgraph's procedure host), **not "
        "Memgraph's**. Times in ms. One `Runtime` hosts databases `a` and `b` (module state shared, as "
        "in a Memgraph instance), each a synthetic graph from the same spec with another seed: the same "
        f"user_ids built in the same order, the target User at vertex {a['user_vertex']} in both, other "
        "texts and vectors, each its own RecallMeta token; `setup_store` created each one's indexes. "
        f"{figures['same_layout_vertices']:,} of a's {a['vertices']:,} vertex ids hold a vertex of the same "
        "labels (and user_id) in b: the session lengths, drawn from the seed, shift the ids after the first "
        "sessions. A third, small database loaded the model before any timed call.",
        "",
        *provenance_lines(info),
        f"- Load average (1 min) at the start and end: {figures['load'][0]:.2f} -> {figures['load'][1]:.2f}; "
        f"peak RSS {figures['peak_rss_mb']} MB.",
        "",
        markdown_table(
            [
                "database",
                "seed",
                "RecallMeta token",
                "target user's messages",
                "vertices",
                "edges",
                "target User vertex id",
            ],
            setup,
        ),
        "",
        "## The bar",
        "",
        f"{calls} warm calls alternating a, b, a, b, ... against the same {calls} calls to a only (the same "
        f"questions in the same order, `query_vector` given), {rounds} round(s), the two series interleaved "
        f"in blocks of {figures['block']} calls (which goes first alternating block by block), so that the "
        "machine's drift falls on both alike. Ratio alternating / a only; the bar "
        f"({BAR}x) is checked on API calls per call and on the total wall time.",
        "",
        markdown_table(
            [
                "call form",
                "API calls per call",
                "total wall",
                "median wall",
                "total CPU",
                "median CPU",
                f"<= {BAR}x (API calls and total wall)",
            ],
            ratio_rows,
        ),
        "",
        "## The series",
        "",
        "Total: the sum over one round's calls (median over the rounds); median: over every call of every "
        "round; CPU: the calling thread's; collector: the time Python's cyclic collector ran inside the "
        "calls (`gc.callbacks`), per round. API calls per call: from a separate pass of the same calls with "
        "`ApiCounts` (`arguments` included: the given `query_vector`, and the fast shape's signature lists). "
        "`cache`: the module's counters over the timed calls, and over the counted pass (every call should "
        "be a hit: both entries are built afresh before each series and each pass, so none pays the "
        "cache's max-age re-read, which would fall on whichever series runs a minute later).",
        "",
        markdown_table(
            [
                "call form",
                "series",
                "calls",
                "total wall",
                "median wall",
                "total CPU",
                "median CPU",
                "collector (total)",
                "slowest call",
                "cache",
                *(f"{k} per call" for k in API_KINDS),
                "prelude edges per call",
            ],
            series_rows,
        ),
        "",
        "## The first call in each database",
        "",
        "The first call after `CALL recall.invalidate()` in that database (its directory and entries "
        "dropped): one full pass over the database's vertices, then the user's cold build. Beside it, a cold "
        "call after `recall.invalidate($user)`, which keeps the directory: the difference is the pass. API "
        "calls from a separate call of the same kind.",
        "",
        markdown_table(["call form", "database", "call", "wall", "CPU", "cache", *API_KINDS], first_rows),
        "",
    ]
    (out_dir / "README.md").write_text("\n".join(lines))
    (out_dir / "details.json").write_text(json.dumps({"provenance": info, **figures}, indent=1))


def headline(figures: dict) -> dict:
    out = {}
    for form in FORMS:
        s = figures["series"][form]
        out[form] = {
            **{
                kind: {k: s[kind][k] for k in ("total_ms", "median_ms", "cpu_total_ms", "cpu_median_ms")}
                | {"api_calls_per_call": s[kind]["api_per_call"]["total"]}
                for kind in SERIES
            },
            "ratio": s["ratio"],
            "first_call_ms": {db: f["first"]["wall_ms"] for db, f in figures["first_calls"][form].items()},
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--messages", type=int, default=10_000, help="the target user's messages per database"
    )
    parser.add_argument("--calls", type=int, default=100, help="warm calls per series (even, >= 2)")
    parser.add_argument("--rounds", type=int, default=2, help="times each series runs (>= 1)")
    parser.add_argument(
        "--block",
        type=int,
        default=10,
        help="the series run interleaved, this many calls of one then of the other (even, divides --calls)",
    )
    parser.add_argument("--seed", type=int, default=0, help="database a's seed; b's is seed + 1")
    parser.add_argument(
        "--results",
        type=Path,
        default=ROOT / "results" / "databases",
        help="folder for the report (default results/databases)",
    )
    parser.add_argument("--json", type=Path, help="write the headline figures here")
    args = parser.parse_args(argv)
    if args.messages < 100:
        parser.error(f"--messages: expected an integer >= 100, got {args.messages}")
    if args.calls < 2 or args.calls % 2:
        parser.error(f"--calls: expected an even integer >= 2, got {args.calls}")
    if args.rounds < 1:
        parser.error(f"--rounds: expected an integer >= 1, got {args.rounds}")
    if args.block < 2 or args.block % 2 or args.calls % args.block:
        parser.error(f"--block: expected an even integer >= 2 dividing --calls, got {args.block}")
    info = provenance(sys.argv if argv is None else ["scripts/bench_databases.py", *argv])
    for (
        name
    ) in BLAS_THREAD_VARIABLES:  # one BLAS thread, as bench_scale's children (if numpy is not loaded yet)
        os.environ.setdefault(name, "1")
    figures = measure(args.messages, args.calls, args.rounds, args.seed, args.block)
    report(args.results, info, figures)
    if args.json:
        args.json.write_text(json.dumps(headline(figures), indent=1))
    for form in FORMS:
        r = figures["series"][form]["ratio"]
        print(
            f"{form}: alternating / a only: API calls {r['api calls per call']}x, "
            f"total wall {r['total wall']}x, total CPU {r['total CPU']}x "
            f"({'within' if r['met'] else 'above'} {BAR}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
