"""The LongMemEval loader: a small hand-written history in the benchmark's format, and the dev file when the
shared data is there (`MEMGRAPH_RECALL_DATA` names the data folder; default `<repo>/../shared/data`)."""

import os
from collections import Counter, defaultdict
from datetime import date, datetime
from pathlib import Path

import pytest
from longmemeval_history import history, write
from memgraph_recall.datasets.longmemeval import build_graph, load, parse_date
from memgraph_recall.embedded import Runtime

ROOT = Path(__file__).resolve().parents[2]
QUERY_MODULES = ROOT / "query_modules"
DATA = Path(os.environ.get("MEMGRAPH_RECALL_DATA") or ROOT.parent / "shared" / "data")
DEV = DATA / "longmemeval" / "longmemeval_s_dev.json"


class Graph:
    """Export elements indexed for walking in assertions."""

    def __init__(self, elements: list[dict]) -> None:
        self.nodes = {e["id"]: e for e in elements if e["type"] == "node"}
        self.parents = defaultdict(list)
        for rel in (e for e in elements if e["type"] == "relationship"):
            self.parents[rel["end"]].append((rel["label"], self.nodes[rel["start"]]))

    def labelled(self, label: str) -> list[dict]:
        return [n for n in self.nodes.values() if label in n["labels"]]

    def action(self, action_id: str) -> dict:
        return next(n for n in self.labelled("Action") if n["properties"]["action_id"] == action_id)

    def owner(self, action: dict) -> tuple[str, str]:
        """(user_id, session_id) above an Action, checking it has exactly one parent of each."""
        [(link, session)] = self.parents[action["id"]]
        [(had, user)] = self.parents[session["id"]]
        assert (link, had) == ("HAS_ACTION", "HAD_SESSION") and "Session" in session["labels"]
        return user["properties"]["user_id"], session["properties"]["session_id"]


@pytest.fixture(scope="module")
def data():
    return build_graph(history())


def test_parse_date_reads_the_benchmark_format():
    assert parse_date("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21)
    with pytest.raises(ValueError, match=r"expected a date like '2023/05/20 \(Sat\) 02:21'"):
        parse_date("20 May 2023")


def test_each_question_is_its_own_user_with_ids_namespaced(data):
    graph = Graph(data.elements)
    assert data.users == ["hq-assist", "hq-plants", "hq-none_abs"]
    assert sorted(n["properties"]["user_id"] for n in graph.labelled("User")) == sorted(data.users)
    sessions = [n["properties"]["session_id"] for n in graph.labelled("Session")]
    assert sessions[:5] == ["hq-assist:chat_garden", "hq-assist:answer_baker_1", "hq-assist:chat_rep",
                            "hq-assist:chat_rep#2", "hq-assist:chat_trip"]
    assert "hq-plants:chat_rep" in sessions and len(sessions) == len(set(sessions)) == data.sessions == 10
    assert data.repeated_sessions == 1 and data.turns == 22 and not data.missing_answer_sessions
    actions = graph.labelled("Action")
    assert len({a["properties"]["action_id"] for a in actions}) == len(actions) == 22
    for question in data.questions:
        for turn in question.turns:
            assert graph.owner(graph.action(turn.action_id)) == (question.user_id, turn.session_id)


def test_turns_carry_role_time_and_the_benchmark_position(data):
    graph = Graph(data.elements)
    answer = graph.action("hq-assist:answer_baker_1:2")["properties"]
    assert answer["action_type"] == "assistant_message" and answer["speaker"] == "assistant"
    assert answer["text"] == "Congratulations! You could name the starter Clint Yeastwood."
    assert answer["timestamp"] == "localDateTime(2023-05-12T18:31:00)"  # session date + position - 1 minutes
    first = graph.action("hq-assist:answer_baker_1:1")["properties"]
    assert first["action_type"] == "user_message" and first["speaker"] == "user"
    assert first["timestamp"] == "localDateTime(2023-05-12T18:30:00)"
    copy = graph.action("hq-assist:chat_rep#2:1")["properties"]
    assert copy["timestamp"] == "localDateTime(2023-05-20T02:21:00)"


def test_questions_know_their_evidence_sessions_and_day(data):
    assist, plants, abstention = data.questions
    assert assist.evidence == ("hq-assist:answer_baker_1:2",)  # assistant-only evidence
    assert plants.evidence == ("hq-plants:answer_gar_1:1", "hq-plants:answer_gar_2:3")
    assert abstention.evidence == () and abstention.abstention and not assist.abstention
    assert assist.answer_sessions == ("hq-assist:answer_baker_1",)
    assert plants.answer_sessions == ("hq-plants:answer_gar_1", "hq-plants:answer_gar_2")
    assert assist.today == date(2023, 6, 1) and assist.asked_at == datetime(2023, 6, 1, 10, 0)
    assert assist.user_id == "hq-assist" and plants.question_type == "multi-session"


def test_benchmark_ids_follow_longmemeval(data):
    ids = {t.action_id: t.benchmark_id for q in data.questions for t in q.turns}
    assert ids["hq-assist:answer_baker_1:2"] == "answer_baker_1_2"
    assert ids["hq-assist:answer_baker_1:1"] == "noans_baker_1_1"  # an answer session's other turns
    assert ids["hq-assist:chat_rep:1"] == ids["hq-assist:chat_rep#2:1"] == "chat_rep_1"
    assert ids["hq-plants:answer_gar_2:3"] == "answer_gar_2_3"


def test_load_reads_a_file_and_selects_questions(tmp_path):
    path = write(tmp_path)
    assert [q.question_id for q in load(path).questions] == ["hq-assist", "hq-plants", "hq-none_abs"]
    assert [q.question_id for q in load(path, ["hq-plants"]).questions] == ["hq-plants"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda items: items.append(items[0]), "question hq-assist given twice"),
    (lambda items: items[0]["haystack_sessions"][0][0].update(role="system"), "role 'system'"),
    (lambda items: items[0]["haystack_dates"].pop(), "differ in length"),
    (lambda items: items[1].update(question_date="2023-07-02"), "expected a date like"),
    (lambda items: items[1].pop("question"), "hq-plants: missing 'question'"),
])
def test_bad_items_are_refused_with_a_reason(change, message):
    items = history()
    change(items)
    with pytest.raises(ValueError, match=message):
        build_graph(items)


