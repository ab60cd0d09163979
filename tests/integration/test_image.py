"""The memgraph-recall image over Bolt gives what the embedded runtime gives, call for call.

Answers are compared as rows (kinds, ids, order; rows with equal scores may swap, see row_compare.py)
on the vector fixture with fixed query vectors, so a different torch or BLAS in the image cannot fail
them for no reason; one test asks real questions through the baked model and checks their rows.
"""

import json

import pytest
from memgraph_recall.bolt_io import export_graph
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets import sample
from memgraph_recall.errors import RecallArgumentError
from row_compare import assert_same_rows, lane_rows, rendered_rows
from vector_fixture import COMPARE_CONFIG, questions, with_sample

pytestmark = pytest.mark.integration

FIXTURE_QUESTIONS = questions()

# (user, question, today, facts and turns the baked model must find with the demo's widths)
REAL_QUESTIONS = [
    ("maya", "When is my trip to Lisbon and who am I going with?", "2024-05-20",
     {("user", "TRAVELS_TO", "Lisbon"), ("user", "TRAVELS_WITH", "Ana")}, {"maya-s2-m1"}),
    ("tom", "When is my trip to Lisbon and who am I going with?", "2024-05-20",
     {("user", "TRAVELS_TO", "Lisbon"), ("user", "TRAVELS_WITH", "Rui")}, {"tom-s2-m1"}),
    ("maya", "What should you keep in mind when suggesting food for me?", "2024-05-20",
     {("user", "HAS_DIET", "vegetarian"), ("user", "ALLERGIC_TO", "peanuts")}, set()),
    ("priya", "How many weddings did I go to this year?", "2024-06-30",
     {("user", "ATTENDED_WEDDING", "Meera"), ("user", "ATTENDED_WEDDING", "Sam")}, {"priya-s2-m1"}),
]


def _config(vector: list[float]) -> dict:
    return {**COMPARE_CONFIG, "query_vector": vector}


def test_mg_procedures_lists_every_recall_procedure(bolt):
    assert bolt.procedures() == ["recall.embed", "recall.invalidate", "recall.lanes", "recall.render",
                                 "recall.status"]


def test_embed_over_bolt_embeds_what_the_runtime_embeds(bolt_loaded, embedded_loaded):
    (bolt, on_server), (_, offline) = bolt_loaded, embedded_loaded
    assert on_server == offline and on_server.remaining == 0 and on_server.embedded > 0
    assert bolt.embed().embedded == 0  # idempotent on the server too


@pytest.mark.parametrize(("user", "question", "today", "vector"), FIXTURE_QUESTIONS)
def test_render_rows_match_the_embedded_runtime(bolt, embedded, user, question, today, vector):
    on_server = bolt.render(user, question, today, _config(vector))
    offline = embedded.render(user, question, today, _config(vector))
    assert not on_server.vector_lanes_off and on_server.turns
    assert_same_rows(rendered_rows(offline.to_json()), rendered_rows(on_server.to_json()))
    assert all(t.session_id.startswith(f"{user}-") for t in on_server.turns)


@pytest.mark.parametrize(("user", "question", "today", "vector"), FIXTURE_QUESTIONS)
def test_lanes_rows_match_the_embedded_runtime(bolt, embedded, user, question, today, vector):
    on_server = bolt.lanes(user, question, _config(vector))
    offline = embedded.lanes(user, question, _config(vector))
    assert_same_rows(lane_rows(offline), lane_rows(on_server))
    assert all((h.node is None) != (h.relationship is None) for h in on_server)


@pytest.mark.parametrize("side", ["embedded", "bolt"])
@pytest.mark.parametrize(("user", "question", "today", "facts", "turns"), REAL_QUESTIONS)
def test_a_real_question_through_the_baked_model_finds_its_rows(request, side, user, question, today, facts,
                                                                turns):
    """The model embeds the sample and the question on each side; only which rows come back is checked."""
    client = request.getfixturevalue(side)
    recalled = client.render(user, question, today, sample.DEMO_CONFIG)
    assert not recalled.vector_lanes_off
    assert facts <= {(f.head, f.type, f.tail) for f in recalled.facts}
    assert turns <= {t.action_id for t in recalled.turns}


@pytest.mark.parametrize(("user", "question", "today", "vector"), FIXTURE_QUESTIONS)
def test_both_call_forms_return_the_same_rows_on_real_memgraph(bolt_loaded, server, embedded, user, question,
                                                               today, vector):
    """The fast call shape (the client's default: Cypher finds the User, the database and the holders'
    signatures) and the bare user_id string give the embedded runtime's rows, render and lanes."""
    host, port = server
    with RecallClient.connect(host, port, call_form="string") as bare:
        for client in (bolt_loaded[0], bare):
            assert_same_rows(rendered_rows(embedded.render(user, question, today, _config(vector)).to_json()),
                             rendered_rows(client.render(user, question, today, _config(vector)).to_json()))
            assert_same_rows(lane_rows(embedded.lanes(user, question, _config(vector))),
                             lane_rows(client.lanes(user, question, _config(vector))))


