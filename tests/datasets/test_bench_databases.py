"""A smoke run of scripts/bench_databases.py at a tiny size: two databases, both call forms, end to end."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_databases  # noqa: E402


def test_bench_databases_tiny(tmp_path):
    out = tmp_path / "headline.json"
    args = ["--messages", "200", "--calls", "4", "--rounds", "2", "--block", "2",
            "--results", str(tmp_path / "res"), "--json", str(out)]
    assert bench_databases.main(args) == 0
    details = json.loads((tmp_path / "res" / "details.json").read_text())
    a, b = details["databases"]["a"], details["databases"]["b"]
    assert details["block"] == 2
    assert a["user_vertex"] == b["user_vertex"] and a["messages"] == b["messages"] == 200
    assert len(a["tokens"]) == len(b["tokens"]) == 1 and a["tokens"] != b["tokens"]
    for form in bench_databases.FORMS:
        series = details["series"][form]
        for kind in bench_databases.SERIES:
            assert series[kind]["calls"] == 4 and len(series[kind]["total_ms_rounds"]) == 2
            assert series[kind]["cache"] == {"hits": 8}  # warm: no build, no directory pass, no renewal
            assert series[kind]["counted_cache"] == {"hits": 4}
            assert set(series[kind]["api_per_call"]) == set(bench_databases.API_KINDS)
        assert set(series["ratio"]) == {"total wall", "median wall", "total CPU", "median CPU",
                                        "api calls per call", "met"}
        for database in bench_databases.DATABASES:
            first = details["first_calls"][form][database]
            assert first["cold"]["cache"] == {"builds": 1}
            if form == "bare":  # the string form's one full pass per database
                assert first["first"]["cache"] == {"builds": 1, "scans": 1}
                assert first["first"]["api_calls"]["vertices"] > first["cold"]["api_calls"]["vertices"]
            else:  # the fast shape reads only the user, even on a fresh module state
                assert first["first"]["cache"] == {"builds": 1}
                assert first["first"]["api_calls"]["vertices"] == first["cold"]["api_calls"]["vertices"]
    fast = details["series"]["fast"]["single"]
    assert fast["prelude_per_call"]["lookups"] == 2 and fast["prelude_per_call"]["edges"] > 0
    headline = json.loads(out.read_text())
    assert set(headline) == set(bench_databases.FORMS)
    assert set(headline["bare"]["first_call_ms"]) == set(bench_databases.DATABASES)
    report = (tmp_path / "res" / "README.md").read_text()
    assert "Command:" in report and "Machine:" in report and "Load average" in report
    assert "| bare string form | alternating a, b | 4 |" in report
    assert "## The first call in each database" in report
