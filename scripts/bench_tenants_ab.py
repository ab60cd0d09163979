"""In-process A/B of bench_tenants.py's mixed workload: this checkout's query modules against another
checkout's (`--baseline`), both over ONE graph store in one process, each planned call made by both.

Why: separate processes run minutes apart on a shared machine, and its drift (a 2x swing in an hour
here) is as large as the differences asked about. Here every call of the plan (bench_tenants'
`mixed_plan`: calls over a warmed pool of users, ~10% right after that user wrote a session, ~2%
unknown user_ids) is made by one version and then the other, the order alternated, so both see the
same graph, the same writes and the same moment of the machine. Times are the calling thread's CPU
per call (what one core per instance pays); wall beside it. Both versions run on this checkout's
embedded runtime and client (the fast shape's prelude); each keeps its own module state.

For each users x form: p50 / p95 / p99 and mean CPU per version and their ratios, and by kind of
call (a cached user, a user who just wrote a session, an unknown user_id). One process per case, so
peak memory and module state are the case's own. Run alone, as every timing here:

    python scripts/bench_tenants_ab.py --baseline ../parent/query_modules --users 40,400
"""

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from bench_common import (
    ROOT,
    configure_model,
    load_average,
    markdown_table,
    modules_of,
    percentile,
    provenance,
    provenance_lines,
    runtime_of,
)
from bench_tenants import (
    FORMS,
    MAX_AGE,
    QUESTIONS,
    Tenants,
    environment,
    latest_message,
    mixed_plan,
    question_vectors,
    warm_up,
)

VERSIONS = ("this", "baseline")
KINDS = ("call", "write", "unknown")
#: First calls after the max age timed per version (then one counted); even, so that each version goes
#: first after the pause equally often (a call right after the pause pays ~20% more: cold caches).
AGED_SAMPLES = 16


def in_turn(number: int) -> tuple[str, ...]:
    """The order the two versions make call `number` in: this checkout first when it is even (what
    `by_position` reads back)."""
    return VERSIONS if number % 2 == 0 else VERSIONS[::-1]


def side_by_side(this: Path, baseline: Path):
    """Two runtimes, one per query_modules folder, the second serving the first's default store.
    recall_lib is imported once per process by name, so the first tree's helpers are dropped from
    `sys.modules` (the loaded module keeps its own references) before the second tree loads."""
    first = runtime_of(this)
    for name in [n for n in sys.modules if n == "recall_lib" or n.startswith("recall_lib.")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if Path(p).resolve() != this.resolve()]
    second = runtime_of(baseline)
    second.store = first.store
    if first.modules["recall"].CACHE is second.modules["recall"].CACHE:
        raise SystemExit("both versions share one module state: the A/B would measure one version")
    return first, second


def one_case(users: int, form: str, calls: int, baseline: Path, configs: dict[str, dict], seed: int,
             messages: int = 500, max_age: float = MAX_AGE, aged_samples: int = AGED_SAMPLES) -> dict:
    """Both versions over one graph of `users` x `messages`: the mixed plan, each call by both."""
    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets.synthetic import SyntheticSpec, build, questions

    model = configure_model()
    data = build(SyntheticSpec(messages=messages, seed=seed, other_users=users - 1, others_factor=users - 1))
    latest = latest_message(data.elements)
    with environment(RECALL_CACHE_MAX_AGE=repr(max_age)):
        runtimes = dict(zip(VERSIONS, side_by_side(ROOT / "query_modules", baseline), strict=True))
    for runtime in runtimes.values():
        if runtime.modules["recall"].CACHE.settings.max_age != max_age:
            raise SystemExit(f"a version runs without the max age {max_age}")
    runtimes["this"].load_elements(data.elements)
    setup_store(runtimes["this"].store)
    data.elements = []
    today = (latest + timedelta(days=365)).date().isoformat()
    asked = questions(seed, QUESTIONS)
    _, vectors = question_vectors(model, tuple(asked))
    for runtime in runtimes.values():
        warm_up(runtime, model, seed, vectors[asked[0]], today)
    benches = {v: Tenants(runtimes[v], data, form, model, vectors, today, latest, configs[v])
               for v in VERSIONS}
    pool = [data.user_id, *data.other_user_ids][:min(32, users)]
    # Both versions' first call of each user side by side, the order alternated: neither version's
    # rolling check starts with a longer pause behind it than the other's.
    for number, user_id in enumerate(pool):
        for version in in_turn(number):
            if not benches[version].call(user_id):
                raise SystemExit(f"{user_id}: no rows from a known user, the A/B would time nothing")
    gc.collect()
    cpu = {v: {k: [] for k in KINDS} for v in VERSIONS}
    wall = {v: [] for v in VERSIONS}
    for number, (kind, user_id) in enumerate(mixed_plan(pool, calls, seed)):
        if kind == "write":
            benches["this"].write_session(user_id)  # one store: both versions see the write
        for version in in_turn(number):
            bench = benches[version]
            bench.asked = number  # the same question for both
            start_wall, start_cpu = time.perf_counter(), time.thread_time()
            bench.call(user_id)
            cpu[version][kind].append(1000 * (time.thread_time() - start_cpu))
            wall[version].append(1000 * (time.perf_counter() - start_wall))
    aged, aged_api = after_max_age(benches, pool, max_age, aged_samples)
    return {"users": users, "messages": messages, "form": form, "calls": calls, "cpu": cpu, "wall": wall,
            "after_max_age_cpu": aged, "after_max_age_api": aged_api}


