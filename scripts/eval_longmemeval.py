#!/usr/bin/env python
"""LongMemEval S through recall: does recall put a question's evidence turns in front of the model?

One command: load the file (each question its own user in one graph), embed it through `recall.embed` on
the embedded runtime (or reuse the embedded graph cached under `results/cache/`, resuming a run that was
interrupted), then for every question call `recall.render` with `today` = the question's date at the four
budgets of `eval_common.BUDGETS` (24 and 10 TURN rows, the 10 the first 10 of the same ranking, with the
character budget off; 8,000 characters, the default render, and 4,000) and score the rows against the
`has_answer` turns. In the same run: LongMemEval's own retrieval metrics of recall's fused ranking (user
turns only, deep enough for k = 50), of BM25 alone and of dense alone; the time of a first (cold) and a
second (warm) default `recall.render` per question; each evidence turn's rank in the fused ranking and in
each lane. Writes a markdown report, a PNG, `questions.jsonl` and `details.json` under `--results`.

    python scripts/eval_longmemeval.py --data ../shared/data/longmemeval/longmemeval_s_dev.json
"""

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (  # noqa: E402
    ROOT,
    allow_rows,
    configure_model,
    fast_call,
    graph_cache_key,
    provenance,
    use_recall_lib,
)
from eval_common import (  # noqa: E402
    BUDGETS,
    DEFAULT_BUDGET,
    ROW_BUDGETS,
    SIGNALS,
    Baselines,
    UserTurns,
    action_texts,
    answer_shown,
    literal_answer,
    row_heads,
    shown_turns,
    turn_rows,
)
from longmemeval_cache import ActionVertices, CacheFiles, load_embedded  # noqa: E402
from longmemeval_metrics import KS  # noqa: E402
from longmemeval_report import write_report  # noqa: E402
from longmemeval_scoring import (  # noqa: E402
    BUDGET,
    Outcome,
    benchmark_ids,
    coverage,
    headroom,
    lme_summary,
    misses,
    per_question,
    render_times,
    signals_off,
)
from longmemeval_tuning import grid_configs, leave_one_type_out  # noqa: E402

#: The deep ranking's TURN rows (`turns_budget`): every turn any lane or signal ranks (histories have
#: < 600 turns); the script's own runtime raises the server's row ceiling to allow it.
DEEP = 1000
#: Torch threads while embedding, in this process only (the module's default is 1; a server sets its own).
TORCH_THREADS = "2"
#: Torch threads for the scored calls: the module's default. On a shared 2-core machine two threads made
#: every question embedding ~0.5 s slower while another process kept a core busy (a thread of the pair
#: waits on the other), one thread costs ~7 ms a call when the machine is idle.
SCORING_THREADS = 1


