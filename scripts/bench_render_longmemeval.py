#!/usr/bin/env python
"""First (cold) and second (warm) `recall.render` time per LongMemEval question, for this checkout's
query modules or another's.

Issue #22 bounds the ranking's cost on LongMemEval: the first call per question at most 1.25x the code
before it. The machine's speed drifts, so run both checkouts alternately in the same hour:

    git worktree add /tmp/before 9926c72
    python scripts/bench_render_longmemeval.py --data ../shared/data/longmemeval/longmemeval_s_dev.json \\
        --modules /tmp/before/query_modules
    python scripts/bench_render_longmemeval.py --data ../shared/data/longmemeval/longmemeval_s_dev.json

Each call is timed as `eval_longmemeval.py` times it (the client's call shape, the module embedding the
question, 1 torch thread, `today` = the question's date), with `--config` (default none: the module's
default budget; `'{"turns_budget": 24, "max_chars": 0}'` for 24 TURN rows), over the embedded graph that
script cached (run it first: a full embedding takes over an hour).
"""

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench_common import (
    ROOT,
    configure_model,
    emit,
    fast_call,
    graph_cache_key,
    modules_of,
    ms,
    provenance,
    runtime_of,
)
from longmemeval_cache import CacheFiles


def _ms(values: Sequence[float]) -> dict[str, float]:
    return {"mean_ms": ms(statistics.fmean(values)), "median_ms": ms(statistics.median(values)),
            "max_ms": ms(max(values))}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="the LongMemEval file eval_longmemeval.py ran on")
    parser.add_argument("--modules", type=Path, default=ROOT / "query_modules",
                        help="the query_modules folder to time (default this checkout's)")
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "cache")
    parser.add_argument("--json", type=Path, help="append the figures to this JSON-lines file")
    parser.add_argument("--config", type=json.loads, default={},
                        help="the config map of every call, as JSON (default {}: the module's defaults)")
    args = parser.parse_args(argv)
    if not isinstance(args.config, dict):
        parser.error(f"--config: expected a JSON object, got {args.config!r}")
    model = configure_model()
    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets import longmemeval

    data = longmemeval.load(args.data)
    files = CacheFiles.of(args.cache, graph_cache_key(model, [args.data], Path(longmemeval.__file__)))
    if not (files.graph.is_file() and files.meta.is_file()):
        raise SystemExit(f"--cache: no finished embedded graph {files.graph}; run eval_longmemeval.py first")
    runtime = runtime_of(args.modules)
    runtime.load_graph(files.graph)
    setup_store(runtime.store)
    runtime.call("recall.status", {"embedding_model": model})  # the model loaded before any timed call
    import torch

    torch.set_num_threads(1)
    questions = [q for q in data.questions if not q.abstention]

    def render(question) -> float:
        start = time.perf_counter()
        fast_call(runtime, "recall.render", question.user_id, question.question, question.today.isoformat(),
                  {"embedding_model": model, **args.config})
        return time.perf_counter() - start

    first, second = [], []
    for question in questions:
        runtime.call("recall.invalidate", question.user_id)
        first.append(render(question))
        second.append(render(question))
    result = {**modules_of(args.modules), "config": args.config, "questions": len(questions),
              "first": _ms(first),
              "second": _ms(second), "load_average": [round(x, 2) for x in os.getloadavg()],
              **provenance(sys.argv)}
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
