"""The in-process A/B of one large user's phases at a tiny size: both versions time every phase in both
call forms, each going first in half of the pairs, and bad arguments are refused before any work."""

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_scale_ab  # noqa: E402


def test_both_versions_time_every_phase_in_both_forms(tmp_path):
    baseline = tmp_path / "other" / "query_modules"  # a second tree, as another checkout's
    shutil.copytree(ROOT / "query_modules", baseline, ignore=shutil.ignore_patterns("__pycache__"))
    results = tmp_path / "results"
    bench_scale_ab.main(["--baseline", str(baseline), "--size", "200", "--samples", "2",
                         "--call-samples", "4",
                         "--results", str(results)])
    run = json.loads((results / "runs.jsonl").read_text().splitlines()[0])["result"]
    for form in bench_scale_ab.FORMS:
        for phase in bench_scale_ab.PHASES:
            cpu, api = run["cpu"][form][phase], run["api"][form][phase]
            pairs = 2 if phase in bench_scale_ab.BUILDS else 4
            assert [len(cpu[v]) for v in bench_scale_ab.VERSIONS] == [pairs, pairs]
            assert all(x > 0 for v in bench_scale_ab.VERSIONS for x in cpu[v])
            assert api["this"] > 0 and api["baseline"] > 0
    # The same modules on both sides: a cold build reads the same graph, call for call.
    for form in bench_scale_ab.FORMS:
        assert run["api"][form]["cold"]["this"] == run["api"][form]["cold"]["baseline"]
    report = (results / "README.md").read_text()
    for name in bench_scale_ab.PHASE_NAMES.values():
        assert f"| bare string form | {name} |" in report and f"| fast call shape | {name} |" in report


@pytest.mark.parametrize("args, named", [
    (["--baseline", "nowhere"], "--baseline"),
    (["--baseline", str(ROOT / "query_modules"), "--size", "10"], "--size"),
    (["--baseline", str(ROOT / "query_modules"), "--samples", "3"], "--samples"),
    (["--baseline", str(ROOT / "query_modules"), "--samples", "0"], "--samples"),
    (["--baseline", str(ROOT / "query_modules"), "--call-samples", "7"], "--call-samples"),
])
def test_bad_arguments_are_refused_naming_them(args, named, tmp_path):
    with pytest.raises(SystemExit, match=named):
        bench_scale_ab.main([*args, "--results", str(tmp_path)])
    assert not (tmp_path / "README.md").exists()
