"""Leave one question type out on LongMemEval: how much of recall's figure comes from weights fitted to it.

For every config of a small grid (the defaults plus a seeded sample), each question's TURN rows best first;
then for each question type: the config best on the other five types (mean of the all-evidence shares at
24 and 10 rows, question-weighted), scored on the held-out type. The held-out scores, weighted by each
type's questions, are the leave-one-type-out figure beside the in-sample one (the defaults on all types).
"""

import itertools
import random
import statistics
from collections.abc import Callable, Sequence

from eval_common import ROW_BUDGETS

#: The grid: the signals a conversation's shape moves (LoCoMo's grid holds the others).
GRID = {
    "role_boost": (0.0, 1.0, 2.0, 3.0),
    "session_boost": (0.1, 0.2, 0.3),
    "neighbour_boost": (0.35, 0.5, 0.65),
    "fusion_k": (5, 10),
    "other_side_spill": (0.0, 0.25, 1.0),
    "session_spread": (0.0, 0.2, 0.5),
    "opener_boost": (0.0, 1.0, 2.0, 3.0),
    "feedback_turns": (0, 3, 5, 10),
}
DEFAULTS = {"role_boost": 2.0, "session_boost": 0.2, "neighbour_boost": 0.5, "fusion_k": 5,
            "other_side_spill": 0.25, "session_spread": 0.2, "opener_boost": 2.0,
            "feedback_turns": 5}


def grid_configs(size: int, seed: int = 7) -> list[dict]:
    """The defaults plus a seeded sample of `size - 1` other combinations of GRID."""
    combos = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    others = [c for c in combos if c != DEFAULTS]
    return [dict(DEFAULTS), *random.Random(seed).sample(others, min(size - 1, len(others)))]


def all_shown(question, rows: Sequence[str], k: int) -> bool:
    return set(question.evidence) <= set(rows[:k])


def leave_one_type_out(questions: Sequence, configs: list[dict],
                       rows: Callable[[int, str], Sequence[str]]) -> dict:
    """`rows(config index, user_id)`: that config's TURN rows for the question, best first."""
    def share(index: int, members: Sequence, budget: str) -> float:
        k = ROW_BUDGETS[budget]
        return statistics.fmean(all_shown(q, rows(index, q.user_id), k) for q in members) if members else 0.0

    def fit(index: int, members: Sequence) -> float:
        return statistics.fmean(share(index, members, budget) for budget in ROW_BUDGETS)

    types = sorted({q.question_type for q in questions})
    folds = []
    for held_out in types:
        dev = [q for q in questions if q.question_type != held_out]
        test = [q for q in questions if q.question_type == held_out]
        best = max(range(len(configs)), key=lambda i: (fit(i, dev), i == 0))
        folds.append({"held_out": held_out, "config": configs[best], "n": len(test),
                      "dev": {b: round(share(best, dev, b), 4) for b in ROW_BUDGETS},
                      "held_out_score": {b: round(share(best, test, b), 4) for b in ROW_BUDGETS},
                      "defaults_on_it": {b: round(share(0, test, b), 4) for b in ROW_BUDGETS}})
    total = sum(f["n"] for f in folds)
    mean = {b: round(sum(f["held_out_score"][b] * f["n"] for f in folds) / total, 4) for b in ROW_BUDGETS}
    in_sample = max(range(len(configs)), key=lambda i: (fit(i, questions), i == 0))
    return {"folds": folds, "mean": mean, "grid_size": len(configs), "defaults": configs[0],
            "defaults_score": {b: round(share(0, questions, b), 4) for b in ROW_BUDGETS},
            "best_in_sample": {"config": configs[in_sample],
                               **{b: round(share(in_sample, questions, b), 4) for b in ROW_BUDGETS}}}
