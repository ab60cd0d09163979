"""`memgraph-recall` through `main([...])`: real output, JSON, config files and flags, bad input."""

import copy
import json
import re
from pathlib import Path

import pytest
from memgraph_recall.cli import build_parser, main, open_client
from memgraph_recall.client import RecallClient
from public_data import locomo_conversation

TRIP = "When is my trip to Lisbon and who am I going with?"


@pytest.fixture(scope="module")
def demo_output(sample_client):
    """One `memgraph-recall demo` run, after the shared sample has loaded the model once."""
    capture = pytest.MonkeyPatch()
    lines: list[str] = []
    capture.setattr("memgraph_recall.cli.out", lambda text="": lines.append(text))
    try:
        assert main(["demo"]) == 0
    finally:
        capture.undo()
    return "\n".join(lines)


def answers(output: str) -> dict[str, str]:
    """Demo output split per `=== user asks: question` block."""
    blocks = {}
    for block in output.split("\n=== ")[1:]:
        head, _, body = block.partition("\n")
        blocks[head.split("   (")[0]] = body
    return blocks


def test_demo_prints_real_rows_scoped_per_user(demo_output):
    blocks = answers(demo_output)
    maya = blocks[f"maya asks: {TRIP}"]
    tom = blocks[f"tom asks: {TRIP}"]
    assert "Memory recall for: " + TRIP in maya
    assert 'TRAVELS_TO @ 2024-04-10]-> Lisbon' in maya and "TURN [session maya-s2" in maya
    assert 'TRAVELS_TO @ 2024-04-22]-> Lisbon' in tom and "TURN [session tom-s2" in tom
    assert "tom-s" not in maya and "Rui" not in maya
    assert "maya-s" not in tom and "Ana" not in tom
    assert "ATTENDED_WEDDING" in blocks["priya asks: How many weddings did I go to this year?"]
    assert "Agent self-check" not in demo_output
    embedded = re.search(r"Embedded (\d+) messages", demo_output)
    assert embedded and int(embedded.group(1)) > 3 * 200  # a few hundred per user: recall has to choose
    assert "Loading weights" not in demo_output


