"""The memgraph-recall image over Bolt gives what the embedded runtime gives, call for call."""

import json

import pytest
from memgraph_recall.bolt_io import export_graph
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets import sample
from memgraph_recall.errors import RecallArgumentError

pytestmark = pytest.mark.integration

QUESTIONS = [(q.user, q.question, q.today) for q in sample.DEMO_QUESTIONS]


def test_mg_procedures_lists_every_recall_procedure(bolt):
    assert bolt.procedures() == ["recall.embed", "recall.invalidate", "recall.lanes", "recall.render",
                                 "recall.status"]


def test_embed_over_bolt_embeds_what_the_runtime_embeds(bolt_loaded, embedded_loaded):
    (bolt, on_server), (_, offline) = bolt_loaded, embedded_loaded
    assert on_server == offline and on_server.remaining == 0 and on_server.embedded > 0
    assert bolt.embed().embedded == 0  # idempotent on the server too


@pytest.mark.parametrize(("user", "question", "today"), QUESTIONS)
def test_render_matches_the_embedded_runtime(bolt, embedded, user, question, today):
    on_server = bolt.render(user, question, today, sample.DEMO_CONFIG)
    offline = embedded.render(user, question, today, sample.DEMO_CONFIG)
    assert on_server.text == offline.text
    assert on_server.to_json() == offline.to_json()
    assert on_server.turns and all(t.session_id.startswith(f"{user}-") for t in on_server.turns)


@pytest.mark.parametrize(("user", "question", "today"), QUESTIONS[:2])
def test_lanes_match_the_embedded_runtime(bolt, embedded, user, question, today):
    on_server = bolt.lanes(user, question)
    offline = embedded.lanes(user, question)
    assert [(h.lane, h.rank, h.key, h.turn, h.passage, h.text) for h in on_server] == [
        (h.lane, h.rank, h.key, h.turn, h.passage, h.text) for h in offline]
    assert [h.score for h in on_server] == pytest.approx([h.score for h in offline], abs=1e-4)
    assert all((h.node is None) != (h.relationship is None) for h in on_server)


def test_node_form_uses_the_index_and_treats_an_unknown_user_as_empty(server, embedded):
    host, port = server
    with RecallClient.connect(host, port, node_form=True) as client:
        assert "CREATE INDEX ON :User(user_id)" in client.setup()
        user, question, today = QUESTIONS[0]
        assert client.render(user, question, today, sample.DEMO_CONFIG).text == embedded.render(
            user, question, today, sample.DEMO_CONFIG).text
        assert client.render("nobody", question).empty


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
    assert count == len(exported) == len(sample.elements())
    assert not any("__RecallLoad" in e.get("labels", ()) for e in exported)
    assert any(e["properties"].get("passage_embeddings") for e in exported if e["type"] == "node")
    offline = RecallClient.embedded(tmp_path / "export.json")
    user, question, today = QUESTIONS[0]
    assert offline.render(user, question, today, sample.DEMO_CONFIG).text == bolt.render(
        user, question, today, sample.DEMO_CONFIG).text