def ownership(runtime: Runtime) -> tuple[Counter, dict]:
    rows = runtime.call("recall.status", {})
    skips = Counter({r["name"]: r["count"] for r in rows if r["section"] == "ownership"})
    return skips, {(r["section"], r["name"]): r["count"] for r in rows}


def test_the_graph_is_owned_cleanly_and_scoped_per_question(data):
    runtime = Runtime(QUERY_MODULES)
    runtime.load_elements(data.elements)
    skips, rows = ownership(runtime)
    assert skips == Counter() and rows[("units", "messages")] == 22
    hits = runtime.call("recall.lanes", "hq-assist", "medieval history podcast", {"lanes": ["text"]})
    found = {h["key"] for h in hits if h["lane"] == "text"}
    assert {"hq-assist:chat_rep:1", "hq-assist:chat_rep#2:1"} <= found  # both copies are this user's
    assert all(key.startswith("hq-assist:") for key in found)  # not hq-plants' copy of chat_rep


@pytest.mark.skipif(not DEV.is_file(), reason=f"LongMemEval dev file not found at {DEV} "
                    "(set MEMGRAPH_RECALL_DATA to the folder holding longmemeval/)")
def test_dev_file_loads_with_no_ownership_skips():
    data = load(DEV)
    assert len(data.questions) == 99 and data.turns == 48675 and data.repeated_sessions == 3
    assert not data.missing_answer_sessions
    ids = [t.action_id for q in data.questions for t in q.turns]
    assert len(ids) == len(set(ids))
    for question in data.questions:  # the gold LongMemEval finds by name is the has_answer user turns
        user = [t for t in question.turns if t.role == "user"]
        assert {t.benchmark_id for t in user if "answer" in t.benchmark_id} == {
            t.benchmark_id for t in user if t.has_answer}
    runtime = Runtime(QUERY_MODULES)
    runtime.load_elements(data.elements)
    skips, rows = ownership(runtime)
    assert skips == Counter()
    assert rows[("units", "messages")] == 48673 and rows[("malformed", "message: no text")] == 2
