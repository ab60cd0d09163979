"""The LoCoMo evaluation's report: markdown tables, a plot, the per-question file and the details JSON."""

import json
from pathlib import Path

from bench_common import markdown_table, provenance_lines
from eval_common import answer_line, budget_label

GROUP_ORDER = ("1-4", "1", "2", "3", "4", "5")


def _budget_rows(runs: dict[str, dict], budgets: tuple[str, ...]) -> list[list]:
    """One row per run and budget: the all-evidence share per category group."""
    return [[name, budget_label(budget), *(runs[name][budget][g]["all_evidence"] for g in GROUP_ORDER)]
            for name in runs for budget in budgets if budget in runs[name]]


def _budget_table(runs: dict[str, dict]) -> str:
    budgets = tuple(next(iter(runs.values())))
    headers = ["run", "budget", "cat 1-4", "cat 1", "cat 2", "cat 3", "cat 4", "cat 5"]
    return markdown_table(headers, _budget_rows(runs, budgets))


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
        f"- `turns_budget: 10` showed exactly the first 10 rows of the 24-row ranking: "
        f"{'yes' if extra['prefix_ok'] else 'NO'}",
        f"- The default call showed what `max_chars: 8000` shows: {'yes' if extra['default_ok'] else 'NO'}",
        f"- Mean `recall.render` time per question: {extra['render_ms']:.1f} ms "
        "(default config, 8,000 characters, question embedding included)",
    ]


def _loo_lines(loo: dict) -> list[str]:
    rows = []
    for fold in loo["folds"]:
        changed = {k: v for k, v in fold["config"].items() if v != loo["defaults"].get(k)}
        rows.append([fold["held_out"], fold["n"], json.dumps(changed) if changed else "defaults",
                     fold["dev"]["24"], fold["dev"]["10"], fold["held_out_score"]["24"],
                     fold["held_out_score"]["10"]])
    best = loo["best_in_sample"]
    return [
        f"Weights chosen on four conversations from a grid of {loo['grid_size']} configs (the defaults and a "
        "seeded sample of the combinations in `GRID`), by the mean of the category 1-4 all-evidence shares "
        "at 24 and 10 TURN rows, then measured on the fifth.", "",
        markdown_table(["held out", "n", "chosen (differs from defaults)", "dev @24", "dev @10",
                        "held out @24", "held out @10"], rows), "",
        f"- Mean over the held-out conversations (question-weighted): **{loo['mean']['24']:.3f}** at 24 TURN "
        f"rows, **{loo['mean']['10']:.3f}** at 10.",
        f"- The defaults on all five: {loo['defaults_score']['24']:.3f} / {loo['defaults_score']['10']:.3f}; "
        f"the grid's best on all five (in-sample): {best['24']:.3f} / {best['10']:.3f} with "
        f"{json.dumps(best['config'])}.",
    ]


def _miss_lines(misses: dict) -> list[str]:
    order = ("1-24", "25-50", "51-200", "> 200")
    rows = [[bucket, misses[bucket]["missing"], misses[bucket]["no_shared_word"]]
            for bucket in order if bucket in misses]
    return [
        "Each evidence turn missing from the default run's 24 TURN rows, by its best rank in any single "
        "turn lane (text, turns, fact_turns, top 200 each) or in the full BM25 / dense rankings. Details per "
        "question in `questions.jsonl`.", "",
        markdown_table(["best single-lane rank", "missing evidence turns",
                        "shares no word with the question"], rows),
    ]