# -- recall ----------------------------------------------------------------------------------------
class Recall:
    """`recall.render` for one question at a time, through the real path (the module
    embeds the question)."""

    def __init__(self, runtime, model: str, by_minute: dict[tuple[str, str], str]) -> None:
        self.runtime, self.model, self.by_minute = runtime, model, by_minute

    def _render(self, question, config: dict) -> tuple[dict, float]:
        start = time.perf_counter()
        row = fast_call(self.runtime, "recall.render", question.user_id, question.question,
                        question.today.isoformat(), {"embedding_model": self.model, **config})[0]
        return row, time.perf_counter() - start

    def measure(self, question) -> tuple[dict, tuple[float, float], bool]:
        """The first call on a cold cache for this user, then a second one, at the default budget; the
        rows shown, checked."""
        self.runtime.call("recall.invalidate", question.user_id)
        row, first = self._render(question, BUDGETS[DEFAULT_BUDGET])
        again, second = self._render(question, BUDGETS[DEFAULT_BUDGET])
        text, recalled = row["text"], row["recalled"]
        from_text = [self.by_minute.get(key, "?") for key in turn_rows(text)]
        agree = from_text == [t["action_id"] for t in recalled["turns"]] and again["text"] == text
        return row, (first, second), agree

    def order(self, question, config: dict) -> list[str]:
        """The turns shown at BUDGET rows with `config`, best first (`eval_common.shown_turns`)."""
        row, _ = self._render(question, {**config, **BUDGETS[str(BUDGET)], "explain": True})
        return shown_turns(row["recalled"])

    def ranked(self, question, budget: str) -> tuple[list[str], list[str], Counter, str]:
        """At `budget` (a name of `eval_common.BUDGETS`): the turns shown best first
        (`eval_common.shown_turns`), the TURN rows' own turns, the signals that lifted them, and the
        plain render's text."""
        row, _ = self._render(question, {**BUDGETS[budget], "explain": True})
        lifts = Counter(lift.split()[0] for t in row["recalled"]["turns"] for lift in t["fused"]["lifts"])
        plain, _ = self._render(question, BUDGETS[budget])
        return shown_turns(row["recalled"]), row_heads(row["recalled"]), lifts, plain["text"]

    def deep(self, question) -> dict[str, dict[str, int]]:
        """`recall.render` at depth with `explain`: the fused rank of every turn the ranking holds, and the
        rank each turn has in the `text` and `turns` lanes (which vote with their first `fusion_depth`).

        Not `recall.lanes`: it takes no `today`, so its fused lane has no relative dates ("last week")
        and ranks differently from the rows render shows whenever the question has one."""
        row, _ = self._render(question, {"turns_budget": DEEP, "max_chars": 0, "explain": True})
        ranks: dict[str, dict[str, int]] = {"fused": {}, "text": {}, "turns": {}}
        for turn in sorted(row["recalled"]["turns"], key=lambda t: t["fused"]["rank"]):
            for shown in (turn["action_id"], *turn.get("repeats", ())):  # a repeat at its row's rank
                ranks["fused"][shown] = turn["fused"]["rank"]
            for lane in turn["lanes"]:
                if lane["lane"] in ranks:
                    ranks[lane["lane"]][turn["action_id"]] = lane["rank"]
        return ranks


def in_order(ranks: dict[str, int]) -> list[str]:
    return sorted(ranks, key=ranks.get)


def evaluate(question, recall: Recall, baselines: Baselines, literal: str | None = None) -> Outcome:
    """Everything measured for one question; `literal`: its answer as an evidence turn writes it
    (`eval_common.literal_answer`), looked for in the text at each character budget."""
    row, seconds, agree = recall.measure(question)
    ranked = {budget: recall.ranked(question, budget) for budget in BUDGETS}
    rows = {budget: found[0] for budget, found in ranked.items()}
    heads = {budget: found[1] for budget, found in ranked.items()}
    chars = {budget: len(found[3]) for budget, found in ranked.items()}
    answered = {} if literal is None else {budget: answer_shown(literal, found[3])
                                            for budget, found in ranked.items() if budget not in ROW_BUDGETS}
    lifts = ranked[str(BUDGET)][2]
    lanes = recall.deep(question)
    fused = in_order(lanes["fused"])
    default_rows = set(shown_turns(row["recalled"]))
    deep_heads = list(dict.fromkeys(lanes["fused"][a] for a in fused))  # one rank per row
    prefix_ok = (heads["10"] == heads["24"][: len(heads["10"])]
                 and [lanes["fused"][a] for a in heads["24"]] == deep_heads[: len(heads["24"])])
    orders = {"recall": fused, "bm25": baselines.bm25_order(question.user_id),
              "dense": baselines.dense_order(question.user_id)}
    shown_by_run = {"recall": rows["24"], **{run: orders[run][:BUDGET] for run in ("bm25", "dense")}}
    agree = agree and chars[DEFAULT_BUDGET] == len(row["text"]) and set(rows[DEFAULT_BUDGET]) == default_rows
    return Outcome(shown=shown_by_run, chars=chars, orders=orders, lane_ranks=lanes, seconds=seconds,
                   lifts=lifts, agree=agree, prefix_ok=prefix_ok,
                   signals_off={name: recall.order(question, config) for name, config in SIGNALS.items()},
                   within=rows, answered=answered)


