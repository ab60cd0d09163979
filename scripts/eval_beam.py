#!/usr/bin/env python
"""BEAM 500K through recall: are a question's evidence messages in what recall shows the model?

Each chat is one user in one graph (`memgraph_recall.datasets.beam`), embedded through `recall.embed` on
the embedded runtime, cached under `--cache` and resumed chat by chat after an interruption. Every
question with evidence ids is asked with `recall.render` (today = the day after the chat's last session)
at the four budgets of `eval_common.BUDGETS` (24 and 10 TURN rows with the character budget off; 8,000
characters of rendered text, the default render, and 4,000), and scored: all evidence shown, and the mean
share of evidence shown; BM25 alone and dense alone at the row budgets on the same turns. Under a character
budget also what a row count cannot see: whether the things the question's rubric says an answer must
mention, where an evidence message writes them word for word, are in the rendered text. The seven
lookup types are reported apart from event_ordering and summarization (11-13 evidence messages on
average). Each lookup evidence message the 24 rows miss is located once more, in the fused ranking at
depth (one `explain` call at `DEEP` rows) and in the BM25 and dense rankings of every turn, so the report
says how far from the rows each miss sits. Writes `README.md`, `details.json` and `questions.jsonl` under
`--results`.

    python scripts/eval_beam.py --data <BEAM checkout>/chats/500K              # all 35 chats
    python scripts/eval_beam.py --data <BEAM checkout>/chats/500K --chats 1-12
"""

import argparse
import ast
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (  # noqa: E402
    ROOT,
    allow_rows,
    configure_model,
    fast_call,
    graph_cache_key,
    markdown_table,
    provenance,
)
from eval_common import (  # noqa: E402
    BUDGETS,
    ROW_BUDGETS,
    Baselines,
    UserTurns,
    action_texts,
    answer_shown,
    budget_label,
    literal_answer,
    shown_turns,
)
from longmemeval_cache import ActionVertices, CacheFiles, load_embedded  # noqa: E402
from longmemeval_scoring import bucket  # noqa: E402

TORCH_THREADS = "2"
#: The deep ranking's TURN rows (`turns_budget`) a missed evidence message is looked for in; the script's
#: own runtime raises the server's row ceiling to allow it.
DEEP = 300
#: The report's rank buckets (`longmemeval_scoring.bucket`, whose last edge is `DEEP`), nearest first.
MISS_BUCKETS = ("<= 24", "<= 50", "<= 100", "<= 300", "unranked")
#: The fused ranking's depths a lookup's whole evidence is looked for within (`ceilings`).
CEILING_DEPTHS = (24, 50, 100, DEEP)
#: A rubric item naming what an answer must say ("LLM response should mention: 13 days").
MENTION = re.compile(r"\bshould\s+(?:mention|include|state|contain)\s*:\s*(.+)$", re.IGNORECASE | re.DOTALL)


def parse_chats(text: str) -> list[int]:
    """`1-12` or `1,4,7` or a mix."""
    chosen = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        first, _, last = part.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            raise argparse.ArgumentTypeError(f"expected chat numbers such as 1-12 or 1,4,7, got {text!r}")
        chosen += range(int(first), int(last or first) + 1)
    if not chosen:
        raise argparse.ArgumentTypeError(f"expected chat numbers such as 1-12, got {text!r}")
    return list(dict.fromkeys(chosen))


def read_turns(vertices: ActionVertices, chats: Sequence, model: str) -> dict[str, UserTurns]:
    users = {}
    for chat in chats:
        turns = users[chat.user_id] = UserTurns()
        for turn in chat.turns:
            props = vertices.properties(turn.action_id)
            if props.get("embedding_model") != model or props.get("passage_embeddings") is None:
                continue
            turns.action_ids.append(turn.action_id)
            turns.texts.append(props["text"])
            turns.vectors.append(np.asarray(props["passage_embeddings"], dtype=np.float32))
        turns.finish()
    return users


def rubric_mentions(root: Path, chats: Sequence[int]) -> dict[str, list[str]]:
    """Question key (`beam.BeamQuestion.key`) -> what its rubric says an answer must mention. BEAM writes a
    rubric as a list or as a list's text."""
    mentions = {}
    for chat in chats:
        probing = json.loads((root / str(chat) / "probing_questions" / "probing_questions.json").read_text())
        for question_type, items in probing.items():
            for index, item in enumerate(items):
                rubric = item.get("rubric") or []
                if isinstance(rubric, str):
                    try:
                        rubric = ast.literal_eval(rubric)
                    except (ValueError, SyntaxError):
                        rubric = [rubric]
                found = [MENTION.search(str(line)) for line in rubric]
                key = f"beam-{chat}/{question_type}/{index}"
                mentions[key] = [m[1].strip().rstrip(".") for m in found if m]
    return mentions


