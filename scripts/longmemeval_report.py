"""The LongMemEval evaluation's report: markdown tables, a plot, the per-question file, the details JSON."""

import json
from pathlib import Path

from bench_common import markdown_table, provenance_lines
from eval_common import answer_line, budget_label

RUN_NAMES = {"recall": "recall", "bm25": "BM25 alone", "dense": "dense alone"}
LEVELS = ("turn", "session")
BUCKETS = ("<= 24", "<= 50", "<= 100", "<= 300", "> 300", "unranked")
#: The upstream's figure (sessions-graph PR #417, run g417-recall-r1): all evidence for 79 of 92.
UPSTREAM = (79, 92)


def _side_by_side(shown: dict, key: str) -> str:
    """One column per run and budget it was scored at (the baselines at the row budgets only)."""
    columns = [(run, budget) for budget in shown["recall"] for run in shown if budget in shown[run]]
    headers = ["questions", "n", *(f"{RUN_NAMES[run]} @{budget_label(b)}" for run, b in columns)]
    first = next(iter(shown["recall"].values()))
    rows = [[name, first[name]["n"], *(shown[run][b][name][key] for run, b in columns)] for name in first]
    return markdown_table(headers, rows)


def _recall_rows(shown: dict) -> str:
    recall = shown["recall"]
    budgets = list(recall)
    headers = ["questions", *(f"{stat} @{budget_label(b)}" for stat in
                              ("evidence turns shown", "TURN rows", "chars") for b in budgets)]
    keys = ("evidence_recall", "turn_rows", "chars")
    rows = [[name, *(recall[b][name][key] for key in keys for b in budgets)] for name in recall["24"]]
    return markdown_table(headers, rows)


def _lme_overall(lme: dict, ks: list[int]) -> str:
    rows = []
    for level in LEVELS:
        for metric in ("recall_all", "recall_any", "ndcg_any"):
            for run in RUN_NAMES:
                values = lme[run]["all"][level]
                rows.append([level, metric, RUN_NAMES[run], *(values[f"{metric}@{k}"] for k in ks)])
    return markdown_table(["level", "metric", "ranking", *(f"@{k}" for k in ks)], rows)


def _lme_per_type(lme: dict, level: str) -> str:
    names = [n for n in lme["recall"] if n != "all"]
    cols = [("recall_all", 5), ("recall_all", 10), ("recall_all", 50), ("ndcg_any", 10)]
    headers = ["type", "n", *(f"{RUN_NAMES[run]} {m}@{k}" for m, k in cols for run in RUN_NAMES)]
    rows = [[name, lme["recall"][name]["n"],
             *(lme[run][name][level][f"{m}@{k}"] if lme[run][name]["n"] else "-" for m, k in cols
               for run in RUN_NAMES)]
            for name in ["all", *names]]
    return markdown_table(headers, rows)


def _signals(off: dict, shown: dict) -> str:
    names = list(shown["recall"]["24"])
    budgets = next(iter(off.values())).keys() if off else ("24", "10")
    rows = [["recall (all signals on)", k, *(shown["recall"][k][g]["all_evidence"] for g in names)]
            for k in budgets]
    rows += [[f"without {name}", k, *(off[name][k][g] for g in names)] for name in off for k in off[name]]
    return markdown_table(["run", "TURN rows", *names], rows)


def _tuning_lines(tuning: dict) -> str:
    """The held-out folds and their weighted mean beside the in-sample figures."""
    mean, base = tuning["mean"], tuning["defaults_score"]
    best = tuning["best_in_sample"]
    rows = [[f["held_out"], f["n"], ", ".join(f"{k} {v:g}" for k, v in f["config"].items()),
             f["held_out_score"]["24"], f["held_out_score"]["10"], f["defaults_on_it"]["24"],
             f["defaults_on_it"]["10"]] for f in tuning["folds"]]
    table = markdown_table(["held-out type", "n", "config best on the other five", "held-out @24", "@10",
                            "defaults @24", "@10"], rows)
    return "\n".join([
        f"A grid of {tuning['grid_size']} configs (the defaults and a seeded sample of "
        "`scripts/longmemeval_tuning.py`'s GRID). For each type, the config with the best mean of the "
        "all-evidence shares at 24 and 10 rows on the other five types, scored on the held-out type.", "",
        f"- Leave-one-type-out (question-weighted): **{mean['24']:.3f}** at 24 rows, **{mean['10']:.3f}** "
        f"at 10; in-sample with the defaults {base['24']:.3f} / {base['10']:.3f}; the grid's best on all "
        f"types {best['24']:.3f} / {best['10']:.3f} "
        f"({', '.join(f'{k} {v:g}' for k, v in best['config'].items())}).",
        "", table])


