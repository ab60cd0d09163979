#!/usr/bin/env python
"""The three dev sets together: every ranking signal off in turn, a grid of weights, and leave one dataset
out (weights chosen on two sets, scored on the third), at 24 TURN rows and at 8,000 characters.

Why one script: a signal is kept only if it pays on LongMemEval, LoCoMo and BEAM jointly and costs none of
them more than 0.01 at either budget; and weights fitted to the sets they are scored on look better than
they are, which leaving a whole set out shows. Each set's cached embedded graph comes from its own
evaluation (run those first: `eval_locomo.py`, `eval_longmemeval.py`, `eval_beam.py --chats 1-12`).

A set's score: the share of its headline questions (LoCoMo categories 1-4, LongMemEval all, BEAM's seven
lookup types) with all evidence among the turns a `recall.render` shows (an identical message folded into
a row counts), the question's vector given. A config's fit on some sets: the mean over them of the mean
of its scores at the two budgets. Every render's outcome is cached under `--cache` by the query modules'
code, the set, the config and the budget, so a rerun (or a grid grown later) costs only what is new.

    python scripts/eval_joint.py --locomo ../shared/data/locomo/conv-*.json \\
        --longmemeval ../shared/data/longmemeval/longmemeval_s_dev.json --beam <BEAM>/chats/500K
"""

import argparse
import hashlib
import itertools
import json
import math
import os
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (  # noqa: E402
    ROOT,
    configure_model,
    fast_call,
    markdown_table,
    provenance,
    provenance_lines,
)
from eval_beam import parse_chats  # noqa: E402
from eval_common import BUDGETS, SIGNALS, budget_label, shown_turns  # noqa: E402

#: The two budgets a config is judged at: fixed rows (comparable with every earlier figure) and the
#: default render's characters.
JUDGED = ("24", "8000c")
#: The grid: the signals' weights (a seeded sample of the combinations, the defaults first).
GRID = {
    "role_boost": (1.0, 2.0, 3.0),
    "session_boost": (0.1, 0.2, 0.3),
    "neighbour_boost": (0.35, 0.5, 0.65),
    "speaker_boost": (0.5, 1.0, 2.0),
    "date_boost": (0.5, 1.0, 2.0),
    "other_side_spill": (0.0, 0.25, 0.5),
    "session_spread": (0.0, 0.2, 0.5),
    "opener_boost": (0.0, 1.0, 2.0),
    "rule_boost": (0.0, 1.0, 2.0),
    "feedback_turns": (0, 5, 10),
    "score_share": (0.0, 0.3, 0.5),
}
DEFAULTS = {"role_boost": 2.0, "session_boost": 0.2, "neighbour_boost": 0.5, "speaker_boost": 1.0,
            "date_boost": 1.0, "other_side_spill": 0.25, "session_spread": 0.2, "opener_boost": 2.0,
            "rule_boost": 1.0, "feedback_turns": 5, "score_share": 0.3}


def grid_configs(size: int, seed: int = 7) -> list[dict]:
    """The defaults (as the empty config: what a caller gets) plus a seeded sample of `size - 1` others."""
    combos = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    others = [c for c in combos if c != DEFAULTS]
    return [{}, *random.Random(seed).sample(others, min(size - 1, len(others)))]


