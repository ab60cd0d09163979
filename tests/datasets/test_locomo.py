"""The LoCoMo loader on slices of real conversations (from the data folder, see `public_data`)."""

import json
import re
import subprocess
import sys
from collections import defaultdict
from datetime import date, datetime
from pathlib import Path

import pytest
from memgraph_recall.datasets.locomo import (
    RELATION_TYPES,
    build_graph,
    find_conversation,
    parse_session_time,
    read_conversations,
    relation_descriptions,
    relation_type,
)
from public_data import locomo_conversation


def sliced(name: str, sessions: int, extra_qa: list[dict] | None = None) -> dict:
    """The first `sessions` sessions of a real conversation, with the questions they answer."""
    conv = locomo_conversation(name)
    keep = {}
    for key, value in conv.items():
        match = re.match(r"(?:events_)?session_(\d+)", key)
        if match is None:
            keep[key] = value
        elif int(match.group(1)) <= sessions:
            keep[key] = value
    kept_ids = {t["dia_id"] for k, v in keep.items() if re.fullmatch(r"session_\d+", k) for t in v}
    keep["qa"] = [qa for qa in conv["qa"] if qa["evidence"] and all(e in kept_ids for e in qa["evidence"])]
    keep["qa"] += extra_qa or []
    return keep


def write(tmp_path: Path, name: str, conv: dict) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(conv))
    return path


class Graph:
    """Index export elements for walking the graph in assertions."""

    def __init__(self, elements: list[dict]) -> None:
        self.nodes = {e["id"]: e for e in elements if e["type"] == "node"}
        self.rels = [e for e in elements if e["type"] == "relationship"]
        self.out = defaultdict(list)
        for rel in self.rels:
            self.out[rel["start"]].append(rel)

    def by_label(self, label: str) -> list[dict]:
        return [n for n in self.nodes.values() if label in n["labels"]]

    def owned_actions(self, user_id: str) -> dict[str, dict]:
        user = next(n for n in self.by_label("User") if n["properties"]["user_id"] == user_id)
        actions = {}
        for had in self.out[user["id"]]:
            if had["label"] == "HAD_SESSION":
                for has in self.out[had["end"]]:
                    if has["label"] == "HAS_ACTION":
                        node = self.nodes[has["end"]]
                        actions[node["properties"]["action_id"]] = node
        return actions


@pytest.fixture(scope="module")
def two_johns(tmp_path_factory) -> tuple:
    """conv-41 (John, Maria) and conv-43 (Tim, John): the same speaker name in two users."""
    tmp = tmp_path_factory.mktemp("locomo")
    malformed = [{"question": "q?", "answer": "a", "category": 1, "evidence": ["D1:1; D1:2"]},
                 {"question": "r?", "answer": "b", "category": 2, "evidence": ["D", "D:1:3", "D99:1"]}]
    paths = [write(tmp, "conv-41", sliced("conv-41", 3, malformed)),
             write(tmp, "conv-43", sliced("conv-43", 3))]
    data = build_graph(paths)
    return data, Graph(data.elements)


