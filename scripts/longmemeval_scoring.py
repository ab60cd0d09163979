"""The LongMemEval evaluation's figures from what each question's calls returned: evidence shown per run and
budget, LongMemEval's metrics, render times, how deep the evidence sits, the per-question file and misses.

Pure functions over `Outcome`s (one per question, keyed by user id), so they are tested without a model.
"""

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench_common import ms
from eval_common import BUDGETS, ROW_BUDGETS
from longmemeval_metrics import complete, evidence_shown, mean_metrics, question_metrics

#: The row budget the ablations, misses and rankings are read at: fixed TURN rows, not the module's default.
BUDGET = 24
RUNS = ("recall", "bm25", "dense")
#: The depths of the "how deep does the evidence sit" table.
DEPTHS = (10, 24, 50, 100, 200)
#: Rank buckets of the misses table (a rank above the last is "> 300"; none is "unranked").
BUCKET_EDGES = (24, 50, 100, 300)


@dataclass(frozen=True)
class Outcome:
    """Everything measured for one question."""

    shown: dict[str, list[str]]  # run -> its TURN rows at BUDGET, best first
    chars: dict[str, int]  # recall's rendered characters per budget (`eval_common.BUDGETS`)
    orders: dict[str, list[str]]  # run -> its ranking of the user's turns, best first
    lane_ranks: dict[str, dict[str, int]]  # "fused" (deep), "text", "turns" (their top hits) -> turn -> rank
    seconds: tuple[float, float]  # first and second recall.render
    lifts: Counter  # signals that lifted a shown row (explain), counted per row
    agree: bool  # the TURN rows of the text are the `recalled` turns, and the second call renders the same
    prefix_ok: bool  # the 10 rows are the first 10 of the 24, the 24 the first 24 of the deep ranking
    signals_off: dict[str, list[str]] = field(default_factory=dict)  # a signal off -> its rows, best first
    within: dict[str, list[str]] = field(default_factory=dict)  # budget -> the turns recall's render showed
    answered: dict[str, bool] = field(default_factory=dict)  # character budget -> the literal answer is in
    # the text (empty: the answer is not written in an evidence turn, `eval_common.literal_answer`)

    def rows(self, run: str, budget: str) -> list[str]:
        """The turns `run` shows at `budget`: recall's what its render at that budget showed (an identical
        message folded into a row counts), a baseline's the first rows of its ranking."""
        if run == "recall":
            return self.within[budget]
        return self.shown[run][: ROW_BUDGETS[budget]]


def budgets_of(run: str) -> list[str]:
    """The budgets a run is scored at: recall at all four, the baselines at the row budgets (they render
    nothing)."""
    return list(BUDGETS) if run == "recall" else list(ROW_BUDGETS)


def groups(questions: Sequence) -> dict[str, list]:
    """"all" and each question type present, in the benchmark's order."""
    from memgraph_recall.datasets.longmemeval import QUESTION_TYPES

    present = [t for t in QUESTION_TYPES if any(q.question_type == t for q in questions)]
    present += sorted({q.question_type for q in questions} - set(present))
    return {"all": list(questions), **{t: [q for q in questions if q.question_type == t] for t in present}}


# -- evidence shown --------------------------------------------------------------------------------
def shown_scores(question, outcome: Outcome, run: str, budget: str) -> dict[str, float]:
    session_of = {t.action_id: t.haystack_session_id for t in question.turns}
    answer = {t.haystack_session_id for t in question.turns if t.session_id in question.answer_sessions}
    return evidence_shown(question.evidence, answer, outcome.rows(run, budget), session_of)


