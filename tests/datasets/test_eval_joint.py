"""scripts/eval_joint.py end to end on tiny versions of the three dev sets: each set's own evaluation caches
its graph, then the joint run scores a small grid, leaves each set out, switches each signal off, and a
rerun renders nothing new."""

import json
import re
import sys
from pathlib import Path

import pytest
from longmemeval_history import write as write_longmemeval
from public_data import locomo_conversation
from test_beam import write as write_beam

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import eval_beam  # noqa: E402
import eval_joint  # noqa: E402
import eval_locomo  # noqa: E402
import eval_longmemeval  # noqa: E402


@pytest.fixture(autouse=True)
def _script_environment(monkeypatch):
    monkeypatch.setenv("RECALL_TORCH_THREADS", "1")
    monkeypatch.setenv("RECALL_MAX_ROWS", str(eval_longmemeval.DEEP))


def small_locomo(tmp_path: Path) -> Path:
    conv = locomo_conversation("conv-30")
    keep = {k: v for k, v in conv.items() if not re.match(r"(events_)?session_([3-9]|\d\d)", k)}
    ids = {t["dia_id"] for s in (1, 2) for t in conv[f"session_{s}"]}
    keep["qa"] = [q for q in conv["qa"] if q["evidence"] and set(q["evidence"]) <= ids][:4]
    path = tmp_path / "conv-30.json"
    path.write_text(json.dumps(keep))
    return path


def test_the_joint_run_scores_leaves_each_set_out_and_reuses_its_renders(tmp_path):
    graphs, results, outcomes = tmp_path / "graphs", tmp_path / "joint", tmp_path / "joint.jsonl"
    locomo = small_locomo(tmp_path)
    longmemeval = write_longmemeval(tmp_path)
    beam = write_beam(tmp_path / "500K")
    assert eval_locomo.main(["--conversations", str(locomo), "--cache", str(graphs), "--grid", "1",
                             "--results", str(tmp_path / "locomo")]) == 0
    assert eval_longmemeval.main(["--data", str(longmemeval), "--cache", str(graphs), "--grid", "1",
                                  "--results", str(tmp_path / "lme")]) == 0
    assert eval_beam.main(["--data", str(beam), "--cache", str(graphs), "--chats", "1",
                           "--results", str(tmp_path / "beam")]) == 0
    args = ["--locomo", str(locomo), "--longmemeval", str(longmemeval), "--beam", str(beam),
            "--beam-chats", "1", "--grid", "2", "--graphs", str(graphs), "--cache", str(outcomes),
            "--results", str(results)]
    assert eval_joint.main(args) == 0
    details = json.loads((results / "details.json").read_text())
    assert set(details["sets"]) == {"locomo", "longmemeval", "beam"}
    assert details["sets"]["beam"]["questions"] == 3  # chat 1: two lookups and a summary (no abstention)
    folds = details["leave_one_out"]["folds"]
    assert set(folds) == {"locomo", "longmemeval", "beam"}
    for fold in folds.values():
        assert fold["config"] in (0, 1) and set(fold["held_out"]) == set(eval_joint.JUDGED)
        assert all(0 <= v <= 1 for v in fold["held_out"].values())
    assert set(details["signals_off"]) == set(eval_joint.SIGNALS)
    by_budget = details["defaults_by_budget"]
    assert set(by_budget["beam"]) == {"headline", "gathering"}
    assert set(by_budget["beam"]["headline"]) == set(eval_joint.BUDGETS)
    report = (results / "README.md").read_text()
    assert "Leave one dataset out" in report and "Command:" in report
    lines = len(outcomes.read_text().splitlines())
    assert lines == 3 * (2 * 2 + 2 + len(eval_joint.SIGNALS) * 2)  # sets x (grid x judged, 2 more, ablation)
    assert eval_joint.main(args) == 0  # everything cached: not one render more
    assert len(outcomes.read_text().splitlines()) == lines
    assert json.loads((results / "details.json").read_text())["scores"] == details["scores"]


def test_a_missing_graph_names_the_evaluation_to_run(tmp_path):
    args = ["--locomo", str(small_locomo(tmp_path)), "--longmemeval", str(write_longmemeval(tmp_path)),
            "--beam", str(write_beam(tmp_path / "500K")), "--graphs", str(tmp_path / "none"),
            "--cache", str(tmp_path / "o.jsonl"), "--results", str(tmp_path / "r")]
    with pytest.raises(SystemExit, match="run scripts/eval_locomo.py"):
        eval_joint.main(args)


def _scores(questions: dict) -> dict:
    import statistics
    return {i: {n: {b: statistics.fmean(v) for b in eval_joint.JUDGED} for n, v in sets.items()}
            for i, sets in questions.items()}


def test_a_fold_keeps_the_defaults_unless_the_best_leads_by_more_than_its_noise():
    # Config 1 wins two questions of set a and loses another: a lead of one question, within its noise.
    # Config 2 wins six questions of a and loses none.
    ones = [1.0] * 20
    questions = {0: {"a": [0.0] * 10 + ones[:10], "b": ones, "c": ones},
                 1: {"a": [1.0] * 2 + [0.0] * 8 + ones[:9] + [0.0], "b": ones, "c": [0.0] + ones[1:]},
                 2: {"a": [1.0] * 6 + [0.0] * 4 + ones[:10], "b": ones, "c": ones[:15] + [0.0] * 5}}
    scores = _scores(questions)
    close = eval_joint.choose({0: scores[0], 1: scores[1]}, questions, ["a", "b"])
    assert close["best"] == 1 and close["lead"] > 0 and close["lead"] <= close["error"]
    assert close["config"] == 0
    clear = eval_joint.choose(scores, questions, ["a", "b"])
    assert clear["best"] == 2 and clear["lead"] > clear["error"] and clear["config"] == 2
    folds = eval_joint.leave_one_out(scores, questions, ["a", "b", "c"])["folds"]
    assert folds["c"]["config"] == 2 and folds["c"]["held_out"] == scores[2]["c"]
    assert folds["c"]["defaults"] == scores[0]["c"] and folds["a"]["config"] == 0