# -- data ------------------------------------------------------------------------------------------
def read_turns(vertices: ActionVertices, questions: Sequence,
               model: str) -> tuple[dict[str, UserTurns], dict[tuple[str, str], str]]:
    """From the embedded graph: each question's turns with vectors (a message without text has none and
    is not ranked), and (session, minute) -> action id, to read rendered TURN rows back."""
    users, by_minute = {}, {}
    for question in tqdm(questions, desc="turns", unit="q", leave=False):
        turns = users[question.user_id] = UserTurns()
        for turn in question.turns:
            props = vertices.properties(turn.action_id)
            by_minute[(turn.session_id, props["timestamp"].isoformat()[:16])] = turn.action_id
            if props.get("embedding_model") != model or props.get("passage_embeddings") is None:
                continue
            turns.action_ids.append(turn.action_id)
            turns.texts.append(props["text"])
            turns.vectors.append(np.asarray(props["passage_embeddings"], dtype=np.float32))
        turns.finish()
    return users, by_minute


def select(questions: Sequence, types: Sequence[str] | None, limit: int | None,
           gathering: bool = False) -> tuple[list, list]:
    """(questions to embed, questions to score). Abstention questions are never scored; without --limit
    or --gathering they are embedded with the rest, so a run over the whole file completes the cached
    graph. `gathering`: only the questions the module reads as gathering several occasions
    (`question.Question.gathers`), the only ones a gathering signal changes; only those are embedded."""
    chosen = [q for q in questions if types is None or q.question_type in types]
    if gathering:
        use_recall_lib()
        from recall_lib.question import read_question

        chosen = [q for q in chosen if read_question(q.question, q.today).gathers]
    scored = [q for q in chosen if not q.abstention]
    if limit is not None or gathering:
        scored = scored[:limit]
        return scored, scored
    return chosen, scored


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    from memgraph_recall.datasets.longmemeval import QUESTION_TYPES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="a LongMemEval file (longmemeval_s_cleaned.json, or a subset in its format)")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N scored questions (quick checks; only those are embedded)")
    parser.add_argument("--types", nargs="+", default=None, metavar="TYPE",
                        help=f"only these question types: {', '.join(QUESTION_TYPES)}")
    parser.add_argument("--gathering", action="store_true",
                        help="only the questions read as gathering several occasions (what a gathering "
                             "signal changes; only those are embedded)")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "longmemeval",
                        help="folder for the report, plot and per-question file (default "
                             "results/longmemeval)")
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "cache",
                        help="folder for the embedded graph (default results/cache, gitignored)")
    parser.add_argument("--grid", type=int, default=24,
                        help="configs in the leave-one-type-out grid, defaults included (default 24)")
    args = parser.parse_args(argv)
    if args.grid < 1:
        parser.error(f"--grid: expected an integer >= 1, got {args.grid}")
    if not args.data.is_file():
        parser.error(f"--data: no such file {args.data}")
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit: expected an integer >= 1, got {args.limit}")
    unknown = [t for t in args.types or () if t not in QUESTION_TYPES]
    if unknown:
        parser.error(f"--types: unknown question type {unknown[0]!r}; expected one of "
                     f"{', '.join(QUESTION_TYPES)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("RECALL_TORCH_THREADS", TORCH_THREADS)
    allow_rows(DEEP)
    model = configure_model()
    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets import longmemeval
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import query_modules_dir

    info = provenance(sys.argv if argv is None else ["scripts/eval_longmemeval.py", *argv])
    try:
        data = longmemeval.load(args.data)
    except ValueError as exc:
        raise SystemExit(f"--data: {exc}") from None
    to_embed, scored = select(data.questions, args.types, args.limit, args.gathering)
    if not scored:
        raise SystemExit("--types/--limit/--gathering: no question to score")
    runtime = Runtime(query_modules_dir())
    if runtime.load_errors:
        raise SystemExit(f"query modules failed to load: {runtime.load_errors}")
    files = CacheFiles.of(args.cache, graph_cache_key(model, [args.data], Path(longmemeval.__file__)))
    embedding = load_embedded(runtime, data, to_embed, model, files)
    setup_store(runtime.store)  # as `memgraph-recall setup`: else every call runs unidentified
    runtime.call("recall.status", {"embedding_model": model})  # loads the model before any timed call
    import torch

    torch.set_num_threads(SCORING_THREADS)  # process-wide, after the module set its own at load

    users, by_minute = read_turns(ActionVertices(runtime), scored, model)
    baselines = Baselines(users, {q.user_id: (q.user_id, q.question) for q in scored}, model)
    recall = Recall(runtime, model, by_minute)
    load = os.getloadavg()
    texts = action_texts(data.elements)
    literals = {q.user_id: literal_answer(q.answer, q.question, [texts.get(a, "") for a in q.evidence])
                for q in scored}
    outcomes = {q.user_id: evaluate(q, recall, baselines, literals[q.user_id])
                for q in tqdm(scored, desc="questions", unit="q")}
    load = [round(x, 2) for x in (*load, *os.getloadavg())]
    configs = grid_configs(args.grid)
    grid_rows = [{q.user_id: recall.order(q, config) for q in scored}
                 for config in tqdm(configs, desc="leave one type out", unit="config")]

    entries = per_question(scored, outcomes)
    results = {"shown": coverage(scored, outcomes), "longmemeval": lme_summary(scored, outcomes),
               "render_time": render_times(scored, outcomes), "headroom": headroom(scored, outcomes),
               "signals_off": signals_off(scored, outcomes),
               "misses": misses(entries),
               "leave_one_type_out": leave_one_type_out(scored, configs, lambda i, user: grid_rows[i][user])}
    extra = {
        "file": args.data.name, "questions": len(data.questions), "scored": len(scored),
        "abstention": sum(q.abstention for q in data.questions), "sessions": data.sessions,
        "turns": data.turns, "repeated_sessions": data.repeated_sessions,
        "user_evidence": sum(t.has_answer and t.role == "user" for q in scored for t in q.turns),
        "assistant_evidence": sum(t.has_answer and t.role == "assistant" for q in scored for t in q.turns),
        "types": args.types, "limit": args.limit, "embedding": embedding, "cache_file": files.graph.name,
        "agree": sum(o.agree for o in outcomes.values()),
        "prefix_ok": sum(o.prefix_ok for o in outcomes.values()),
        "lifted": dict(sum((Counter({k: 1 for k in o.lifts}) for o in outcomes.values()), Counter())),
        "budgets": BUDGETS, "ks": list(KS), "deep": DEEP,
        "torch_threads": os.environ["RECALL_TORCH_THREADS"], "scoring_threads": SCORING_THREADS,
        "load_average": load,
        "deep_user_turns_min": min(sum(a in benchmark_ids(q)[0] for a in outcomes[q.user_id].orders["recall"])
                                   for q in scored),
    }
    write_report(args.results, info, results, extra, entries)
    head = results["shown"]["recall"]
    lme = results["longmemeval"]["recall"]["all"]["turn"]
    print(f"recall: all evidence {head['8000c']['all']['all_evidence']:.3f} at 8,000 characters (the "
          f"default), {head['4000c']['all']['all_evidence']:.3f} at 4,000, "
          f"{head['24']['all']['all_evidence']:.3f} at 24 TURN rows, "
          f"{head['10']['all']['all_evidence']:.3f} at 10 ({len(scored)} questions); LongMemEval turn "
          f"recall_all@10 {lme['recall_all@10']:.3f}, @50 {lme['recall_all@50']:.3f}; report in "
          f"{args.results}")
    if extra["agree"] < len(scored):
        print(f"WARNING: rendered rows disagree with `recalled` in {len(scored) - extra['agree']} questions",
              file=sys.stderr)
    if extra["prefix_ok"] < len(scored):
        print(f"WARNING: 10 rows / 24 rows / the deep ranking are not prefixes of each other in "
              f"{len(scored) - extra['prefix_ok']} questions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
