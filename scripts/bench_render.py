"""Mean `recall.render` time per LoCoMo question, for this checkout's query modules or another's.

Issue #10 bounds the ranking's cost: mean time per question at most 25% above the code before it.
Run this once per checkout, alternately, in the same hour (the machine's speed drifts):

    git worktree add /tmp/before a459ab4
    python scripts/bench_render.py --conversations ../shared/data/locomo/conv-*.json \
        --modules /tmp/before/query_modules
    python scripts/bench_render.py --conversations ../shared/data/locomo/conv-*.json

Every question is asked twice: with the question embedded by the module (what a caller pays) and with
its vector precomputed and passed as `query_vector` (the module's own work). The embedded LoCoMo graph
comes from `eval_locomo.py`'s cache (built and embedded on first use).
"""

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench_common import ROOT, configure_model, emit, model_folder, modules_of, ms, provenance, runtime_of
from eval_locomo import load_embedded


def _ms(values: Sequence[float]) -> dict[str, float]:
    return {"mean_ms": ms(statistics.fmean(values)), "median_ms": ms(statistics.median(values))}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", nargs="+", type=Path, required=True)
    parser.add_argument("--modules", type=Path, default=ROOT / "query_modules",
                        help="the query_modules folder to time (default this checkout's)")
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "cache")
    parser.add_argument("--json", type=Path, help="append the figures to this JSON-lines file")
    args = parser.parse_args(argv)
    import torch
    from memgraph_recall.datasets.locomo import build_graph
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    model = configure_model()
    data = build_graph(args.conversations)
    runtime = runtime_of(args.modules)
    load_embedded(runtime, data, args.conversations, model, args.cache)
    questions = [q for q in data.questions if q.evidence]
    encoder = SentenceTransformer(str(model_folder(model)), device="cpu")
    vectors = encoder.encode([q.question for q in questions], normalize_embeddings=True, batch_size=64)

    def ask(index: int, extra: dict) -> float:
        question = questions[index]
        start = time.perf_counter()
        runtime.call("recall.render", question.user_id, question.question, question.today.isoformat(),
                     {"embedding_model": model, **extra})
        return time.perf_counter() - start

    for user in data.users:  # every user's cache built, the model loaded
        runtime.call("recall.render", user, "warm up", None, {"embedding_model": model})
    embedded = [ask(i, {}) for i in range(len(questions))]
    given = [ask(i, {"query_vector": vectors[i].tolist()}) for i in range(len(questions))]
    result = {**modules_of(args.modules), "questions": len(questions),
              "with_embedding": _ms(embedded), "vector_given": _ms(given), **provenance(sys.argv)}
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