def test_parse_session_time():
    assert parse_session_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert parse_session_time("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9)
    assert parse_session_time("10:37 am on 27 June 2023") == datetime(2023, 6, 27, 10, 37)
    with pytest.raises(ValueError, match="session date"):
        parse_session_time("yesterday")


def test_ids_unique_across_conversations(two_johns):
    data, graph = two_johns
    assert data.users == ["conv-41", "conv-43"]
    action_ids = [n["properties"]["action_id"] for n in graph.by_label("Action")]
    session_ids = [n["properties"]["session_id"] for n in graph.by_label("Session")]
    assert len(action_ids) == len(set(action_ids)) == data.turns
    assert len(session_ids) == len(set(session_ids)) == 6
    assert "conv-41:D1:3" in action_ids and "conv-43:D1:3" in action_ids
    assert set(session_ids) == {f"conv-{c}:S{s}" for c in (41, 43) for s in (1, 2, 3)}
    for user in data.users:
        assert all(a.startswith(f"{user}:D") for a in graph.owned_actions(user))


def test_turns_keep_speaker_order_and_time(two_johns):
    _, graph = two_johns
    conv = sliced("conv-41", 3)
    actions = graph.owned_actions("conv-41")
    session = conv["session_2"]
    start = parse_session_time(conv["session_2_date_time"])
    stamps = [actions[f"conv-41:{t['dia_id']}"]["properties"]["timestamp"] for t in session]
    assert stamps[0] == f"localDateTime({start.isoformat()})"
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    for turn in session:
        props = actions[f"conv-41:{turn['dia_id']}"]["properties"]
        assert props["speaker"] == turn["speaker"]
        expected = "user_message" if turn["speaker"] == conv["speaker_a"] else "assistant_message"
        assert props["action_type"] == expected


def test_captions_appended(two_johns):
    _, graph = two_johns
    conv = sliced("conv-43", 3)
    actions = graph.owned_actions("conv-43")
    with_caption = [t for s in (1, 2, 3) for t in conv[f"session_{s}"] if t.get("blip_caption")]
    assert with_caption, "the slice should contain an image turn"
    for turn in with_caption:
        text = actions[f"conv-43:{turn['dia_id']}"]["properties"]["text"]
        assert text == f"{turn['text']} [shares a photo: {turn['blip_caption']}]"


def test_evidence_mapped_and_today(two_johns):
    data, graph = two_johns
    for q in data.questions:
        owned = graph.owned_actions(q.user_id)
        assert all(e in owned for e in q.evidence)
        last = sliced(q.conversation, 3)["session_3_date_time"]
        assert q.today == parse_session_time(last).date()
    real = [q for q in data.questions if q.question not in ("q?", "r?")]
    assert real and all(q.evidence for q in real)


def test_malformed_evidence_repaired_or_counted(two_johns):
    data, _ = two_johns
    by_question = {q.question: q for q in data.questions}
    assert by_question["q?"].evidence == ("conv-41:D1:1", "conv-41:D1:2")
    assert by_question["r?"].evidence == ("conv-41:D1:3",)
    issues = {(i.raw, i.resolved) for i in data.evidence_issues}
    assert issues == {("D1:1; D1:2", ("conv-41:D1:1", "conv-41:D1:2")), ("D", ()),
                      ("D:1:3", ("conv-41:D1:3",)), ("D99:1", ())}


def test_observations_become_owned_facts(two_johns):
    data, graph = two_johns
    types = {name for name, _ in relation_descriptions()}
    facts = [r for r in graph.rels if r["label"] in types]
    expected = sum(len(obs) for c in ("conv-41", "conv-43") for s in (1, 2, 3)
                   for obs in sliced(c, 3)[f"session_{s}_observation"].values())
    assert len(facts) == data.facts == expected
    mentions = [r for r in graph.rels if r["label"] == "MENTIONED_IN"]
    for fact in facts:
        props = fact["properties"]
        user = props["source_id"].rsplit(":", 2)[0]
        owned = graph.owned_actions(user)
        assert props["source_id"] in owned
        head, tail = graph.nodes[fact["start"]], graph.nodes[fact["end"]]
        assert head["properties"]["text"] == props["role"]
        assert tail["labels"] == ["User"] and tail["properties"]["user_id"] == user
        assert fact["label"] == relation_type(props["text"])
        session = int(props["source_id"].split(":D")[1].split(":")[0])
        when = parse_session_time(sliced(user, 3)[f"session_{session}_date_time"]).date()
        assert props["valid_at"] == f"date({when.isoformat()})"
        # the speaker's entity is MENTIONED_IN the chunk of the source turn, listing that turn
        source = owned[props["source_id"]]
        chunk_ids = {r["end"] for r in graph.out[source["id"]] if r["label"] == "HAS_CHUNK"}
        assert any(m["start"] == head["id"] and m["end"] in chunk_ids
                   and props["source_id"] in m["properties"]["sources"] for m in mentions)


def test_same_name_speakers_are_separate_entities(two_johns):
    _, graph = two_johns
    johns = [n for n in graph.by_label("Entity") if n["properties"]["text"] == "John"]
    assert len(johns) == 2
    for john in johns:
        sources = {s for r in graph.out[john["id"]] if r["label"] == "MENTIONED_IN"
                   for s in r["properties"]["sources"]}
        assert len({s.rsplit(":", 2)[0] for s in sources}) == 1


def test_each_user_adopts_the_relation_ontology(two_johns):
    data, graph = two_johns
    ontologies = graph.by_label("OntologyVersion")
    assert len(ontologies) == len(data.users)
    pool = json.loads(ontologies[0]["properties"]["pool"])
    assert [t["label"] for t in pool["relation_types"]] == [n for n, _ in relation_descriptions()]


def test_relation_type_is_a_fixed_keyword_table():
    assert relation_type("Ann plans to run a marathon next year.") == "PLANS_TO"
    assert relation_type("Ann attended a pottery workshop.") == "ATTENDED"
    assert relation_type("Ann loves sunsets.") == "LIKES"
    assert relation_type("Ann is tall.") == "MENTIONED"
    assert len({name for name, _, _ in RELATION_TYPES}) == len(RELATION_TYPES)


def test_locomo10_list_format(tmp_path):
    conv = sliced("conv-26", 2)
    talk = re.compile(r"speaker_[ab]|session_\d+(_date_time)?")
    sample = {"sample_id": "conv-26",
              "conversation": {k: v for k, v in conv.items() if talk.fullmatch(k)},
              "observation": {k: v for k, v in conv.items() if k.endswith("_observation")},
              "qa": conv["qa"]}
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([sample]))
    listed = build_graph([path])
    flat = build_graph([write(tmp_path, "conv-26", conv)])
    assert listed.elements == flat.elements
    assert listed.questions == flat.questions
    assert listed.questions[0].today == date(2023, 5, 25)