def after_max_age(
    benches: dict, pool: list[str], max_age: float, samples: int = AGED_SAMPLES
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Issue #48's first bar: a user's first call after a pause longer than the max age, each version's
    (the order alternated), CPU ms; then one such call of each counted (procedure-API calls)."""
    from memgraph_recall.embedded import ApiCounts

    cpu, api = {v: [] for v in VERSIONS}, {}
    for number in range(samples + 1):
        user_id = pool[number % len(pool)]
        for bench in benches.values():
            bench.call(user_id)  # current in both, so the pause alone makes the next call renew
        time.sleep(max_age + min(0.25, max_age))
        for version in in_turn(number):
            bench = benches[version]
            if number < samples:
                start = time.thread_time()
                bench.call(user_id)
                cpu[version].append(1000 * (time.thread_time() - start))
            else:
                counts = ApiCounts()
                bench.call(user_id, api_counts=counts)
                api[version] = counts.total
    return cpu, api


def figures(values: list[float]) -> dict[str, float]:
    return {"p50": percentile(values, 0.50), "p95": percentile(values, 0.95), "p99": percentile(values, 0.99),
            "mean": statistics.fmean(values)}


def rows_of(case: dict) -> list[list]:
    """One row per version and a ratio row: all calls' CPU figures, then each kind's p95."""
    got = {v: figures([x for k in KINDS for x in case["cpu"][v][k]]) for v in VERSIONS}
    kinds = {v: {k: percentile(case["cpu"][v][k], 0.95) for k in KINDS if case["cpu"][v][k]}
             for v in VERSIONS}
    walls = {v: percentile(case["wall"][v], 0.95) for v in VERSIONS}
    rows = [[case["form"], case["users"], v, *(round(got[v][f], 2) for f in ("p50", "p95", "p99", "mean")),
             round(walls[v], 2), *(round(kinds[v].get(k, 0.0), 2) for k in KINDS)] for v in VERSIONS]
    ratio = [round(a / b, 3) if b else None for a, b in zip(rows[0][3:], rows[1][3:], strict=True)]
    rows.append([case["form"], case["users"], "ratio", *(f"{r:.3f}x" for r in ratio)])
    return rows


def by_position(samples: dict[str, list[float]]) -> dict[str, tuple[float, float]]:
    """Each version's median CPU of the first call after the max age when it ran first after the pause
    (sample 0, 2, ... for this checkout; 1, 3, ... for the baseline) and when it ran second."""
    medians = {}
    for number, version in enumerate(VERSIONS):
        values = samples[version]
        first, second = values[number::2], values[1 - number::2]
        medians[version] = (statistics.median(first), statistics.median(second))
    return medians


def aged_row(case: dict) -> list:
    """The first call after the max age: each version's CPU (the mean of its two positions' medians,
    so that neither gains from going second more often) and API calls, and their ratios."""
    return [case["form"], case["users"], *paired_cells(case["after_max_age_cpu"], case["after_max_age_api"])]


def paired_cells(cpu: dict[str, list[float]], api: dict[str, int], digits: int = 2) -> list:
    """Each version's CPU ms (the mean of its medians as first and as second, `by_position`), their
    ratio, each position's ratio, and each version's procedure-API calls with their ratio."""
    positions = by_position(cpu)
    ms = {v: statistics.fmean(positions[v]) for v in VERSIONS}
    return [round(ms["this"], digits), round(ms["baseline"], digits), f"{ms['this'] / ms['baseline']:.3f}x",
            *(f"{a / b:.3f}x" for a, b in zip(positions["this"], positions["baseline"], strict=True)),
            api["this"], api["baseline"], f"{api['this'] / api['baseline']:.3f}x"]


def report(folder: Path, info: dict, cases: list[dict], args: argparse.Namespace) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "runs.jsonl").open("a") as out:
        for case in cases:
            out.write(json.dumps({**info, "case": case}) + "\n")
    headers = ["form", "users", "version", "p50 CPU ms", "p95", "p99", "mean", "p95 wall ms",
               "p95 cached user", "p95 after a written session", "p95 unknown user"]
    lines = [
        "# Mixed workload, in-process A/B", "",
        "Embedded runtime; both versions' query modules over one store in one process, each planned call "
        "made by both (order alternated); CPU of the calling thread per call (see the script's docstring). "
        f"{args.calls} calls per case, `RECALL_CACHE_MAX_AGE` = {args.max_age} s, {args.messages} synthetic "
        "messages a user.",
        "", *provenance_lines(info), f"- This checkout's modules: {info['this']['modules_commit']}, config "
        f"`{json.dumps(args.config)}`", f"- Baseline modules: {info['baseline']['modules']} at "
        f"{info['baseline']['modules_commit']}, config `{json.dumps(args.baseline_config)}`",
        f"- Machine load (1-minute load average, 2 cores): {info['load_before']} before, "
        f"{info['load_after']} after",
        "",
        markdown_table(headers, [row for case in cases for row in rows_of(case)]), "",
        f"The first call after a pause longer than the max age (issue #48): {args.aged_samples} per version, "
        "each version first after the pause in half of them (a call right after the pause pays more: cold "
        "caches); CPU is the mean of a version's median as first and its median as second, with the "
        "ratios of those positions' medians beside it; and one such call's procedure-API calls.", "",
        markdown_table(["form", "users", "this ms", "baseline ms", "ratio", "ratio, each first",
                        "ratio, each second", "this API calls", "baseline API calls", "ratio"],
                       [aged_row(case) for case in cases]), "",
    ]
    (folder / "README.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True,
                        help="the other checkout's query_modules folder")
    parser.add_argument("--users", default="40,400", help="users per graph, comma-separated (default 40,400)")
    parser.add_argument("--forms", default=",".join(FORMS), help=f"call forms (default {','.join(FORMS)})")
    parser.add_argument("--calls", type=int, default=400, help="planned calls per case (default 400)")
    parser.add_argument("--messages", type=int, default=500, help="messages per user (default 500)")
    parser.add_argument("--max-age", type=float, default=MAX_AGE,
                        help=f"RECALL_CACHE_MAX_AGE in seconds (default {MAX_AGE}, as bench_tenants)")
    parser.add_argument("--aged-samples", type=int, default=AGED_SAMPLES,
                        help=f"first calls after the max age timed per version (default {AGED_SAMPLES})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", type=json.loads, default={}, help="render keys for this checkout's calls")
    parser.add_argument("--baseline-config", type=json.loads, default=None,
                        help="render keys for the baseline's calls (default: --config)")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "tenants-ab")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline_config is None:
        args.baseline_config = args.config
    if not (args.baseline / "recall.py").is_file():
        raise SystemExit(f"--baseline: expected a query_modules folder with recall.py, got {args.baseline}")
    forms = args.forms.split(",")
    if unknown := [f for f in forms if f not in FORMS]:
        raise SystemExit(f"--forms: expected some of {FORMS}, got {unknown}")
    try:
        sizes = [int(u) for u in args.users.split(",")]
    except ValueError:
        raise SystemExit(f"--users: expected comma-separated integers, got {args.users!r}") from None
    if args.max_age <= 0:
        raise SystemExit(f"--max-age: expected seconds > 0, got {args.max_age}")
    if min(sizes) < 2 or args.calls < 20 or args.messages < 10:
        raise SystemExit("--users: at least 2 users; --calls: at least 20; --messages: at least 10")
    if args.aged_samples < 2 or args.aged_samples % 2:
        raise SystemExit(f"--aged-samples: expected an even number >= 2, got {args.aged_samples}")
    configs = {"this": args.config, "baseline": args.baseline_config}
    if args.one:
        users, form = args.one.split(":")
        case = one_case(int(users), form, args.calls, args.baseline, configs, args.seed, args.messages,
                        args.max_age, args.aged_samples)
        print(json.dumps(case))
        return 0
    cases, load_before = [], load_average()
    for users in sizes:
        for form in forms:  # a process per case: its own memory and module state
            command = [sys.executable, __file__, *(argv if argv is not None else sys.argv[1:]),
                       "--one", f"{users}:{form}"]
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            cases.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(markdown_table(["form", "users", "version", "p50", "p95", "p99", "mean", "wall p95",
                                  "cached", "wrote", "unknown"], rows_of(cases[-1])), flush=True)
            print("after the max age:", aged_row(cases[-1]), flush=True)
    info = {**provenance(sys.argv if argv is None else [__file__, *argv]),
            "this": modules_of(ROOT / "query_modules"), "baseline": modules_of(args.baseline),
            "load_before": load_before, "load_after": load_average()}
    report(args.results, info, cases, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
