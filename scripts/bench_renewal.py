#!/usr/bin/env python
"""What renewing a cached user costs (issue #48): a call that renews against a warm call, same user.

One synthetic user (`--messages`, three other users beside it), two embedded runtimes over the same
graph: one with `RECALL_CACHE_MAX_AGE` so long that no call renews (warm), one with it so short that
every call renews the whole user, as the first call after a pause longer than the maximum age does (the
rolling check reads every unit; `docs/cache.md`). Rounds alternate between the two, each of `--calls`
calls cycling through the benchmark questions with `query_vector` given; the renewal's cost is the
difference of the two medians. Both call forms (the string form and the client's fast shape), with
procedure-API calls counted on separate calls. Embedded-runtime figures, not Memgraph's: real `mgp.py`
costs about twice the stand-in per API call.

    python scripts/bench_renewal.py
    PYTHONPATH=/tmp/before/client python scripts/bench_renewal.py --modules /tmp/before/query_modules
"""

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench_common import ROOT, configure_model, emit, modules_of, ms, provenance, runtime_of
from bench_tenants import QUESTIONS, question_vectors

#: Maximum ages (seconds): one no benchmark outlives, one every call exceeds.
NEVER, ALWAYS = 1e9, 1e-9
MAX_AGE = "RECALL_CACHE_MAX_AGE"
TODAY = "2024-06-01"


def render(runtime, form: str, user_id: str, rest: tuple, counts=None) -> None:
    """One `recall.render` in the string form or the client's fast shape (its Cypher prelude)."""
    if form == "fast":
        from memgraph_recall.embedded.prelude import call_prelude

        runtime.call("recall.render", user_id, *rest, prelude=call_prelude(user_id, rest), api_counts=counts)
    else:
        runtime.call("recall.render", user_id, *rest, api_counts=counts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds per form (default 6)")
    parser.add_argument("--calls", type=int, default=40, help="calls per round (default 40)")
    parser.add_argument("--config", type=json.loads, default={}, help="a JSON config map added to each call")
    parser.add_argument("--modules", type=Path, default=ROOT / "query_modules",
                        help="the query_modules folder to time (default this checkout's)")
    parser.add_argument("--json", type=Path, help="append the figures to this JSON-lines file")
    args = parser.parse_args(argv)
    if args.messages < 1 or args.rounds < 1 or args.calls < 1:
        parser.error("--messages, --rounds and --calls must be at least 1")
    if not isinstance(args.config, dict):
        parser.error(f"--config must be a JSON map, got {args.config!r}")

    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets.synthetic import SyntheticSpec, build, questions
    from memgraph_recall.embedded import ApiCounts

    model = configure_model()
    data = build(SyntheticSpec(messages=args.messages, seed=0, other_users=3, others_factor=3))
    asked = questions(0, QUESTIONS)
    _, vectors = question_vectors(model, tuple(asked))

    def runtime(max_age: float):
        before = os.environ.get(MAX_AGE)
        os.environ[MAX_AGE] = repr(max_age)  # read when the module loads
        try:
            loaded = runtime_of(args.modules)
        finally:  # as it was: the setting is this runtime's, not the process's
            if before is None:
                os.environ.pop(MAX_AGE, None)
            else:
                os.environ[MAX_AGE] = before
        loaded.load_elements(data.elements)
        setup_store(loaded.store)
        return loaded

    runtimes = {"warm": runtime(NEVER), "renewing": runtime(ALWAYS)}
    figures: dict[str, dict] = {}
    for form in ("string", "fast"):
        def call(target, number: int, counts=None, form=form) -> None:
            question = asked[number % len(asked)]
            config = {**args.config, "embedding_model": model, "query_vector": vectors[question]}
            render(target, form, data.user_id, (question, TODAY, config), counts)

        for target in runtimes.values():  # cached, model loaded, every question seen once
            for number in range(len(asked)):
                call(target, number)
        rounds: dict[str, list[float]] = {name: [] for name in runtimes}
        for _ in range(args.rounds):
            for name, target in runtimes.items():
                start = time.perf_counter()
                for number in range(args.calls):
                    call(target, number)
                rounds[name].append((time.perf_counter() - start) / args.calls)
        api = {}
        for name, target in runtimes.items():
            counts = ApiCounts()
            call(target, 0, counts)
            api[name] = counts.total
        warm, renewing = (statistics.median(rounds[name]) for name in runtimes)
        figures[form] = {
            "warm_ms": ms(warm), "renewing_ms": ms(renewing), "renewal_ms": ms(renewing - warm),
            "warm_api": api["warm"], "renewing_api": api["renewing"],
            "renewal_api": api["renewing"] - api["warm"],
            "renewal_api_per_message": round((api["renewing"] - api["warm"]) / args.messages, 2),
            "rounds_ms": {name: [ms(v) for v in values] for name, values in rounds.items()},
        }
    result = {**modules_of(args.modules), "messages": args.messages, "calls_per_round": args.calls,
              "config": args.config, **figures, **provenance(sys.argv)}
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