def test_duplicate_conversation_rejected(tmp_path):
    path = write(tmp_path, "conv-26", sliced("conv-26", 1))
    with pytest.raises(ValueError, match="conv-26 given twice"):
        build_graph([path, path])


def tiny(name: str) -> dict:
    """A made-up conversation in LoCoMo's per-conversation shape (no benchmark text)."""
    return {"speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": f"{name}: I adopted a puppy."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "What is its name?"}],
            "session_1_observation": {"Ann": [["Ann adopted a puppy.", "D1:1"]]},
            "qa": [{"question": "What did Ann adopt?", "answer": "a puppy", "evidence": ["D1:1"],
                    "category": 1}]}


def as_sample(name: str, conv: dict) -> dict:
    """The same conversation as one entry of the benchmark's locomo10.json list."""
    return {"sample_id": name, "conversation": {k: v for k, v in conv.items() if not k.endswith(
        "_observation") and k != "qa"}, "observation": {k: v for k, v in conv.items() if k.endswith(
        "_observation")}, "qa": conv["qa"]}


def test_a_conversation_is_found_in_its_own_file_or_in_locomo10_json(tmp_path):
    own, listed = tmp_path / "own", tmp_path / "listed"
    own.mkdir()
    listed.mkdir()
    write(own, "conv-1", tiny("conv-1"))
    (listed / "locomo10.json").write_text(json.dumps([as_sample(n, tiny(n)) for n in ("conv-1", "conv-2")]))
    assert find_conversation(own, "conv-1") == tiny("conv-1")
    assert find_conversation(listed, "conv-2") == tiny("conv-2")
    assert find_conversation(listed, "conv-3") is None
    assert find_conversation(tmp_path / "none", "conv-1") is None
    only = build_graph([listed / "locomo10.json"], only={"conv-2"})
    assert only.users == ["conv-2"] and [q.question for q in only.questions] == ["What did Ann adopt?"]


def test_locomo10_json_splits_into_one_file_per_conversation(tmp_path):
    listed = tmp_path / "locomo10.json"
    listed.write_text(json.dumps([as_sample(n, tiny(n)) for n in ("conv-1", "conv-2")]))
    done = subprocess.run([sys.executable, "-m", "memgraph_recall.datasets.locomo", str(listed),
                           str(tmp_path / "split")], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == [str(tmp_path / "split" / f"{n}.json") for n in ("conv-1", "conv-2")]
    assert read_conversations(tmp_path / "split" / "conv-2.json") == [("conv-2", tiny("conv-2"))]
