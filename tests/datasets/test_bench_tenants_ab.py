"""The in-process A/B of the mixed workload at tiny sizes: both versions time every planned call, the
report has a row per version and their ratios, and bad arguments are refused before any work."""

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_tenants_ab  # noqa: E402


def test_both_versions_time_every_planned_call(tmp_path):
    baseline = tmp_path / "other" / "query_modules"  # a second tree, as another checkout's
    shutil.copytree(ROOT / "query_modules", baseline, ignore=shutil.ignore_patterns("__pycache__"))
    results = tmp_path / "results"
    bench_tenants_ab.main(["--baseline", str(baseline), "--users", "3", "--calls", "20", "--messages", "20",
                           "--max-age", "0.5", "--aged-samples", "4", "--results", str(results)])
    runs = [json.loads(line)["case"] for line in (results / "runs.jsonl").read_text().splitlines()]
    assert [(r["users"], r["form"]) for r in runs] == [(3, "string"), (3, "fast")]
    for run in runs:
        counts = {v: sum(len(run["cpu"][v][k]) for k in bench_tenants_ab.KINDS)
                  for v in bench_tenants_ab.VERSIONS}
        assert counts == {"this": 20, "baseline": 20}
        assert run["cpu"]["this"]["write"] and run["cpu"]["this"]["call"]
        assert all(x > 0 for v in bench_tenants_ab.VERSIONS for x in run["wall"][v])
        aged = run["after_max_age_cpu"]
        assert [len(aged[v]) for v in bench_tenants_ab.VERSIONS] == [4, 4]
        assert run["after_max_age_api"]["this"] > 0 and run["after_max_age_api"]["baseline"] > 0
    report = (results / "README.md").read_text()
    for form in ("string", "fast"):
        assert f"| {form} | 3 | this |" in report and f"| {form} | 3 | baseline |" in report
        assert f"| {form} | 3 | ratio |" in report
    assert report.count("x | ") >= 2 * len(runs)  # the aged table's two ratios per case


def test_the_first_call_after_the_max_age_is_compared_position_for_position():
    """Sample i ran this checkout first when i is even: a version is not favoured by going second."""
    cold, warm = 12.0, 10.0  # the call right after the pause, and the one after it
    samples = {"this": [cold, warm] * 4, "baseline": [warm, cold] * 4}  # equal versions
    case = {"form": "string", "users": 3, "after_max_age_cpu": samples,
            "after_max_age_api": {"this": 100, "baseline": 100}}
    assert bench_tenants_ab.by_position(samples) == {"this": (cold, warm), "baseline": (cold, warm)}
    assert bench_tenants_ab.aged_row(case)[2:7] == [11.0, 11.0, "1.000x", "1.000x", "1.000x"]


@pytest.mark.parametrize("args, named", [
    (["--baseline", "nowhere"], "--baseline"),
    (["--baseline", str(ROOT / "query_modules"), "--forms", "bolt"], "--forms"),
    (["--baseline", str(ROOT / "query_modules"), "--users", "4k"], "--users"),
    (["--baseline", str(ROOT / "query_modules"), "--calls", "3"], "--calls"),
    (["--baseline", str(ROOT / "query_modules"), "--max-age", "0"], "--max-age"),
    (["--baseline", str(ROOT / "query_modules"), "--aged-samples", "0"], "--aged-samples"),
    (["--baseline", str(ROOT / "query_modules"), "--aged-samples", "5"], "--aged-samples"),
])
def test_bad_arguments_are_refused_naming_them(args, named, tmp_path):
    with pytest.raises(SystemExit, match=named):
        bench_tenants_ab.main([*args, "--results", str(tmp_path)])
    assert not (tmp_path / "README.md").exists()
