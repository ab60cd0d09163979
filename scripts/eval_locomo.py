#!/usr/bin/env python
"""LoCoMo evidence recall: does recall put every evidence turn of a question in front of the model?

One command: load the conversations into one graph, embed it through `recall.embed` on the embedded
runtime (or reuse the embedded export cached under `results/cache/`, keyed by model, input files and
loader), then for every question call `recall.render` and `recall.lanes` with `today` = the
conversation's last session date, and score the TURN rows shown against the evidence turns. In the
same run: BM25-only and dense-only baselines over the same turns and vectors at the same number of
turn rows, recall with each lane off, and recall cut to at most 10 TURN rows. Writes a markdown
report and a PNG under `--results`, and the headline figures to `--json`.

    python scripts/eval_locomo.py --conversations /work/shared/data/locomo/conv-*.json --json out.json
"""

import argparse
import hashlib
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (  # noqa: E402
    ROOT,
    configure_model,
    markdown_table,
    model_folder,
    provenance,
    provenance_lines,
    use_recall_lib,
)

GROUPS = {"1-4": frozenset({1, 2, 3, 4}), "5": frozenset({5})}
LANES = ("memories", "turns", "text", "entities", "facts", "user_facts")
FACT_LANES = ("entities", "facts", "user_facts")
# At most 10 TURN rows: TURN rows come from the turns lane, the text lane and the facts' source turns.
TEN_ROWS = {"turns_k": 4, "text_k": 3, "fact_turns_k": 3}
# At most 10 rows in all (no FACT rows): the like-for-like with systems that show 10 turns.
TEN_ROWS_NO_FACTS = {"lanes": ["memories", "turns", "text"], "turns_k": 5, "text_k": 5}
FIXED_BUDGETS = (10, 20)
_TURN_ROW = re.compile(r"^TURN \[session (?P<session>[^,\]]+), (?P<minute>\d{4}-\d\d-\d\dT\d\d:\d\d)[,\]]")


# -- data ------------------------------------------------------------------------------------------
@dataclass
class UserTurns:
    """One user's turns as the baselines see them: texts, and passage vectors grouped per turn."""

    action_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    vectors: list[np.ndarray] = field(default_factory=list)
    matrix: np.ndarray | None = None
    starts: np.ndarray | None = None  # first passage row of each turn in `matrix`

    def finish(self) -> None:
        counts = [len(v) for v in self.vectors]
        self.matrix = np.concatenate(self.vectors).astype(np.float32)
        self.matrix /= np.linalg.norm(self.matrix, axis=1, keepdims=True)
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


@dataclass
class Shown:
    """What one recall call (or baseline) put in front of the model for one question."""

    turns: list[str]
    facts: int = 0
    chars: int = 0


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def cache_key(model: str, paths: Sequence[Path]) -> str:
    """Model + input files + the code that shapes the graph and its vectors."""
    from memgraph_recall.datasets import locomo, memory_graph
    from memgraph_recall.locate import query_modules_dir

    lib = query_modules_dir() / "recall_lib"
    code = (Path(locomo.__file__), Path(memory_graph.__file__), lib / "passages.py", lib / "embedding.py")
    parts = [model, *(file_sha256(p) for p in paths), *(file_sha256(p) for p in code if p.is_file())]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def embed_all(runtime, model: str) -> dict:
    """Loop `recall.embed` until nothing remains; units and wall time."""
    done = Counter()
    start = time.perf_counter()
    bar = tqdm(desc="recall.embed", unit="unit")
    while True:
        row = runtime.call("recall.embed", {"embedding_model": model, "limit": 500})[0]
        step = sum(int(row[k]) for k in ("messages", "entities", "edges", "memories"))
        done.update({k: int(row[k]) for k in ("messages", "entities", "edges", "memories")})
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
def render(runtime, question, model: str, config: dict,
           by_minute: dict[tuple[str, str], str]) -> tuple[Shown, bool]:
    """One `recall.render`: the TURN rows from `recalled.turns`, checked against the rendered text."""
    row = runtime.call("recall.render", question.user_id, question.question, question.today.isoformat(),
                       {"embedding_model": model, **config})[0]
    text, recalled = row["text"], row["recalled"]
    from_map = [t["action_id"] for t in recalled["turns"]]
    from_text = [by_minute.get((m["session"], m["minute"]), "?") for m in
                 (_TURN_ROW.match(line) for line in text.splitlines()) if m]
    fact_lines = sum(1 for line in text.splitlines() if line.startswith("FACT:"))
    agree = from_text == from_map and fact_lines == len(recalled["facts"])
    return Shown(from_map, len(recalled["facts"]), len(text)), agree