def literal_mentions(question, mentions: Sequence[str], texts: dict[str, str]) -> list[str]:
    """The `mentions` an evidence message of `question` writes word for word
    (`eval_common.literal_answer`)."""
    evidence = [texts.get(turn, "") for turn in question.evidence]
    return [form for m in mentions if (form := literal_answer(m, question.question, evidence)) is not None]


def score(evidence: Sequence[str], shown: Sequence[str]) -> tuple[bool, float]:
    hit = len(set(evidence) & set(shown))
    return hit == len(evidence), hit / len(evidence)


def ask(runtime, model: str, question, config: dict) -> tuple[list[str], str, float]:
    started = time.perf_counter()
    row = fast_call(runtime, "recall.render", question.user_id, question.question, question.today.isoformat(),
                    {"embedding_model": model, **config})[0]
    elapsed = time.perf_counter() - started
    return shown_turns(row["recalled"]), row["text"], elapsed


def deep_ranks(runtime, model: str, question) -> dict[str, int]:
    """Every turn's rank in the fused ranking at `DEEP` rows (`explain`)."""
    config = {"embedding_model": model, "turns_budget": DEEP, "max_chars": 0, "explain": True}
    row = fast_call(runtime, "recall.render", question.user_id, question.question, question.today.isoformat(),
                    config)[0]
    return {turn["action_id"]: turn["fused"]["rank"] for turn in row["recalled"]["turns"]}


def located(missed: Sequence[str], fused: dict[str, int], orders: dict[str, list[str]]) -> list[dict]:
    """Each missed evidence message with its rank in the deep fused ranking (None: not ranked) and in the
    full BM25 (None: shares no word with the question) and dense rankings."""
    def rank(order: list[str], turn: str) -> int | None:
        return order.index(turn) + 1 if turn in order else None

    return [{"turn": turn, "fused": fused.get(turn), "bm25_full": rank(orders["bm25"], turn),
             "dense_full": rank(orders["dense"], turn)} for turn in missed]


def evaluate(
    runtime, model: str, questions: Sequence, baselines: Baselines, lookups: Sequence[str],
    literals: dict[str, list[str]] | None = None,
) -> list[dict]:
    """Every question at every budget; `lookups`: the types whose misses at 24 rows are located;
    `literals`: per question key, the rubric's mentions looked for in the text under a character budget
    (`literal_mentions`)."""
    entries = []
    for question in tqdm(questions, desc="questions", unit="q"):
        entry = {"key": question.key, "type": question.question_type, "evidence": list(question.evidence),
                 "runs": {}}
        wanted = (literals or {}).get(question.key, [])
        for name, config in BUDGETS.items():
            shown, text, seconds = ask(runtime, model, question, config)
            complete, share = score(question.evidence, shown)
            entry["runs"][name] = {"all": complete, "share": share, "turns": len(shown), "chars": len(text),
                                   "ms": round(seconds * 1000, 2), "shown": shown}
            if wanted and name not in ROW_BUDGETS:
                entry["runs"][name]["mentions"] = [answer_shown(form, text) for form in wanted]
        orders = {"bm25": baselines.bm25_order(question.key), "dense": baselines.dense_order(question.key)}
        for run, order in orders.items():
            for name, rows in ROW_BUDGETS.items():
                complete, share = score(question.evidence, order[:rows])
                entry["runs"][f"{run} {name}"] = {"all": complete, "share": share}
        missed = [t for t in question.evidence if t not in entry["runs"]["24"]["shown"]]
        if missed and question.question_type in lookups:
            entry["missed_24"] = located(missed, deep_ranks(runtime, model, question), orders)
        entries.append(entry)
    return entries


def summary(entries: Sequence[dict], groups: dict[str, Sequence[str]]) -> dict:
    out = {}
    for group, types in groups.items():
        chosen = [e for e in entries if e["type"] in types]
        if not chosen:
            continue
        out[group] = {"questions": len(chosen)}
        for run in chosen[0]["runs"]:
            values = [e["runs"][run] for e in chosen]
            figures = {"all_evidence": round(statistics.mean(v["all"] for v in values), 3),
                       "share": round(statistics.mean(v["share"] for v in values), 3)}
            if "turns" in values[0]:
                figures["turns"] = round(statistics.mean(v["turns"] for v in values), 1)
                figures["chars"] = round(statistics.mean(v["chars"] for v in values))
                figures["ms"] = round(statistics.mean(v["ms"] for v in values), 1)
                found = [hit for v in values for hit in v.get("mentions", ())]
                if found:
                    figures["mentions"] = len(found)
                    figures["mentions_in_text"] = round(statistics.mean(found), 3)
            out[group][run] = figures
    return out


