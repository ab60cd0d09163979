"""What a ranking of one question's turns is worth: evidence shown, and LongMemEval's own retrieval metrics.

Evidence shown (this project's measure, as for LoCoMo): of the TURN rows recall shows, are ALL the
`has_answer` turns among them (user or assistant), any of them, and a row of every answer session?

LongMemEval's retrieval metrics, as its repository defines them (`src/retrieval/eval_utils.py`, with the
ids of `src/retrieval/run_retrieval.py`), re-implemented here:
- documents are the user turns of the history, id `<session_id>_<i>` (`i` counts every turn from 1); in
  an answer session a user turn without `has_answer` is renamed `noans...`; the gold documents are the
  `has_answer` user turns (`LongMemEvalTurn.benchmark_id` makes these ids);
- `recall_any@k` / `recall_all@k`: whether any / all gold ids are among the first k ranked documents;
- `ndcg_any@k`: binary relevance, DCG = rel_1 + sum over i = 2..k of rel_i / log2(i), over the ideal DCG
  of all the history's relevances sorted (0 when there is no gold document);
- session level from a turn ranking: each id loses its `_<i>`, the gold is the gold turns' sessions, and
  k grows until the first k ranked turns span k distinct (renamed) sessions or the ranking ends; then the
  three metrics above are taken over the turn list with session ids. A gold session therefore counts as
  found only through one of its `has_answer` user turns (its other turns carry the `noans` name).
A ranking is completed before scoring: turns it does not rank follow in history order.
"""

from collections.abc import Iterable, Sequence

import numpy as np

#: The cut-offs reported (LongMemEval also computes 1 and 3).
KS = (5, 10, 30, 50)
METRICS = ("recall_any", "recall_all", "ndcg_any")


# -- evidence shown --------------------------------------------------------------------------------
def evidence_shown(evidence: Sequence[str], answer_sessions: Iterable[str], shown: Sequence[str],
                   session_of: dict[str, str]) -> dict[str, float]:
    """For one question: all / any evidence turn among `shown`, the share shown, whether each answer
    session (by the benchmark's own session id, so either copy of a repeated one counts) has a shown row,
    and how many distinct sessions the rows come from."""
    shown_set = set(shown)
    hits = sum(turn in shown_set for turn in evidence)
    touched = {session_of[turn] for turn in shown}
    return {"all_evidence": float(hits == len(evidence)), "any_evidence": float(hits > 0),
            "evidence_recall": hits / len(evidence) if evidence else 1.0,
            "answer_sessions": float(set(answer_sessions) <= touched), "sessions": float(len(touched))}


# -- LongMemEval -----------------------------------------------------------------------------------
def complete(ranking: Sequence[str], corpus: Sequence[str]) -> list[str]:
    """`ranking` (a best-first subset of `corpus`, no repeats) followed by the rest of `corpus` in order."""
    ranked = set(ranking)
    return [*ranking, *(doc for doc in corpus if doc not in ranked)]


def dcg(relevances: np.ndarray, k: int) -> float:
    """LongMemEval's DCG at k: the first place undiscounted, place i >= 2 divided by log2(i)."""
    top = np.asarray(relevances, dtype=float)[:k]
    if not top.size:
        return 0.0
    discounts = np.ones(top.size)
    discounts[1:] = np.log2(np.arange(2, top.size + 1))
    return float(np.sum(top / discounts))


def evaluate(ranked_ids: Sequence[str], gold: set[str], corpus_ids: Sequence[str],
             k: int) -> dict[str, float]:
    """recall_any@k, recall_all@k and ndcg_any@k of one ranking (ids in rank order, repeats allowed)."""
    top = ranked_ids[:k]
    found = set(top)
    relevance = np.array([doc in gold for doc in corpus_ids], dtype=float)
    ideal = dcg(np.sort(relevance)[::-1], k)
    actual = dcg(np.array([doc in gold for doc in top], dtype=float), k)
    return {"recall_any": float(any(doc in found for doc in gold)),
            "recall_all": float(all(doc in found for doc in gold)),
            "ndcg_any": actual / ideal if ideal else 0.0}


def session_id(turn_id: str) -> str:
    """A turn id without its `_<i>`."""
    return turn_id.rsplit("_", 1)[0]


def evaluate_sessions(ranked_ids: Sequence[str], gold: set[str], corpus_ids: Sequence[str],
                      k: int) -> dict[str, float]:
    """The session-level metrics of a turn ranking, LongMemEval's way (see the module docstring)."""
    sessions = [session_id(doc) for doc in ranked_ids]
    corpus_sessions = [session_id(doc) for doc in corpus_ids]
    depth = k
    while depth <= len(corpus_sessions) and len(set(sessions[:depth])) < k:
        depth += 1
    return evaluate(sessions, {session_id(doc) for doc in gold}, corpus_sessions, depth)


def question_metrics(ranked_ids: Sequence[str], gold: set[str], corpus_ids: Sequence[str],
                     ks: Sequence[int] = KS) -> dict[str, dict[str, float]]:
    """{"turn": {"recall_all@5": ...}, "session": {...}} for a complete ranking of the corpus."""
    out: dict[str, dict[str, float]] = {"turn": {}, "session": {}}
    for k in ks:
        for level, score in (("turn", evaluate), ("session", evaluate_sessions)):
            out[level].update({f"{name}@{k}": value for name, value in score(ranked_ids, gold, corpus_ids,
                                                                               k).items()})
    return out


def mean_metrics(per_question: Sequence[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """The mean of each metric over questions (LongMemEval averages per question)."""
    if not per_question:
        return {}
    return {level: {name: round(float(np.mean([q[level][name] for q in per_question])), 4)
                    for name in per_question[0][level]}
            for level in per_question[0]}