def lane_turns(runtime, question, model: str) -> dict[str, list[str]]:
    """`recall.lanes`: for every lane, the turns its hits are or point to, in rank order."""
    found: dict[str, list[str]] = defaultdict(list)
    for row in runtime.call("recall.lanes", question.user_id, question.question, {"embedding_model": model}):
        if row.get("turn") and row["turn"] not in found[row["lane"]]:
            found[row["lane"]].append(row["turn"])
    return dict(found)


# -- baselines -------------------------------------------------------------------------------------
class Baselines:
    """BM25-only and dense-only rankings of a user's turns, computed here with numpy and recall_lib."""

    def __init__(self, users: dict[str, UserTurns], questions, model: str) -> None:
        use_recall_lib()
        from recall_lib.textindex import BM25Index, query_terms
        from sentence_transformers import SentenceTransformer

        self.users = users
        self._query_terms = query_terms
        self.bm25 = {user: BM25Index.build(turns.texts) for user, turns in users.items()}
        encoder = SentenceTransformer(str(model_folder(model)), device="cpu")
        texts = [q.question for q in questions]
        vectors = encoder.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        self.vectors = {(q.user_id, q.index): v.astype(np.float32)
                        for q, v in zip(questions, vectors, strict=True)}

    def bm25_order(self, question) -> list[str]:
        """Every turn the question's terms match, best first (the text lane's scoring, unlimited)."""
        index = self.bm25[question.user_id]
        docs, _ = index.search(self._query_terms(question.question, index), index.n_docs)
        return [self.users[question.user_id].action_ids[i] for i in docs]

    def dense_order(self, question) -> list[str]:
        """All turns by their best passage cosine to the question, best first (ties by position)."""
        turns = self.users[question.user_id]
        query = self.vectors[(question.user_id, question.index)]
        scores = np.maximum.reduceat(turns.matrix @ query, turns.starts)
        return [turns.action_ids[i] for i in np.argsort(-scores, kind="stable")]

    def shown(self, order: list[str], question, k: int) -> Shown:
        turns = self.users[question.user_id]
        length = dict(zip(turns.action_ids, map(len, turns.texts), strict=True))
        chosen = order[:k]
        return Shown(chosen, 0, sum(length[a] + 1 for a in chosen))


# -- scoring ---------------------------------------------------------------------------------------
def evidence_recall(question, shown: Shown) -> float:
    return len(set(question.evidence) & set(shown.turns)) / len(question.evidence)


def summarize(questions: Iterable, outcomes: dict) -> dict[str, dict[str, float]]:
    """Per category group: the share with ALL evidence shown, mean evidence recall, rows and characters."""
    out = {}
    for group, categories in GROUPS.items():
        chosen = [q for q in questions if q.category in categories and (q.user_id, q.index) in outcomes]
        out[group] = summary_of(chosen, outcomes)
    return out


