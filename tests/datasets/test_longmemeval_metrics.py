"""LongMemEval's retrieval metrics and the evidence-shown scores, against values computed by hand; the
evaluation's scoring on the hand-written history (no model)."""

import sys
from collections import Counter
from pathlib import Path

import pytest
from longmemeval_history import history
from memgraph_recall.datasets.longmemeval import build_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from longmemeval_metrics import (  # noqa: E402
    complete,
    dcg,
    evaluate,
    evaluate_sessions,
    evidence_shown,
    mean_metrics,
    question_metrics,
)
from longmemeval_scoring import (  # noqa: E402
    Outcome,
    coverage,
    headroom,
    lme_scores,
    lme_summary,
    misses,
    per_question,
    render_times,
    signals_off,
)

# Six user turns of one history; two gold turns in the answer session `answer_x` (its third turn has no
# has_answer and carries the `noans` name, as LongMemEval renames it).
CORPUS = ["s1_1", "s1_3", "answer_x_1", "noans_x_3", "answer_x_5", "s2_1"]
GOLD = {"answer_x_1", "answer_x_5"}
RANKING = ["s1_1", "answer_x_5", "s2_1", "answer_x_1", "noans_x_3", "s1_3"]


def test_dcg_leaves_the_first_two_places_undiscounted():
    assert dcg([1, 1, 1], 3) == pytest.approx(1 + 1 + 1 / 1.5849625007211562)
    assert dcg([0, 0, 1, 0], 4) == pytest.approx(1 / 1.5849625007211562)
    assert dcg([], 5) == 0.0


@pytest.mark.parametrize(("k", "any_", "all_", "ndcg"), [
    (1, 0.0, 0.0, 0.0),  # [0] over the ideal [1]
    (2, 1.0, 0.0, 0.5),  # [0, 1] = 1 over [1, 1] = 2
    (3, 1.0, 0.0, 0.5),  # [0, 1, 0] = 1 over 2
    (4, 1.0, 1.0, 0.75),  # [0, 1, 0, 1] = 1 + 1/log2(4) = 1.5 over 2
    (50, 1.0, 1.0, 0.75),
])
def test_turn_level_metrics_match_hand_computed_values(k, any_, all_, ndcg):
    got = evaluate(RANKING, GOLD, CORPUS, k)
    assert got == {"recall_any": any_, "recall_all": all_, "ndcg_any": pytest.approx(ndcg)}


@pytest.mark.parametrize(("k", "all_", "ndcg"), [
    (1, 0.0, 0.0),  # depth 1: {s1}
    (2, 1.0, 0.5),  # depth 2: {s1, answer_x}; relevance [0, 1] over the ideal [1, 1]
    (4, 1.0, 0.75),  # depth 5 (s1, answer_x, s2, answer_x, noans_x); [0, 1, 0, 1, 0] = 1.5 over 2
    (10, 1.0, 0.75),  # fewer than 10 sessions: the whole ranking
])
def test_session_level_metrics_grow_k_to_k_distinct_sessions(k, all_, ndcg):
    got = evaluate_sessions(RANKING, GOLD, CORPUS, k)
    assert got["recall_all"] == all_ and got["ndcg_any"] == pytest.approx(ndcg)


def test_a_gold_session_is_found_only_through_its_gold_turns():
    # the answer session's renamed turn first: its session is `noans_x`, not the gold `answer_x`
    ranking = ["noans_x_3", "s1_1", "s2_1", "s1_3", "answer_x_1", "answer_x_5"]
    assert evaluate_sessions(ranking, GOLD, CORPUS, 1)["recall_any"] == 0.0
    assert evaluate_sessions(ranking, GOLD, CORPUS, 3)["recall_any"] == 0.0  # noans_x, s1, s2
    assert evaluate_sessions(ranking, GOLD, CORPUS, 4)["recall_all"] == 1.0  # depth 5 reaches answer_x


def test_no_gold_scores_as_the_printer_would():
    assert evaluate(RANKING, set(), CORPUS, 5) == {"recall_any": 0.0, "recall_all": 1.0, "ndcg_any": 0.0}


def test_question_metrics_and_their_mean():
    one = question_metrics(RANKING, GOLD, CORPUS, ks=(2, 4))
    assert one["turn"] == {"recall_any@2": 1.0, "recall_all@2": 0.0, "ndcg_any@2": 0.5,
                           "recall_any@4": 1.0, "recall_all@4": 1.0, "ndcg_any@4": 0.75}
    assert one["session"]["recall_all@2"] == 1.0
    best = question_metrics(complete(["answer_x_1", "answer_x_5"], CORPUS), GOLD, CORPUS, ks=(2, 4))
    assert best["turn"]["ndcg_any@2"] == 1.0
    mean = mean_metrics([one, best])
    assert mean["turn"]["recall_all@2"] == 0.5 and mean["turn"]["ndcg_any@2"] == 0.75


def test_complete_appends_the_unranked_in_corpus_order():
    assert complete(["s2_1", "answer_x_1"], CORPUS) == ["s2_1", "answer_x_1", "s1_1", "s1_3", "noans_x_3",
                                                        "answer_x_5"]


