"""The fixture the image tests compare on, run through the embedded runtime (no Docker needed): it is
what its generator writes, recall reads its vectors as current, its query vectors turn the vector
lanes on, and the row comparison accepts a real tie swap that a different read order produces."""

import pytest
from memgraph_recall.client import RecallClient
from row_compare import assert_same_rows, lane_rows, rendered_rows
from vector_fixture import COMPARE_CONFIG, FIXTURE, PREFIX, elements, generate, hashed_vector, questions


@pytest.fixture(scope="module")
def fixture_client() -> RecallClient:
    return RecallClient.embedded(FIXTURE)


@pytest.fixture(scope="module")
def reordered_client() -> RecallClient:
    """The same graph loaded in reverse order, as a server that reads edges in another order sees it."""
    loaded = elements()
    nodes = [e for e in loaded if e["type"] == "node"]
    relationships = [e for e in loaded if e["type"] == "relationship"]
    return RecallClient.embedded(nodes[::-1] + relationships[::-1])


def _config(question: str) -> dict:
    return {**COMPARE_CONFIG, "query_vector": hashed_vector(question)}


def test_the_committed_fixture_is_what_the_generator_writes(tmp_path):
    fresh = generate(tmp_path / "fixture.json")
    assert fresh.read_bytes() == FIXTURE.read_bytes(), (
        "the fixture is stale: run `python tests/integration/vector_fixture.py` and commit it")


def test_recall_finds_every_fixture_vector_current(fixture_client):
    progress = fixture_client.embed()
    assert (progress.embedded, progress.remaining) == (0, 0)
    loaded = elements()
    users = {e["properties"]["user_id"] for e in loaded if e.get("labels") == ["User"]}
    assert users == {f"{PREFIX}maya", f"{PREFIX}tom", f"{PREFIX}priya"}
    action_ids = [e["properties"]["action_id"] for e in loaded if e.get("labels") == ["Action"]]
    assert all(a.startswith(PREFIX) for a in action_ids)


@pytest.mark.parametrize(("user", "question", "today", "vector"), questions())
def test_query_vectors_turn_the_vector_lanes_on_and_stay_in_scope(fixture_client, user, question, today,
                                                                 vector):
    recalled = fixture_client.render(user, question, today, {**COMPARE_CONFIG, "query_vector": vector})
    assert not recalled.vector_lanes_off and recalled.turns
    assert all(t.session_id.startswith(f"{user}-") for t in recalled.turns)
    lanes = {h.lane for h in fixture_client.lanes(user, question, {**COMPARE_CONFIG, "query_vector": vector})}
    assert "turns" in lanes  # a vector lane: the question vector was used


def test_shared_words_rank_first(fixture_client):
    hits = fixture_client.lanes("fx-maya", "When is my trip to Lisbon and who am I going with?",
                                _config("When is my trip to Lisbon and who am I going with?"))
    first = {h.lane: h.key for h in hits if h.rank == 1}
    assert first["facts"] == "user -[TRAVELS_TO]-> Lisbon @fx-maya-s2-m1"
    assert first["turns"] == first["text"] == "fx-maya-s2-m1"


@pytest.mark.parametrize(("user", "question", "today", "vector"), questions())
def test_another_read_order_gives_the_same_rows(fixture_client, reordered_client, user, question, today,
                                                vector):
    config = {**COMPARE_CONFIG, "query_vector": vector}
    assert_same_rows(lane_rows(fixture_client.lanes(user, question, config)),
                     lane_rows(reordered_client.lanes(user, question, config)))
    assert_same_rows(rendered_rows(fixture_client.render(user, question, today, config).to_json()),
                     rendered_rows(reordered_client.render(user, question, today, config).to_json()))


def test_a_tie_that_swaps_with_the_read_order_is_accepted(fixture_client, reordered_client):
    """Priya's two weddings score exactly alike for "wedding": the read order decides which comes
    first, so a plain comparison fails where the tie-aware one passes."""
    config = _config("wedding")
    ours = lane_rows(fixture_client.lanes("fx-priya", "wedding", config))
    theirs = lane_rows(reordered_client.lanes("fx-priya", "wedding", config))
    assert ours != theirs
    assert_same_rows(ours, theirs)
    weddings = [r for r in ours if r.group == "facts"][:2]
    assert weddings[0].tie == weddings[1].tie and weddings[0].key != weddings[1].key
