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
import eval_beam  # noqa: E402
import eval_locomo  # noqa: E402
from public_data import locomo_conversation  # noqa: E402

STATS = {"all_evidence", "all_evidence_or_facts", "mean_evidence_recall", "turn_rows", "fact_rows", "chars",
         "n", "answer_in_text", "answers"}


def test_recorded_commands_name_no_developer_folder():
    from bench_common import ROOT, portable

    assert portable(str(ROOT / "results" / "beam")) == "results/beam"
    assert portable(str(ROOT.parent / "shared" / "data" / "x.json")) == "../shared/data/x.json"
    # a folder neither in the repository nor beside it (not tmp_path: a clone in /tmp has it beside)
    elsewhere = Path(ROOT.anchor, "not-beside-" + ROOT.parent.name, "chats", "500K")
    if elsewhere.is_relative_to(ROOT.parent):  # a clone at the root's top: every folder is beside it
        assert portable(str(elsewhere)) == "../" + str(elsewhere.relative_to(ROOT.parent))
    else:
        assert portable(str(elsewhere)) == "<...>/chats/500K"
        assert portable(f"--data={elsewhere.parent / 'b'}") == "--data=<...>/chats/b"
    assert portable("--chats") == "--chats" and portable("1-12") == "1-12"


def test_percentile_is_nearest_rank():
    values = list(range(1, 21))
    assert bench_scale.percentile(values, 0.95) == 19
    assert bench_scale.percentile(values, 0.5) == 10
    assert bench_scale.percentile([7.0], 0.95) == 7.0


def test_an_evidence_turn_a_shown_fact_was_read_from_counts_only_for_the_facts_figure():
    from types import SimpleNamespace

    recalled = {"turns": [{"action_id": "t1", "facts": [{"turn": "t1"}]}, {"action_id": "t2"}],
                "facts": [{"turn": "t7"}, {"turn": "t9"}]}
    shown = eval_locomo.Shown(["t1", "t2"], facts=2, read_from=eval_locomo.fact_sources(recalled))
    assert shown.read_from == {"t1", "t7", "t9"}
    question = SimpleNamespace(evidence=["t2", "t7"])
    assert eval_locomo.evidence_recall(question, shown) == 0.5
    assert eval_locomo.evidence_stated(question, shown)
    assert not eval_locomo.evidence_stated(SimpleNamespace(evidence=["t2", "t8"]), shown)


def test_a_literal_answer_is_one_an_evidence_message_holds_word_for_word_and_the_question_does_not():
    from eval_common import answer_shown, literal_answer

    evidence = ["We watched Doc Martin, all of it!", "It cost $1,350 in the end."]
    literal = literal_answer("doc martin", "Which show did we watch?", evidence)
    assert literal is not None
    assert answer_shown(literal, "TURN [session 1, ...]: we watched doc\nMARTIN - all of it")
    assert not answer_shown(literal, "TURN [session 1, ...]: we watched Doc ...")
    assert literal_answer("Doc Martin", "Did we watch Doc Martin?", evidence) is None  # the header repeats it
    assert literal_answer("Broadchurch", "Which show did we watch?", evidence) is None  # no message holds it
    assert literal_answer("It", "What did it cost?", evidence) is None  # too short to match only itself
    assert literal_answer(None, "What did it cost?", evidence) is None
    assert literal_answer("135", "What did it cost?", evidence) is None  # inside another number, not a word
    assert literal_answer("Doc Martin.", "Which show?", evidence) == literal  # a full stop is punctuation
    assert not answer_shown(literal_answer("1,350", "What did it cost?", evidence), "it cost $1,3500")


def test_beam_misses_are_located_and_bucketed_by_deep_rank():
    orders = {"bm25": ["a", "b"], "dense": ["b", "c", "a"]}
    found = eval_beam.located(["a", "c"], {"a": 30, "b": 1}, orders)
    assert found == [{"turn": "a", "fused": 30, "bm25_full": 1, "dense_full": 3},
                     {"turn": "c", "fused": None, "bm25_full": None, "dense_full": 2}]
    entries = [{"type": "temporal_reasoning", "missed_24": found},
               {"type": "information_extraction", "missed_24": found[:1]}, {"type": "summarization"}]
    misses = eval_beam.misses(entries)
    assert misses["lookup"]["missed"] == 3 and misses["lookup"]["no_shared_word"] == 1
    assert misses["lookup"]["fused"] == {"<= 24": 0, "<= 50": 2, "<= 100": 0, "<= 300": 0, "unranked": 1}
    assert misses["information_extraction"]["missed"] == 1
    assert "summarization" not in misses


