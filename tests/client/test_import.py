"""`memgraph-recall import`: a chat history in JSON Lines becomes memory recall answers from.

The fixture `fixtures/chats.jsonl` is the format as docs/import.md shows it (two users, facts with
`@user`, ids given and left out); `fixtures/chats_bad.jsonl` holds one of each kind of bad line.
"""

import json
from datetime import date
from pathlib import Path

import pytest
from memgraph_recall.cli import main
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets.chats import ChatFormatError, ChatHistory, iter_lines, read_chat_file
from memgraph_recall.importing import FACTS_QUERY, HELD_QUERY, MESSAGES_QUERY, import_over_bolt

FIXTURES = Path(__file__).parent / "fixtures"
GOOD, BAD = FIXTURES / "chats.jsonl", FIXTURES / "chats_bad.jsonl"
TRIP = "When am I going to Porto, and with whom?"


def test_a_chat_file_becomes_memory_that_answers_ask(tmp_path, capsys):
    graph = tmp_path / "memory.json"
    assert main(["import", str(GOOD), "--graph", str(graph)]) == 0
    assert "imported 6 messages and 3 facts for 2 users (ines, jonas)" in capsys.readouterr().out
    assert main(["embed", "--graph", str(graph)]) == 0
    capsys.readouterr()
    ask = ["ask", "--graph", str(graph), "--user", "ines", TRIP, "--today", "2024-04-01", "--json"]
    assert main(ask) == 0
    recalled = json.loads(capsys.readouterr().out)["recalled"]
    texts = [turn["text"] for turn in recalled["turns"]]
    assert any("driving to Porto on the 12th of April" in text for text in texts)
    assert not any("conference in May" in text for text in texts)  # jonas's message, never ines's
    facts = {(f["head"], f["type"], f["tail"]) for f in recalled["facts"]}
    assert ("user", "TRAVELS_TO", "Porto") in facts


def test_importing_the_same_file_again_adds_nothing_and_a_longer_one_adds_the_rest(tmp_path, capsys):
    graph = tmp_path / "memory.json"
    assert main(["import", str(GOOD), "--graph", str(graph)]) == 0
    first = graph.stat()
    capsys.readouterr()
    assert main(["import", str(GOOD), "--graph", str(graph)]) == 0
    said = capsys.readouterr().out.splitlines()[0]
    assert said == ("nothing new for 2 users (ines, jonas): 6 messages and 3 facts were already there; "
                    f"{graph} is unchanged")
    assert (graph.stat().st_ino, graph.stat().st_mtime_ns) == (first.st_ino, first.st_mtime_ns)  # untouched
    longer = tmp_path / "longer.jsonl"
    longer.write_text(GOOD.read_text() + json.dumps(
        {"user": "ines", "session": "2024-03-trip", "time": "2024-03-02T09:20:00+01:00",
         "text": "We booked the hotel by the river."}) + "\n")
    assert main(["import", str(longer), "--graph", str(graph)]) == 0
    assert "imported 1 message and 0 facts" in capsys.readouterr().out
    after = json.loads(graph.read_text())
    sessions = [e for e in after if "Session" in e.get("labels", ())]
    users = [e for e in after if "User" in e.get("labels", ())]
    assert len(users) == 2 and len(sessions) == 3  # the new message joined its user's session
    assert sum("RecallMeta" in e.get("labels", ()) for e in after) == 1