def plot(path: Path, side: dict[str, dict], model: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(side)[::-1]
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(names) + 1.2))
    for offset, (budget, color) in enumerate((("24", "#2b6cb0"), ("10", "#90cdf4"))):
        values = [side[name][budget]["1-4"]["all_evidence"] for name in names]
        ys = [y + 0.2 - 0.4 * offset for y in range(len(names))]
        ax.barh(ys, values, height=0.38, color=color, label=f"{budget} TURN rows")
        for y, v in zip(ys, values, strict=True):
            ax.text(v + 0.005, y, f"{v:.2f}", va="center", fontsize=7)
    ax.set_yticks(range(len(names)), names)
    ax.axvline(0.8, color="#c53030", linestyle="--", linewidth=1)
    ax.axvline(0.72, color="#c53030", linestyle=":", linewidth=1)
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("share of category 1-4 questions with ALL evidence turns shown")
    ax.set_title(f"LoCoMo evidence recall (embedded runtime, {model})")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(out_dir: Path, info: dict, results: dict, extra: dict, questions: list[dict],
                 model: str = "all-MiniLM-L6-v2") -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    side = results["side_by_side"]
    head = side["recall"]
    lines = [
        "# LoCoMo evidence recall", "",
        "Figures from the **embedded runtime** (the in-process stand-in for Memgraph's procedure host), "
        f"model {model}. Headline: share of questions whose evidence turns ALL appear as TURN rows "
        "of `recall.render`, at the default budget (8,000 characters of rendered text), at 4,000, and with "
        "the character budget off at 24 TURN rows and at 10 (the first 10 of the same ranking); a message "
        "said again word for word is shown once and counts as shown; category 5 (adversarial) is reported "
        "on its own. The weights were tuned on these five "
        "conversations (the dev split): the leave-one-out section shows how optimistic that is.", "",
        *provenance_lines(info), "", "## Data", "", *_data_lines(extra), "",
        "## Headline", "",
        f"- Categories 1-4, all evidence shown at the default budget, 8,000 characters: "
        f"**{head['8000c']['1-4']['all_evidence']:.3f}** ({head['8000c']['1-4']['turn_rows']:.1f} TURN rows, "
        f"{head['8000c']['1-4']['chars']:.0f} characters on average), "
        f"**{head['4000c']['1-4']['all_evidence']:.3f}** at 4,000; category 1 (multi-hop) "
        f"{head['8000c']['1']['all_evidence']:.3f} / {head['4000c']['1']['all_evidence']:.3f}.",
        f"- With the character budget off: **{head['24']['1-4']['all_evidence']:.3f}** at 24 TURN rows, "
        f"**{head['10']['1-4']['all_evidence']:.3f}** at 10; category 1 (multi-hop) "
        f"{head['24']['1']['all_evidence']:.3f} / {head['10']['1']['all_evidence']:.3f}.",
        f"- Category 5: {head['24']['5']['all_evidence']:.3f} at 24, {head['10']['5']['all_evidence']:.3f} "
        "at 10.",
        "- Counting an evidence turn as shown when a FACT row read from it is (the facts' share of a "
        f"character budget is worth what they state): {head['8000c']['1-4']['all_evidence_or_facts']:.3f} "
        f"at 8,000 characters, {head['4000c']['1-4']['all_evidence_or_facts']:.3f} at 4,000 (categories "
        f"1-4; {head['8000c']['1-4']['fact_rows']:.1f} / {head['4000c']['1-4']['fact_rows']:.1f} FACT rows "
        "on average).",
        answer_line(head["8000c"]["1-4"], head["4000c"]["1-4"], "category 1-4 questions", "message"),
        f"- With the speaker signal off (agent memory often has only `user` and `assistant`): "
        f"{side['recall, speaker off']['24']['1-4']['all_evidence']:.3f} / "
        f"{side['recall, speaker off']['10']['1-4']['all_evidence']:.3f}.", "",
        "## Side by side", "",
        "All-evidence share per category group. BM25 and dense alone rank every turn of the user and show "
        "the first 24 (or 10) and render nothing, so they have no character budget; recall's figures at 10 "
        "are the first 10 of its fused ranking.", "",
        _budget_table(side), "",
        "Per conversation (default call, 8,000 characters, categories 1-4):", "",
        markdown_table(["conversation", "n", "all evidence shown", "mean evidence recall", "FACT rows",
                        "chars"],
                       [[u, s["n"], s["all_evidence"], s["mean_evidence_recall"], s["fact_rows"], s["chars"]]
                        for u, s in extra["per_conversation"].items()]), "",
        "## Ablation: each ranking signal off", "",
        _budget_table({f"without {name}": runs for name, runs in results["signals_off"].items()}), "",
        "## Ablation: each lane off", "",
        "`fact lanes` = entities, facts and user_facts off.", "",
        _budget_table({f"without {name}": runs for name, runs in results["lanes_off"].items()}), "",
        "## Leave one conversation out", "", *_loo_lines(results["leave_one_out"]), "",
        "## Where recall misses (categories 1-4)", "", *_miss_lines(extra["misses"]), "",
        "![evidence recall](locomo.png)", ""]
    (out_dir / "README.md").write_text("\n".join(lines))
    plot(out_dir / "locomo.png", side, model)
    (out_dir / "questions.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in questions))
    details = {"provenance": info, **results, **extra}
    (out_dir / "details.json").write_text(json.dumps(details, indent=1, default=str))
