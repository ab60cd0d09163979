"""The row comparison the image tests use: tied rows may swap, nothing else may differ."""

from memgraph_recall.results import LaneHit
from row_compare import Row, assert_same_rows, lane_rows, mismatches, rendered_rows


def _rows(*spec: tuple[str, str, float]) -> list[Row]:
    return [Row(group, key, tie) for group, key, tie in spec]


BASE = _rows(("turns", "a", 0.9), ("turns", "b", 0.5), ("turns", "c", 0.5), ("turns", "d", 0.1),
             ("facts", "x", 0.5), ("facts", "y", 0.4))


def test_identical_answers_match():
    assert mismatches(BASE, list(BASE)) == []


def test_rows_with_equal_scores_may_swap():
    swapped = [BASE[0], BASE[2], BASE[1], *BASE[3:]]
    assert mismatches(BASE, swapped) == []
    assert_same_rows(BASE, swapped)


def test_scores_a_float_error_apart_still_tie():
    nudged = [BASE[0], Row("turns", "c", 0.5 + 3e-7), Row("turns", "b", 0.5 - 2e-7), *BASE[3:]]
    assert mismatches(BASE, nudged) == []


def test_rows_with_different_scores_may_not_swap():
    swapped = [BASE[1], BASE[0], *BASE[2:]]
    assert mismatches(BASE, swapped)


def test_a_different_row_a_lost_row_or_another_score_is_a_mismatch():
    assert mismatches(BASE, [BASE[0], Row("turns", "z", 0.5), *BASE[2:]])
    assert mismatches(BASE, BASE[:-1]) == ["expected 5 runs of rows, got 4"]
    assert mismatches(BASE, [*BASE[:3], Row("turns", "d", 0.2), *BASE[4:]])


def test_a_tie_does_not_cross_lanes():
    # "c" (turns, 0.5) and "x" (facts, 0.5) tie in score but not in lane: they may not trade places
    crossed = [*BASE[:2], BASE[4], BASE[3], BASE[2], BASE[5]]
    assert mismatches(BASE, crossed)


def test_lane_hits_and_rendered_rows_become_rows():
    hits = [LaneHit("turns", 1, 0.7, "m1", "text", turn="m1", passage=0), LaneHit("facts", 1, 0.6, "f", "t")]
    assert lane_rows(hits) == [Row("turns", "m1 #0", 0.7), Row("facts", "f", 0.6)]
    recalled = {"memories": [{"path": "notes/a.md"}],
                "facts": [{"head": "user", "type": "LIKES", "tail": "tea", "turn": "m1", "valid_at": "2024"}],
                "turns": [{"action_id": "m1", "timestamp": "2024-01-01"}]}
    assert rendered_rows(recalled) == [Row("memory", "notes/a.md", None),
                                       Row("fact", "user -[LIKES]-> tea @m1", "2024"),
                                       Row("turn", "m1", "2024-01-01")]