def _times(times: dict) -> str:
    rows = [[name, *(times[name][call][stat] for call in ("first", "second")
                     for stat in ("mean_ms", "median_ms", "max_ms"))] for name in times]
    headers = ["questions", "first: mean ms", "median", "max", "second: mean ms", "median", "max"]
    return markdown_table(headers, rows)


def _headroom(headroom: dict) -> str:
    depths = list(headroom["recall"]["all"])
    rows = [[name, RUN_NAMES[run], *(headroom[run][name][k] for k in depths)]
            for name in headroom["recall"] for run in RUN_NAMES]
    return markdown_table(["questions", "ranking", *(f"first {k}" for k in depths)], rows)


def _misses(misses: dict, budget: str) -> str:
    rows = []
    for name, by_budget in misses.items():
        group = by_budget.get(budget)
        if not group:
            continue
        roles = ", ".join(f"{role} {n}" for role, n in sorted(group["roles"].items()))
        rows.append([name, group["missed"], roles, group["median_fused_rank"] or "-",
                     *(group["fused"].get(b, 0) for b in BUCKETS),
                     *(group["best_lane"].get(b, 0) for b in BUCKETS), group["no_shared_word"]])
    headers = ["questions", "missed", "roles", "median fused rank",
               *(f"fused {b}" for b in BUCKETS), *(f"best lane {b}" for b in BUCKETS), "no shared word"]
    return markdown_table(headers, rows)


def _failing(entries: list[dict], budget: str) -> str:
    """Every evidence turn a failing question misses, with its rank in each ranking."""
    rows = []
    for entry in entries:
        if entry["all_evidence"][budget]:
            continue
        for ev in entry["evidence"]:
            if not ev[f"shown_{budget}"]:
                ranks = ev["ranks"]
                rows.append([entry["id"], entry["type"], ev["benchmark_id"], ev["role"],
                             *(ranks[k] if ranks[k] is not None else "-" for k in
                               ("fused", "turns", "text", "bm25_full", "dense_full"))])
    headers = ["question", "type", "missed turn", "role", "fused", "turns lane", "text lane", "BM25 full",
               "dense full"]
    return markdown_table(headers, rows)


def _printer_line(lme: dict) -> str:
    printer = lme["printer_convention"]
    values = ", ".join(f"{RUN_NAMES[run]} {printer[run]['turn']['recall_all@10']:.3f} / "
                       f"{printer[run]['turn']['recall_any@10']:.3f}" for run in RUN_NAMES)
    return (f"With the printer's convention instead (all {printer['recall']['n']} questions, those without a "
            f"user-side evidence turn scored recall_all 1, recall_any 0), turn-level recall_all@10 / "
            f"recall_any@10: {values}.")


def _data_lines(extra: dict) -> list[str]:
    emb = extra["embedding"]
    cached = " (measured when the cache was built; this run reused it)" if emb["from_cache"] else ""
    lifted = ", ".join(f"{k} {v}" for k, v in sorted(extra["lifted"].items())) or "none"
    return [
        f"- File: `{extra['file']}`: {extra['questions']} questions ({extra['abstention']} abstention, not "
        f"scored), {extra['sessions']} sessions, {extra['turns']} turns, one graph, one user per question; "
        f"{extra['repeated_sessions']} sessions held twice by one history (kept as two Sessions)",
        f"- Scored: {extra['scored']} questions"
        + (f" (types {', '.join(extra['types'])})" if extra["types"] else "")
        + (f" (first {extra['limit']})" if extra["limit"] else "")
        + f"; evidence turns: {extra['user_evidence']} user, {extra['assistant_evidence']} assistant",
        f"- Embedding: {emb['messages']} messages ({emb['passages']} passages) in {emb['seconds']} s = "
        f"**{emb['messages_per_s']} messages/s, {emb['passages_per_s']} passages/s** through `recall.embed` "
        f"(torch threads {extra['torch_threads']}){cached}; cache `results/cache/{extra['cache_file']}`",
        f"- Rendered TURN rows agree with `recalled` (and the second call renders the same text): "
        f"{extra['agree']} of {extra['scored']} questions",
        f"- 10 rows = the first 10 of the 24, and the 24 = the first 24 of the deep ranking: "
        f"{extra['prefix_ok']} of {extra['scored']} questions",
        f"- Deep ranking (`recall.render` with `explain` at `turns_budget` {extra['deep']}, the same ranking "
        f"as the rows): at least {extra['deep_user_turns_min']} user turns ranked in every question (k = 50 "
        "needs 50). Not `recall.lanes`: it takes no `today`, so its fused lane misses relative dates "
        "(\"last week\") and can rank differently from the rows",
        f"- Load average (1, 5, 15 min) before and after the scored calls: {extra['load_average'][:3]} / "
        f"{extra['load_average'][3:]} (the machine is shared; times scale with it)",
        f"- Questions with a shown row lifted by a signal (`explain`): {lifted}",
    ]