def summary_of(chosen: list, outcomes: dict) -> dict[str, float]:
    if not chosen:
        return {"all_evidence": 0.0, "mean_evidence_recall": 0.0, "turn_rows": 0.0, "fact_rows": 0.0,
                "chars": 0.0, "n": 0}
    shown = [outcomes[(q.user_id, q.index)] for q in chosen]
    recalls = [evidence_recall(q, s) for q, s in zip(chosen, shown, strict=True)]
    return {"all_evidence": round(sum(r == 1.0 for r in recalls) / len(chosen), 4),
            "mean_evidence_recall": round(statistics.fmean(recalls), 4),
            "turn_rows": round(statistics.fmean(len(s.turns) for s in shown), 2),
            "fact_rows": round(statistics.fmean(s.facts for s in shown), 2),
            "chars": round(statistics.fmean(s.chars for s in shown), 1), "n": len(chosen)}


def lane_summary(questions: list, found: dict) -> dict[str, dict[str, float]]:
    """Per lane, categories 1-4: evidence the lane's hits reach on their own, and evidence only it reaches."""
    chosen = [q for q in questions if q.category in GROUPS["1-4"]]
    lanes = sorted({lane for q in chosen for lane in found[(q.user_id, q.index)]})
    out = {}
    total_evidence = sum(len(q.evidence) for q in chosen)
    for lane in lanes:
        alone, all_found, only = [], 0, 0
        for q in chosen:
            by_lane = found[(q.user_id, q.index)]
            mine = set(by_lane.get(lane, ()))
            others = {t for name, turns in by_lane.items() if name != lane for t in turns}
            hit = set(q.evidence) & mine
            alone.append(len(hit) / len(q.evidence))
            all_found += hit == set(q.evidence)
            only += len(hit - others)
        out[lane] = {"mean_evidence_recall": round(statistics.fmean(alone), 4),
                     "all_evidence": round(all_found / len(chosen), 4),
                     "evidence_only_this_lane": round(only / total_evidence, 4)}
    return out


def rank_bucket(rank: int, lane_width: int, budget: int) -> str:
    if rank <= lane_width:
        return f"1-{lane_width} (inside one lane's width)"
    if rank <= budget:
        return f"{lane_width + 1}-{budget} (inside recall's total turn budget)"
    if rank <= 50:
        return f"{budget + 1}-50"
    return "> 50"


def miss_reasons(questions: list, outcomes: dict, orders: dict, fact_sources: dict[str, set[str]],
                 budget: int, lane_width: int) -> tuple[dict[str, Counter], dict[int, list[dict]]]:
    """Why evidence was missed (categories 1-4): the missing turn's best rank in the full BM25 and dense
    rankings of its user's turns, whether it shares a word with the question, and whether an observation
    fact cites it; plus up to three examples per category (ids only, no dataset text)."""
    reasons: dict[str, Counter] = defaultdict(Counter)
    examples: dict[int, list[dict]] = defaultdict(list)
    for q in questions:
        if q.category not in GROUPS["1-4"]:
            continue
        shown = outcomes[(q.user_id, q.index)]
        missing = [e for e in q.evidence if e not in shown.turns]
        if not missing:
            continue
        bm25, dense = orders[(q.user_id, q.index)]
        details = []
        for turn in missing:
            bm25_rank = bm25.index(turn) + 1 if turn in bm25 else None
            dense_rank = dense.index(turn) + 1
            cited = turn in fact_sources.get(q.user_id, set())
            bucket = rank_bucket(min(r for r in (bm25_rank, dense_rank) if r is not None), lane_width, budget)
            reasons[bucket].update({"missing": 1, "no_shared_word": bm25_rank is None, "cited": cited})
            details.append({"turn": turn, "bm25_rank": bm25_rank, "dense_rank": dense_rank,
                            "cited_by_fact": cited, "best_rank": bucket})
        if len(examples[q.category]) < 3:
            examples[q.category].append({"question": f"{q.conversation} qa[{q.index}]",
                                         "evidence": len(q.evidence), "missing": details})
    return dict(reasons), dict(examples)


# -- report ----------------------------------------------------------------------------------------
def stats_row(name: str, stats: dict) -> list:
    return [name, stats["n"], stats["all_evidence"], stats["mean_evidence_recall"], stats["turn_rows"],
            stats["fact_rows"], stats["chars"]]