def test_ask_json_over_a_graph_file(sample_graph_file, capsys):
    assert main(["ask", "--graph", str(sample_graph_file), "--user", "maya", TRIP, "--today", "2024-05-20",
                 "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["recalled"]["question"] == TRIP
    assert "Today is 2024-05-20." in payload["text"]
    assert all(t["session_id"].startswith("maya-") for t in payload["recalled"]["turns"])


def test_config_file_then_flags_override(sample_graph_file, tmp_path, capsys):
    config = tmp_path / "recall.toml"
    config.write_text('[recall]\nlanes = ["turns"]\nturns_k = 1\nfact_turns_k = 0\n')
    args = ["ask", "--graph", str(sample_graph_file), "--user", "tom", TRIP, "--config", str(config)]
    assert main(args) == 0
    rows = capsys.readouterr().out.split("Rows:\n")[1].strip().splitlines()
    assert len(rows) == 1 and rows[0].startswith("TURN [session tom-")

    assert main([*args, "--lanes", "facts", "--set", "facts_k=2"]) == 0
    rows = capsys.readouterr().out.split("Rows:\n")[1].strip().splitlines()
    assert rows and all(row.startswith("FACT:") for row in rows) and len(rows) <= 2


def test_bad_input_names_the_argument(sample_graph_file, tmp_path, capsys):
    graph = str(sample_graph_file)
    with pytest.raises(SystemExit) as exit_info:
        main(["ask", "--graph", graph, "--user", "maya", TRIP, "--today", "20/05/2024"])
    assert exit_info.value.code == 2
    assert "--today: expected an ISO date YYYY-MM-DD" in capsys.readouterr().err

    with pytest.raises(SystemExit):
        main(["ask", "--graph", graph, "--user", "maya", TRIP, "--lanes", "turns,dreams"])
    assert "--lanes: expected a comma-separated subset" in capsys.readouterr().err

    assert main(["ask", "--graph", graph, "--user", "maya", TRIP, "--set", "turns_kk=3"]) == 2
    assert "turns_kk" in capsys.readouterr().err

    assert main(["ask", "--graph", str(tmp_path / "none.json"), "--user", "maya", TRIP]) == 2
    assert "--graph: no such file" in capsys.readouterr().err

    assert main(["setup", "--graph", graph]) == 2
    assert "needs a server (--bolt URL)" in capsys.readouterr().err


def test_status_lists_procedures_and_vector_counts(sample_graph_file, capsys):
    assert main(["status", "--graph", str(sample_graph_file)]) == 0
    output = capsys.readouterr().out
    assert "recall.render" in output and "sentence-transformers/all-MiniLM-L6-v2" in output


def messages_of(user: str) -> int:
    """The bundled sample's messages of `user` (its hand-written ones and its generated chatter)."""
    from memgraph_recall.datasets import sample

    actions = [e for e in sample.elements() if "Action" in e.get("labels", ())]
    return sum(e["properties"]["action_id"].startswith(f"{user}-") for e in actions)


def test_embed_writes_vectors_into_the_graph_file(tmp_path, capsys, sample_client):
    from memgraph_recall.datasets import sample

    source = tmp_path / "fresh.json"
    source.write_text(json.dumps(sample.elements()))
    target = tmp_path / "embedded.json"
    assert main(["embed", "--graph", str(source), "--user", "priya", "--output", str(target)]) == 0
    assert f"embedded {messages_of('priya')} messages" in capsys.readouterr().out
    vectors = [e for e in json.loads(target.read_text()) if e.get("properties", {}).get("passage_embeddings")]
    assert vectors and all(e["properties"]["action_id"].startswith("priya-") for e in vectors)


def test_demo_over_one_conversation_of_a_locomo10_list(sample_client, tmp_path, capsys):
    """As a newcomer runs it, on the benchmark's own file: a list of conversations, one of them asked."""
    conv = locomo_conversation("conv-30")
    split = {"conversation": {k: v for k, v in conv.items() if not k.endswith("_observation") and k != "qa"},
             "observation": {k: v for k, v in conv.items() if k.endswith("_observation")}, "qa": conv["qa"]}
    other = {"conversation": {"speaker_a": "A", "speaker_b": "B"}, "observation": {}, "qa": []}
    listed = tmp_path / "locomo10.json"
    listed.write_text(json.dumps([{"sample_id": "conv-x", **other}, {"sample_id": "conv-30", **split}]))
    argv = ["demo", "--locomo", str(listed), "--conversation", "conv-30", "--questions", "1"]
    assert main([*argv, "--set", "limit=2000"]) == 0
    output = capsys.readouterr().out
    assert f"Loading conversation conv-30 of {listed} (1 of 2)" in output
    assert "Asking 1 questions as conv-30." in output
    assert "=== conv-30 asks: " in output and "TURN [session conv-30" in output
    assert "LoCoMo's reference answer:" in output
    assert main(["demo", "--locomo", str(listed), "--conversation", "conv-31"]) == 2
    assert "--conversation: " in capsys.readouterr().err


def test_server_comes_from_the_flag_then_the_config_file_then_the_default(tmp_path):
    config = tmp_path / "recall.toml"
    config.write_text('[client]\nbolt = "bolt://db.internal:7688"\n')
    parser = build_parser()

    def address(*argv):
        return open_client(parser.parse_args(["invalidate", *argv])).backend.address

    assert (address("--config", str(config)).host, address("--config", str(config)).port) == (
        "db.internal", 7688)
    assert address("--config", str(config), "--bolt", "bolt://other:7000").port == 7000
    assert (address().host, address().port) == ("localhost", 7687)


def zoe_graph(path: Path) -> Path:
    """A one-message graph of user zoe, which the bundled sample does not have."""
    from memgraph_recall.datasets.memory_graph import MemoryGraph

    graph = MemoryGraph()
    session = graph.session(graph.user("zoe"), "zoe-s1")
    graph.message(session, "zoe-1", "My own graph file is about kayaks.", "2024-01-01T10:00:00Z")
    path.write_text(json.dumps(graph.elements()))
    return path


def test_graph_dot_slash_sample_reads_the_file_and_bare_sample_says_it_is_not(tmp_path, monkeypatch, capsys,
                                                                               sample_client):
    monkeypatch.chdir(tmp_path)
    zoe_graph(tmp_path / "sample")
    assert main(["ask", "--graph", "./sample", "--user", "zoe", "kayaks", "--lanes", "text"]) == 0
    assert "TURN [session zoe-s1" in capsys.readouterr().out

    shared = RecallClient(copy.copy(sample_client.backend))  # the embedded sample, without embedding again
    monkeypatch.setattr("memgraph_recall.cli.RecallClient.embedded", lambda *a, **k: shared)
    assert main(["ask", "--graph", "sample", "--user", "maya", TRIP]) == 0
    captured = capsys.readouterr()
    assert "TURN [session maya-s" in captured.out
    assert "--graph sample is the bundled sample, not the file sample here (that is --graph ./sample)" in \
        captured.err


def test_on_a_terminal_the_slow_steps_say_what_they_are_doing(sample_graph_file, monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    assert main(["ask", "--graph", str(sample_graph_file), "--user", "maya", TRIP]) == 0
    err = capsys.readouterr().err
    assert f"memgraph-recall: loading {sample_graph_file} into the embedded runtime..." in err
    assert "memgraph-recall: recalling; the first question loads the embedding model" in err

    monkeypatch.setattr("sys.stderr.isatty", lambda: False)  # piped or logged: nothing but results
    assert main(["ask", "--graph", str(sample_graph_file), "--user", "maya", TRIP]) == 0
    assert capsys.readouterr().err == ""


def test_demo_questions_applies_to_the_bundled_sample(sample_client, monkeypatch):
    monkeypatch.setattr("memgraph_recall.demo.RecallClient.embedded", lambda elements: sample_client)
    lines: list[str] = []
    monkeypatch.setattr("memgraph_recall.cli.out", lambda text="": lines.append(text))
    assert main(["demo", "--questions", "1"]) == 0
    assert "Asking 1 questions as maya." in lines and sum(line.startswith("=== ") for line in lines) == 1
    with pytest.raises(SystemExit):
        main(["demo", "--questions", "0"])
    assert main(["demo", "--conversation", "conv-26"]) == 2  # picks within --locomo only


def test_embed_of_the_bundled_sample_reports_what_it_embedded_and_saves_only_to_output(tmp_path, monkeypatch,
                                                                                       capsys, sample_client):
    monkeypatch.chdir(tmp_path)
    assert main(["embed", "--graph", "sample", "--user", "priya"]) == 0
    out = capsys.readouterr().out
    assert f"embedded {messages_of('priya')} messages" in out
    assert "not saved: the bundled sample is no file" in out
    assert list(tmp_path.iterdir()) == []  # no file named `sample` appeared
    assert main(["embed", "--graph", "sample", "--user", "priya", "--output", "out.json"]) == 0
    assert "saved out.json" in capsys.readouterr().out and (tmp_path / "out.json").is_file()
