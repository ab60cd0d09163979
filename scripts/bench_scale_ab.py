#!/usr/bin/env python
"""Scale A/B: bench_scale's phases for one large user, this checkout's query modules against another
checkout's (`--baseline`), both over ONE graph store in one process, each phase's call made by both.

Why not two bench_scale runs: at 100k messages a build takes seconds and two processes built minutes
apart meet different machine load and heap layouts (their cold medians moved 8-14% between rounds of
one pair). Here every sample is a pair of calls on the same graph a moment apart, the order alternated
(`bench_tenants_ab.in_turn`), with an even number of samples, so each version goes first equally often;
the collector is paused around each timed call (a full collection over the stand-in's graph takes
~0.7 s at 100k, landing in one build in four) and run before the settling calls of each pair that
builds (cold, after a deletion), never between the two calls of a pair. Calls follow each other as
in bench_scale: the rolling check's share of a call grows with the time since the user's last call
(at 100k messages ~25,000 procedure-API calls' worth a second, up to `RECALL_CACHE_CHECK_READS`), so
pairs spaced by a collection would measure a user calling once a second, not a warm call.

The graph is bench_scale's (`SyntheticSpec(messages=size, seed=seed)`: the user among others holding
as many messages again), with the indexes `memgraph-recall setup` creates. Phases, per call form
(bare string form, fast call shape), each sample a pair of calls:
- cold: the first call after `recall.invalidate` (each version's own);
- warm: a repeated call with a new question (embedding included);
- refresh: the first call after one new session was written (one session a pair);
- after a deletion: the first call after one of the user's sessions was deleted (one deletion a pair);
- past the max age: the first call after each version's cache clock moved one maximum age ahead.
`--samples` pairs of each building phase (cold, after a deletion), `--call-samples` of the others.
Figures: the calling thread's CPU per call (in Memgraph the GIL is held for a whole Python procedure
call: CPU per call is the throughput an instance gets), the mean of each version's median as first and
as second of its pair, those positions' ratios, and one counted call's procedure-API calls. Measured
in a child process (both versions' helper packages are loaded into it). Embedded runtime figures,
not Memgraph's.

    python scripts/bench_scale_ab.py --baseline ../parent/query_modules --size 100000
"""

import argparse
import gc
import itertools
import json
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (  # noqa: E402
    ROOT,
    CollectorClock,
    configure_model,
    load_average,
    markdown_table,
    modules_of,
    provenance,
    provenance_lines,
)
from bench_scale import FORM_NAMES, FORMS, Bench, aged_clock, delete_session, write_session  # noqa: E402
from bench_tenants_ab import VERSIONS, in_turn, paired_cells, side_by_side  # noqa: E402

#: bench_scale's order: the warm and refresh pairs follow the cold builds within the maximum age, as a
#: user's calls after its first would; past it, every unit is due and each call reads up to the cap.
PHASES = ("cold", "warm", "refresh", "forget", "renew")
#: Phases whose pairs build the user again: the collector runs before them (the builds leave garbage).
BUILDS = ("cold", "forget")
PHASE_NAMES = {"cold": "cold", "forget": "after a deletion", "refresh": "refresh", "warm": "warm",
               "renew": "past the max age"}
SAMPLES = 8
#: Pairs of the calls that build nothing (warm, refresh, past the max age): cheap, so more of them.
CALL_SAMPLES = 32


def paused_cpu_ms(call: Callable[[], object]) -> float:
    """The calling thread's CPU in `call`, the collector paused (`Pair.before` runs it between pairs)."""
    gc.disable()
    try:
        start = time.thread_time()
        call()
        return 1000 * (time.thread_time() - start)
    finally:
        gc.enable()


class Pair:
    """One call form's two benches (one per version) and what happens before each phase's pair."""

    def __init__(self, benches: dict[str, Bench], runtimes: dict, data, questions: list[str],
                 numbers: itertools.count) -> None:
        """`numbers`: shared by both forms' pairs, so each writes a new session and deletes another."""
        self.benches, self.runtimes, self.data = benches, runtimes, data
        self.questions = itertools.cycle(questions)
        self.ages = {v: aged_clock(runtimes[v]) for v in VERSIONS}
        self.numbers = numbers

    def before(self, phase: str) -> Callable[[str], None]:
        """Prepare the store for one pair of `phase` calls; returns what to do before each version's."""
        runtime = self.runtimes["this"]  # one store: both versions see a write
        if phase in BUILDS:
            gc.collect()  # before the settling calls: a pair's calls follow them at once
        for bench in self.benches.values():
            bench.render("what is new?")  # current, so that only the phase's change is paid
        if phase == "forget":
            delete_session(runtime, self.data, next(self.numbers))
        elif phase == "refresh":
            write_session(runtime, self.data, next(self.numbers))
        elif phase == "renew":
            for age in self.ages.values():
                age()
        if phase == "cold":
            return lambda version: self.benches[version].invalidate()
        return lambda version: None

    def sample(self, phase: str, number: int) -> dict[str, float]:
        each = self.before(phase)
        question = next(self.questions)
        cpu = {}
        for version in in_turn(number):
            each(version)
            cpu[version] = paused_cpu_ms(lambda v=version: self.benches[v].render(question))
        return cpu

    def api_calls(self, phase: str) -> dict[str, int]:
        each = self.before(phase)
        question = next(self.questions)
        counted = {}
        for version in VERSIONS:
            each(version)
            counted[version] = self.benches[version].api_calls(question)[0]["total"]
        return counted