def test_evidence_shown_counts_all_any_and_sessions():
    session_of = {"a1": "answer_s", "a2": "answer_s", "b1": "answer_t", "c1": "chat"}
    got = evidence_shown(["a2", "b1"], {"answer_s", "answer_t"}, ["c1", "a2"], session_of)
    assert got == {"all_evidence": 0.0, "any_evidence": 1.0, "evidence_recall": 0.5, "answer_sessions": 0.0,
                   "sessions": 2.0}
    got = evidence_shown(["a2", "b1"], {"answer_s", "answer_t"}, ["a1", "b1", "a2"], session_of)
    assert got == {"all_evidence": 1.0, "any_evidence": 1.0, "evidence_recall": 1.0, "answer_sessions": 1.0,
                   "sessions": 2.0}


# -- the evaluation's scoring on the hand-written history --------------------------------------------------
def outcome(question, order: list[str], budget: int = 24) -> Outcome:
    return Outcome(shown={run: order[:budget] for run in ("recall", "bm25", "dense")},
                   chars={"24": 2400, "10": 1000, "8000c": 3000, "4000c": 1500},
                   orders={run: order for run in ("recall", "bm25", "dense")},
                   lane_ranks={"fused": {t: r for r, t in enumerate(order, 1)}, "turns": {}, "text": {}},
                   seconds=(0.2, 0.05), lifts=Counter({"session": 3}), agree=True, prefix_ok=True,
                   signals_off={"session": order[::-1]},
                   within={"24": order[:budget], "10": order[:min(budget, 10)], "8000c": order[:budget],
                           "4000c": order[:5]})


@pytest.fixture(scope="module")
def scored():
    data = build_graph(history())
    questions = [q for q in data.questions if not q.abstention]
    outcomes = {}
    for q in questions:  # the evidence last: shown within 24 rows, missed within 2
        order = [t.action_id for t in q.turns if not t.has_answer] + list(q.evidence)
        outcomes[q.user_id] = outcome(q, order)
    return questions, outcomes


def test_assistant_only_evidence_is_shown_but_skipped_by_longmemeval(scored):
    questions, outcomes = scored
    assist, plants = questions
    assert lme_scores(assist, outcomes[assist.user_id]) is None  # no has_answer user turn
    plants_scores = lme_scores(plants, outcomes[plants.user_id])
    # user turns of hq-plants, ranked: the non-gold ones (gar_2 turn 1, the chat_rep turn), then gold
    assert plants_scores["recall"]["turn"]["recall_all@5"] == 1.0
    summary = lme_summary(questions, outcomes)
    assert summary["skipped_no_user_evidence"] == ["hq-assist"]
    assert summary["recall"]["all"]["n"] == 1 and summary["recall"]["single-session-assistant"]["n"] == 0
    printer = summary["printer_convention"]["recall"]  # hq-assist scored recall_all 1, recall_any 0
    assert printer["n"] == 2 and printer["turn"]["recall_any@5"] == 0.5
    assert printer["turn"]["recall_all@5"] == 1.0
    shown = coverage(questions, outcomes)
    assert shown["recall"]["24"]["all"]["all_evidence"] == 1.0
    assert shown["recall"]["24"]["single-session-assistant"] == {
        "all_evidence": 1.0, "any_evidence": 1.0, "evidence_recall": 1.0, "answer_sessions": 1.0,
        "sessions": 4.0, "chars": 2400.0, "turn_rows": 11.0, "n": 1,
        "answer_in_text": None, "answers": 0}  # no literal answer looked for (and a row budget has no text)
    assert set(shown["recall"]) == {"24", "10", "8000c", "4000c"} and set(shown["bm25"]) == {"24", "10"}
    assert shown["recall"]["4000c"]["all"]["all_evidence"] == 0.0  # the evidence is last: not in the first 5
    assert shown["recall"]["8000c"]["all"]["chars"] == 3000.0


def test_per_question_ranks_and_misses(scored):
    questions, outcomes = scored
    plants = questions[1]
    narrow = {**outcomes, plants.user_id: outcome(plants, outcomes[plants.user_id].orders["recall"], 4)}
    entries = per_question(questions, narrow)
    entry = entries[1]
    assert entry["id"] == "hq-plants"
    assert entry["all_evidence"] == {"24": False, "10": False, "8000c": False, "4000c": False}
    assert [e["ranks"]["fused"] for e in entry["evidence"]] == [6, 7]
    assert [e["user_ranks"]["recall"] for e in entry["evidence"]] == [3, 4]
    assert entries[0]["evidence"][0]["role"] == "assistant" and entries[0]["all_evidence"]["24"]
    found = misses(entries)
    assert found["all"]["24"]["missed"] == 2 and found["multi-session"]["24"]["fused"] == {"<= 24": 2}
    assert found["all"]["24"]["best_lane"] == {"unranked": 2}
    assert found["all"]["24"]["median_fused_rank"] == 6.5
    # its evidence is 11th of 11: shown in 24 rows (and the first 24 at 8,000 characters)
    assert set(found["single-session-assistant"]) == {"10", "4000c"}
    assert found["single-session-assistant"]["10"]["roles"] == {"assistant": 1}
    deep = headroom(questions, narrow, depths=(4, 7, 11))
    assert deep["recall"]["all"] == {"4": 0.0, "7": 0.5, "11": 1.0}
    off = signals_off(questions, narrow)  # reversed rankings: the evidence first
    assert off == {"session": {"24": {"all": 1.0, "single-session-assistant": 1.0, "multi-session": 1.0},
                               "10": {"all": 1.0, "single-session-assistant": 1.0, "multi-session": 1.0}}}
    times = render_times(questions, narrow)
    assert times["all"]["first"] == {"mean_ms": 200.0, "median_ms": 200.0, "max_ms": 200.0}
