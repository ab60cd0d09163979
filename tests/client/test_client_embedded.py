"""RecallClient over the embedded runtime: typed results, the same rows as the runtime, errors mapped."""

from datetime import date

import pytest
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets import sample
from memgraph_recall.errors import RecallArgumentError, RecallNotLoaded
from memgraph_recall.results import EmbedProgress, LaneHit, Recalled

TRIP = "When is my trip to Lisbon and who am I going with?"
TODAY = date(2024, 5, 20)


def test_all_procedures_are_present(sample_client):
    assert sample_client.procedures() == ["recall.embed", "recall.invalidate", "recall.lanes",
                                          "recall.render", "recall.status"]


def test_render_is_typed_and_matches_calling_the_runtime(sample_client):
    recalled = sample_client.render("maya", TRIP, TODAY, turns_k=3)
    direct = sample_client.backend.runtime.call("recall.render", "maya", TRIP, TODAY, {"turns_k": 3})
    assert isinstance(recalled, Recalled)
    assert recalled.text == direct[0]["text"]
    assert [t.action_id for t in recalled.turns] == [t["action_id"] for t in direct[0]["recalled"]["turns"]]
    assert recalled.question == TRIP
    assert any(f.type == "TRAVELS_TO" and f.tail == "Lisbon" for f in recalled.facts)
    assert "Maya flies to Lisbon" in recalled.text
    assert recalled.to_json()["question"] == TRIP


def test_scoping_two_users_same_question_each_get_only_their_own(sample_client):
    maya = sample_client.render("maya", TRIP, TODAY)
    tom = sample_client.render("tom", TRIP, TODAY)
    assert maya.turns and tom.turns
    assert all(t.session_id.startswith("maya-") for t in maya.turns) and "maya-s2" in {
        t.session_id for t in maya.turns}
    assert all(t.session_id.startswith("tom-") for t in tom.turns) and "tom-s2" in {
        t.session_id for t in tom.turns}
    assert "Rui" not in maya.text and "Ana" not in tom.text
    for recalled in (maya, tom):
        assert "Agent self-check" not in recalled.text  # the shared Agent's own note belongs to no one


def test_memories_and_json_are_plain_values(sample_client):
    import json

    recalled = sample_client.render("maya", "What should you keep in mind when suggesting food for me?")
    assert [m.path for m in recalled.memories] == ["notes/food.md"]
    json.dumps(recalled.to_json())  # no driver objects or temporals left


def test_unknown_user_is_an_empty_memory_the_client_says_was_not_found(sample_client):
    """As the node form answers: no row for a user_id no User has, so `user_found` is False."""
    recalled = sample_client.render("nobody", TRIP)
    assert recalled.empty and recalled.text == "" and recalled.user_found is False
    assert sample_client.render("Maya", TRIP).user_found is False  # user ids are exact


def test_a_known_user_with_nothing_matching_keeps_the_modules_answer(sample_client):
    recalled = sample_client.render("maya", "zzqxv", lanes=["text"])
    assert recalled.empty and "(nothing in memory matched)" in recalled.text
    assert recalled.user_found is None  # the string form does not say; a row came back


def test_lanes_are_typed_hits_pointing_at_graph_elements(sample_client):
    hits = sample_client.lanes("tom", TRIP, lanes=["turns", "facts"], turns_k=2, facts_k=2)
    assert hits and all(isinstance(h, LaneHit) for h in hits)
    assert {"turns", "facts", "fused"} <= {h.lane for h in hits} <= {"turns", "facts", "fact_turns", "fused"}
    turn = next(h for h in hits if h.lane == "turns")
    assert turn.node is not None and "Action" in turn.node.labels and turn.key.startswith("tom-")
    fact = next(h for h in hits if h.lane == "facts")
    assert fact.relationship is not None and fact.relationship.type and fact.turn.startswith("tom-")


def test_bad_input_becomes_argument_errors_with_the_module_message(sample_client):
    with pytest.raises(RecallArgumentError, match="turns_kk"):
        sample_client.render("maya", TRIP, config={"turns_kk": 3})
    with pytest.raises(RecallArgumentError, match="question"):
        sample_client.render("maya", "   ")
    with pytest.raises(RecallArgumentError, match="today"):
        sample_client.render("maya", TRIP, today="next tuesday")
    with pytest.raises(ValueError, match="user: expected a non-empty user_id"):
        sample_client.render("", TRIP)
    with pytest.raises(ValueError, match="config: expected a mapping"):
        sample_client.render("maya", TRIP, config=[("turns_k", 3)])


def test_status_and_invalidate(sample_client):
    rows = sample_client.status()
    assert rows and all(isinstance(row, dict) for row in rows)
    assert sample_client.invalidate("maya") >= 0
    assert sample_client.invalidate() >= 0


def test_embed_loops_until_nothing_remains():
    client = RecallClient.embedded(sample.elements())
    first = client.embed_once(limit=10)
    assert first.embedded == 10 and first.remaining > 0
    rest = client.embed(limit=16)
    assert isinstance(rest, EmbedProgress) and rest.remaining == 0
    assert first.embedded + rest.embedded == first.embedded + first.remaining
    assert client.embed().embedded == 0  # idempotent


def test_missing_module_is_reported_as_not_loaded(tmp_path):
    client = RecallClient.embedded(sample.elements(), modules_dir=tmp_path)
    with pytest.raises(RecallNotLoaded, match="is this the memgraph-recall image"):
        client.render("maya", TRIP)


def test_save_graph_is_embedded_only(sample_client, tmp_path):
    assert sample_client.save_graph(tmp_path / "g.json").stat().st_size > 0


def test_embed_loop_stops_with_an_error_when_remaining_does_not_fall(monkeypatch):
    # A model whose vectors are written but never count as current: every call "embeds" 5 units and
    # 40 remain. The loop must stop after one such round, not spin forever.
    client = RecallClient.embedded(sample.elements())
    stuck = EmbedProgress(5, 0, 0, 0, 40, "m")
    monkeypatch.setattr(client, "embed_once", lambda *args, **kwargs: stuck)
    from memgraph_recall.errors import RecallProcedureError

    with pytest.raises(RecallProcedureError, match="made no progress: 40 units remained after a call that "
                                                   "started with 40"):
        client.embed()


def test_turns_budget_is_the_turn_rows_shown_while_turns_k_is_one_lanes_width(sample_client):
    """What the README's examples use: `turns_budget=4` shows 4 TURN rows; `turns_k=4` alone still
    shows the turn lanes' widths together (4 + 8 + 8), i.e. every turn of this small memory."""
    assert len(sample_client.render("maya", TRIP, turns_budget=4).turns) == 4
    assert len(sample_client.render("maya", TRIP, turns_k=4).turns) > 4
