"""The largest config the server accepts, timed at scale: does any accepted call take over 5 s?

Issue #11's bar: at 100k messages no accepted config makes `recall.render` take over 5 s. This sets
every bounded key at its ceiling (`recall_lib.limits.Ceilings`, the defaults an operator has not
raised), asks the longest accepted question, excludes the most sessions a config may list, turns
`explain` on and gives a `max_chars` that drops most rows (the fit's worst case), then times that
call warm and cold beside the default config. It also reports the Python heap's peak inside one warm
call (`tracemalloc`) for a short and for the longest question.

    python scripts/bench_limits.py --size 100000 --results results/limits
"""

import argparse
import gc
import json
import statistics
import sys
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path

from bench_common import (
    configure_model,
    markdown_table,
    ms,
    provenance,
    provenance_lines,
    timed,
    use_recall_lib,
)

SAMPLES = 5
COLD_SAMPLES = 3


def longest_question(base: str, chars: int) -> str:
    """`base` repeated with varied words up to exactly `chars` characters (a real question's words,
    so BM25 and the embedding both do their full work)."""
    text = base
    number = 0
    while len(text) < chars:
        number += 1
        text += f" and also {base.lower()} number {number}"
    return text[:chars]


def largest_config(ceilings, session_ids: list[str]) -> dict:
    from recall_lib.config import MAX_EXCLUDED_SESSIONS
    from recall_lib.limits import CAPPED_KEYS

    config: dict = {}
    for ceiling_name, keys in CAPPED_KEYS.items():
        if ceiling_name == "embed_limit":
            continue  # `limit` is recall.embed's key, not render's
        config.update(dict.fromkeys(keys, getattr(ceilings, ceiling_name)))
    if not session_ids:
        raise SystemExit("the synthetic user has no sessions to exclude")
    excluded = session_ids[:1] + [f"no-such-session-{n}" for n in range(MAX_EXCLUDED_SESSIONS - 1)]
    return {**config, "exclude_sessions": excluded, "explain": True, "max_chars": 3000}


def heap_peak_mib(call: Callable[[], object]) -> float:
    """The Python heap's peak above its level before `call`, in MiB."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return round((peak - before) / 2**20, 2)


def measure(size: int, seed: int) -> dict:
    from memgraph_recall.datasets.synthetic import SyntheticSpec, build, questions
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import query_modules_dir
    from recall_lib.limits import Ceilings

    model = configure_model()
    data = build(SyntheticSpec(messages=size, seed=seed))
    runtime = Runtime(query_modules_dir())
    runtime.load_elements(data.elements)
    sessions = [e["properties"]["session_id"] for e in data.elements if "Session" in e.get("labels", ())
                and e["properties"]["session_id"].startswith(f"{data.user_id}:")]
    data.elements = []
    gc.collect()
    ceilings = Ceilings.from_env()
    asked = questions(seed, SAMPLES + 1)
    longest = [longest_question(q, ceilings.question_chars) for q in asked]
    default = {"embedding_model": model}
    largest = {**default, **largest_config(ceilings, sessions)}

    def render(question: str, config: dict) -> object:
        return runtime.call("recall.render", data.user_id, question, None, config)

    runtime.call("recall.render", data.other_user_ids[0], "model warm-up", None, default)
    result = {"cold_default_ms": ms(timed(lambda: render(asked[-1], default)))}
    result["warm_default_ms"] = [ms(timed(lambda q=q: render(q, default))) for q in asked[:SAMPLES]]
    result["warm_largest_ms"] = [ms(timed(lambda q=q: render(q, largest))) for q in longest[:SAMPLES]]
    cold = []
    for question in longest[:COLD_SAMPLES]:
        runtime.call("recall.invalidate", data.user_id)
        cold.append(ms(timed(lambda q=question: render(q, largest))))
    result["cold_largest_ms"] = cold
    render(asked[0], default)
    result["heap_peak_short_mib"] = heap_peak_mib(lambda: render(asked[0], default))
    result["heap_peak_longest_mib"] = heap_peak_mib(lambda: render(longest[0], default))
    result["largest_config"] = {k: (f"{len(v)} ids" if k == "exclude_sessions" else v)
                                for k, v in largest.items() if k != "embedding_model"}
    result["question_chars"] = ceilings.question_chars
    result["messages"] = size
    return result


def report(out_dir: Path, info: dict, result: dict) -> None:
    def summary(values: list[float]) -> str:
        return f"{statistics.median(values):.1f} (max {max(values):.1f})"

    rows = [
        ["default config, cold", f"{result['cold_default_ms']:.1f}"],
        ["default config, warm", summary(result["warm_default_ms"])],
        [f"largest accepted config and a {result['question_chars']}-character question, warm",
         summary(result["warm_largest_ms"])],
        ["the same, cold (after `recall.invalidate`)", summary(result["cold_largest_ms"])],
    ]
    lines = [
        "# The largest accepted config at scale",
        "",
        f"`recall.render` for one user with {result['messages']:,} messages (synthetic, beside as many "
        "messages of another user) on the **embedded runtime** (not Memgraph's figures). Times in ms, "
        f"median of {SAMPLES} warm / {COLD_SAMPLES} cold calls with the largest one in brackets.",
        "",
        *provenance_lines(info),
        "",
        markdown_table(["call", "ms"], rows),
        "",
        "Largest accepted config (each key at its server ceiling, `recall_lib.limits`): "
        f"`{json.dumps(result['largest_config'])}`.",
        "",
        f"Python heap peak inside one warm default call (`tracemalloc`): short question "
        f"{result['heap_peak_short_mib']} MiB, {result['question_chars']}-character question "
        f"{result['heap_peak_longest_mib']} MiB.",
        "",
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "README.md").write_text("\n".join(lines))
    (out_dir / "limits.json").write_text(json.dumps({"info": info, **result}, indent=1) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="the user's messages (default 100000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results", type=Path, default=Path("results/limits"))
    args = parser.parse_args(argv)
    use_recall_lib()
    import torch

    torch.set_num_threads(1)
    info = provenance(sys.argv)
    result = measure(args.size, args.seed)
    report(args.results, info, result)
    print((args.results / "README.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
