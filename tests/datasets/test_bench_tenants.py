"""Smoke run of the many-users benchmark (issue #19) at tiny sizes, in-process: every phase is measured
in both call forms, unknown user_ids cost no full pass, the new user's rows come back, the report is
written."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_tenants  # noqa: E402

# max_age: long enough that the warm phase's few calls stay inside it on a loaded machine (at 0.1 s a
# CI run beside another job saw a renewal there), short enough that the aged phase's two sleeps are cheap.
SMALL = {"messages": 20, "samples": 1, "mixed_calls": 20, "active": 3, "max_age": 1.0}


@pytest.fixture(scope="module")
def tiny() -> dict[str, dict[str, dict]]:
    """Both forms at 3 users (measured once for the tests below)."""
    return {form: {"3": bench_tenants.measure(3, form=form, **SMALL)} for form in bench_tenants.FORMS}


def test_every_phase_is_measured_with_positive_times(tiny):
    for by_size in tiny.values():
        for result in by_size.values():
            assert set(result["phases"]) == set(bench_tenants.PHASES)
            for name, phase in result["phases"].items():
                assert phase["calls"] >= 1 and phase["wall_ms"] > 0 and phase["cpu_ms"] >= 0, name
                assert set(phase["api"]) == set(bench_tenants.API_KINDS), name
            mixed = result["mixed"]
            assert mixed["calls"] == 20 and 0 < mixed["p50_ms"] <= mixed["p95_ms"] <= mixed["p99_ms"]
            assert 0 <= mixed["upkeep_share"] < 1 and mixed["counted"]["api_per_call"] > 0
            assert result["full_pass"]["api"]["total"] > result["graph"]["vertices"]
            upkeep = result["full_pass"]["upkeep"]
            assert upkeep["advance_ids"] == 64 and upkeep["sweep_ids"] == 16 and upkeep["sweep_us"] > 0
            assert result["peak_rss_mb"] > 0 and result["question_embed_ms"] > 0


def test_the_phases_do_what_they_say(tiny):
    for form, by_size in tiny.items():
        phases = by_size["3"]["phases"]
        if form == "string":  # its one full pass per database
            assert phases["first_after_load"]["cache"] == {"builds": 1, "scans": 1}, form
        else:  # the fast shape reads only the user, even as the database's first call
            assert phases["first_after_load"]["cache"] == {"builds": 1}, form
        assert phases["first_after_invalidate"]["cache"] == {"builds": 1}, form
        assert phases["known_first"]["cache"] == {"builds": 1}, form
        assert phases["new_user"]["cache"] == {"builds": 1}, form
        assert phases["wrote_session"]["cache"] == {"refreshes": 1}, form
        # nothing changed: the rolling check read every unit again and renewed nothing (#48)
        assert phases["after_max_age"]["cache"] == {"hits": 1}, form
        assert set(phases["warm"]["cache"]) == {"hits"}, form
        assert all("scans" not in p["cache"] for n, p in phases.items() if n != "first_after_load"), form


def test_unknown_user_ids_cost_no_full_pass(tiny):
    for form, by_size in tiny.items():
        for result in by_size.values():
            unknown = result["phases"]["unknown_100"]
            assert unknown["calls"] == 100 and not unknown["cache"], form
            if form == "string":  # the directory's probes of new ids and its paced sweep, no pass
                assert unknown["counted_probes"] <= 100 * (64 + 16)
                assert unknown["api"]["total"] - unknown["api"]["arguments"] < 100 * 4 * (64 + 16)
                assert result["phases"]["unknown"]["rows"] == [1, 1]  # an empty memory
            else:  # no row: the prelude finds no User and the procedure is not called
                assert unknown["api"]["total"] == 0 and unknown["prelude"]["scanned"] == 0
                assert result["phases"]["unknown"]["rows"] == [0, 0]
            assert not unknown["directory"].get("scans") and not unknown["cache"].get("scans")


def test_the_new_users_rows_are_in_its_first_answer(tiny):
    for by_size in tiny.values():
        for result in by_size.values():
            answers = result["new_user_answers"]
            assert len(answers) == 2 and all(a["turns"] > 0 and a["all_own"] for a in answers)


def test_the_report_and_targets_are_written(tiny, tmp_path):
    """Two sizes in the string form (the same figures under a second size), one in the fast form."""
    info = {"command": "python scripts/bench_tenants.py", "date": "today", "machine": "m", "commit": "c"}
    results = {"string": {"3": tiny["string"]["3"], "30": tiny["string"]["3"]}, "fast": tiny["fast"]}
    checks = bench_tenants.write_report(tmp_path, info, results)
    assert set(checks) == {"string"} and checks["string"]["compared"] == ["3", "30"]
    assert len(checks["string"]["rows"]) == 12 and checks["string"]["all_met"] in (True, False)
    assert all(row[-1] in ("met", "**not met**") for row in checks["string"]["rows"])
    report = (tmp_path / "README.md").read_text()
    assert "## Targets (issues #19 and #38)" in report and "Command:" in report and "### fast form" in report
    assert (tmp_path / "tenants.png").stat().st_size > 0
    headline = json.loads((tmp_path / "headline.json").read_text())
    assert set(headline["string"]) == {"3", "30"} and headline["targets"]["string"]["rows"]
    assert headline["fast"]["3"]["mixed"]["p99_ms"] > 0