def misses(entries: Sequence[dict]) -> dict[str, dict]:
    """type -> the evidence messages the 24 rows miss: how many, by their deep fused rank's bucket, and
    how many share no word with the question."""
    out: dict[str, dict] = {}
    for entry in entries:
        for miss in entry.get("missed_24", ()):
            for name in ("lookup", entry["type"]):
                group = out.setdefault(name, {"missed": 0, "fused": {b: 0 for b in MISS_BUCKETS},
                                              "no_shared_word": 0})
                group["missed"] += 1
                group["fused"][bucket(miss["fused"])] += 1
                group["no_shared_word"] += miss["bm25_full"] is None
    return out


def ceilings(entries: Sequence[dict], lookups: Sequence[str]) -> dict[str, dict[str, float]]:
    """"lookup" and each of the `lookups` types -> for each of `CEILING_DEPTHS`, the share of its questions
    whose every evidence message sits within the fused ranking's first that many rows.

    Why: it bounds what any re-ordering of those rows could show in 24. A question the 24 rows answer
    whole is within every depth; one with a missed message no lane ranked is within none."""
    deepest: dict[str, list] = {}
    for entry in entries:
        if entry["type"] not in lookups:
            continue
        ranks = [miss["fused"] for miss in entry.get("missed_24", ())]
        rank = None if None in ranks else max(ranks, default=0)
        for name in ("lookup", entry["type"]):
            deepest.setdefault(name, []).append(rank)
    return {name: {str(depth): round(sum(r is not None and r <= depth for r in ranks) / len(ranks), 3)
                   for depth in CEILING_DEPTHS} for name, ranks in deepest.items()}


def _mention_lines(lookup: dict) -> list[str]:
    """What a row count cannot see: the rubric's mentions in the rendered text (lookups)."""
    budgets = [run for run in BUDGETS if "mentions" in lookup.get(run, {})]
    if not budgets:
        return []
    found = ", ".join(f"{lookup[run]['mentions_in_text']:.3f} at {budget_label(run)}" for run in budgets)
    count = lookup[budgets[0]]["mentions"]
    return [f"The things the lookups' rubrics say an answer must mention, for the {count} an evidence "
            "message writes word for word (and the question does not), in the rendered text "
            f"(an evidence row counts as shown whatever piece of it is shown): {found}.", ""]


