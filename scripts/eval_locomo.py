#!/usr/bin/env python
"""LoCoMo evidence recall: does recall put every evidence turn of a question in front of the model?

One command: load the conversations into one graph, embed it through `recall.embed` on the embedded
runtime (or reuse the embedded export cached under `results/cache/`, keyed by model, input files and
loader), then for every question call `recall.render` with `today` = the conversation's last session
date and score the TURN rows shown against the evidence turns, at the four budgets of
`eval_common.BUDGETS`: 24 and 10 TURN rows with the character budget off (the 10 the first 10 of the
same fused ranking), 8,000 characters (the default render) and 4,000. In the same run: recall with and
without the fact lanes and the speaker signal, each ranking signal and each lane switched off on its
own (at 24 and 10 rows and at 8,000 characters), BM25-only and dense-only baselines at the row budgets,
and leave-one-conversation-out tuning over a grid of ranking weights (at the row budgets). Writes a
markdown report, a PNG and a per-question file under `--results`, and the headline figures to `--json`.

    python scripts/eval_locomo.py --conversations ../shared/data/locomo/conv-*.json
"""

import argparse
import itertools
import json
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (  # noqa: E402
    EMBEDDED_KINDS,
    ROOT,
    configure_model,
    fast_call,
    graph_cache_key,
    provenance,
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
from locomo_report import write_report  # noqa: E402

#: Category groups scored: 1-4 together (the headline), each category, and 5 (adversarial) alone.
GROUPS = {"1-4": frozenset({1, 2, 3, 4}), **{str(c): frozenset({c}) for c in (1, 2, 3, 4, 5)}}
LANES = ("memories", "turns", "text", "entities", "facts", "user_facts")
FACT_LANES = ("entities", "facts", "user_facts")
NO_FACT_LANES = [lane for lane in LANES if lane not in FACT_LANES]
#: The row budget the rankings are read at (the 10 rows are its first 10).
ROWS = 24
#: The budgets every ablation is scored at: the row budgets, and the default render's characters.
ABLATION_BUDGETS = (*ROW_BUDGETS, DEFAULT_BUDGET)
#: The leave-one-conversation-out grid: a seeded sample of these combinations, plus the defaults.
GRID = {
    "fusion_k": (3, 5, 8),
    "fusion_depth": (100, 200, 300, 500),
    "speaker_boost": (0.5, 1.0, 2.0),
    "session_boost": (0.1, 0.2, 0.3),
    "neighbour_boost": (0.35, 0.5, 0.65),
    "date_boost": (0.5, 1.0, 2.0),
    "session_spread": (0.0, 0.2, 0.5),
    "feedback_turns": (0, 3, 5, 10),
}
DEFAULTS = {"fusion_k": 5, "fusion_depth": 300, "speaker_boost": 1.0, "session_boost": 0.2,
            "neighbour_boost": 0.5, "date_boost": 1.0, "session_spread": 0.2,
            "feedback_turns": 5}
#: Lanes asked how deep each evidence turn sits in them (per-question file): their top this many.
LANE_DEPTH = 200


# -- data ------------------------------------------------------------------------------------------
@dataclass
class Shown:
    """What one recall call (or baseline) put in front of the model: the turns shown (best first when
    ranked; an identical message folded into a row counts, `eval_common.shown_turns`), the TURN rows'
    own turns, FACT rows, characters, and the turns the shown facts were read from (`fact_sources`)."""

    turns: list[str]
    facts: int = 0
    chars: int = 0
    rows: list[str] | None = None  # the TURN rows' own turns, when they differ from `turns`
    read_from: frozenset[str] = frozenset()  # the source turns of FACT rows and of facts folded into rows
    answered: bool | None = None  # under a character budget: the literal answer is in the text (None: no
    # literal answer, `eval_common.literal_answer`, or a row budget)

    def first(self, k: int) -> "Shown":
        return Shown(self.turns[:k], self.facts, self.chars, read_from=self.read_from)

    @property
    def row_count(self) -> int:
        return len(self.turns if self.rows is None else self.rows)


def cache_key(model: str, paths: Sequence[Path]) -> str:
    """Model + input files + the code that shapes the graph and its vectors."""
    from memgraph_recall.datasets import locomo

    return graph_cache_key(model, paths, Path(locomo.__file__))


def embed_all(runtime, model: str) -> dict:
    """Loop `recall.embed` until nothing remains; units and wall time."""
    done = Counter()
    start = time.perf_counter()
    bar = tqdm(desc="recall.embed", unit="unit")
    while True:
        row = runtime.call("recall.embed", {"embedding_model": model, "limit": 500})[0]
        step = sum(int(row[k]) for k in EMBEDDED_KINDS)
        done.update({k: int(row[k]) for k in EMBEDDED_KINDS})
        if bar.total is None:
            bar.total = step + int(row["remaining"])
        bar.update(step)
        if int(row["remaining"]) == 0:
            break
        if step == 0:
            raise RuntimeError(f"recall.embed made no progress with {row['remaining']} units remaining")
    bar.close()
    seconds = time.perf_counter() - start
    units = sum(done.values())
    return {**done, "units": units, "seconds": round(seconds, 1), "units_per_s": round(units / seconds, 1)}


def load_embedded(runtime, data, paths: Sequence[Path], model: str, cache_dir: Path) -> tuple[Path, dict]:
    """Load the embedded graph from the cache, or build, embed and cache it."""
    key = cache_key(model, paths)
    graph_file = cache_dir / f"locomo-{key}.json"
    meta_file = cache_dir / f"locomo-{key}.meta.json"
    if graph_file.is_file() and meta_file.is_file():
        runtime.load_graph(graph_file)
        meta = json.loads(meta_file.read_text())
        return graph_file, {**meta, "from_cache": True}
    runtime.load_elements(data.elements)
    meta = embed_all(runtime, model)
    cache_dir.mkdir(parents=True, exist_ok=True)
    runtime.save_graph(graph_file)
    meta_file.write_text(json.dumps(meta))
    return graph_file, {**meta, "from_cache": False}


def read_turns(graph_file: Path, model: str) -> tuple[dict[str, UserTurns], dict[tuple[str, str], str],
                                                        dict[str, set[str]]]:
    """From the embedded export: each user's turns with vectors, (session, minute) -> action id, and the
    observation facts' source turns per user."""
    elements = json.loads(graph_file.read_text())
    nodes = {e["id"]: e for e in elements if e["type"] == "node"}
    users: dict[str, UserTurns] = defaultdict(UserTurns)
    by_minute: dict[tuple[str, str], str] = {}
    fact_sources: dict[str, set[str]] = defaultdict(set)
    for rel in elements:
        if rel["type"] != "relationship":
            continue
        props = rel["properties"]
        if rel["label"] == "HAS_ACTION":
            session = nodes[rel["start"]]["properties"]["session_id"]
            action = nodes[rel["end"]]["properties"]
            user = owner(action["action_id"])
            minute = action["timestamp"].removeprefix("localDateTime(")[:16]
            by_minute[(session, minute)] = action["action_id"]
            if action.get("embedding_model") != model:
                raise RuntimeError(f"{action['action_id']} has no {model} vectors in {graph_file}")
            turns = users[user]
            turns.action_ids.append(action["action_id"])
            turns.texts.append(action["text"])
            turns.vectors.append(np.asarray(action["passage_embeddings"], dtype=np.float32))
        elif "source_id" in props:
            fact_sources[owner(props["source_id"])].add(props["source_id"])
    for turns in users.values():
        turns.finish()
    return dict(users), by_minute, dict(fact_sources)


def owner(action_id: str) -> str:
    """The conversation (= user) an action id of the loader belongs to: `conv-26:D1:3` -> `conv-26`."""
    return action_id.rsplit(":", 2)[0]


# -- recall ----------------------------------------------------------------------------------------
class Recall:
    """`recall.render` over the LoCoMo graph, one question at a time."""

    def __init__(self, runtime, model: str, by_minute: dict[tuple[str, str], str], vectors: dict,
                 literals: dict | None = None) -> None:
        self.runtime, self.model, self.by_minute, self.vectors = runtime, model, by_minute, vectors
        self.literals = literals or {}  # question key -> its literal answer (`eval_common.literal_answer`)
        self.agree = Counter()
        self.seconds: list[float] = []

    def timed(self, question) -> Shown:
        """The default call as a user makes it (no config: the default budget; the module embeds the
        question), checked and timed: the TURN rows of the text against `recalled`, in time order (as
        shown)."""
        start = time.perf_counter()
        row = self._call(question, {})
        self.seconds.append(time.perf_counter() - start)
        text, recalled = row["text"], row["recalled"]
        from_map = row_heads(recalled)
        from_text = [self.by_minute.get(row, "?") for row in turn_rows(text)]
        fact_lines = sum(1 for line in text.splitlines() if line.startswith("FACT:"))
        self.agree[from_text == from_map and fact_lines == len(recalled["facts"])] += 1
        return Shown(shown_turns(recalled), len(recalled["facts"]), len(text), from_map,
                     fact_sources(recalled), self._answered(question, text))

    def ranked(self, question, config: dict, budget: str = str(ROWS)) -> Shown:
        """What `budget` (a name of `eval_common.BUDGETS`) shows with `config` and the question's vector
        given: at a row budget best first (fused rank, from `explain`), under characters as displayed
        (the plain render, whose characters count)."""
        explain = budget in ROW_BUDGETS
        config = {**BUDGETS[budget], **config, "explain": explain,
                  "query_vector": self.vectors[(question.user_id, question.index)]}
        row = self._call(question, config)
        recalled = row["recalled"]
        chars = 0 if explain else len(row["text"])
        return Shown(shown_turns(recalled), len(recalled["facts"]), chars, row_heads(recalled),
                     fact_sources(recalled), None if explain else self._answered(question, row["text"]))

    def _answered(self, question, text: str) -> bool | None:
        literal = self.literals.get(key_of(question))
        return None if literal is None else answer_shown(literal, text)

    def lane_ranks(self, question) -> dict[str, dict[str, int]]:
        """`recall.lanes` at depth: each turn lane's (and the fused ranking's) rank of every turn it has."""
        config = {"embedding_model": self.model, "text_k": LANE_DEPTH, "turns_k": LANE_DEPTH,
                  "fact_turns_k": LANE_DEPTH, "turns_budget": LANE_DEPTH,
                  "query_vector": self.vectors[(question.user_id, question.index)]}
        ranks: dict[str, dict[str, int]] = defaultdict(dict)
        for row in fast_call(self.runtime, "recall.lanes", question.user_id, question.question, config):
            if row["lane"] in ("text", "turns", "fact_turns", "fused"):
                ranks[row["lane"]].setdefault(row["key"], row["rank"])
        return dict(ranks)

    def _call(self, question, config: dict) -> dict:
        return fast_call(self.runtime, "recall.render", question.user_id, question.question,
                         question.today.isoformat(), {"embedding_model": self.model, **config})[0]


def fact_sources(recalled: dict) -> frozenset[str]:
    """The turns a render's facts were read from: its FACT rows' and those folded into TURN rows."""
    folded = (fact for turn in recalled["turns"] for fact in turn.get("facts", ()))
    return frozenset(fact["turn"] for fact in (*recalled["facts"], *folded))


# -- scoring ---------------------------------------------------------------------------------------
def evidence_recall(question, shown: Shown) -> float:
    return len(set(question.evidence) & set(shown.turns)) / len(question.evidence)


def evidence_stated(question, shown: Shown) -> bool:
    """Every evidence turn shown as a TURN row or stated by a FACT row read from it: the facts' share of
    a character budget is only worth what they state, and the headline counts TURN rows alone."""
    return set(question.evidence) <= set(shown.turns) | shown.read_from


def summary_of(chosen: list, outcomes: dict) -> dict[str, float]:
    """The share with ALL evidence shown, mean evidence recall, rows and characters."""
    if not chosen:
        return {"all_evidence": 0.0, "mean_evidence_recall": 0.0, "turn_rows": 0.0, "fact_rows": 0.0,
                "chars": 0.0, "n": 0, "all_evidence_or_facts": 0.0, "answer_in_text": None, "answers": 0}
    shown = [outcomes[key_of(q)] for q in chosen]
    answered = [s.answered for s in shown if s.answered is not None]
    recalls = [evidence_recall(q, s) for q, s in zip(chosen, shown, strict=True)]
    stated = [evidence_stated(q, s) for q, s in zip(chosen, shown, strict=True)]
    return {"all_evidence": round(sum(r == 1.0 for r in recalls) / len(chosen), 4),
            "all_evidence_or_facts": round(statistics.fmean(stated), 4),
            "mean_evidence_recall": round(statistics.fmean(recalls), 4),
            "turn_rows": round(statistics.fmean(s.row_count for s in shown), 2),
            "fact_rows": round(statistics.fmean(s.facts for s in shown), 2),
            "chars": round(statistics.fmean(s.chars for s in shown), 1), "n": len(chosen),
            "answer_in_text": round(statistics.fmean(answered), 4) if answered else None,
            "answers": len(answered)}


def summarize(questions: list, outcomes: dict) -> dict[str, dict[str, float]]:
    """Per category group (see GROUPS)."""
    return {group: summary_of([q for q in questions if q.category in categories], outcomes)
            for group, categories in GROUPS.items()}


def at_budgets(questions: list, outcomes: dict[str, dict]) -> dict[str, dict]:
    """`summarize` per budget: `outcomes` maps a budget to each question's `Shown`; a run at 24 rows is
    also scored at the first 10 of the same ranking."""
    out = {}
    for budget in BUDGETS:
        if budget in outcomes:
            out[budget] = summarize(questions, outcomes[budget])
        elif budget in ROW_BUDGETS and str(ROWS) in outcomes:
            k = ROW_BUDGETS[budget]
            out[budget] = summarize(questions, {key: s.first(k) for key, s in outcomes[str(ROWS)].items()})
    return out


def key_of(question) -> tuple[str, int]:
    return (question.user_id, question.index)


def share(questions: list, outcomes: dict, k: int) -> float:
    # the leave-one-out grid is read at the row budgets: the first `k` of each 24-row ranking
    """All-evidence share of category 1-4 questions within the first `k` TURN rows."""
    chosen = [q for q in questions if q.category in GROUPS["1-4"]]
    return sum(set(q.evidence) <= set(outcomes[key_of(q)].turns[:k]) for q in chosen) / max(len(chosen), 1)


# -- tuning: leave one conversation out ------------------------------------------------------------
def grid_configs(size: int, seed: int = 7) -> list[dict]:
    """The defaults plus a seeded sample of `size - 1` other combinations of GRID."""
    combos = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    others = [c for c in combos if c != DEFAULTS]
    return [dict(DEFAULTS), *random.Random(seed).sample(others, min(size - 1, len(others)))]


def leave_one_out(questions: list, users: list[str], configs: list[dict], outcomes: list[dict]) -> dict:
    """For each conversation: the config best on the other four (mean of the all-evidence shares at
    both budgets, categories 1-4), and what it scores on the held-out one."""
    def score(i: int, members: set[str], k: int) -> float:
        return share([q for q in questions if q.user_id in members], outcomes[i], k)

    folds = []
    for held_out in users:
        dev = set(users) - {held_out}
        best = max(range(len(configs)), key=lambda i: sum(score(i, dev, k) for k in ROW_BUDGETS.values()))
        folds.append({"held_out": held_out, "config": configs[best],
                      "dev": {b: round(score(best, dev, k), 4) for b, k in ROW_BUDGETS.items()},
                      "held_out_score": {b: round(score(best, {held_out}, k), 4)
                                         for b, k in ROW_BUDGETS.items()},
                      "n": sum(q.user_id == held_out and q.category in GROUPS["1-4"] for q in questions)})
    total = sum(f["n"] for f in folds)
    mean = {b: round(sum(f["held_out_score"][b] * f["n"] for f in folds) / total, 4) for b in ROW_BUDGETS}
    in_sample = max(range(len(configs)),
                    key=lambda i: sum(score(i, set(users), k) for k in ROW_BUDGETS.values()))
    return {"folds": folds, "mean": mean, "grid_size": len(configs), "defaults": DEFAULTS,
            "defaults_score": {b: round(score(0, set(users), k), 4) for b, k in ROW_BUDGETS.items()},
            "best_in_sample": {"config": configs[in_sample],
                               **{b: round(score(in_sample, set(users), k), 4)
                                  for b, k in ROW_BUDGETS.items()}}}


# -- per question ----------------------------------------------------------------------------------
def per_question(questions: list, shown: dict, lane_ranks: dict, orders: dict) -> list[dict]:
    """One entry per question: ids, evidence, the TURN rows shown (best first) and, for each evidence
    turn not shown, its rank in each turn lane (top LANE_DEPTH) and in full BM25 / dense rankings."""
    out = []
    for q in questions:
        key = key_of(q)
        bm25, dense = orders[key]
        missed = []
        for turn in q.evidence:
            if turn in shown[key].turns:
                continue
            ranks = {lane: found.get(turn) for lane, found in lane_ranks[key].items()}
            ranks["bm25_full"] = bm25.index(turn) + 1 if turn in bm25 else None
            ranks["dense_full"] = dense.index(turn) + 1
            missed.append({"turn": turn, "ranks": ranks})
        out.append({"id": f"{q.conversation} qa[{q.index}]", "category": q.category,
                    "evidence": list(q.evidence), "shown": shown[key].turns, "missed": missed})
    return out


def miss_buckets(entries: list[dict]) -> dict[str, Counter]:
    """Categories 1-4: missed evidence turns by their best rank in any single lane or full ranking."""
    buckets: dict[str, Counter] = defaultdict(Counter)
    for entry in entries:
        if entry["category"] == 5:
            continue
        for miss in entry["missed"]:
            ranks = [r for lane, r in miss["ranks"].items() if r is not None and lane != "fused"]
            best = min(ranks)
            bucket = ("1-24" if best <= 24 else "25-50" if best <= 50 else "51-200" if best <= 200
                      else "> 200")
            buckets[bucket].update({"missing": 1, "no_shared_word": miss["ranks"]["bm25_full"] is None})
    return dict(buckets)


# -- main ------------------------------------------------------------------------------------------
def run_all(name: str, questions: list, call: Callable) -> dict:
    return {key_of(q): call(q) for q in tqdm(questions, desc=name, unit="q", leave=False)}


def run_budgets(name: str, questions: list, recall: "Recall", config: dict,
                budgets: Sequence[str] = ABLATION_BUDGETS) -> dict[str, dict]:
    """budget -> question -> `Shown` of `recall.ranked` with `config`; the 10 rows are read off the 24."""
    return {budget: run_all(f"{name} @{budget}", questions, lambda q, b=budget: recall.ranked(q, config, b))
            for budget in budgets if budget != "10"}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", nargs="+", type=Path, required=True,
                        help="LoCoMo conversation files (conv-*.json, or locomo10.json)")
    parser.add_argument("--json", type=Path, help="write the headline figures here")
    parser.add_argument("--model", help="another embedding model, by a name RECALL_MODELS maps to its "
                        "offline folder (default: the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "locomo",
                        help="folder for the report, plot and per-question file (default results/locomo)")
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "cache",
                        help="folder for embedded graph exports (default results/cache, gitignored)")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N questions of each conversation (quick checks)")
    parser.add_argument("--grid", type=int, default=24,
                        help="configs in the leave-one-conversation-out grid, defaults included (default 24)")
    args = parser.parse_args(argv)
    for path in args.conversations:
        if not path.is_file():
            parser.error(f"--conversations: no such file {path}")
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit: expected an integer >= 1, got {args.limit}")
    if args.grid < 1:
        parser.error(f"--grid: expected an integer >= 1, got {args.grid}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    model = configure_model(args.model)
    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets.locomo import build_graph
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import query_modules_dir

    info = provenance(sys.argv if argv is None else ["scripts/eval_locomo.py", *argv])
    data = build_graph(args.conversations)
    runtime = Runtime(query_modules_dir())
    if runtime.load_errors:
        raise SystemExit(f"query modules failed to load: {runtime.load_errors}")
    graph_file, embedding = load_embedded(runtime, data, args.conversations, model, args.cache)
    setup_store(runtime.store)  # as `memgraph-recall setup`: else every call runs unidentified
    users, by_minute, fact_sources = read_turns(graph_file, model)

    scored = [q for q in data.questions if q.evidence]
    if args.limit:
        per_user: Counter = Counter()
        scored = [q for q in scored if (per_user.update([q.user_id]) or per_user[q.user_id] <= args.limit)]
    baselines = Baselines(users, {key_of(q): (q.user_id, q.question) for q in scored}, model)
    texts = action_texts(data.elements)
    literals = {key_of(q): literal for q in scored
                if (literal := literal_answer(q.answer, q.question, [texts.get(e, "") for e in q.evidence]))}
    recall = Recall(runtime, model, by_minute, {key: v.tolist() for key, v in baselines.vectors.items()},
                    literals)

    shown = run_all("recall (timed)", scored, recall.timed)
    ranked = {"recall": run_budgets("recall", scored, recall, {}, BUDGETS)}
    ranked["recall, speaker off"] = run_budgets("speaker off", scored, recall, SIGNALS["speaker"])
    no_facts = {"lanes": NO_FACT_LANES}
    ranked["recall without fact lanes"] = run_budgets("no facts", scored, recall, no_facts)
    ranked["recall without fact lanes, speaker off"] = run_budgets(
        "no facts, speaker off", scored, recall, {**no_facts, **SIGNALS["speaker"]})
    signal_runs = {name: run_budgets(f"without {name}", scored, recall, config)
                   for name, config in SIGNALS.items()}
    lane_runs = {}
    for lane in (*LANES, "fact lanes"):
        off = FACT_LANES if lane == "fact lanes" else (lane,)
        lane_runs[lane] = run_budgets(f"without {lane}", scored, recall,
                                      {"lanes": [x for x in LANES if x not in off]})
    orders = {key_of(q): (baselines.bm25_order(key_of(q)), baselines.dense_order(key_of(q))) for q in scored}
    for position, kind in enumerate(("bm25", "dense")):
        ranked[f"{kind} alone"] = {str(ROWS): {key: Shown(order[position][:ROWS])
                                               for key, order in orders.items()}}
    configs = grid_configs(args.grid)
    grid = [run_all(f"grid {i + 1}/{len(configs)}", scored, lambda q, c=config: recall.ranked(q, c))
            for i, config in enumerate(configs)]
    lane_ranks = {key_of(q): recall.lane_ranks(q) for q in tqdm(scored, desc="recall.lanes", leave=False)}

    rows24 = ranked["recall"][str(ROWS)]
    questions = per_question(scored, rows24, lane_ranks, orders)
    ten = ranked["recall"]["10"] = run_all("turns_budget 10", scored, lambda q: recall.ranked(q, {}, "10"))
    prefix_ok = all(ten[key].rows == rows24[key].rows[: len(ten[key].rows)] for key in ten)
    chars8k = ranked["recall"][DEFAULT_BUDGET]
    default_ok = all(set(shown[key].turns) == set(chars8k[key].turns) for key in shown)
    results = {
        "recall": summarize(scored, shown),
        "side_by_side": {name: at_budgets(scored, outcome) for name, outcome in ranked.items()},
        "signals_off": {name: at_budgets(scored, outcome) for name, outcome in signal_runs.items()},
        "lanes_off": {name: at_budgets(scored, outcome) for name, outcome in lane_runs.items()},
        "leave_one_out": leave_one_out(scored, data.users, configs, grid),
    }
    extra = {
        "users": data.users, "turns": data.turns, "facts": data.facts, "questions": len(scored),
        "no_evidence": sum(1 for q in data.questions if not q.evidence),
        "repaired": sum(1 for i in data.evidence_issues if i.resolved),
        "dropped": sum(1 for i in data.evidence_issues if not i.resolved),
        "embedding": embedding, "agree": recall.agree[True], "calls": sum(recall.agree.values()),
        "render_ms": 1000 * statistics.fmean(recall.seconds), "prefix_ok": prefix_ok,
        "default_ok": default_ok,
        "per_conversation": {user: summary_of([q for q in scored if q.user_id == user and q.category < 5],
                                              shown) for user in data.users},
        "misses": miss_buckets(questions), "fact_sources": sum(len(v) for v in fact_sources.values()),
    }
    write_report(args.results, info, results, extra, questions, model.rsplit("/", 1)[-1])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    head = results["side_by_side"]["recall"]
    print(f"recall, categories 1-4: all evidence {head['8000c']['1-4']['all_evidence']:.3f} at 8,000 "
          f"characters (the default), {head['4000c']['1-4']['all_evidence']:.3f} at 4,000, "
          f"{head['24']['1-4']['all_evidence']:.3f} at 24 TURN rows, {head['10']['1-4']['all_evidence']:.3f} "
          f"at 10; category 5 {head['24']['5']['all_evidence']:.3f} at 24 rows, "
          f"{head['8000c']['5']['all_evidence']:.3f} at 8,000 characters; "
          f"leave-one-out mean {results['leave_one_out']['mean']}; report in {args.results}")
    if recall.agree[False]:
        print(f"WARNING: rendered rows disagree with `recalled` in {recall.agree[False]} calls",
              file=sys.stderr)
    if not prefix_ok:
        print("WARNING: turns_budget=10 did not show the first 10 of the 24-row ranking", file=sys.stderr)
    if not default_ok:
        print("WARNING: the default call did not show what max_chars 8000 shows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
