"""BEAM's 500K format through `datasets.beam` and `scripts/eval_beam.py`, on a fixture written here in that
format (two chats; the real data is fetched at development time and never committed)."""

import json
import sys
from datetime import date
from pathlib import Path

import pytest
from memgraph_recall.datasets import beam

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import eval_beam  # noqa: E402

CHATS = {
    1: [("January-05-2024", [("How do I pin Node.js to v18.15.0 in my Dockerfile? ->-> 1,1",
                             "Use FROM node:18.15.0-alpine as the base image."),
                            ("My Express server listens on port 3000 behind nginx. ->-> 1,2",
                             "Then proxy_pass http://localhost:3000 in the nginx site config.")]),
        ("February-03-2024", [("I switched the message store from MongoDB to PostgreSQL 15. ->-> 2,1",
                               "Good choice; add an index on (room_id, created_at) for recent messages."),
                              ("Redis now caches sessions with a 30 minute TTL. ->-> 2,2",
                               "Set maxmemory-policy to allkeys-lru so old sessions are evicted.")])],
    2: [("March-02-2024", [("I'm writing my thesis on coral reef bleaching in the Red Sea. ->-> 1,1",
                           "Start with the 2020 survey data from the northern reefs.")])],
}
QUESTIONS = {
    1: {"information_extraction": [{"question": "Which Node.js version did I pin?", "source_chat_ids": [0],
                                    "rubric": ["LLM response should mention: v18.15.0"]}],
        "temporal_reasoning": [{"question": "Which database did I move my messages to, and what did I cache?",
                                "source_chat_ids": {"first_event": [4], "second_event": [6]},
                                # as BEAM writes some: a list's text; "Redis sessions" is no message's words
                                "rubric": "['LLM response should mention: PostgreSQL 15', "
                                          "'LLM response should state: Redis sessions']"}],
        "summarization": [{"question": "Summarize my deployment setup.", "source_chat_ids": [0, 1, 2, 3]}],
        "abstention": [{"question": "What did my manager say?", "source_chat_ids": None}]},
    2: {"information_extraction": [{"question": "Which sea do I study?", "source_chat_ids": [0]}]},
}


def write(root: Path) -> Path:
    """The fixture as BEAM lays it out: <i>/chat.json and <i>/probing_questions/probing_questions.json."""
    for number, batches in CHATS.items():
        folder = root / str(number)
        (folder / "probing_questions").mkdir(parents=True)
        chat, next_id = [], 0
        for batch_number, (anchor, exchanges) in enumerate(batches, start=1):
            turns = []
            for user_text, assistant_text in exchanges:
                turns.append([{"role": "user", "id": next_id, "content": user_text},
                              {"role": "assistant", "id": next_id + 1, "content": assistant_text}])
                next_id += 2
            turns[0][0]["time_anchor"] = anchor
            chat.append({"batch_number": batch_number, "time_anchor": None, "turns": turns})
        (folder / "chat.json").write_text(json.dumps(chat))
        (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(QUESTIONS[number]))
    return root


def test_a_chat_is_a_user_its_batches_dated_sessions_and_markers_stripped(tmp_path):
    data = beam.load(write(tmp_path))
    assert [c.user_id for c in data.chats] == ["beam-1", "beam-2"]
    first = data.chats[0]
    assert [t.session_id for t in first.turns] == ["beam-1-s1"] * 4 + ["beam-1-s2"] * 4
    assert first.turns[0].text == "How do I pin Node.js to v18.15.0 in my Dockerfile?"
    assert first.turns[1].text.startswith("Use FROM node")  # assistant text kept whole
    actions = [e for e in data.elements if "Action" in e.get("labels", ())]
    assert actions[0]["properties"]["timestamp"] == "2024-01-05T09:00:00+00:00"
    assert actions[4]["properties"]["timestamp"] == "2024-02-03T09:00:00+00:00"
    by_type = {q.question_type: q for q in first.questions}
    assert by_type["temporal_reasoning"].evidence == ("beam-1-4", "beam-1-6")  # a map of id lists
    assert by_type["abstention"].evidence == ()
    assert by_type["information_extraction"].today == date(2024, 2, 4)
    assert [c.user_id for c in beam.load(tmp_path, [2]).chats] == ["beam-2"]
    with pytest.raises(ValueError, match="no chat 3"):
        beam.load(tmp_path, [3])


def test_the_evaluation_runs_end_to_end_and_scores_each_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("RECALL_TORCH_THREADS", "1")
    data = write(tmp_path / "500K")
    results = tmp_path / "results"
    assert eval_beam.main(["--data", str(data), "--results", str(results), "--cache", str(tmp_path / "cache"),
                           "--chats", "1"]) == 0
    details = json.loads((results / "details.json").read_text())["results"]
    assert details["lookup"]["questions"] == 2 and details["gathering"]["questions"] == 1
    assert details["all"]["questions"] == 3  # every question scored: the mean share over all of them
    for run in ("24", "10", "8000c", "4000c", "bm25 24", "dense 10"):
        assert 0 <= details["lookup"][run]["share"] <= 1
    assert details["lookup"]["24"]["all_evidence"] == 1.0  # 8 messages: all of them fit in 24 rows
    assert details["lookup"]["4000c"]["chars"] <= 4000
    at_default = details["lookup"]["8000c"]
    assert at_default["mentions"] == 2 and at_default["mentions_in_text"] == 1.0
    assert "mentions" not in details["lookup"]["24"]  # a row budget's rows are not a text
    entries = [json.loads(line) for line in (results / "questions.jsonl").read_text().splitlines()]
    assert {e["key"].split("/")[0] for e in entries} == {"beam-1"}
    assert all(set(e["runs"]["24"]["shown"]) <= {f"beam-1-{i}" for i in range(8)} for e in entries)
    report = (results / "README.md").read_text()
    assert "| lookup | 2 |" in report and "| 8,000 chars |" in report and "bm25 24 rows" in report
    assert "must mention, for the 2 an evidence message writes word for word" in report
