"""Smoke runs of the two evaluation scripts at tiny sizes: they run end to end and write what they promise."""

import json
import re
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
LOCOMO = Path("/work/shared/data/locomo")
sys.path.insert(0, str(SCRIPTS))

import bench_scale  # noqa: E402
import eval_locomo  # noqa: E402

STATS = {"all_evidence", "mean_evidence_recall", "turn_rows", "fact_rows", "chars", "n"}


def test_percentile_is_nearest_rank():
    values = list(range(1, 21))
    assert bench_scale.percentile(values, 0.95) == 19
    assert bench_scale.percentile(values, 0.5) == 10
    assert bench_scale.percentile([7.0], 0.95) == 7.0


def test_parse_sizes_rejects_bad_input():
    assert bench_scale.parse_sizes("1000,10000") == [1000, 10000]
    with pytest.raises(Exception, match="comma-separated integers"):
        bench_scale.parse_sizes("1k")


@pytest.mark.skipif(not (LOCOMO / "conv-30.json").is_file(),
                    reason=f"LoCoMo conversations not found in {LOCOMO}")
def test_eval_locomo_small_slice(tmp_path):
    conv = json.loads((LOCOMO / "conv-30.json").read_text())
    keep = {k: v for k, v in conv.items() if not re.match(r"(events_)?session_([3-9]|\d\d)", k)}
    ids = {t["dia_id"] for s in (1, 2) for t in conv[f"session_{s}"]}
    keep["qa"] = [q for q in conv["qa"] if q["evidence"] and set(q["evidence"]) <= ids]
    path = tmp_path / "conv-30.json"
    path.write_text(json.dumps(keep))
    out = tmp_path / "out.json"
    args = ["--conversations", str(path), "--limit", "3", "--results", str(tmp_path / "res"),
            "--cache", str(tmp_path / "cache"), "--json", str(out)]
    assert eval_locomo.main(args) == 0
    headline = json.loads(out.read_text())
    assert set(headline) == {"recall", "baselines", "ablation"}
    assert set(headline["baselines"]) == {"bm25", "dense"}
    assert set(headline["ablation"]) == {*eval_locomo.LANES, "fact lanes"}
    assert set(headline["recall"]["1-4"]) == STATS and headline["recall"]["1-4"]["n"] == 3
    # the same budget: dense fills it; BM25 shows only turns sharing a word with the question
    assert headline["baselines"]["dense"]["1-4"]["turn_rows"] == headline["recall"]["1-4"]["turn_rows"]
    assert 0 < headline["baselines"]["bm25"]["1-4"]["turn_rows"] <= headline["recall"]["1-4"]["turn_rows"]
    report = (tmp_path / "res" / "README.md").read_text()
    assert "embedded runtime" in report and "Command:" in report and "Machine:" in report
    assert "agree with `recalled`: 30 of 30 calls" in report  # 3 questions x 10 renders
    assert (tmp_path / "res" / "locomo.png").stat().st_size > 0
    assert len(list((tmp_path / "cache").glob("locomo-*.json"))) == 2  # graph and meta, reused next run
    assert eval_locomo.main(args) == 0
    assert json.loads(out.read_text()) == headline


def test_bench_scale_one_small_size():
    figures = bench_scale.measure(200, seed=1, n_questions=20)
    assert set(bench_scale.HEADLINE) <= set(figures)
    assert all(figures[k] > 0 for k in bench_scale.HEADLINE)
    details = figures["details"]
    assert details["questions"] == 20 and details["counts"]["synth-0"]["messages"] == 200