def test_setup_makes_one_recall_meta_and_the_fast_shape_gives_no_row_for_an_unknown_user(bolt):
    bolt.setup()  # idempotent
    assert bolt.render("nobody", "anything").empty
    rows = bolt.backend.run("tokens", "MATCH (m:RecallMeta) RETURN m.token AS token")
    assert len(rows) == 1 and rows[0]["token"]  # setup made exactly one, and keeps it


def test_status_and_invalidate_answer_like_the_runtime(bolt, embedded):
    def units(rows):
        return {(r.get("section"), r.get("name"), r.get("model")): r.get("count") for r in rows
                if r.get("section") in ("units", "with_vectors", "without_vectors")}

    assert units(bolt.status()) == units(embedded.status())
    assert isinstance(bolt.invalidate("maya"), int) and isinstance(bolt.invalidate(), int)


def test_bad_input_gives_the_same_argument_error(bolt, embedded):
    with pytest.raises(RecallArgumentError) as on_server:
        bolt.render("maya", "anything", config={"turns_kk": 1})
    with pytest.raises(RecallArgumentError) as offline:
        embedded.render("maya", "anything", config={"turns_kk": 1})
    assert str(on_server.value) == str(offline.value)


def test_an_exported_server_graph_answers_the_same_offline(bolt, tmp_path):
    count = export_graph(bolt, tmp_path / "export.json")
    exported = json.loads((tmp_path / "export.json").read_text())
    assert count == len(exported) == len(with_sample())
    assert not any("__RecallLoad" in e.get("labels", ()) for e in exported)
    assert any(e["properties"].get("passage_embeddings") for e in exported if e["type"] == "node")
    offline = RecallClient.embedded(tmp_path / "export.json")
    for user, question, today, vector in FIXTURE_QUESTIONS:
        assert_same_rows(rendered_rows(bolt.render(user, question, today, _config(vector)).to_json()),
                         rendered_rows(offline.render(user, question, today, _config(vector)).to_json()))
        assert_same_rows(lane_rows(bolt.lanes(user, question, _config(vector))),
                         lane_rows(offline.lanes(user, question, _config(vector))))


IMPORTED = [
    {"user": "import-zed", "session": "z1", "time": "2024-02-01T10:00:00+00:00", "id": "import-zed-1",
     "text": "I am sailing to Quokka Island with my cousin Odile on the 3rd of March."},
    {"user": "import-zed", "session": "z1", "time": "2024-02-01T10:00:30+00:00", "role": "assistant",
     "text": "Noted. Do you want a packing list for the boat?"},
    {"user": "import-zed", "fact": {"head": "@user", "relation": "SAILS_TO", "tail": "Quokka Island",
                                    "source": "import-zed-1",
                                    "text": "Zed sails to Quokka Island on March 3rd."}},
]


def test_a_chat_history_imported_over_bolt_answers_ask(bolt, server, tmp_path, capsys):
    from memgraph_recall.cli import main

    chats = tmp_path / "chats.jsonl"
    chats.write_text("".join(json.dumps(line) + "\n" for line in IMPORTED))
    url = f"bolt://{server[0]}:{server[1]}"
    try:
        assert main(["import", str(chats), "--bolt", url]) == 0
        assert "imported 2 messages and 1 fact for 1 user (import-zed)" in capsys.readouterr().out
        assert main(["import", str(chats), "--bolt", url]) == 0
        assert "(2 messages and 1 fact were already there)" in capsys.readouterr().out
        bolt.embed("import-zed")
        recalled = bolt.render("import-zed", "Where am I sailing to, and with whom?", "2024-02-20")
        assert any("Quokka Island with my cousin Odile" in turn.text for turn in recalled.turns)
        assert ("user", "SAILS_TO", "Quokka Island") in {(f.head, f.type, f.tail) for f in recalled.facts}
    finally:  # the other tests compare the whole server graph with the embedded one
        bolt.backend.run("clean up", "MATCH (u:User {user_id: 'import-zed'})-[:HAD_SESSION]->(s)"
                         "-[:HAS_ACTION]->(a) OPTIONAL MATCH (a)-[:HAS_CHUNK]->(c) DETACH DELETE u, s, a, c")
        bolt.backend.run("clean up", "MATCH (e:Entity {text: 'Quokka Island'}) DETACH DELETE e")