def coverage(questions: Sequence, outcomes: dict) -> dict:
    """run -> budget -> group -> the mean of each evidence-shown score (and recall's characters)."""
    out: dict = {}
    for run in RUNS:
        out[run] = {}
        for budget in budgets_of(run):
            out[run][budget] = {}
            for name, members in groups(questions).items():
                scores = [shown_scores(q, outcomes[q.user_id], run, budget) for q in members]
                summary = {key: round(statistics.fmean(s[key] for s in scores), 4) for key in scores[0]}
                if run == "recall":
                    chars = [outcomes[q.user_id].chars[budget] for q in members]
                    summary["chars"] = round(statistics.fmean(chars), 1)
                    summary["turn_rows"] = round(statistics.fmean(
                        len(outcomes[q.user_id].rows(run, budget)) for q in members), 2)
                    answered = [outcomes[q.user_id].answered[budget] for q in members
                                if budget in outcomes[q.user_id].answered]
                    summary["answer_in_text"] = round(statistics.fmean(answered), 4) if answered else None
                    summary["answers"] = len(answered)
                out[run][budget][name] = {**summary, "n": len(members)}
    return out


def signals_off(questions: Sequence, outcomes: dict) -> dict:
    """signal switched off -> budget -> group -> the all-evidence share of recall's rows without it."""
    names = next(iter(outcomes.values())).signals_off if outcomes else {}
    return {name: {budget: {group: round(statistics.fmean(
        set(q.evidence) <= set(outcomes[q.user_id].signals_off[name][:k]) for q in members), 4)
        for group, members in groups(questions).items()} for budget, k in ROW_BUDGETS.items()}
        for name in names}


# -- LongMemEval's metrics -------------------------------------------------------------------------
def benchmark_ids(question) -> tuple[dict[str, str], list[str], set[str]]:
    """User turns only: action id -> LongMemEval id, the corpus in history order, and the gold ids."""
    user = [t for t in question.turns if t.role == "user"]
    return ({t.action_id: t.benchmark_id for t in user}, [t.benchmark_id for t in user],
            {t.benchmark_id for t in user if t.has_answer})


def lme_scores(question, outcome: Outcome, skip: bool = True) -> dict[str, dict] | None:
    """LongMemEval's metrics of each run's ranking filtered to user turns. Without a user-side evidence
    turn: None with `skip` (as its retrieval script does since April 2025), else scored as its metrics
    printer scores them (recall_all 1, recall_any 0, ndcg 0)."""
    ids, corpus, gold = benchmark_ids(question)
    if not gold and skip:
        return None
    return {run: question_metrics(complete([ids[a] for a in outcome.orders[run] if a in ids], corpus), gold,
                                  corpus) for run in RUNS}


def lme_summary(questions: Sequence, outcomes: dict) -> dict:
    """run -> group -> level -> mean metric, over the questions with a user-side evidence turn."""
    scored = {q.user_id: lme_scores(q, outcomes[q.user_id]) for q in questions}
    out: dict = {run: {} for run in RUNS}
    for name, members in groups(questions).items():
        kept = [scored[q.user_id] for q in members if scored[q.user_id] is not None]
        for run in RUNS:
            out[run][name] = {**mean_metrics([s[run] for s in kept]), "n": len(kept)}
    out["skipped_no_user_evidence"] = sorted(q.question_id for q in questions if scored[q.user_id] is None)
    unskipped = [lme_scores(q, outcomes[q.user_id], skip=False) for q in questions]
    out["printer_convention"] = {run: {**mean_metrics([s[run] for s in unskipped]), "n": len(unskipped)}
                                 for run in RUNS}
    return out


# -- times and depth -------------------------------------------------------------------------------
def render_times(questions: Sequence, outcomes: dict) -> dict:
    """group -> first / second call -> mean, median and max milliseconds."""
    out = {}
    for name, members in groups(questions).items():
        out[name] = {}
        for index, call in enumerate(("first", "second")):
            values = sorted(outcomes[q.user_id].seconds[index] for q in members)
            out[name][call] = {"mean_ms": ms(statistics.fmean(values)),
                               "median_ms": ms(statistics.median(values)), "max_ms": ms(values[-1])}
    return out


def headroom(questions: Sequence, outcomes: dict, depths: Sequence[int] = DEPTHS) -> dict:
    """run -> group -> k -> the share with all evidence within the first k of the run's ranking."""
    def share(members: list, run: str, k: int) -> float:
        return round(statistics.fmean(set(q.evidence) <= set(outcomes[q.user_id].orders[run][:k])
                                      for q in members), 4)

    return {run: {name: {str(k): share(members, run, k) for k in depths}
                  for name, members in groups(questions).items()} for run in RUNS}