def write_report(folder: Path, info: dict, results: dict, extra: dict, entries: Sequence[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    runs = list(BUDGETS) + [f"{b} {r}" for b in ("bm25", "dense") for r in ROW_BUDGETS]
    labels = [budget_label(r) if r in BUDGETS else f"{r.split()[0]} {budget_label(r.split()[1])}"
              for r in runs]
    rows = []
    for group, figures in results.items():
        cells = [f"{figures[r]['all_evidence']:.3f} / {figures[r]['share']:.3f}" for r in runs]
        rows.append([group, figures["questions"], *cells])
    sizes = [[budget_label(r), results["lookup"][r]["turns"], results["lookup"][r]["chars"],
              results["lookup"][r]["ms"]] for r in BUDGETS] if "lookup" in results else []
    lines = [
        "# BEAM 500K: evidence recall", "",
        "Embedded-runtime figures (the in-process stand-in for Memgraph's procedure host), all-MiniLM-L6-v2, "
        "no extracted facts. Each cell: all evidence shown / mean share of evidence shown. Groups: lookup "
        "(the seven types answered by a few messages), gathering (event ordering and summarization), all "
        "(every question scored), then each type.", "",
        f"- Command: `{info['command']}`", f"- Date: {info['date']}", f"- Machine: {info['machine']}",
        f"- Commit: {info['commit']}",
        f"- Chats: {extra['chats']}; questions scored: {extra['scored']} (abstention and questions without "
        f"evidence ids left out); messages: {extra['messages']:,}", f"- Embedding: {extra['embedding']}", "",
        markdown_table(["group", "questions", *labels], rows), "",
        "What the recall runs showed (lookup questions, means): turns shown (an identical message folded "
        "into a row counts), rendered characters, ms per `recall.render` (warm, the question's embedding "
        "included).", "",
        markdown_table(["budget", "turns", "characters", "ms"], sizes), "",
        *_mention_lines(results.get("lookup", {})),
    ]
    if extra.get("misses"):
        rows = [[name, group["missed"], *group["fused"].values(), group["no_shared_word"]]
                for name, group in extra["misses"].items()]
        lines += [
            "## Where recall misses (lookups, 24 rows)", "",
            "Each evidence message missing from the 24 TURN rows, by its rank in the fused ranking at "
            f"{DEEP} rows (`explain`; unranked: no lane found it and no signal lifted it), and how many "
            "share no word with the question (absent from the full BM25 ranking). Per message in "
            "`questions.jsonl` (`missed_24`, with its BM25 and dense ranks).", "",
            markdown_table(["questions", "missed", *(f"fused {b}" for b in MISS_BUCKETS), "no shared word"],
                           rows), "",
        ]
    if extra.get("ceilings"):
        rows = [[name, *shares.values()] for name, shares in extra["ceilings"].items()]
        lines += [
            "## What re-ordering could reach (lookups)", "",
            "The share of questions whose every evidence message sits within the fused ranking's first "
            "24 / 50 / ... rows: the best any re-ordering of those rows could show in 24 (24: as shown).", "",
            markdown_table(["questions", *(f"within {d}" for d in CEILING_DEPTHS)], rows), "",
        ]
    (folder / "README.md").write_text("\n".join(lines), encoding="utf-8")
    (folder / "details.json").write_text(json.dumps({"info": info, "results": results, "extra": extra},
                                                    indent=2), encoding="utf-8")
    with (folder / "questions.jsonl").open("w", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="BEAM's chats/500K folder")
    parser.add_argument("--chats", type=parse_chats, default=None, metavar="N-M",
                        help="only these chats, e.g. 1-12 (default: all)")
    parser.add_argument("--embed-only", action="store_true", help="embed (and cache) and stop")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "beam")
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "cache")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        parser.error(f"--data: no such folder {args.data}")
    os.environ.setdefault("RECALL_TORCH_THREADS", TORCH_THREADS)
    allow_rows(DEEP)
    model = configure_model()
    from memgraph_recall.client import setup_store
    from memgraph_recall.datasets import beam
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import query_modules_dir

    info = provenance(sys.argv if argv is None else ["scripts/eval_beam.py", *argv])
    try:  # every chat is in the graph (and the cache key), so a subset's vectors serve the full run
        data = beam.load(args.data)
        chosen = {f"beam-{n}" for n in args.chats or ()}
        if chosen - {c.user_id for c in data.chats}:
            raise ValueError(f"no chat {sorted(chosen - {c.user_id for c in data.chats})[0]}")
    except (ValueError, OSError, KeyError) as exc:
        raise SystemExit(f"--data: {exc}") from None
    selected = [c for c in data.chats if not chosen or c.user_id in chosen]
    chats = [int(c.user_id.split("-")[1]) for c in selected]
    runtime = Runtime(query_modules_dir())
    inputs = [folder / "chat.json" for folder in beam.chat_folders(args.data)]
    files = CacheFiles.of(args.cache, graph_cache_key(model, inputs, Path(beam.__file__)), dataset="beam")
    every_chat = SimpleNamespace(elements=data.elements, questions=data.chats)
    embedding = load_embedded(runtime, every_chat, selected, model, files)
    if args.embed_only:
        print(f"embedded: {embedding}")
        return 0
    setup_store(runtime.store)
    runtime.call("recall.status", {"embedding_model": model})
    import torch

    torch.set_num_threads(1)
    scored = [q for c in selected for q in c.questions if q.evidence and q.question_type != "abstention"]
    users = read_turns(ActionVertices(runtime), selected, model)
    baselines = Baselines(users, {q.key: (q.user_id, q.question) for q in scored}, model)
    texts = action_texts(data.elements)
    mentions = rubric_mentions(args.data, chats)
    literals = {q.key: literal_mentions(q, mentions.get(q.key, []), texts) for q in scored}
    entries = evaluate(runtime, model, scored, baselines, beam.LOOKUP_TYPES, literals)
    groups = {"lookup": beam.LOOKUP_TYPES, "gathering": beam.GATHERING_TYPES,
              "all": beam.LOOKUP_TYPES + beam.GATHERING_TYPES,  # every question scored (evidence ids)
              **{t: (t,) for t in beam.QUESTION_TYPES if t != "abstention"}}
    results = summary(entries, groups)
    extra = {"chats": f"{len(chats)} ({chats[0]}..{chats[-1]})" if chats else "none", "scored": len(scored),
             "messages": sum(len(c.turns) for c in selected), "embedding": embedding,
             "misses": misses(entries), "ceilings": ceilings(entries, beam.LOOKUP_TYPES)}
    write_report(args.results, info, results, extra, entries)
    lookup = results.get("lookup", {})
    print("lookup: " + ", ".join(f"{budget_label(run)} {lookup[run]['all_evidence']:.3f}/"
                                 f"{lookup[run]['share']:.3f}" for run in BUDGETS if run in lookup)
          + f"; report in {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
