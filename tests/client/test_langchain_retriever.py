"""`RecallRetriever`: one LangChain `Document` per rendered row, best first, for one user only."""

import asyncio
import re
from datetime import date

import pytest

pytest.importorskip("langchain_core")
from langchain_core.documents import Document  # noqa: E402
from memgraph_recall.integrations.langchain import RecallRetriever  # noqa: E402
from memgraph_recall.rendered import rendered_rows  # noqa: E402
from memgraph_recall.results import Recalled  # noqa: E402

TODAY = date(2024, 5, 20)
TRIP = "When is my trip to Lisbon and who am I going with? Anything about food?"
TOM_ONLY = "When did I finish the Rotterdam marathon, and how is my knee?"
LANES = {"memories", "turns", "text", "entities", "entity_facts", "facts", "user_facts", "fact_turns"}
PREFIX = {"TURN": "TURN [", "FACT": "FACT: ", "MEMORY": "MEMORY ["}


def plain_rows(client, user: str, question: str) -> list[str]:
    """The row lines of the same render without explain, a TURN row written short below one of its
    session and day (`TURN [same session, HH:MM, ...]`) written out: what each page_content must equal."""
    text = client.render(user, question, TODAY).text
    rows, head = [], None
    for line in text.split("\nRows:\n", 1)[1].split("\n"):
        if line.startswith("TURN [same session, "):
            line = head + line[len("TURN [same session, "):]
        else:
            full = re.match(r"TURN \[session [^,]+, \d{4}-\d\d-\d\dT", line)
            head = full.group(0) if full else None
        rows.append(line)
    return rows


@pytest.fixture(scope="module")
def maya(sample_client):
    return RecallRetriever(client=sample_client, user="maya", today=TODAY)


def test_one_document_per_rendered_row_best_first(maya, sample_client):
    documents = maya.invoke(TRIP)
    assert documents and all(isinstance(document, Document) for document in documents)
    shown = plain_rows(sample_client, "maya", TRIP)
    assert sorted(document.page_content for document in documents) == sorted(shown)
    assert [shown[document.metadata["shown"] - 1] for document in documents] == \
        [document.page_content for document in documents]
    # rank order: within each kind the documents come by the rank that chose them, best first
    assert [document.metadata["rank"] for document in documents] == list(range(1, len(documents) + 1))
    for kind in ("TURN", "FACT", "MEMORY"):
        ranks = [d.metadata["kind_rank"] for d in documents if d.metadata["kind"] == kind]
        assert ranks == sorted(ranks)
    turns = [d for d in documents if d.metadata["kind"] == "TURN"]
    assert documents[0].metadata["kind_rank"] == 1 and turns[0].metadata["kind_rank"] == 1
    assert [document.metadata["kind"] for document in documents] == [
        document.page_content.split(" ", 1)[0].rstrip(":") for document in documents]
    assert {document.metadata["kind"] for document in documents} <= {"TURN", "FACT", "MEMORY"}
    assert {"TURN", "MEMORY"} <= {document.metadata["kind"] for document in documents}


def test_a_fact_folded_into_its_message_is_in_that_turns_metadata(maya, sample_client):
    recalled = sample_client.render("maya", TRIP, TODAY).to_json()
    folded = {t["action_id"]: [f["sentence"] for f in t["facts"]]
              for t in recalled["turns"] if t.get("facts")}
    assert folded  # the sample's budget is short of room: its Lisbon fact stands in its message's row
    documents = {d.metadata.get("action_id"): d for d in maya.invoke(TRIP)}
    for action_id, sentences in folded.items():
        assert documents[action_id].metadata["facts"] == sentences


def test_metadata_comes_from_the_recalled_rows(maya, sample_client):
    documents = maya.invoke(TRIP)
    recalled = sample_client.render("maya", TRIP, TODAY, explain=True).to_json()
    turns = {turn["action_id"]: turn for turn in recalled["turns"]}
    for document in documents:
        meta = document.metadata
        assert document.page_content.startswith(PREFIX[meta["kind"]])
        assert meta["user"] == "maya"
        assert set(meta["lanes"]) <= LANES
        assert isinstance(meta["kind_rank"], int) and meta["kind_rank"] >= 1
        assert isinstance(meta["score"], float)
        if meta["kind"] == "TURN":
            item = turns[meta["action_id"]]
            # A turn's kind rank and score are its place in the fused ranking; a lane found it, or a
            # signal (a neighbour) lifted it.
            assert (meta["kind_rank"], meta["score"]) == (item["fused"]["rank"], item["fused"]["score"])
            assert meta["lanes"] or any(lift.startswith("neighbour") for lift in meta["lifts"])
        else:
            assert meta["lanes"] and meta["kind_rank"] == min(hit["rank"] for hit in meta["hits"])
        if meta["kind"] == "TURN":
            assert (meta["action_id"], meta["session"], meta["time"], meta["speaker"]) == (
                item["action_id"], item["session_id"], item["timestamp"], item["speaker"])
            assert f"[session {meta['session']}, " in document.page_content
        if meta["kind"] == "FACT":
            assert f"-[{meta['type']} @ " in document.page_content and meta["time"]
        if meta["kind"] == "MEMORY":
            assert meta["path"] == "notes/food.md" and meta["time"].startswith("2024-03-02")