def test_beam_ceilings_bound_reordering_by_the_deepest_evidence_rank():
    def miss(rank):
        return {"turn": "t", "fused": rank, "bm25_full": None, "dense_full": 1}

    entries = [{"type": "temporal_reasoning"},  # answered whole at 24 rows
               {"type": "temporal_reasoning", "missed_24": [miss(30), miss(90)]},
               {"type": "knowledge_update", "missed_24": [miss(40), miss(None)]},
               {"type": "summarization"}]
    shares = eval_beam.ceilings(entries, ("temporal_reasoning", "knowledge_update"))
    assert shares["lookup"] == {"24": 0.333, "50": 0.333, "100": 0.667, "300": 0.667}
    assert shares["temporal_reasoning"] == {"24": 0.5, "50": 0.5, "100": 1.0, "300": 1.0}
    assert shares["knowledge_update"]["300"] == 0.0 and "summarization" not in shares


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
    assert set(recall) == {"24", "10", "8000c", "4000c"} and set(recall["24"]) == set(eval_locomo.GROUPS)
    assert set(recall["24"]["1-4"]) == STATS and recall["24"]["1-4"]["n"] == 3
    for budget in recall.values():  # a FACT row read from an evidence turn only adds to what TURN rows show
        assert budget["1-4"]["all_evidence_or_facts"] >= budget["1-4"]["all_evidence"]
    assert recall["10"]["1-4"]["turn_rows"] <= 10 and recall["24"]["1-4"]["turn_rows"] <= 24
    assert 0 < recall["4000c"]["1-4"]["chars"] <= 4000 and recall["8000c"]["1-4"]["chars"] <= 8000
    assert headline["recall"]["1-4"] == recall["8000c"]["1-4"]  # the default call is the 8,000 budget
    assert recall["24"]["1-4"]["answers"] == 0  # a row budget's rows are not a text to look in
    assert recall["4000c"]["1-4"]["answers"] == recall["8000c"]["1-4"]["answers"]
    assert set(headline["signals_off"]["role"]) == {"24", "10", "8000c"}
    assert set(headline["side_by_side"]["bm25 alone"]) == {"24", "10"}
    assert len(headline["leave_one_out"]["folds"]) == 1 and headline["leave_one_out"]["grid_size"] == 2
    report = (tmp_path / "res" / "README.md").read_text()
    assert "embedded runtime" in report and "Command:" in report and "Machine:" in report
    assert "agree with `recalled`: 3 of 3 calls" in report
    assert "first 10 rows of the 24-row ranking: yes" in report
    assert "what `max_chars: 8000` shows: yes" in report
    entries = [json.loads(line) for line in (tmp_path / "res" / "questions.jsonl").read_text().splitlines()]
    assert len(entries) == 3 and all(e["evidence"] and len(e["shown"]) <= 24 for e in entries)
    assert all(set(m["ranks"]) >= {"bm25_full", "dense_full"} for e in entries for m in e["missed"])
    assert (tmp_path / "res" / "locomo.png").stat().st_size > 0
    assert len(list((tmp_path / "cache").glob("locomo-*.json"))) == 2  # graph and meta, reused next run
    assert eval_locomo.main(args) == 0
    assert json.loads(out.read_text()) == headline


@pytest.fixture(scope="module")
def small_scale() -> dict:
    """bench_scale's figures for one small size, profiles included (measured once for the tests below)."""
    return bench_scale.measure(200, seed=1, n_questions=20, profile=True)


def without_profile(figures: dict) -> dict:
    """A child's figures as `measured` combines them (the profile taken out), as a fresh copy."""
    return json.loads(json.dumps({k: v for k, v in figures.items() if k != "profile"}))