def code_key() -> str:
    """The query modules' code: cached outcomes are valid for exactly this code."""
    from memgraph_recall.locate import query_modules_dir

    digest = hashlib.sha256()
    for path in sorted(query_modules_dir().rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class Outcomes:
    """Per set, config and budget: each question's (all evidence shown, share of evidence shown), computed
    once and kept in a JSON-lines file (one line per set, config and budget)."""

    def __init__(self, path: Path, code: str, model: str) -> None:
        self.path, self.code, self.model = path, code, model
        self.known: dict[str, dict] = {}
        if path.is_file():
            for line in path.read_text().splitlines():
                entry = json.loads(line)
                self.known[entry["key"]] = entry["outcomes"]

    def key(self, dev, config: dict, budget: str) -> str:
        return json.dumps([self.code, dev.name, dev.inputs, config, budget], sort_keys=True)

    def of(self, dev, config: dict, budget: str) -> dict[str, tuple[bool, float]]:
        key = self.key(dev, config, budget)
        if key not in self.known:
            outcomes = {}
            label = f"{dev.name} {budget} {config or 'defaults'}"
            for q in tqdm(dev.questions, desc=label, unit="q", leave=False):
                call = {"embedding_model": self.model, **BUDGETS[budget], **config,
                        "query_vector": dev.vectors[q.key]}
                row = fast_call(dev.runtime, "recall.render", q.user_id, q.question, q.today, call)[0]
                shown = set(shown_turns(row["recalled"]))
                hit = len(shown & set(q.evidence))
                outcomes[q.key] = (hit == len(q.evidence), hit / len(q.evidence))
            self.known[key] = outcomes
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as handle:
                handle.write(json.dumps({"key": key, "outcomes": outcomes}) + "\n")
        return self.known[key]


def score(dev, outcomes: dict, group: str = "headline") -> float:
    chosen = [q for q in dev.questions if q.group == group]
    return round(statistics.fmean(outcomes[q.key][0] for q in chosen), 4) if chosen else 0.0


def share(dev, outcomes: dict, group: str) -> float:
    chosen = [q for q in dev.questions if q.group == group]
    return round(statistics.fmean(outcomes[q.key][1] for q in chosen), 4) if chosen else 0.0


def fit(scores: dict, config_index: int, names: Sequence[str]) -> float:
    """The mean over `names` of each set's mean score at the judged budgets."""
    return statistics.fmean(statistics.fmean(scores[config_index][n][b] for b in JUDGED) for n in names)


def per_question(dev, by_budget: dict[str, dict]) -> list[float]:
    """Each headline question's mean all-evidence outcome over the judged budgets (pairs configs' fits)."""
    chosen = [q for q in dev.questions if q.group == "headline"]
    return [statistics.fmean(by_budget[b][q.key][0] for b in JUDGED) for q in chosen]


def paired_error(questions: dict, config_index: int, names: Sequence[str]) -> float:
    """The standard error of a config's fit minus the defaults' on `names`, each question paired with
    itself (the fit is a mean of the sets' means, so their errors add in quadrature)."""
    variances = []
    for n in names:
        diffs = [a - b for a, b in zip(questions[config_index][n], questions[0][n], strict=True)]
        variances.append(statistics.variance(diffs) / len(diffs) if len(diffs) > 1 else 0.0)
    return math.sqrt(sum(variances)) / len(names)


def choose(scores: dict, questions: dict, names: Sequence[str]) -> dict:
    """The grid's best fit on `names`, and the config chosen: the defaults unless the best beats them by
    more than one standard error of the paired difference (the one-standard-error rule: a lead smaller
    than the measurement's noise is not evidence against the defaults)."""
    best = max(scores, key=lambda i: (fit(scores, i, names), i == 0))
    lead = fit(scores, best, names) - fit(scores, 0, names)
    error = paired_error(questions, best, names)
    return {"best": best, "lead": round(lead, 4), "error": round(error, 4),
            "config": best if lead > error else 0}


def leave_one_out(scores: dict, questions: dict, names: Sequence[str]) -> dict:
    """For each set: the config chosen on the other two (`choose`), its fit there and its score on the
    held-out set, beside the defaults' (config 0) in-sample score on it and the best fit's."""
    folds = {}
    for held_out in names:
        others = [n for n in names if n != held_out]
        chosen = choose(scores, questions, others)
        folds[held_out] = {**chosen, "others_fit": round(fit(scores, chosen["config"], others), 4),
                           "held_out": scores[chosen["config"]][held_out],
                           "best_held_out": scores[chosen["best"]][held_out],
                           "defaults": scores[0][held_out]}
    return {"folds": folds, "in_sample": choose(scores, questions, names)}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", nargs="+", type=Path, required=True, help="LoCoMo conversation files")
    parser.add_argument("--longmemeval", type=Path, required=True, help="a LongMemEval file")
    parser.add_argument("--beam", type=Path, required=True, help="BEAM's chats/500K folder")
    parser.add_argument("--beam-chats", type=parse_chats, default=list(range(1, 13)), metavar="N-M",
                        help="the BEAM chats scored (default 1-12, the tuning chats)")
    parser.add_argument("--grid", type=int, default=16, help="configs in the grid, the defaults included")
    parser.add_argument("--no-ablation", action="store_true", help="skip the signals-off runs")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "joint")
    parser.add_argument("--graphs", type=Path, default=ROOT / "results" / "cache",
                        help="where the sets' own evaluations cached their embedded graphs")
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "cache" / "joint.jsonl",
                        help="the renders' outcomes, kept between runs")
    args = parser.parse_args(argv)
    for path in [*args.locomo, args.longmemeval]:
        if not path.is_file():
            parser.error(f"no such file {path}")
    if not args.beam.is_dir():
        parser.error(f"--beam: no such folder {args.beam}")
    if args.grid < 1:
        parser.error(f"--grid: expected an integer >= 1, got {args.grid}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("RECALL_TORCH_THREADS", "1")
    model = configure_model()
    import joint_sets

    info = provenance(sys.argv if argv is None else ["scripts/eval_joint.py", *argv])
    sets = [joint_sets.locomo(args.locomo, model, args.graphs),
            joint_sets.longmemeval(args.longmemeval, model, args.graphs),
            joint_sets.beam(args.beam, args.beam_chats, model, args.graphs)]
    names = [d.name for d in sets]
    outcomes = Outcomes(args.cache, code_key(), model)
    configs = grid_configs(args.grid)
    scores: dict[int, dict] = {}
    questions: dict[int, dict] = {}
    for index, config in enumerate(tqdm(configs, desc="grid", unit="config")):
        by_budget = {d.name: {b: outcomes.of(d, config, b) for b in JUDGED} for d in sets}
        scores[index] = {d.name: {b: score(d, by_budget[d.name][b]) for b in JUDGED} for d in sets}
        questions[index] = {d.name: per_question(d, by_budget[d.name]) for d in sets}
    extra: dict[str, dict] = {}
    for dev in sets:
        per_budget = {b: outcomes.of(dev, {}, b) for b in BUDGETS}
        groups = sorted({q.group for q in dev.questions})
        extra[dev.name] = {g: {b: {"all_evidence": score(dev, o, g), "share": share(dev, o, g)}
                               for b, o in per_budget.items()} for g in groups}
    ablation = {}
    if not args.no_ablation:
        for name, config in tqdm(SIGNALS.items(), desc="signals off", unit="signal"):
            ablation[name] = {d.name: {b: score(d, outcomes.of(d, config, b)) for b in JUDGED} for d in sets}
    results = {"configs": configs, "scores": scores, "leave_one_out": leave_one_out(scores, questions, names),
               "defaults_by_budget": extra, "signals_off": ablation,
               "sets": {d.name: {"inputs": d.inputs, "questions": len(d.questions)} for d in sets}}
    write_report(args.results, info, results, names)
    lodo = results["leave_one_out"]["folds"]
    print("leave one dataset out: " + "; ".join(
        f"{n} {lodo[n]['held_out']} (defaults {lodo[n]['defaults']})" for n in names)
        + f"; report in {args.results}")
    return 0


def write_report(folder: Path, info: dict, results: dict, names: Sequence[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    scores, configs = results["scores"], results["configs"]
    budgets = [budget_label(b) for b in JUDGED]

    def config_text(index: int) -> str:
        changed = {k: v for k, v in configs[index].items() if v != DEFAULTS.get(k)}
        return "defaults" if not changed else ", ".join(f"{k} {v:g}" for k, v in changed.items())

    grid_rows = [[i, config_text(i), *(scores[i][n][b] for n in names for b in JUDGED),
                  round(fit(scores, i, names), 4)] for i in scores]
    lodo = results["leave_one_out"]
    fold_rows = [[n, config_text(f["config"]), f["others_fit"], *(f["held_out"][b] for b in JUDGED),
                  *(f["defaults"][b] for b in JUDGED), config_text(f["best"]),
                  f"{f['lead']:+.4f} / {f['error']}",
                  *(f["best_held_out"][b] for b in JUDGED)] for n, f in lodo["folds"].items()]
    by_budget = []
    for n in names:
        for group, figures in results["defaults_by_budget"][n].items():
            by_budget.append([n, group, *(f"{figures[b]['all_evidence']:.3f} / {figures[b]['share']:.3f}"
                                          for b in BUDGETS)])
    off_rows = [[f"without {s}", *(round(v[n][b] - scores[0][n][b], 4) for n in names for b in JUDGED)]
                for s, v in results["signals_off"].items()]
    lines = [
        "# The three dev sets together", "",
        "Embedded-runtime figures, all-MiniLM-L6-v2, the question's vector given. A set's score: the share "
        "of its headline questions (LoCoMo categories 1-4, LongMemEval all, BEAM's seven lookup types) with "
        "all evidence shown by `recall.render`.", "",
        *provenance_lines(info), "",
        "Sets: " + "; ".join(f"{n} ({s['inputs']}, {s['questions']} questions)"
                             for n, s in results["sets"].items()), "",
        "## The defaults at the four budgets", "",
        "All evidence / mean share of evidence shown, per group.", "",
        markdown_table(["set", "group", *(budget_label(b) for b in BUDGETS)], by_budget), "",
        "## Leave one dataset out", "",
        "For each set, the config chosen on the other two, scored on the held-out set, beside the defaults "
        f"on it. A config's fit: the mean of the sets' scores at {' and '.join(budgets)}. Chosen: the "
        "grid's best fit, unless its lead over the defaults is within one standard error of the paired "
        "difference (questions paired with themselves), when the defaults stay (the one-standard-error "
        "rule). The best fit's lead, that error, and the best fit's own held-out scores are shown beside.",
        "",
        markdown_table(["held out", "chosen on the other two", "their fit",
                        *(f"held out @{b}" for b in budgets), *(f"defaults @{b}" for b in budgets),
                        "best fit", "its lead / error", *(f"best fit held out @{b}" for b in budgets)],
                       fold_rows), "",
        "## Each signal off", "",
        "Change in each set's score with one signal off (its weight 0), against the defaults.", "",
        markdown_table(["run", *(f"{n} @{b}" for n in names for b in budgets)], off_rows)
        if off_rows else "(not run)",
        "",
        "## The grid", "",
        markdown_table(["#", "config", *(f"{n} @{b}" for n in names for b in budgets), "fit"], grid_rows), "",
    ]
    (folder / "README.md").write_text("\n".join(lines))
    (folder / "details.json").write_text(json.dumps({"provenance": info, **results}, indent=1, default=str))


if __name__ == "__main__":
    sys.exit(main())