def test_another_users_rows_are_absent(sample_client):
    for user, other in (("maya", "tom"), ("tom", "maya")):
        retriever = RecallRetriever(client=sample_client, user=user, today=TODAY)
        for question in (TRIP, TOM_ONLY):
            documents = retriever.invoke(question)
            turns = [document for document in documents if document.metadata["kind"] == "TURN"]
            assert all(document.metadata["session"].startswith(f"{user}-") for document in turns)
            assert not any(f"session {other}-" in document.page_content for document in documents)
    maya_marathon = RecallRetriever(client=sample_client, user="maya", today=TODAY).invoke(TOM_ONLY)
    assert maya_marathon
    assert not any(word in document.page_content for document in maya_marathon
                   for word in ("Rotterdam", "marathon", "knee", "Rui"))


def test_the_async_path_gives_the_same_documents(maya):
    async def both():
        return await asyncio.gather(maya.ainvoke(TRIP), maya.ainvoke(TOM_ONLY))

    trip, marathon = asyncio.run(both())
    assert trip == maya.invoke(TRIP) and marathon == maya.invoke(TOM_ONLY)


def test_config_keys_apply_and_the_user_is_fixed(sample_client, maya):
    narrow = RecallRetriever(client=sample_client, user="maya", today=TODAY,
                             config={"lanes": ["turns"], "turns_k": 2, "fact_turns_k": 0})
    documents = narrow.invoke(TRIP)
    assert len(documents) == 2 and all(document.metadata["lanes"] == ["turns"] for document in documents)
    with pytest.raises(Exception, match="frozen"):
        maya.user = "tom"
    with pytest.raises(ValueError, match="user: expected a non-empty user_id"):
        RecallRetriever(client=sample_client, user="  ")


def test_rows_tolerate_extra_fields_and_prefer_an_items_own_rank():
    """The module may add ranking fields to `recalled` items: kept in `item`, own rank/score preferred."""
    text = ("Memory recall for: q\nRows:\n"
            "TURN [session s1, 2024-01-01T10:00, Ann]: hello {turns #3 0.50, text #1 2.00}\n"
            "FACT: user -[LIKES @ 2024-01-01]-> tea -- user: \"Ann likes tea.\"")
    recalled = Recalled.from_row({"text": text, "recalled": {
        "question": "q",
        "turns": [{"action_id": "a1", "session_id": "s1", "fused_rank": 1, "rank": 1, "score": 0.03,
                   "lanes": [{"lane": "turns", "rank": 3, "score": 0.5, "via": None},
                             {"lane": "text", "rank": 1, "score": 2.0, "via": None}]}],
        "facts": [{"type": "LIKES", "lanes": [{"lane": "facts", "rank": 2, "score": 0.4}]}],
    }})
    turn, fact = rendered_rows(recalled)
    assert turn.text == "TURN [session s1, 2024-01-01T10:00, Ann]: hello"
    assert (turn.rank, turn.score, turn.item["fused_rank"]) == (1, 0.03, 1)
    assert (fact.rank, fact.score) == (2, 0.4) and fact.text.endswith('"Ann likes tea."')


def test_a_turn_rows_fused_annotation_is_taken_off_and_gives_rank_and_score():
    text = ("Memory recall for: q\nRows:\n"
            "TURN [session s1, 2024-01-01T10:00, Ann]: hi {x} {#2 0.377: turns #10, session +0.129}")
    recalled = Recalled.from_row({"text": text, "recalled": {"question": "q", "turns": [{
        "action_id": "a1", "session_id": "s1", "lanes": [{"lane": "turns", "rank": 10, "score": 0.4}],
        "fused": {"rank": 2, "score": 0.377, "lifts": ["session +0.129"]}}]}})
    [turn] = rendered_rows(recalled)
    assert turn.text == "TURN [session s1, 2024-01-01T10:00, Ann]: hi {x}"
    assert (turn.rank, turn.score, turn.fused["lifts"]) == (2, 0.377, ["session +0.129"])


def test_a_row_written_short_below_one_of_its_session_and_day_is_handed_on_in_full():
    """The text writes a TURN row below one of the same session and day short; a document stands alone."""
    text = ("Memory recall for: q\nRows:\n"
            "TURN [session s1, 2024-01-01T10:00, Ann]: hello\n"
            "TURN [same session, 10:02, assistant]: hi Ann {#1 0.5: turns #1}\n"
            "TURN [session s2, 2024-01-03T08:00, Ann]: bye\n"
            "TURN [same session, 08:01, assistant]: see you")
    turns = [{"action_id": f"a{n}", "fused": {"rank": n, "score": 0.5}} for n in (2, 1, 3, 4)]
    recalled = Recalled.from_row({"text": text, "recalled": {"question": "q", "turns": turns}})
    assert [row.text for row in rendered_rows(recalled)] == [
        "TURN [session s1, 2024-01-01T10:00, Ann]: hello",
        "TURN [session s1, 2024-01-01T10:02, assistant]: hi Ann",
        "TURN [session s2, 2024-01-03T08:00, Ann]: bye",
        "TURN [session s2, 2024-01-03T08:01, assistant]: see you",
    ]


def test_an_unknown_user_gives_no_documents_and_says_so_in_the_log(sample_client, caplog):
    retriever = RecallRetriever(client=sample_client, user="Maya", today=TODAY)  # ids are exact: "maya"
    with caplog.at_level("WARNING", logger="memgraph_recall.integrations.langchain"):
        assert retriever.invoke(TRIP) == []
    assert "no user 'Maya' in embedded runtime" in caplog.text