def test_bench_scale_one_small_size(small_scale):
    figures = small_scale
    assert all(figures[k] > 0 for k in ("question_embed_ms", "limit_ms", "read_floor_ms", "peak_rss_mb"))
    details = figures["details"]
    assert details["questions"] == 20 and details["counts"]["synth-0"]["messages"] == 200
    assert details["pause_gc"] is False and len(details["load"]) == 2 and details["user_vertices"] > 200
    assert set(figures["forms"]) == set(bench_scale.FORMS)
    for f in figures["forms"].values():
        assert set(f["median_ms"]) == set(f["cpu_ms"]) == set(f["collector_ms"]) == set(bench_scale.PHASES)
        assert all(value > 0 for value in f["median_ms"].values())
        api = f["api_calls"]
        assert set(api) == set(f["prelude_counts"]) == set(bench_scale.PHASES)
        assert all(set(counts) == set(bench_scale.API_KINDS) for counts in api.values())
        # a cold build reads every message (200 of them, at least text and vectors), a warm call far less
        assert api["cold"]["properties"] >= 2 * 200 and api["cold"]["total"] > 2 * api["warm"]["total"] > 0
        # a given query_vector is converted with the call: its key, the list and 384 numbers
        assert api["warm_vector"]["arguments"] == api["warm"]["arguments"] + 386
        assert f["cache"]["cold"] == {"builds": bench_scale.COLD_SAMPLES} == f["cache"]["forget"]
        assert f["cache"]["warm"] == {"hits": 20} == f["cache"]["warm_vector"]
        assert f["cache"]["refresh"] == {"refreshes": 5}
        assert f["cache"]["renew"] == {"hits": bench_scale.RENEW_SAMPLES}  # read again, nothing renewed
        counted = {"cold": "builds", "warm": "hits", "warm_vector": "hits", "refresh": "refreshes",
                   "forget": "builds", "renew": "hits"}
        assert f["api_cache"] == {phase: {counter: 1} for phase, counter in counted.items()}
        assert set(f["cold_reference_api_calls"]) == set(bench_scale.API_KINDS)
        assert f["cold_reference_api_calls"]["properties"] >= 2 * 200
        # the cold build hands each of the user's Actions out exactly once, and no more vertices than it
        # counted in all; the repeats are handouts beyond a vertex's first
        build, call = f["cold_handouts"]["build"], f["cold_handouts"]["call"]
        assert build["actions"] == build["action_handouts"] >= 200 and build["most_per_action"] == 1
        assert "Action" not in build["repeats_by_kind"]
        # `vertices` also counts lookups that hand out no vertex (a missing id, `in graph.vertices`)
        assert call["distinct_vertices"] + sum(call["repeats_by_kind"].values()) <= api["cold"]["vertices"]
        assert call["action_handouts"] > build["action_handouts"]  # verification reads returned rows again
    bare, fast = figures["forms"]["bare"], figures["forms"]["fast"]
    assert bare["api_calls"]["warm"]["arguments"] == 6  # user, question, today, config (one key and value)
    assert not any(bare["prelude_counts"]["warm"].values()) and set(bare["prelude_ms"].values()) == {0.0}
    # the fast shape's prelude reads the holders' edges (counted apart), so the procedure walks fewer
    prelude = fast["prelude_counts"]["warm"]
    assert prelude["lookups"] == 2 and prelude["scanned"] == 0 and prelude["edges"] > 0
    assert fast["api_calls"]["warm"]["edges"] < bare["api_calls"]["warm"]["edges"]
    assert fast["api_calls"]["warm"]["arguments"] > 3 * prelude["holders"]  # the signature's three lists
    assert figures["read_floor_api_calls"]["properties"] == 7 * details["counts"]["synth-0"]["messages"]
    profile = figures["profile"]
    assert profile["cold_bare"]["calls"] == 1
    assert profile["warm_fast"]["calls"] == bench_scale.PROFILE_WARM_CALLS
    assert any("recall_lib/cache.py" in row[0] for row in profile["cold_bare"]["cumulative"])
    assert len(profile["warm_fast"]["self"]) == bench_scale.PROFILE_ROWS


