"""scripts/longmemeval_tuning.py: leave one question type out, on hand-made rankings."""

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from longmemeval_tuning import DEFAULTS, grid_configs, leave_one_type_out  # noqa: E402


def question(user_id: str, kind: str, evidence: tuple[str, ...]):
    return SimpleNamespace(user_id=user_id, question_type=kind, evidence=evidence)


def test_each_type_is_scored_with_the_config_chosen_on_the_other_types():
    # Config 0 finds the evidence of type A's two questions, config 1 that of type B's three.
    questions = [question("a1", "A", ("x",)), question("a2", "A", ("x",)),
                 question("b1", "B", ("y",)), question("b2", "B", ("y",)), question("b3", "B", ("y",))]
    rows = {0: {"a1": ["x"], "a2": ["x"], "b1": ["z"], "b2": ["z"], "b3": ["z"]},
            1: {"a1": ["z"], "a2": ["z"], "b1": ["y"], "b2": ["y"], "b3": ["y"]}}
    configs = [{"role_boost": 2.0}, {"role_boost": 0.0}]
    result = leave_one_type_out(questions, configs, lambda i, user: rows[i][user])
    folds = {f["held_out"]: f for f in result["folds"]}
    assert folds["A"]["config"] == configs[1] and folds["A"]["held_out_score"]["24"] == 0.0
    assert folds["B"]["config"] == configs[0] and folds["B"]["held_out_score"]["24"] == 0.0
    assert result["mean"] == {"24": 0.0, "10": 0.0}  # each type held out is scored by the wrong config
    assert result["defaults_score"]["24"] == 0.4  # config 0 on all five questions
    assert result["best_in_sample"]["config"] == configs[1] and result["best_in_sample"]["24"] == 0.6


def test_the_grid_starts_with_the_defaults_and_is_seeded():
    configs = grid_configs(5)
    assert configs[0] == DEFAULTS and len(configs) == 5 and configs == grid_configs(5)
    assert len({tuple(sorted(c.items())) for c in configs}) == 5
