"""scripts/eval_longmemeval.py: its arguments, its selection, and the one command end to end on the
hand-written history (an embedding killed half-way and resumed, then the finished cache reused)."""

import json
import sys
from pathlib import Path

import pytest
from longmemeval_history import history, write
from memgraph_recall.datasets.longmemeval import build_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import eval_longmemeval  # noqa: E402
import longmemeval_cache  # noqa: E402


@pytest.fixture(autouse=True)
def _script_environment(monkeypatch):
    """main() sets these for its own process; here they are restored after each test."""
    monkeypatch.setenv("RECALL_TORCH_THREADS", "1")
    monkeypatch.setenv("RECALL_MAX_ROWS", str(eval_longmemeval.DEEP))


@pytest.mark.parametrize(("argv", "message"), [
    (["--data", "{tmp}/missing.json"], "--data: no such file"),
    (["--data", "{path}", "--types", "multi-session", "temporal"],
     "--types: unknown question type 'temporal'"),
    (["--data", "{path}", "--limit", "0"], "--limit: expected an integer >= 1, got 0"),
    (["--data", "{path}", "--limit", "two"], "argument --limit: invalid int value: 'two'"),
    (["--limit", "2"], "the following arguments are required: --data"),
])
def test_bad_arguments_fail_at_once_with_one_line_naming_them(tmp_path, capsys, argv, message):
    path = write(tmp_path)
    argv = [a.format(tmp=tmp_path, path=path) for a in argv]
    with pytest.raises(SystemExit) as exit_:
        eval_longmemeval.main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_file_that_is_not_longmemeval_is_refused(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"conversation": {}}))
    with pytest.raises(SystemExit, match="--data: .*expected a LongMemEval file"):
        eval_longmemeval.main(["--data", str(path), "--cache", str(tmp_path / "cache")])


def test_selection_scores_no_abstention_and_embeds_only_what_a_limit_keeps():
    questions = build_graph(history()).questions
    embed, scored = eval_longmemeval.select(questions, None, None)
    assert [q.question_id for q in embed] == ["hq-assist", "hq-plants", "hq-none_abs"]
    assert [q.question_id for q in scored] == ["hq-assist", "hq-plants"]
    embed, scored = eval_longmemeval.select(questions, None, 1)
    assert [q.question_id for q in embed] == [q.question_id for q in scored] == ["hq-assist"]
    embed, scored = eval_longmemeval.select(questions, ["knowledge-update", "multi-session"], None)
    assert [q.question_id for q in embed] == ["hq-plants", "hq-none_abs"]
    assert [q.question_id for q in scored] == ["hq-plants"]


def test_the_gathering_selection_keeps_and_embeds_only_the_questions_read_as_gathering():
    questions = build_graph(history()).questions  # "How many ... in total?" gathers; the others do not
    embed, scored = eval_longmemeval.select(questions, None, None, gathering=True)
    assert [q.question_id for q in embed] == [q.question_id for q in scored] == ["hq-plants"]


def test_one_command_resumes_after_a_kill_and_reuses_the_cache(tmp_path, monkeypatch):
    path = write(tmp_path)
    results, cache = tmp_path / "res", tmp_path / "cache"
    args = ["--data", str(path), "--results", str(results), "--cache", str(cache)]
    real = longmemeval_cache.embed_user
    done = []

    def killed_on_the_second(runtime, user_id, model):
        if done:
            raise KeyboardInterrupt
        done.append(user_id)
        return real(runtime, user_id, model)

    monkeypatch.setattr(longmemeval_cache, "embed_user", killed_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        eval_longmemeval.main(args)
    assert [p.name for p in cache.glob("*.partial/*.npz")] == ["hq-assist.npz"]
    monkeypatch.setattr(longmemeval_cache, "embed_user", real)

    assert eval_longmemeval.main(args) == 0
    details = json.loads((results / "details.json").read_text())
    embedding = details["embedding"]
    assert embedding["from_cache"] is False and embedding["resumed_questions"] == 1
    assert embedding["messages"] == 22 and embedding["questions"] == 3 and embedding["passages"] >= 22
    assert sorted(p.suffix for p in cache.iterdir()) == [".json", ".json"]  # graph and meta; no shards
    assert details["scored"] == 2 and details["agree"] == 2 and details["prefix_ok"] == 2
    shown = details["shown"]
    assert set(shown) == {"recall", "bm25", "dense"}
    assert set(shown["recall"]) == {"24", "10", "8000c", "4000c"}
    assert set(shown["dense"]) == {"24", "10"}  # the baselines render nothing: rows only
    assert shown["recall"]["24"]["all"]["turn_rows"] <= 24
    assert shown["recall"]["4000c"]["all"]["chars"] <= 4000
    # "Clint Yeastwood" is written in hq-assist's evidence turn ("9", hq-plants', is too short to look for)
    at_default = shown["recall"]["8000c"]["all"]
    assert at_default["answers"] == 1 and at_default["answer_in_text"] == 1.0
    assert shown["recall"]["24"]["all"]["answers"] == 0  # a row budget's rows are not a text
    assert set(shown["recall"]["24"]) == {"all", "single-session-assistant", "multi-session"}
    assert shown["recall"]["24"]["all"]["all_evidence"] == 1.0  # 24 rows hold every turn of these histories
    assert set(details["signals_off"]) == {
        "speaker", "session", "neighbours", "dates", "role", "other side", "spread", "opener", "rule lift",
        "feedback", "instructions", "rules", "facets", "inflections", "prose vectors", "gather fusion",
        "gather pieces", "deep pieces", "sweep", "exchange", "score share", "all signals",
    }
    lme = details["longmemeval"]
    assert lme["skipped_no_user_evidence"] == ["hq-assist"] and lme["recall"]["all"]["n"] == 1
    names = {f"{m}@{k}" for m in ("recall_any", "recall_all", "ndcg_any") for k in (5, 10, 30, 50)}
    assert set(lme["dense"]["all"]["session"]) == names
    entries = [json.loads(line) for line in (results / "questions.jsonl").read_text().splitlines()]
    assert [e["id"] for e in entries] == ["hq-assist", "hq-plants"]
    evidence = entries[0]["evidence"][0]
    assert evidence["role"] == "assistant" and evidence["shown_24"] and evidence["ranks"]["fused"] >= 1
    assert set(evidence["ranks"]) == {"fused", "turns", "text", "bm25_full", "dense_full"}
    report = (results / "README.md").read_text()
    assert "embedded runtime" in report and "Command:" in report and "**skipped** (1: hq-assist)" in report
    assert "for the 1 questions whose answer an evidence turn holds word for word" in report
    assert (results / "longmemeval.png").stat().st_size > 0

    assert eval_longmemeval.main(args) == 0  # the finished cache, as it is
    again = json.loads((results / "details.json").read_text())
    assert again["embedding"]["from_cache"] is True
    assert again["shown"] == details["shown"] and again["longmemeval"] == details["longmemeval"]