# -- per question and misses -----------------------------------------------------------------------
def rank_of(order: Sequence[str]) -> dict[str, int]:
    return {turn: rank for rank, turn in enumerate(order, 1)}


def per_question(questions: Sequence, outcomes: dict) -> list[dict]:
    """One entry per question, ids only (no dataset text): each evidence turn's rank in the deep fused
    ranking, in the `turns` and `text` lanes, in the full BM25 and dense rankings, and among user turns."""
    entries = []
    for q in questions:
        outcome = outcomes[q.user_id]
        ids, _, _ = benchmark_ids(q)
        full = {run: rank_of(order) for run, order in outcome.orders.items()}
        among_user = {run: rank_of([a for a in order if a in ids]) for run, order in outcome.orders.items()}
        turns = {t.action_id: t for t in q.turns}
        shown = outcome.shown["recall"]
        rows = {budget: set(outcome.rows("recall", budget)) for budget in BUDGETS}
        evidence = [{
            "turn": turn, "benchmark_id": turns[turn].benchmark_id, "role": turns[turn].role,
            **{f"shown_{budget}": turn in rows[budget] for budget in BUDGETS},
            "ranks": {"fused": outcome.lane_ranks["fused"].get(turn),
                      "turns": outcome.lane_ranks["turns"].get(turn),
                      "text": outcome.lane_ranks["text"].get(turn),
                      "bm25_full": full["bm25"].get(turn), "dense_full": full["dense"].get(turn)},
            "user_ranks": {run: among_user[run].get(turn) for run in RUNS},
        } for turn in q.evidence]
        entries.append({
            "id": q.question_id, "type": q.question_type, "turns": len(q.turns), "evidence": evidence,
            "all_evidence": {budget: set(q.evidence) <= rows[budget] for budget in BUDGETS},
            "answer_sessions_touched": {
                budget: bool(shown_scores(q, outcome, "recall", budget)["answer_sessions"])
                for budget in BUDGETS},
            "shown_24": shown, "chars": dict(outcome.chars),
            "render_ms": {"first": ms(outcome.seconds[0]), "second": ms(outcome.seconds[1])},
            "lifts": dict(outcome.lifts), "checks": {"agree": outcome.agree, "prefix_ok": outcome.prefix_ok},
        })
    return entries


def bucket(rank: int | None) -> str:
    if rank is None:
        return "unranked"
    return next((f"<= {edge}" for edge in BUCKET_EDGES if rank <= edge), f"> {BUCKET_EDGES[-1]}")


def misses(entries: list[dict]) -> dict:
    """group -> budget -> the evidence turns recall's rows miss: by role, by their rank in the deep fused
    ranking and by their best rank in the `turns` or `text` lane."""
    out: dict = {}
    for entry in entries:
        for budget in BUDGETS:
            for ev in entry["evidence"]:
                if ev[f"shown_{budget}"]:
                    continue
                ranks = ev["ranks"]
                best = min((r for r in (ranks["turns"], ranks["text"]) if r is not None), default=None)
                for name in ("all", entry["type"]):
                    group = out.setdefault(name, {}).setdefault(budget, {
                        "missed": 0, "roles": Counter(), "fused": Counter(), "best_lane": Counter(),
                        "turns": Counter(), "text": Counter(), "no_shared_word": 0, "fused_ranks": []})
                    group["missed"] += 1
                    group["roles"][ev["role"]] += 1
                    group["fused"][bucket(ranks["fused"])] += 1
                    group["best_lane"][bucket(best)] += 1
                    group["turns"][bucket(ranks["turns"])] += 1
                    group["text"][bucket(ranks["text"])] += 1
                    group["no_shared_word"] += ranks["bm25_full"] is None
                    group["fused_ranks"].append(ranks["fused"])
    for by_budget in out.values():
        for group in by_budget.values():
            known = sorted(r for r in group.pop("fused_ranks") if r is not None)
            group["median_fused_rank"] = statistics.median(known) if known else None
    return out