def measure(size: int, baseline: Path, samples: int, seed: int, call_samples: int = CALL_SAMPLES) -> dict:
    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets.synthetic import SyntheticSpec, build, questions

    model = configure_model()
    data = build(SyntheticSpec(messages=size, seed=seed))
    runtimes = dict(zip(VERSIONS, side_by_side(ROOT / "query_modules", baseline), strict=True))
    runtimes["this"].load_elements(data.elements)
    setup_store(runtimes["this"].store)
    data.elements = []
    gc.collect()
    today = (data.last_time + timedelta(days=30)).date().isoformat()
    config, clock = {"embedding_model": model}, CollectorClock()
    for runtime in runtimes.values():  # the model, and the database's directory, on another user
        runtime.call("recall.render", data.other_user_ids[0], "model warm-up", today, config)
    asked, numbers = questions(seed, 64), itertools.count()
    pairs = {form: Pair({v: Bench(runtimes[v], data, config, today, form, clock) for v in VERSIONS},
                        runtimes, data, asked, numbers) for form in FORMS}
    cpu = {form: {phase: {v: [] for v in VERSIONS} for phase in PHASES} for form in FORMS}
    api = {form: {} for form in FORMS}
    for phase in PHASES:
        for number in range(samples if phase in BUILDS else call_samples):
            for form in FORMS:
                for version, value in pairs[form].sample(phase, number).items():
                    cpu[form][phase][version].append(value)
        for form in FORMS:
            api[form][phase] = pairs[form].api_calls(phase)
    clock.close()
    return {"size": size, "samples": samples, "call_samples": call_samples, "cpu": cpu, "api": api}


def phase_row(form: str, phase: str, cpu: dict[str, list[float]], api: dict[str, int]) -> list:
    return [FORM_NAMES[form], PHASE_NAMES[phase], *paired_cells(cpu, api, digits=1)]


def report(folder: Path, info: dict, result: dict) -> list[list]:
    rows = [phase_row(form, phase, result["cpu"][form][phase], result["api"][form][phase])
            for form in FORMS for phase in PHASES]
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "runs.jsonl").open("a") as out:
        out.write(json.dumps({**info, "result": result}) + "\n")
    lines = [
        "# One large user, in-process A/B", "",
        f"Embedded runtime; {result['size']:,} messages for the user (bench_scale's graph); both versions' "
        "query modules over one store in one process, each sample a pair of calls (order alternated, "
        f"{result['samples']} pairs a phase and form for the builds, {result['call_samples']} for the other "
        "calls); CPU of the calling thread per call, the collector "
        "paused around it (see the script's docstring).", "",
        *provenance_lines(info),
        f"- This checkout's modules: {info['this']['modules_commit']}",
        f"- Baseline modules: {info['baseline']['modules']} at {info['baseline']['modules_commit']}",
        f"- Machine load (1-minute load average, 2 cores): {info['load_before']} before, "
        f"{info['load_after']} after", "",
        "CPU ms is the mean of a version's median as first of its pair and its median as second; the "
        "ratios of those positions' medians beside it; API calls: one counted call of each.", "",
        markdown_table(["form", "phase", "this ms", "baseline ms", "ratio", "ratio, each first",
                        "ratio, each second", "this API calls", "baseline API calls", "ratio"], rows), "",
    ]
    (folder / "README.md").write_text("\n".join(lines))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True,
                        help="the other checkout's query_modules folder")
    parser.add_argument("--size", type=int, default=100_000, help="the user's messages (default 100000)")
    parser.add_argument("--samples", type=int, default=SAMPLES,
                        help=f"pairs of building calls (cold, after a deletion) per phase and form, even "
                             f"(default {SAMPLES})")
    parser.add_argument("--call-samples", type=int, default=CALL_SAMPLES,
                        help=f"pairs of the other calls per phase and form, even (default {CALL_SAMPLES})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "scale-ab")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not (args.baseline / "recall.py").is_file():
        raise SystemExit(f"--baseline: expected a query_modules folder with recall.py, got {args.baseline}")
    if args.size < 100:
        raise SystemExit(f"--size: expected at least 100 messages, got {args.size}")
    for name, value in (("--samples", args.samples), ("--call-samples", args.call_samples)):
        if value < 2 or value % 2:
            raise SystemExit(f"{name}: expected an even number >= 2, got {value}")
    if args.one:  # the measuring process: both versions' modules loaded into it, its own memory
        print(json.dumps(measure(args.size, args.baseline, args.samples, args.seed, args.call_samples)))
        return 0
    load_before = load_average()
    command = [sys.executable, __file__, *(argv if argv is not None else sys.argv[1:]), "--one"]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    info = {**provenance(sys.argv if argv is None else [__file__, *argv]),
            "this": modules_of(ROOT / "query_modules"), "baseline": modules_of(args.baseline),
            "load_before": load_before, "load_after": load_average()}
    rows = report(args.results, info, result)
    print(markdown_table(["form", "phase", "this", "baseline", "ratio", "first", "second", "api this",
                          "api base", "ratio"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