STATS_HEADERS = ["run", "n", "all evidence shown", "mean evidence recall", "TURN rows", "FACT rows", "chars"]


def plot(path: Path, bars: list[tuple[str, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.35 * len(bars) + 1.2))
    names = [b[0] for b in bars][::-1]
    values = [b[1] for b in bars][::-1]
    colors = ["#2b6cb0" if n.startswith("recall") else "#a0aec0" for n in names]
    ax.barh(names, values, color=colors)
    for y, v in enumerate(values):
        ax.text(v + 0.005, y, f"{v:.2f}", va="center", fontsize=8)
    ax.axvline(0.8, color="#c53030", linestyle="--", linewidth=1, label="target 0.80")
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("share of category 1-4 questions with ALL evidence turns shown")
    ax.set_title("LoCoMo evidence recall (embedded runtime, all-MiniLM-L6-v2)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _data_lines(extra: dict) -> list[str]:
    emb = extra["embedding"]
    cached = " (measured when the cache was built; this run reused it)" if emb["from_cache"] else ""
    return [
        f"- Conversations: {', '.join(extra['users'])} ({extra['turns']} turns, "
        f"{extra['facts']} observation facts, one graph)",
        f"- Questions: {extra['questions']} scored; {extra['no_evidence']} skipped (no evidence turn)",
        f"- Evidence references repaired: {extra['repaired']}; dropped (no such turn): {extra['dropped']}",
        f"- Embedding: {emb['units']} units in {emb['seconds']} s = **{emb['units_per_s']} units/s** "
        f"through `recall.embed`{cached}",
        f"- Rendered TURN/FACT rows agree with `recalled`: {extra['agree']} of {extra['calls']} calls",
        f"- Mean `recall.render` time per question: {extra['render_ms']:.1f} ms "
        "(question embedding included)",
    ]


def _miss_lines(extra: dict) -> list[str]:
    order = sorted(extra["reasons"].items(), key=lambda kv: int(re.search(r"\d+", kv[0]).group()))
    rows = [[bucket, c["missing"], c["no_shared_word"], c["cited"]] for bucket, c in order]
    lines = ["Each missing evidence turn is placed by its best rank in the full BM25 and dense rankings of "
             f"its user's turns (lane width {extra['lane_width']}, recall's mean turn budget "
             f"{extra['budget']}).", "",
             markdown_table(["best single-lane rank", "missing evidence turns", "shares no word with the "
                             "question", "cited by an observation fact"], rows), "",
             "A sample per category (ids into the LoCoMo files; the dataset's text is not copied here):", ""]
    for category, examples in sorted(extra["examples"].items()):
        lines.append(f"- Category {category}:")
        for example in examples:
            missing = "; ".join(
                f"{m['turn']} (BM25 rank {m['bm25_rank'] or 'none: no shared word'}, dense rank "
                f"{m['dense_rank']}, {'cited' if m['cited_by_fact'] else 'not cited'} by a fact)"
                for m in example["missing"])
            lines.append(f"  - {example['question']}, {example['evidence']} evidence turn(s); "
                         f"missing {missing}")
    return lines


def write_report(out_dir: Path, info: dict, results: dict, extra: dict) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    side = extra["side_by_side"]
    lane_rows = [[lane, s["mean_evidence_recall"], s["all_evidence"], s["evidence_only_this_lane"]]
                 for lane, s in extra["lanes"].items()]
    lines = [
        "# LoCoMo evidence recall", "",
        "Figures from the **embedded runtime** (the in-process stand-in for Memgraph's procedure host), "
        "model all-MiniLM-L6-v2. Headline: share of questions whose evidence turns ALL appear as TURN "
        "rows of `recall.render`'s block; category 5 (adversarial) is reported on its own.", "",
        *provenance_lines(info), "", "## Data", "", *_data_lines(extra), "",
        "## Recall with the default widths", "",
        markdown_table(STATS_HEADERS, [stats_row(f"recall, category {g}", results["recall"][g])
                                       for g in GROUPS]), "",
        "Per conversation (categories 1-4):", "",
        markdown_table(STATS_HEADERS, [stats_row(u, s) for u, s in extra["per_conversation"].items()]), "",
        "## Side by side (categories 1-4)", "",
        "Baselines show, for each question, as many turns as recall showed for it (`matched`: the same "
        "total), or a fixed 10 or 20; BM25 shows fewer when fewer turns share a word with the question. "
        f"`10 TURN rows` uses {TEN_ROWS} (FACT rows still shown); `10 rows, no facts` uses "
        f"{TEN_ROWS_NO_FACTS} (at most 10 rows in all).", "",
        markdown_table(STATS_HEADERS, [stats_row(name, s["1-4"]) for name, s in side]), "",
        "## Ablation (one lane off; `fact lanes` = entities, facts and user_facts off)", "",
        markdown_table(STATS_HEADERS, [stats_row(f"without {lane}", s["1-4"])
                                       for lane, s in results["ablation"].items()]), "",
        "## Per lane (`recall.lanes`, categories 1-4)", "",
        "`alone`: evidence that lane's hits reach by themselves (a fact counts for its source turn); "
        "`only`: share of all evidence turns that no other lane reached.", "",
        markdown_table(["lane", "mean evidence recall alone", "all evidence alone", "only this lane"],
                       lane_rows), "",
        "## Where recall misses (categories 1-4, default widths)", "", *_miss_lines(extra), "",
        "![evidence recall](locomo.png)", ""]
    (out_dir / "README.md").write_text("\n".join(lines))
    plot(out_dir / "locomo.png", [(name, s["1-4"]["all_evidence"]) for name, s in side])
    details = {"provenance": info, **results, **{k: v for k, v in extra.items() if k != "side_by_side"},
               "side_by_side": dict(side)}
    (out_dir / "details.json").write_text(json.dumps(details, indent=1, default=str))


# -- main ------------------------------------------------------------------------------------------
def run_all(name: str, questions: list, call: Callable) -> dict:
    outcomes = {}
    for q in tqdm(questions, desc=name, unit="q", leave=False):
        outcomes[(q.user_id, q.index)] = call(q)
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", nargs="+", type=Path, required=True,
                        help="LoCoMo conversation files (conv-*.json, or locomo10.json)")
    parser.add_argument("--json", type=Path, help="write the headline figures here")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "locomo",
                        help="folder for the markdown report and plot (default results/locomo)")
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "cache",
                        help="folder for embedded graph exports (default results/cache, gitignored)")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N questions of each conversation (quick checks)")
    args = parser.parse_args(argv)
    for path in args.conversations:
        if not path.is_file():
            parser.error(f"--conversations: no such file {path}")
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit: expected an integer >= 1, got {args.limit}")

    model = configure_model()
    from memgraph_recall.datasets.locomo import build_graph
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import query_modules_dir

    info = provenance(sys.argv if argv is None else ["scripts/eval_locomo.py", *argv])
    data = build_graph(args.conversations)
    runtime = Runtime(query_modules_dir())
    if runtime.load_errors:
        raise SystemExit(f"query modules failed to load: {runtime.load_errors}")
    graph_file, embedding = load_embedded(runtime, data, args.conversations, model, args.cache)
    users, by_minute, fact_sources = read_turns(graph_file, model)

    scored = [q for q in data.questions if q.evidence]
    if args.limit:
        per_user: Counter = Counter()
        scored = [q for q in scored if (per_user.update([q.user_id]) or per_user[q.user_id] <= args.limit)]
    agree = Counter()
    render_seconds: list[float] = []

    def recall_call(config: dict, timed: bool = False) -> Callable:
        def call(q) -> Shown:
            start = time.perf_counter()
            shown, ok = render(runtime, q, model, config, by_minute)
            if timed:
                render_seconds.append(time.perf_counter() - start)
            agree[ok] += 1
            return shown
        return call

    runs: dict[str, dict] = {"recall": run_all("recall", scored, recall_call({}, timed=True))}
    found = {(q.user_id, q.index): lane_turns(runtime, q, model) for q in tqdm(scored, desc="recall.lanes",
                                                                              leave=False)}
    ablation = {}
    for lane in (*LANES, "fact lanes"):
        off = FACT_LANES if lane == "fact lanes" else (lane,)
        ablation[lane] = run_all(f"without {lane}", scored,
                                 recall_call({"lanes": [x for x in LANES if x not in off]}))
    runs["recall, 10 TURN rows"] = run_all("10 TURN rows", scored, recall_call(TEN_ROWS))
    runs["recall, 10 rows, no facts"] = run_all("10 rows", scored, recall_call(TEN_ROWS_NO_FACTS))
    for name in ("recall, 10 TURN rows", "recall, 10 rows, no facts"):
        if max(len(s.turns) for s in runs[name].values()) > 10:
            raise RuntimeError(f"{name} showed more than 10 TURN rows")

    baselines = Baselines(users, scored, model)
    orders = {(q.user_id, q.index): (baselines.bm25_order(q), baselines.dense_order(q)) for q in scored}
    matched = {}
    for position, kind in enumerate(("bm25", "dense")):
        matched[kind] = {key: baselines.shown(orders[key][position], q, len(runs["recall"][key].turns))
                         for q in scored for key in [(q.user_id, q.index)]}
        for k in FIXED_BUDGETS:
            runs[f"{kind}, {k} turns"] = {key: baselines.shown(orders[key][position], q, k)
                                          for q in scored for key in [(q.user_id, q.index)]}

    budget = round(summary_of(scored, runs["recall"])["turn_rows"])
    lane_width = 8  # turns_k and text_k defaults of recall.render
    reasons, examples = miss_reasons(scored, runs["recall"], orders, fact_sources, budget, lane_width)
    results = {
        "recall": summarize(scored, runs["recall"]),
        "baselines": {kind: summarize(scored, matched[kind]) for kind in matched},
        "ablation": {lane: summarize(scored, outcome) for lane, outcome in ablation.items()},
    }
    side_by_side = [("recall (default widths)", results["recall"]),
                    ("recall, 10 TURN rows", summarize(scored, runs["recall, 10 TURN rows"])),
                    ("recall, 10 rows, no facts", summarize(scored, runs["recall, 10 rows, no facts"])),
                    ("recall without fact lanes", results["ablation"]["fact lanes"]),
                    ("bm25, matched", results["baselines"]["bm25"]),
                    ("dense, matched", results["baselines"]["dense"])]
    side_by_side += [(name, summarize(scored, outcome)) for name, outcome in runs.items()
                     if name.startswith(("bm25", "dense"))]
    issues = data.evidence_issues
    extra = {
        "users": data.users, "turns": data.turns, "facts": data.facts, "questions": len(scored),
        "no_evidence": sum(1 for q in data.questions if not q.evidence),
        "repaired": sum(1 for i in issues if i.resolved), "dropped": sum(1 for i in issues if not i.resolved),
        "embedding": embedding, "agree": agree[True], "calls": agree[True] + agree[False],
        "render_ms": 1000 * statistics.fmean(render_seconds),
        "per_conversation": {user: summary_of([q for q in scored if q.user_id == user and q.category < 5],
                                              runs["recall"]) for user in data.users},
        "side_by_side": side_by_side, "lanes": lane_summary(scored, found),
        "budget": budget, "lane_width": lane_width, "reasons": reasons, "examples": examples,
    }
    write_report(args.results, info, results, extra)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    head = results["recall"]["1-4"]
    print(f"recall, categories 1-4: all evidence {head['all_evidence']:.3f}, mean recall "
          f"{head['mean_evidence_recall']:.3f}, {head['turn_rows']:.1f} TURN rows, {head['chars']:.0f} chars "
          f"(n={head['n']}); report in {args.results}")
    if agree[False]:
        print(f"WARNING: rendered rows disagree with `recalled` in {agree[False]} calls", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