def test_every_bad_line_is_named_by_number_and_nothing_is_written(tmp_path, capsys):
    graph = tmp_path / "memory.json"
    assert main(["import", str(GOOD), "--graph", str(graph)]) == 0
    before = graph.read_bytes()
    capsys.readouterr()
    assert main(["import", str(BAD), "--graph", str(graph)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing was written" in err
    for expected in ("line 2: time: expected an ISO 8601", "line 3: text: expected a non-empty string",
                     "line 4: expected a JSON object", "line 5: missing text",
                     "line 6: id: 'ok-1' is already the id of another message (line 1)",
                     "line 7: role: expected 'user' or 'assistant'", "line 8: fact.relation",
                     "line 9: not JSON"):
        assert expected in err, expected
    assert "line 1:" not in err
    assert graph.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["memory.json"]  # no temporary file left


def test_a_line_that_is_not_utf8_is_named_by_number_and_every_other_line_is_still_checked(tmp_path, capsys):
    chats = tmp_path / "chats.jsonl"
    good = GOOD.read_bytes().splitlines(keepends=True)
    latin1 = b'{"user": "ines", "session": "s", "time": "2024-03-02T09:14:00", "text": "caf\xe9"}\n'
    chats.write_bytes(good[0] + latin1 + b'{"user": "ines"}\n' + b"\xff\xfe\n" + good[1])
    assert main(["import", str(chats), "--graph", str(tmp_path / "memory.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "3 bad lines, nothing was written" in err
    assert "line 2: not UTF-8 text (byte 0xe9 at character 77)" in err
    assert "line 3: missing session, time, text" in err
    assert "line 4: not UTF-8 text (byte 0xff at character 1)" in err
    assert "line 1:" not in err and "line 5:" not in err
    assert list(tmp_path.iterdir()) == [chats]


@pytest.mark.parametrize(("text", "said"), [("", "is empty"), ("\n  \n", "holds only blank lines")])
def test_an_empty_file_is_called_empty_and_says_what_it_should_hold(tmp_path, capsys, text, said):
    chats = tmp_path / "chats.jsonl"
    chats.write_text(text)
    assert main(["import", str(chats), "--graph", str(tmp_path / "memory.json")]) == 2
    err = capsys.readouterr().err
    assert err == (f"memgraph-recall import: error: {chats}: {said}, nothing was written: expected JSON "
                   "Lines, one message per line with user, session, time, text, and optionally fact lines "
                   "(see docs/import.md)\n")
    assert "bad line" not in err and list(tmp_path.iterdir()) == [chats]


def test_an_id_another_user_holds_is_refused_before_anything_is_written(tmp_path, capsys):
    graph = tmp_path / "memory.json"
    assert main(["import", str(GOOD), "--graph", str(graph)]) == 0
    before = graph.read_bytes()
    clash = tmp_path / "clash.jsonl"
    clash.write_text(json.dumps({"user": "mallory", "session": "m", "time": "2024-03-03T10:00:00",
                                 "text": "a message that takes ines's id", "id": "ines-1"}) + "\n"
                     + json.dumps({"user": "mallory", "fact": {"head": "@user", "relation": "KNOWS",
                                                               "tail": "Rui", "source": "ines-3",
                                                               "text": "x"}}) + "\n"
                     + json.dumps({"user": "mallory", "fact": {"head": "@user", "relation": "KNOWS",
                                                               "tail": "Rui", "source": "nowhere",
                                                               "text": "x"}}) + "\n")
    capsys.readouterr()
    assert main(["import", str(clash), "--graph", str(graph)]) == 2
    err = capsys.readouterr().err
    assert "line 1: id 'ines-1' is already another user's or another session's message" in err
    assert "line 2: fact.source: another user's message has the id 'ines-3'" in err
    assert "line 3: fact.source: no message has the id 'nowhere'" in err
    assert graph.read_bytes() == before


def test_import_refuses_the_bundled_sample_and_a_directory(tmp_path, capsys):
    assert main(["import", str(GOOD), "--graph", "sample"]) == 2
    assert "the bundled sample is not a file to import into" in capsys.readouterr().err
    assert main(["import", str(GOOD), "--graph", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "missing.jsonl"), "--graph", str(tmp_path / "g.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_the_builder_makes_the_same_graph_in_code_and_round_trips_the_file():
    history = read_chat_file(GOOD)
    again = ChatHistory()
    for line in iter_lines(history):
        record = json.loads(line)
        if "fact" in record:
            fact = record["fact"]
            again.add_fact(record["user"], fact["head"], fact["relation"], fact["tail"], fact["source"],
                           fact["text"], fact.get("valid_at"))
        else:
            again.add_message(record["user"], record["session"], record["time"], record["text"],
                              record["role"], record.get("speaker"), record["id"])
    strip = [{k: v for k, v in e.items()} for e in again.elements()]
    assert [e for e in strip if "RecallMeta" not in e.get("labels", ())] == \
        [e for e in history.elements() if "RecallMeta" not in e.get("labels", ())]
    client = RecallClient.embedded(history.elements())
    client.embed()
    recalled = client.render("ines", TRIP, date(2024, 4, 1))
    assert any("Porto on the 12th of April" in turn.text for turn in recalled.turns)
    with pytest.raises(ValueError, match="role: expected 'user' or 'assistant'"):
        again.add_message("ines", "s", "2024-01-01T00:00:00", "hi", role="system")
    with pytest.raises(ChatFormatError, match="fact.source: no message has the id 'nope'"):
        again.add_fact("ines", "@user", "KNOWS", "Rui", "nope", "x")
        again.elements()


class Server:
    """Stands in for Memgraph over Bolt: answers the id lookup from `held` and records every query."""

    def __init__(self, held: list[dict] | None = None, fail_on: str | None = None) -> None:
        self.held, self.fail_on = held or [], fail_on
        self.queries: list[tuple[str, dict]] = []

    def run(self, what: str, query: str, parameters: dict | None = None) -> list[dict]:
        self.queries.append((query, parameters or {}))
        if self.fail_on and self.fail_on in query:
            raise ConnectionError("connection lost")
        if query != HELD_QUERY:
            return []
        return [row for row in self.held if row["id"] in parameters["ids"]]


def test_over_bolt_messages_are_one_query_facts_one_per_type_and_values_travel_as_parameters():
    server = Server(held=[{"id": "ines-2", "user": "ines", "session": "2024-03-trip",
                           "text": "Lovely! Shall I look for a restaurant near the Ribeira for the birthday "
                                   "dinner?"}])
    report = import_over_bolt(read_chat_file(GOOD), server, "chats.jsonl")
    assert (report.messages, report.messages_present, report.facts) == (5, 1, 3)
    queries = [query for query, _ in server.queries]
    assert queries[0] == HELD_QUERY and queries[1] == MESSAGES_QUERY
    assert len(queries) == 5  # lookup, messages, and the three relationship types
    written = [m["action_id"] for row in server.queries[1][1]["sessions"] for m in row["messages"]]
    assert "ines-2" not in written and len(written) == 5
    assert all("Porto" not in query and "ines" not in query for query in queries)
    types = {query.split("r:`")[1].split("`")[0] for query in queries[2:]}
    assert types == {"SIBLING_OF", "TRAVELS_TO", "DOES_NOT_EAT"}
    user_head = next(q for q in queries if "TRAVELS_TO" in q)
    assert "MERGE (u)-[r:`TRAVELS_TO`" in user_head and FACTS_QUERY.split(" MATCH")[0] in user_head


def test_over_bolt_a_held_id_of_another_user_writes_nothing_and_a_late_failure_says_what_was_written():
    server = Server(held=[{"id": "ines-1", "user": "mallory", "session": "x", "text": "other"}])
    with pytest.raises(ChatFormatError, match="line 1: id 'ines-1' is already another user's"):
        import_over_bolt(read_chat_file(GOOD), server, "chats.jsonl")
    assert [query for query, _ in server.queries] == [HELD_QUERY]
    failing = Server(fail_on="DOES_NOT_EAT")
    with pytest.raises(ConnectionError, match="The 6 messages were written, and the facts of these types: "
                                              "SIBLING_OF, TRAVELS_TO; run the same import again"):
        import_over_bolt(read_chat_file(GOOD), failing, "chats.jsonl")
