"""Smoke runs of the two evaluation scripts at tiny sizes: they run end to end and write what they promise."""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))

import bench_scale  # noqa: E402
import eval_locomo  # noqa: E402
from public_data import locomo_conversation  # noqa: E402

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


def test_eval_locomo_small_slice(tmp_path):
    conv = locomo_conversation("conv-30")
    keep = {k: v for k, v in conv.items() if not re.match(r"(events_)?session_([3-9]|\d\d)", k)}
    ids = {t["dia_id"] for s in (1, 2) for t in conv[f"session_{s}"]}
    keep["qa"] = [q for q in conv["qa"] if q["evidence"] and set(q["evidence"]) <= ids]
    path = tmp_path / "conv-30.json"
    path.write_text(json.dumps(keep))
    out = tmp_path / "out.json"
    args = ["--conversations", str(path), "--limit", "3", "--results", str(tmp_path / "res"),
            "--cache", str(tmp_path / "cache"), "--json", str(out), "--grid", "2"]
    assert eval_locomo.main(args) == 0
    headline = json.loads(out.read_text())
    assert set(headline) == {"recall", "side_by_side", "signals_off", "lanes_off", "leave_one_out"}
    assert {"recall", "recall, speaker off", "recall without fact lanes", "bm25 alone", "dense alone"} <= set(
        headline["side_by_side"]
    )
    assert set(headline["signals_off"]) == set(eval_locomo.SIGNALS)
    assert set(headline["lanes_off"]) == {*eval_locomo.LANES, "fact lanes"}
    recall = headline["side_by_side"]["recall"]
    assert set(recall) == {"24", "10"} and set(recall["24"]) == set(eval_locomo.GROUPS)
    assert set(recall["24"]["1-4"]) == STATS and recall["24"]["1-4"]["n"] == 3
    assert recall["10"]["1-4"]["turn_rows"] <= 10 and recall["24"]["1-4"]["turn_rows"] <= 24
    assert headline["recall"]["1-4"]["turn_rows"] == recall["24"]["1-4"]["turn_rows"]
    assert len(headline["leave_one_out"]["folds"]) == 1 and headline["leave_one_out"]["grid_size"] == 2
    report = (tmp_path / "res" / "README.md").read_text()
    assert "embedded runtime" in report and "Command:" in report and "Machine:" in report
    assert "agree with `recalled`: 3 of 3 calls" in report
    assert "first 10 turns of the default ranking: yes" in report
    entries = [json.loads(line) for line in (tmp_path / "res" / "questions.jsonl").read_text().splitlines()]
    assert len(entries) == 3 and all(e["evidence"] and len(e["shown"]) <= 24 for e in entries)
    assert all(set(m["ranks"]) >= {"bm25_full", "dense_full"} for e in entries for m in e["missed"])
    assert (tmp_path / "res" / "locomo.png").stat().st_size > 0
    assert len(list((tmp_path / "cache").glob("locomo-*.json"))) == 2  # graph and meta, reused next run
    assert eval_locomo.main(args) == 0
    assert json.loads(out.read_text()) == headline


@pytest.fixture(scope="module")
def small_scale() -> dict:
    """bench_scale's figures for one small size (measured once for the tests below)."""
    return bench_scale.measure(200, seed=1, n_questions=20)


def test_bench_scale_one_small_size(small_scale):
    figures = small_scale
    assert set(bench_scale.HEADLINE) <= set(figures)
    assert all(figures[k] > 0 for k in bench_scale.HEADLINE)
    details = figures["details"]
    assert details["questions"] == 20 and details["counts"]["synth-0"]["messages"] == 200
    assert details["pause_gc"] is False and set(details["collector_ms"]) == set(bench_scale.PHASES)
    api = figures["api_calls"]
    assert set(api) == set(bench_scale.PHASES)
    assert all(set(counts) == set(bench_scale.API_KINDS) for counts in api.values())
    # a cold build reads every message (200 of them, at least text and vectors), a warm call far less
    assert api["cold"]["properties"] >= 2 * 200 and api["cold"]["total"] > 2 * api["warm"]["total"] > 0
    assert details["read_floor_api_calls"]["properties"] == 7 * details["counts"]["synth-0"]["messages"]
    assert details["cache"]["warm"] == {"hits": 20} and details["cache"]["refresh"].get("refreshes") == 5


def test_bench_scale_combines_runs_by_median(small_scale):
    runs = [{**small_scale, "cold_ms": small_scale["cold_ms"] + extra} for extra in (4.0, 0.0, 2.0)]
    figures = bench_scale.combined(runs)
    assert figures["cold_ms"] == round(small_scale["cold_ms"] + 2.0, 2)
    assert figures["api_calls"] == small_scale["api_calls"]
    cold_samples = small_scale["details"]["samples_ms"]["cold"]
    assert figures["details"]["samples_ms"]["cold"] == cold_samples * 3
    assert [run["cold_ms"] for run in figures["runs"]] == [r["cold_ms"] for r in runs]


def test_bench_scale_report_and_headline(small_scale, tmp_path):
    figures = bench_scale.combined([small_scale])
    paused = {**figures, "cold_ms": 1.5}
    info = {"command": "python scripts/bench_scale.py", "date": "d", "machine": "m", "commit": "c",
            "blas_threads": "1"}
    bench_scale.write_report(tmp_path, info, {"200": figures}, {"200": paused})
    report = (tmp_path / "README.md").read_text()
    assert "Procedure-API calls per call" in report and "| 200 | cold |" in report
    assert "median, host pauses the collector" in report and "| 1.500 |" in report
    assert (tmp_path / "scale.png").stat().st_size > 0
    saved = json.loads((tmp_path / "details.json").read_text())
    assert set(saved) == {"provenance", "results", "host_gc_pause"}
    head = bench_scale.headline({"200": figures}, {"200": paused})["200"]
    assert set(head) == {*bench_scale.HEADLINE, "api_calls", "host_gc_pause"}
    assert head["api_calls"] == {phase: figures["api_calls"][phase]["total"] for phase in bench_scale.PHASES}
    assert head["host_gc_pause"]["cold_ms"] == 1.5