def test_bench_scale_combines_runs_by_median(small_scale):
    runs = []
    for extra in (4.0, 0.0, 2.0):
        run = without_profile(small_scale)
        run["forms"]["bare"]["median_ms"]["cold"] += extra
        runs.append(run)
    figures = bench_scale.combined(runs)
    bare = small_scale["forms"]["bare"]
    assert figures["forms"]["bare"]["median_ms"]["cold"] == round(bare["median_ms"]["cold"] + 2.0, 2)
    assert figures["forms"]["fast"]["api_calls"] == small_scale["forms"]["fast"]["api_calls"]
    assert figures["forms"]["bare"]["samples_ms"]["cold"] == bare["samples_ms"]["cold"] * 3
    cold = [r["forms"]["bare"]["median_ms"]["cold"] for r in runs]
    assert [run["bare"]["cold"] for run in figures["runs"]] == cold
    assert figures["runs"][0]["fast"]["warm_cpu"] == small_scale["forms"]["fast"]["cpu_ms"]["warm"]


def test_bench_scale_report_and_headline(small_scale, tmp_path):
    figures = bench_scale.combined([without_profile(small_scale)])
    paused = json.loads(json.dumps(figures))
    paused["forms"]["bare"]["median_ms"]["cold"] = 1.5
    info = {"command": "python scripts/bench_scale.py", "date": "d", "machine": "m", "commit": "c",
            "blas_threads": "1"}
    bars_at = str(bench_scale.TARGETS_AT)  # the small figures filed under the bars' size too, to render them
    results, paused_results = {"200": figures, bars_at: figures}, {"200": paused, bars_at: paused}
    profile = {"size": "200", "figures": small_scale["profile"]}
    bench_scale.write_report(tmp_path, info, results, paused_results, profile)
    report = (tmp_path / "README.md").read_text()
    assert "Procedure-API calls per call" in report and "| 200 | bare string form | cold |" in report
    assert "| 200 | fast call shape | warm |" in report and "| 200 | - | read floor |" in report
    assert "median, host pauses the collector" in report and "| 1.500 |" in report
    assert "## Bars (issue #20)" in report
    assert "| fast call shape | warm median incl. question embedding <= 80 ms |" in report
    assert "**warm CPU**" in report and "[profile.md](profile.md)" in report
    assert "Top 30 by cumulative time" in (tmp_path / "profile.md").read_text()
    assert (tmp_path / "scale.png").stat().st_size > 0
    saved = json.loads((tmp_path / "details.json").read_text())
    assert set(saved) == {"provenance", "results", "host_gc_pause", "profile"}
    head = bench_scale.headline(results, paused_results)
    shared = {"question_embed_ms", "limit_ms", "read_floor_ms", "peak_rss_mb"}
    assert set(head["200"]) == {*shared, *bench_scale.FORMS}
    fast = figures["forms"]["fast"]
    totals = {phase: fast["api_calls"][phase]["total"] for phase in bench_scale.PHASES}
    assert head["200"]["fast"]["api_calls"] == totals
    assert head["200"]["bare"]["host_gc_pause_ms"]["cold"] == 1.5
    bars = head[bars_at]["bars"]
    assert len(bars) == len(bench_scale.bar_checks(figures)) == 18  # 4 of them: past the max age (#48)
    assert bars[2]["measured"] == totals["warm"] and bars[2]["met"] == (totals["warm"] <= 20_000)
    assert all(bar["met"] == (bar["measured"] <= bar["bar_value"]) for bar in bars)


def test_bench_renewal_small_user(tmp_path, capsys):
    """Renewing every call reads the user again: more API calls than a warm call, in both forms."""
    import bench_renewal

    out = tmp_path / "renewal.jsonl"
    assert bench_renewal.main(["--messages", "60", "--rounds", "1", "--calls", "2", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["messages"] == 60 and result["modules_commit"]
    for form in ("string", "fast"):
        figures = result[form]
        assert figures["renewing_api"] > figures["warm_api"] > 0
        assert figures["renewal_api"] == figures["renewing_api"] - figures["warm_api"]
        assert len(figures["rounds_ms"]["warm"]) == len(figures["rounds_ms"]["renewing"]) == 1