def plot(path: Path, shown: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(shown["recall"]["24"])
    colors = {"recall": "#2b6cb0", "bm25": "#dd6b20", "dense": "#38a169"}
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.5 * len(names) + 1.8), sharey=True)
    for ax, budget in zip(axes, ("24", "10"), strict=True):
        for offset, run in enumerate(RUN_NAMES):
            values = [shown[run][budget][name]["all_evidence"] for name in names][::-1]
            ys = [y + 0.27 - 0.27 * offset for y in range(len(names))]
            ax.barh(ys, values, height=0.26, color=colors[run], label=RUN_NAMES[run])
            for y, v in zip(ys, values, strict=True):
                ax.text(v + 0.01, y, f"{v:.2f}", va="center", fontsize=6)
        ax.set_xlim(0, 1.1)
        ax.set_title(f"{budget} TURN rows", fontsize=10)
        ax.set_xlabel("share of questions with ALL evidence turns shown")
    axes[0].set_yticks(range(len(names)), names[::-1])
    axes[0].axvline(0.95, color="#c53030", linestyle="--", linewidth=1, label="target 0.95")
    axes[1].axvline(0.88, color="#c53030", linestyle="--", linewidth=1, label="target 0.88")
    axes[0].legend(loc="lower left", fontsize=7, handles=axes[0].get_lines())
    axes[1].legend(loc="lower right", fontsize=8)
    fig.suptitle("LongMemEval S evidence recall (embedded runtime, all-MiniLM-L6-v2, no facts)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(out_dir: Path, info: dict, results: dict, extra: dict, entries: list[dict]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    shown, lme = results["shown"], results["longmemeval"]
    head = shown["recall"]
    ks = extra["ks"]
    skipped = lme["skipped_no_user_evidence"]
    n24 = round(head["24"]["all"]["all_evidence"] * head["24"]["all"]["n"])
    lines = [
        "# LongMemEval S: evidence recall", "",
        "Figures from the **embedded runtime** (the in-process stand-in for Memgraph's procedure "
        "host), model "
        "all-MiniLM-L6-v2, no extracted facts (LongMemEval has none: this is what a user without an "
        "extractor "
        "gets). Each question is its own user with its own history (~48 sessions, ~490 turns). Headline: the "
        "share of questions whose `has_answer` turns (user or assistant) ALL appear among the TURN rows of "
        "`recall.render`, at the default budget (8,000 characters of rendered text: header and rows), at "
        "4,000, and with the character budget off at a fixed 24 TURN rows and at 10 (the first 10 of the "
        "same ranking; a message said again word for word is shown once, and counts as shown). Abstention "
        "questions (`_abs`) are not scored. The role and neighbour weights (`role_boost`, "
        "`neighbour_boost`) were chosen on this file and LoCoMo's together, the others on LoCoMo; the "
        "leave-one-type-out section shows what that is worth.", "",
        *provenance_lines(info), "", "## Data", "", *_data_lines(extra), "",
        "## Headline", "",
        f"- All evidence shown at the default budget, 8,000 characters of rendered text: "
        f"**{head['8000c']['all']['all_evidence']:.3f}** ({head['8000c']['all']['turn_rows']:.1f} TURN rows, "
        f"{head['8000c']['all']['chars']:.0f} characters on average); at 4,000 characters "
        f"**{head['4000c']['all']['all_evidence']:.3f}**.",
        answer_line(head["8000c"]["all"], head["4000c"]["all"], "questions", "turn"),
        f"- With the character budget off: **{head['24']['all']['all_evidence']:.3f}** at 24 TURN rows "
        f"({n24} of "
        f"{head['24']['all']['n']}), **{head['10']['all']['all_evidence']:.3f}** at 10; BM25 alone "
        f"{shown['bm25']['24']['all']['all_evidence']:.3f} / "
        f"{shown['bm25']['10']['all']['all_evidence']:.3f}, "
        f"dense alone {shown['dense']['24']['all']['all_evidence']:.3f} / "
        f"{shown['dense']['10']['all']['all_evidence']:.3f}.",
        f"- LongMemEval's own metrics (user turns): turn-level recall_all@10 "
        f"**{lme['recall']['all']['turn']['recall_all@10']:.3f}**, @50 "
        f"{lme['recall']['all']['turn']['recall_all@50']:.3f}; session-level recall_all@10 "
        f"{lme['recall']['all']['session']['recall_all@10']:.3f}; ndcg_any@10 (turn) "
        f"{lme['recall']['all']['turn']['ndcg_any@10']:.3f}.",
        "- The upstream's recall (sessions-graph PR #417, run g417-recall-r1) reports all evidence "
        "retrieved "
        f"for {UPSTREAM[0]} of {UPSTREAM[1]} questions ({UPSTREAM[0] / UPSTREAM[1]:.3f}) on its own "
        "100-question subset, with bge-small-en-v1.5 and facts from its own extractor. Here: a different "
        "subset (these 99 dev questions), all-MiniLM-L6-v2, no facts, 24 TURN rows; not the same "
        "measurement.",
        "",
        "## All evidence shown, side by side", "",
        "Share of questions with every `has_answer` turn among the rows. BM25 and dense alone rank "
        "every turn "
        "of the user (the module's BM25 over whole turns; dense = best passage cosine) and show their first "
        "24 or 10.", "",
        _side_by_side(shown, "all_evidence"), "",
        "Any evidence turn shown:", "", _side_by_side(shown, "any_evidence"), "",
        "Every answer session touched by a shown row:", "", _side_by_side(shown, "answer_sessions"), "",
        "Distinct sessions the rows come from (mean):", "", _side_by_side(shown, "sessions"), "",
        "recall alone: share of evidence turns shown, TURN rows and characters rendered per budget:", "",
        _recall_rows(shown), "",
        "## LongMemEval's retrieval metrics", "",
        "As its repository defines them (`src/retrieval/eval_utils.py`, `run_retrieval.py`): each ranking is "
        "filtered to user turns (LongMemEval's documents, ids `<session_id>_<i>`), completed with "
        "the unranked "
        "user turns in history order; gold = the `has_answer` user turns; session level = the turn ranking "
        "with session ids, k grown until k distinct sessions (see `scripts/longmemeval_metrics.py`). "
        f"Questions without a user-side evidence turn are **skipped** ({len(skipped)}: "
        f"{', '.join(skipped) or 'none'}), as the retrieval script does since April 2025 (its metrics "
        "printer "
        "would score them recall_all 1, recall_any 0). recall's ranking is its fused ranking, deep enough "
        "for k = 50.", "",
        _lme_overall(lme, ks), "", _printer_line(lme), "",
        "Per type, turn level:", "", _lme_per_type(lme, "turn"), "",
        "Per type, session level:", "", _lme_per_type(lme, "session"), "",
        "## Ranking signals off", "",
        "All evidence shown with one signal of the fused ranking switched off (its weight 0; `all signals`: "
        "plain reciprocal-rank fusion of the lanes). The speaker signal never fires here: no question names "
        "`user` or `assistant`. The role signal fires on every question (each speaks in the first person, "
        "or asks what the assistant said).", "",
        _signals(results["signals_off"], shown), "",
        "## Leave one question type out", "",
        _tuning_lines(results["leave_one_type_out"]), "",
        "## recall.render time per question", "",
        "First call on a cold cache for that user (`recall.invalidate` before it: the user's snapshot is "
        "built, the question embedded), then a second call (warm), both at the default budget (8,000 "
        "characters) with the module "
        f"embedding the question, on {extra['scoring_threads']} torch thread(s) (the module's default; "
        "the embedding used more). The model is loaded before the first timed call.", "",
        _times(results["render_time"]), "",
        "## How deep the evidence sits", "",
        "Share of questions with all evidence within the first k of each full ranking (recall: its deep "
        "fused ranking; all turns, user and assistant).", "",
        _headroom(results["headroom"]), "",
        "## Where recall misses", "",
        "Each evidence turn missing from recall's 24 TURN rows, by its rank in the deep fused ranking and "
        "its best rank in the `turns` (vector) or `text` (BM25) lane (each votes with its first "
        "`fusion_depth`, 300); \"no shared word\": BM25 does not match it at all. "
        "Per question and turn in `questions.jsonl`.", "",
        _misses(results["misses"], "24"), "",
        "The same at 10 TURN rows:", "", _misses(results["misses"], "10"), "",
        "The same at 8,000 characters (the default):", "", _misses(results["misses"], "8000c"), "",
        "Each evidence turn missing from the 24 rows, with its rank in the deep fused ranking, in the "
        "`turns` and `text` lanes (first 300 each; - = not among them) and in the full BM25 / dense rankings "
        "(- = BM25 does not match it):", "", _failing(entries, "24"), "",
        "![evidence recall](longmemeval.png)", ""]
    (out_dir / "README.md").write_text("\n".join(lines))
    plot(out_dir / "longmemeval.png", shown)
    (out_dir / "questions.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    headline = {run: {k: shown[run][k]["all"] for k in shown[run]} for run in shown}
    (out_dir / "headline.json").write_text(json.dumps(
        {"all_evidence": headline, "longmemeval": {run: lme[run]["all"] for run in RUN_NAMES},
         "render_time": results["render_time"]["all"]}, indent=1))
    (out_dir / "details.json").write_text(json.dumps({"provenance": info, **results, **extra}, indent=1,
                                                     default=str))
