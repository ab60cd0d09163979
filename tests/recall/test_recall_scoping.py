"""Per-user scoping, the security boundary: nothing of another user may reach any row.

Hand-built cases for each way data is shared (entity, chunk, Agent, action_id, Session, note), then a
hypothesis property over random multi-user graphs, checked against an ownership oracle written here
from the issue's rules, independently of `recall_lib.ownership`: turns and notes by structure, entities
and facts through action ids only where Memgraph enforces them unique (setup's recorded constraint).
"""

import os
import re
import time
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memgraph_recall.client import record_action_id_rule
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import ConstraintViolation
from memgraph_recall.embedded.prelude import fast_shape
from memgraph_recall.embedded.values import plain_value
from recall_kit import MODEL, axis, by_lane, lanes, mix, render, rows_of, runtime
from recall_lib import directory
from recall_lib.prose import prose_digest, prose_text

EVERYTHING = mix((7, 1.0), (8, 1.0), (9, 1.0))
PROSE_AXIS = 12  # the prose vectors' axis: cosine 0 with EVERYTHING, where a passage (axis 7) has 1/sqrt(3)
WIDE = {
    "memories_k": 100,
    "turns_k": 100,
    "text_k": 100,
    "entities_k": 100,
    "edges_per_entity": 100,
    "facts_k": 100,
    "fact_turns_k": 100,
    "user_fact_types": 100,
    "user_facts_k": 100,
}


def shared_graph(duplicate_ids: bool = False) -> MemoryGraph:
    """Two users sharing an entity, a chunk, an Agent, a Session and a note; with `duplicate_ids`, an
    action_id held by both too (so setup cannot create the uniqueness constraint)."""
    g = MemoryGraph()
    g.recall_meta()
    u1, u2 = g.user("u1"), g.user("u2")
    s1, s2 = g.session(u1, "s1"), g.session(u2, "s2")
    vec = {"passage_embeddings": [axis(7)], "embedding_model": MODEL}
    x1 = g.message(s1, "x1", "u1 lives in Paris", "2024-01-01T00:00:00Z", **vec)
    y1 = g.message(s2, "y1", "u2 visited Paris once", "2024-01-01T00:00:00Z", **vec)
    paris = g.entity("Paris", embedding=axis(8), embedding_model=MODEL)
    g.mention(paris, g.chunk(x1, "chunk x1"), "x1")
    g.mention(paris, g.chunk(y1, "chunk y1"), "y1")
    fact = {"embedding": axis(9), "embedding_model": MODEL, "role": "user", "confidence": 0.5}
    g.fact(u1, "LIVES_IN", paris, "x1", "u1 lives in Paris (fact)", valid_at="2024-01-01", **fact)
    g.fact(u2, "VISITED", paris, "y1", "u2 visited Paris (fact)", valid_at="2024-01-01", **fact)
    # A shared chunk: the same words from both users, one MENTIONED_IN edge listing both actions.
    x2 = g.message(s1, "x2", "u1 says the same words", "2024-01-02T00:00:00Z", **vec)
    y2 = g.message(s2, "y2", "u2 says the same words", "2024-01-02T00:00:00Z", **vec)
    rome = g.entity("Rome", embedding=axis(8), embedding_model=MODEL)
    g.mention(rome, g.chunk(x2, "the same words"), "x2")
    g.mention(rome, g.chunk(y2, "the same words"), "y2")
    g.fact(rome, "LIKED_BY", u2, "y2", "u2 likes Rome (fact)", valid_at="2024-01-02", **fact)
    # An Agent shared by both users' sessions: its actions belong to neither.
    agent = g.agent(s1, "helper")
    g.agent(s2, "helper")
    g.message(agent, "z1", "agent secret note", "2024-01-03T00:00:00Z", **vec)
    if duplicate_ids:  # one action_id held by both users: no fact or entity can be told whose
        g.message(s1, "dup", "u1 duplicate id text", "2024-01-04T00:00:00Z", **vec)
        g.message(s2, "dup", "u2 duplicate id text", "2024-01-04T00:00:00Z", **vec)
        thing = g.entity("Thing", embedding=axis(8), embedding_model=MODEL)
        g.fact(u1, "SAID", thing, "dup", "dup fact", valid_at="2024-01-04", **fact)
    # A Session linked from both users, and a note linked from both: neither owns them.
    both = g.session(u1, "both")
    g.relationship(u2, "HAD_SESSION", both)
    g.message(both, "w1", "shared session text", "2024-01-05T00:00:00Z", **vec)
    note = g.memory(
        u1, "m-shared", "notes/shared.md", "shared note", passage_embeddings=[axis(9)], embedding_model=MODEL
    )
    g.relationship(u2, "HAS_MEMORY", note)
    g.memory(u1, "m1", "notes/u1.md", "u1 own note", passage_embeddings=[axis(9)], embedding_model=MODEL)
    return g


@pytest.fixture(scope="module")
def rt():
    return runtime()


@pytest.fixture(scope="module")
def shared_rt():
    return runtime(shared_graph().elements())


def test_each_kind_of_sharing_stays_scoped(shared_rt):
    found = by_lane(
        lanes(shared_rt, "u1", "Paris Rome words secret duplicate shared", query_vector=EVERYTHING, **WIDE)
    )
    assert {r["key"] for r in found["turns"]} == {"x1", "x2"}
    assert {r["key"] for r in found["text"]} <= {"x1", "x2"}
    assert {r["key"] for r in found["entities"]} == {"Paris", "Rome"}  # shared, but mentioned by u1
    assert {
        r["relationship"].type for lane in ("facts", "entity_facts", "user_facts") for r in found[lane]
    } == {"LIVES_IN"}
    assert {r["key"] for r in found["memories"]} == {"m1"}
    text, recalled = render(
        shared_rt, "u1", "Paris Rome words secret duplicate shared", query_vector=EVERYTHING, **WIDE
    )
    for forbidden in ("u2", "agent secret", "shared session", "shared note"):
        assert not any(forbidden in row for row in rows_of(text)), forbidden
    assert {t["action_id"] for t in recalled["turns"]} == {"x1", "x2"}

    found = by_lane(lanes(shared_rt, "u2", "Paris Rome", query_vector=EVERYTHING, **WIDE))
    assert {r["key"] for r in found["turns"]} == {"y1", "y2"}
    assert {r["relationship"].type for r in found["facts"]} == {"VISITED", "LIKED_BY"}
    assert "memories" not in found or not found["memories"]


def test_an_action_id_held_by_two_users_keeps_their_turns_apart_and_attributes_no_fact():
    rt = runtime(shared_graph(duplicate_ids=True).elements())  # setup: the constraint is refused
    question = "Paris Rome words secret duplicate shared"
    found = by_lane(lanes(rt, "u1", question, query_vector=EVERYTHING, **WIDE))
    assert {r["key"] for r in found["turns"]} == {"x1", "x2", "dup"}  # each user's by structure
    assert not any(found.get(lane) for lane in ("entities", "facts", "entity_facts", "user_facts"))
    text, recalled = render(rt, "u1", question, query_vector=EVERYTHING, **WIDE)
    assert "u1 duplicate id text" in text and "u2 duplicate" not in text and "dup fact" not in text
    assert "constraint" in recalled["facts_off_reason"]


def integer_twin_graph(y_id: object = 7, cited: str = "7") -> MemoryGraph:
    """x holds action_id "7" (text), y holds `y_id` (by default the integer 7: the uniqueness constraint
    accepts both); both mention the Clinic, and y's extractor cites its own message as `cited` (by
    default the text "7") in its mention and in a fact between two entities x reaches too."""
    g = MemoryGraph()
    g.recall_meta()
    x, y = g.user("x"), g.user("y")
    vec = {"passage_embeddings": [axis(7)], "embedding_model": MODEL}
    diary = g.message(g.session(x, "sx"), "7", "x kept a diary", "2024-01-01T00:00:00Z", **vec)
    mine = g.message(g.session(y, "sy"), y_id, "y was diagnosed with asthma", "2024-01-01T00:00:00Z", **vec)
    clinic = g.entity("Clinic", embedding=axis(8), embedding_model=MODEL)
    asthma = g.entity("Asthma", embedding=axis(8), embedding_model=MODEL)
    g.mention(clinic, g.chunk(diary, "x's chunk"), "7")
    g.mention(clinic, g.chunk(mine, "y's chunk"), cited)
    g.fact(clinic, "DIAGNOSED", asthma, cited, "y was diagnosed with asthma at the clinic",
           valid_at="2024-01-01", embedding=axis(9), embedding_model=MODEL, role="user", confidence=0.5)
    return g


@pytest.mark.parametrize("form", ["string", "node", "fast"])
def test_an_integer_id_cited_as_text_shows_nothing_to_the_user_holding_that_text(form):
    """Issue #49's leak: the fact cites "7", which is x's id by value and type, but y wrote it about
    its integer 7. Set up, the database is unique but cannot be typed STRING (y's integer), so text
    that reads as an integer attributes nothing, in every call form."""
    rt = runtime(integer_twin_graph().elements())
    assert rt.store.has_unique_constraint("Action", "action_id")
    assert not rt.store.has_type_constraint("Action", "action_id")
    for procedure in ("recall.lanes", "recall.render"):
        rows = db_call(rt, "memgraph", "x", form, procedure)
        shown = str(rows)
        assert "asthma" not in shown and "Clinic" not in shown and "DIAGNOSED" not in shown
        assert "x kept a diary" in shown
    status = {r["name"]: r for r in rt.call("recall.status", {"user": "x"})}
    assert "read as integers" in status["collision_rule"]["detail"]


def test_typed_action_ids_attribute_through_text_that_reads_as_an_integer():
    """Where every action_id is a string (setup created IS TYPED STRING), text that reads as an integer
    names one Action: y holds "8" and cites "8", so y's fact is y's, and x (holding "7") sees none."""
    rt = runtime(integer_twin_graph(y_id="8", cited="8").elements())
    assert rt.store.has_type_constraint("Action", "action_id", "STRING")
    found = by_lane(lanes(rt, "y", "asthma clinic", query_vector=EVERYTHING, **WIDE))
    assert {r["relationship"].type for r in found.get("facts", ())} == {"DIAGNOSED"}
    x_rows = lanes(rt, "x", "asthma clinic", query_vector=EVERYTHING, **WIDE)
    assert "asthma" not in str(x_rows) and "Clinic" in str(x_rows)  # x's own mention: x's entity


# -- the property: random multi-user graphs ------------------------------------------------------------
STRUCTURAL = {"User", "Session", "Action", "Agent", "Chunk", "Memory", "OntologyVersion"}


def oracle(elements: list[dict], user_vertex: int, attribute: bool) -> dict[str, set]:
    """What `user_vertex` owns, straight from the issue's ownership rules, over export elements;
    `attribute`: the database enforces unique action_ids (else no entity or fact is anyone's)."""
    nodes = {e["id"]: e for e in elements if e["type"] == "node"}
    rels = [e for e in elements if e["type"] == "relationship"]
    parents = defaultdict(set)  # (type, child) -> parents
    children = defaultdict(set)  # (type, parent) -> children
    for r in rels:
        parents[(r["label"], r["end"])].add(r["start"])
        children[(r["label"], r["start"])].add(r["end"])

    def has(node_id, label):
        return label in nodes[node_id]["labels"]

    sessions = {
        s
        for s in children[("HAD_SESSION", user_vertex)]
        if has(s, "Session") and parents[("HAD_SESSION", s)] == {user_vertex}
    }
    agents = {
        a
        for s in sessions
        for a in children[("HAS_AGENT", s)]
        if has(a, "Agent") and parents[("HAS_AGENT", a)] <= sessions
    }
    holders = sessions | agents
    actions = {
        x
        for p in holders
        for x in children[("HAS_ACTION", p)]
        if has(x, "Action") and parents[("HAS_ACTION", x)] <= holders
    }
    turns = {x for x in actions if isinstance(nodes[x]["properties"].get("action_id"), (str, int))}
    turns = {x for x in turns if nodes[x]["properties"]["action_id"] not in ("", True, False)}
    owned_ids = {str(nodes[x]["properties"]["action_id"]) for x in turns}
    by_id = defaultdict(set)
    for node_id, node in nodes.items():
        if "Action" in node["labels"] and "action_id" in node["properties"]:
            by_id[node["properties"]["action_id"]].add(node_id)
    if attribute:  # what Memgraph's constraint guarantees, checked rather than assumed
        assert all(len(holders_of) == 1 for holders_of in by_id.values()), by_id
    # A citation is text; it is the user's only when the one Action anywhere whose id reads as that text
    # is the user's and holds it as text (an integer 7 elsewhere makes "7" ambiguous).
    read_as = defaultdict(set)
    for node_id, node in nodes.items():
        value = node["properties"].get("action_id") if "Action" in node["labels"] else None
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            read_as[str(value)].add((node_id, type(value) is str))
    attributing = {
        nodes[x]["properties"]["action_id"] for x in turns
        if read_as[str(nodes[x]["properties"]["action_id"])] == {(x, True)}
    } if attribute else set()
    entities = {
        r["start"]
        for r in rels
        if r["label"] == "MENTIONED_IN"
        and set(r["properties"].get("sources", ())) & attributing
        and not set(nodes[r["start"]]["labels"]) & STRUCTURAL
    }
    facts = set()
    for r in rels:
        if r["properties"].get("source_id") not in attributing:
            continue
        ends = (r["start"], r["end"])
        if all(end == user_vertex or not set(nodes[end]["labels"]) & STRUCTURAL for end in ends):
            facts.add(r["id"])
    memories = {
        m
        for m in children[("HAS_MEMORY", user_vertex)]
        if has(m, "Memory") and parents[("HAS_MEMORY", m)] == {user_vertex}
    }
    return {
        "turns": turns,
        "action_ids": owned_ids,
        "entities": entities,
        "facts": facts,
        "memories": memories,
    }


def unique_action_id(number: int, made: list) -> st.SearchStrategy:
    """A fresh text id; now and then an integer one (the uniqueness constraint accepts both types), or
    the text twin of an integer already made ("12" beside 12: unique too, and the trap of #49)."""
    twins = [str(m) for m in made if type(m) is int and str(m) not in made]
    return st.sampled_from([f"act{number}", f"act{number}", number, *twins[-1:]])


def citation(action_id: object) -> st.SearchStrategy:
    """How a writer cites an Action: mostly as text (an integer id turned into its digits), now and
    then by the raw value."""
    return st.sampled_from([str(action_id), str(action_id), action_id])


@st.composite
def multi_user_graphs(draw, offset: int = 0, unique_ids: bool = False):
    """Random users sharing entities, chunks, agents, sessions, notes and action_ids; texts numbered
    from `offset` (so several graphs can be told apart by their texts). `unique_ids`: every message has
    an action_id of its own (mentions and facts cite the ones made), so setup's constraint holds."""
    g = MemoryGraph()
    n_users = draw(st.integers(2, 3))
    users = [g.user(f"user{i}") for i in range(n_users)]
    ids = [f"act{i}" for i in range(draw(st.integers(3, 10)))]  # a small pool: ids collide
    made: list[str] = []
    chunk_texts = ["chunk alpha", "chunk beta", "chunk gamma"]
    entities = [g.entity(name, embedding=axis(8), embedding_model=MODEL) for name in ("Ent0", "Ent1", "Ent2")]
    actions: list = []
    counter = iter(range(offset, offset + 10_000))
    for user_index, user in enumerate(users):
        for s in range(draw(st.integers(1, 3))):
            session = g.session(user, f"sess{user_index}-{s}")
            if draw(st.integers(0, 9)) == 0:  # now and then a session shared with another user
                g.relationship(users[(user_index + 1) % n_users], "HAD_SESSION", session)
            parents = [session] + [g.agent(session, f"agent{a}") for a in range(draw(st.integers(0, 2)))]
            for parent in parents:
                for _ in range(draw(st.integers(0, 3))):
                    embedded = draw(st.booleans())
                    action_id = draw(unique_action_id(offset + 5000 + len(made), made)) if unique_ids else (
                        draw(st.sampled_from(ids)))
                    made.append(action_id)
                    ref = g.message(
                        parent,
                        action_id,
                        f"msg{next(counter)} words",
                        f"2024-01-{draw(st.integers(1, 28)):02d}T10:00:00Z",
                        passage_embeddings=[axis(7)] if embedded else None,
                        embedding_model=MODEL if embedded else None,
                    )
                    actions.append(ref)
                    for text in draw(st.lists(st.sampled_from(chunk_texts), max_size=2, unique=True)):
                        chunk = g.chunk(ref, text)
                        if draw(st.booleans()):
                            cited = made if unique_ids else ids
                            source = draw(st.sampled_from([ref.key, *cited]))
                            g.mention(draw(st.sampled_from(entities)), chunk, draw(citation(source)))
        for m in range(draw(st.integers(0, 2))):
            note = g.memory(
                user,
                f"mem{user_index}-{m}",
                f"notes/{m}.md",
                f"note{next(counter)} words",
                passage_embeddings=[axis(9)],
                embedding_model=MODEL,
            )
            if draw(st.integers(0, 4)) == 0:
                g.relationship(users[(user_index + 1) % n_users], "HAS_MEMORY", note)
    ends = [*users, *entities]
    for _ in range(draw(st.integers(0, 8))):
        head, tail = draw(st.sampled_from(ends)), draw(st.sampled_from(ends))
        g.fact(
            head,
            draw(st.sampled_from(["LIKES", "VISITED", "KNOWS"])),
            tail,
            draw(citation(draw(st.sampled_from(made if unique_ids and made else ids)))),
            f"fact{next(counter)} words",
            valid_at="2024-01-15",
            confidence=0.5,
            role="user",
            embedding=axis(8),
            embedding_model=MODEL,
        )
    return g.elements()


def scored_vector(props: dict) -> list[float]:
    """The vector the turns lane must score a message by, stated here apart from `recall_lib`: its prose
    vector when its text holds fenced code and the vector's digest is that of the text's prose as it
    reads now (one made from an older text is never used), else its passage's. `props` as the store holds
    them (vectors packed)."""
    prose = prose_text(props["text"]) if isinstance(props.get("text"), str) else None
    current = prose is not None and props.get("prose_digest") == prose_digest(prose)
    if current and props.get("prose_embedding_model") == MODEL and props.get("prose_embedding"):
        return plain_value(props["prose_embedding"])
    return plain_value(props["passage_embeddings"])[0]


def _token(row: str, prefix: str) -> str:
    match = re.search(rf"\b{prefix}\d+\b", row)
    assert match, row
    return match.group(0)


class Owned:
    """One graph's ownership oracle and the element behind each numbered text, for checking rows."""

    def __init__(self, elements: list[dict], attribute: bool, held_prose: dict | None = None) -> None:
        self.attribute = attribute
        self.held_prose = held_prose or {}  # (vertex id, text) -> a prose vector once written current for it
        self.nodes = {e["id"]: e for e in elements if e["type"] == "node"}
        self.texts = {  # by a text's number ("msg12"): a message holding code has more after it
            text.split()[0]: e["id"]
            for e in self.nodes.values()
            if ("Action" in e["labels"] or "Memory" in e["labels"])
            and isinstance(text := e["properties"].get("text") or e["properties"].get("content"), str)
        }
        self.fact_texts = {
            e["properties"]["text"]: e["id"]
            for e in elements
            if e["type"] == "relationship" and "source_id" in e["properties"]
        }
        self.users = {n["properties"]["user_id"]: i for i, n in self.nodes.items() if "User" in n["labels"]}
        self.elements = elements

    def check_lanes(self, user: str, rows: list[dict], complete: bool = True) -> None:
        owns = oracle(self.elements, self.users[user], self.attribute)
        for row in rows:
            kind = LANE_KINDS.get(row["lane"], "facts")
            element = row["relationship"] if kind == "facts" else row["node"]
            assert element.id in owns[kind], (user, row)
            if kind == "turns":  # the text too: ids repeat across databases, texts do not
                assert self.texts[_token(row["text"], "msg")] == element.id, (user, row)
                if row["lane"] == "turns":
                    props = self.nodes[element.id]["properties"]
                    allowed = [scored_vector(props)]
                    # a current prose vector, later overwritten by one from an older text: a cache that
                    # picked it up keeps it while the text reads the same (docs/cache.md: not its vectors)
                    allowed += [v for v in [self.held_prose.get((element.id, props.get("text")))] if v]
                    scores = [float(np.dot(vector, EVERYTHING)) for vector in allowed]
                    assert any(row["score"] == pytest.approx(x, abs=1e-5) for x in scores), (user, row)
            elif kind == "facts":
                assert self.fact_texts.get(row["text"], element.id) == element.id, (user, row)
        embedded_turns = {x for x in owns["turns"] if self.nodes[x]["properties"].get("passage_embeddings")}
        if complete:
            assert {r["node"].id for r in rows if r["lane"] == "turns"} == embedded_turns

    def check_render(self, user: str, text: str, recalled: dict) -> None:
        owns = oracle(self.elements, self.users[user], self.attribute)
        for row in rows_of(text):
            if row.startswith("TURN"):
                assert self.texts[_token(row, "msg")] in owns["turns"], (user, row)
            elif row.startswith("FACT"):
                assert self.fact_texts[_token(row, "fact") + " words"] in owns["facts"], (user, row)
            elif row.startswith("MEMORY"):
                assert self.texts[_token(row, "note")] in owns["memories"], (user, row)
            else:
                assert row == "(nothing in memory matched)"
        assert {t["action_id"] for t in recalled["turns"]} <= owns["action_ids"]
        assert {f["turn"] for f in recalled["facts"]} <= owns["action_ids"]


LANE_KINDS = {"turns": "turns", "text": "turns", "fact_turns": "turns", "fused": "turns",
              "entities": "entities", "memories": "memories"}
QUESTION = "msg words note fact"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(elements=multi_user_graphs())
def test_no_row_of_another_user_ever_appears(rt, elements):
    rt.load_elements(elements)  # no RecallMeta: a database that cannot be told apart keeps nothing
    owned = Owned(elements, attribute=False)
    for user in owned.users:
        owned.check_lanes(user, lanes(rt, user, QUESTION, query_vector=EVERYTHING, **WIDE))
        owned.check_render(user, *render(rt, user, QUESTION, query_vector=EVERYTHING, **WIDE))


def with_meta(elements: list[dict], token: str) -> list[dict]:
    meta = {"id": max(e["id"] for e in elements if e["type"] == "node") + 1, "labels": ["RecallMeta"],
            "properties": {"token": token}, "type": "node"}
    nodes = [e for e in elements if e["type"] == "node"]
    return [*nodes, meta, *(e for e in elements if e["type"] == "relationship")]


_NUMBERED = re.compile(r"^(msg|note|fact)(\d+) words$")


def renumbered(elements: list[dict], offset: int) -> list[dict]:
    """The same graph (same ids, same user_ids and action_ids) with its numbered texts moved by
    `offset`, so rows of different databases can be told apart by their text."""

    def moved(properties: dict) -> dict:
        out = dict(properties)
        for key in ("text", "content"):
            match = _NUMBERED.match(str(out.get(key, "")))
            if match:
                out[key] = f"{match.group(1)}{int(match.group(2)) + offset} words"
        return out

    return [{**e, "properties": moved(e["properties"])} for e in elements]


@st.composite
def database_tail(draw, elements: list[dict], offset: int) -> list[dict]:
    """What one database adds after a shared base: a user whose actions reuse the base's action_ids
    (collisions present in this database only) and facts read from those ids on the base's entities."""
    nodes = [e for e in elements if e["type"] == "node"]
    next_node = max(e["id"] for e in nodes) + 1
    next_rel = max((e["id"] for e in elements if e["type"] == "relationship"), default=-1) + 1
    ids = sorted({e["properties"]["action_id"] for e in nodes if "Action" in e["labels"]}) or ["act0"]
    entities = [e["id"] for e in nodes if e["properties"].get("text", "").startswith("Ent")]
    user, session = next_node, next_node + 1
    added = [
        {"id": user, "labels": ["User"], "properties": {"user_id": f"tail{offset}"}, "type": "node"},
        {"id": session, "labels": ["Session"], "properties": {"session_id": f"tail{offset}-s"},
         "type": "node"},
    ]
    rels = [{"id": next_rel, "start": user, "end": session, "label": "HAD_SESSION", "properties": {},
             "type": "relationship"}]
    for number, action_id in enumerate(draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3))):
        action = session + 1 + number
        text = f"msg{offset + 9000 + number} words"
        added.append({"id": action, "labels": ["Action"], "type": "node", "properties": {
            "action_id": action_id, "action_type": "user_message", "text": text,
            "timestamp": "2024-02-01T10:00:00Z", "passage_embeddings": [axis(7)], "embedding_model": MODEL}})
        rels.append({"id": next_rel + 1 + 2 * number, "start": session, "end": action,
                     "label": "HAS_ACTION", "properties": {}, "type": "relationship"})
        if entities:
            head, tail = draw(st.sampled_from(entities)), draw(st.sampled_from(entities))
            rels.append({"id": next_rel + 2 + 2 * number, "start": head, "end": tail, "label": "KNOWS",
                         "type": "relationship", "properties": {
                             "source_id": action_id, "text": f"fact{offset + 9000 + number} words",
                             "valid_at": "2024-02-01", "confidence": 0.5, "role": "user",
                             "embedding": axis(8), "embedding_model": MODEL}})
    base_nodes = [e for e in elements if e["type"] == "node"]
    base_rels = [e for e in elements if e["type"] == "relationship"]
    return [*base_nodes, *added, *base_rels, *rels]


@st.composite
def many_databases(draw):
    """2-3 databases built from one random graph in the same order (same ids, user_ids and action_ids,
    texts numbered apart), each with its own tail of collisions and facts, a RecallMeta or not; and a
    sequence of calls: (database, call form, user, procedure)."""
    base = draw(multi_user_graphs())
    count = draw(st.integers(2, 3))
    graphs = []
    for number in range(count):
        elements = renumbered(base, number * 10_000)
        if draw(st.booleans()):
            elements = draw(database_tail(elements, number * 10_000))
        graphs.append(with_meta(elements, f"token-{number}") if draw(st.booleans()) else elements)
    calls = st.tuples(st.integers(0, count - 1), st.sampled_from(["string", "node", "fast"]),
                      st.integers(0, 3), st.sampled_from(["recall.render", "recall.lanes"]))
    return graphs, draw(st.lists(calls, min_size=3, max_size=10))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world=many_databases())
def test_no_row_of_another_database_ever_appears_under_any_interleaving(world):
    """One module state serving several databases, as a Memgraph instance: whatever the order of calls,
    the call form and whether a database has a RecallMeta, every row is the asking user's in that
    database."""
    graphs, calls = world
    rt = runtime(graphs[0])
    for number, elements in enumerate(graphs[1:], 1):
        rt.create_database(f"db{number}")
        rt.load_elements(elements, database=f"db{number}")
        record_action_id_rule(rt.database(f"db{number}"))
    owned = [Owned(elements, attributed(rt.database(db_name(n)))) for n, elements in enumerate(graphs)]
    for number, form, user_number, procedure in calls:
        database = db_name(number)
        user = sorted(owned[number].users)[user_number % len(owned[number].users)]
        if form == "fast" and not rt.database(database).label_lookup("RecallMeta"):
            with pytest.raises(Exception, match=r"user\['metas'\] is empty"):
                db_call(rt, database, user, form, procedure)  # refused, never a pass over the graph
            continue
        rows = db_call(rt, database, user, form, procedure)
        if procedure == "recall.lanes":
            owned[number].check_lanes(user, rows)
        else:
            owned[number].check_render(user, rows[0]["text"], rows[0]["recalled"])


def db_name(number: int) -> str:
    return "memgraph" if number == 0 else f"db{number}"


def attributed(store) -> bool:
    """Whether recall may attribute facts in `store`: a RecallMeta that records the constraint."""
    metas = store.label_lookup("RecallMeta")
    return bool(metas) and all(store.vertices[m].props.get("action_ids_unique") is True for m in metas)


def db_call(rt, database: str, user: str, form: str, procedure: str) -> list[dict]:
    config = {"query_vector": EVERYTHING, **WIDE}
    rest = (QUESTION, None, config) if procedure == "recall.render" else (QUESTION, config)
    if form == "fast":
        return rt.call(procedure, database=database, prelude=lambda store: (fast_shape(store, user), *rest))
    if form == "node":
        vertex = rt.vertex(rt.database(database).find_vertices("User", "user_id", user)[0], database=database)
        return rt.call(procedure, vertex, *rest, database=database)
    return rt.call(procedure, user, *rest, database=database)


# -- the speaker signal reads this user's speakers only --------------------------------------------------
def speakers_graph(other_speaker: str) -> MemoryGraph:
    """u1 talks about Zed (never a speaker of theirs); u2's only speaker is `other_speaker`."""
    g = MemoryGraph()
    u1, u2 = g.user("u1"), g.user("u2")
    s1, s2 = g.session(u1, "u1-s"), g.session(u2, "u2-s")
    vec = {"embedding_model": MODEL}
    g.message(
        s1,
        "a1",
        "Zed took the boat out on Sunday.",
        "2024-01-01T10:00:00Z",
        speaker="Ana",
        passage_embeddings=[axis(1)],
        **vec,
    )
    g.message(
        s1,
        "a2",
        "The marina closes early in winter.",
        "2024-01-01T10:01:00Z",
        speaker="assistant",
        passage_embeddings=[axis(2)],
        **vec,
    )
    g.message(
        s1,
        "a3",
        "Sunday was windy at the marina.",
        "2024-01-02T10:00:00Z",
        speaker="Ana",
        passage_embeddings=[axis(3)],
        **vec,
    )
    g.message(
        s2,
        "b1",
        "I sail every weekend.",
        "2024-01-01T09:00:00Z",
        speaker=other_speaker,
        passage_embeddings=[axis(1)],
        **vec,
    )
    return g


def test_a_question_naming_another_users_speaker_is_answered_as_if_it_named_no_one():
    # If u2's speaker names leaked into u1's ranking, "zed" would count as a participant's name in
    # the first graph: it would not be searched as a word, and a1 would lose its text-lane hit.
    question = "What did Zed do at the marina on Sunday?"
    config = {"query_vector": mix((2, 1.0), (3, 1.0)), "explain": True}
    named = render(runtime(speakers_graph("Zed").elements()), "u1", question, **config)
    no_one = render(runtime(speakers_graph("Yan").elements()), "u1", question, **config)
    assert named == no_one
    assert "text #" in next(row for row in rows_of(named[0]) if "Zed took the boat" in row)


# -- the property under generated writes -----------------------------------------------------------------
def store_elements(store) -> list[dict]:
    """A store as export elements (what the oracle reads), as it is now."""
    nodes = [{"id": v.id, "labels": list(v.labels), "properties": dict(v.props), "type": "node"}
             for v in store.vertices.values()]
    rels = [{"id": e.id, "start": e.start.id, "end": e.end.id, "label": e.type, "properties": dict(e.props),
             "type": "relationship"} for e in store.edges.values()]
    return [*nodes, *rels]


WRITES = ("gap", "late", "message", "fact", "edit_text", "edit_id", "integer_id", "second_parent",
          "drop_edge", "label", "new_user", "code", "prose", "edit_code")


class Writer:
    """Applies one generated write to a store as an application would: committed whole, rolled back
    (ids used up: a gap), ids taken before later writes commit (`late`), or refused by the constraint."""

    def __init__(self, store, draw_index) -> None:
        self.store, self.pick, self.texts, self.free = store, draw_index, 0, []
        self.held_prose: dict[tuple[int, str], list[float]] = {}  # (vertex id, text) -> a current one

    def text(self, code: bool = False) -> str:
        self.texts += 1
        if code:  # a message holding fenced code, its prose around it (numbered apart from any other)
            return f"msg{90_000 + self.texts} words\n```py\nx = {self.texts}\n```\nfixed {self.texts}"
        return f"msg{90_000 + self.texts} words"

    def prose_vector(self, action: int) -> None:
        """Writes a prose vector for `action` as an embedder would: made from its prose as it reads now,
        or now and then from an older text (an embedder that read it before an edit), never to be used."""
        text = self.store.get_vertex(action).props.get("text")
        prose = prose_text(text) if isinstance(text, str) else None
        if prose is None:
            return
        made_from = self.pick([prose, prose, "an older text"])
        with self.store.transaction():
            for key, value in (("prose_embedding", axis(PROSE_AXIS)), ("prose_embedding_model", MODEL),
                               ("prose_digest", prose_digest(made_from))):
                self.store.set_vertex_property(action, key, value)
        if made_from == prose:
            self.held_prose[(action, text)] = axis(PROSE_AXIS)

    def coded(self) -> list[int]:
        return [i for i in self.of("Action") if "```" in str(self.store.get_vertex(i).props.get("text"))]

    def of(self, label: str) -> list[int]:
        return sorted(i for i, v in self.store.vertices.items() if label in v.labels)

    def ids(self) -> list[str]:
        """Ids to write: the held ones as text (an integer's digits too) and a fresh one."""
        held = {v.props.get("action_id") for v in self.store.vertices.values() if "Action" in v.labels}
        return sorted({str(i) for i in held if isinstance(i, (str, int))}) + [f"fresh{self.texts}"]

    def typed_ids(self) -> list:
        """Ids to write with their type mixed: each text id that reads as an integer, as that integer."""
        return [*self.ids(), *(int(i) for i in self.ids() if i.isdigit()), 90_000 + self.texts]

    def message(self, session: int, vertex_id: int | None = None, code: bool = False) -> None:
        """A message committed whole; one holding `code` gets its prose vector right after it now and
        then (an ingest that embeds), else later (`prose`) or never."""
        with self.store.transaction():
            action = self.store.create_vertex(["Action"], {
                "action_id": self.pick(self.ids()), "action_type": "user_message", "text": self.text(code),
                "timestamp": "2024-03-01T10:00:00Z", "passage_embeddings": [axis(7)],
                "embedding_model": MODEL}, vertex_id)
            self.store.create_edge(self.store.get_vertex(session), action, "HAS_ACTION")
        if code and self.pick([True, False]):
            self.prose_vector(action.id)

    def apply(self, write: str) -> None:
        store, pick = self.store, self.pick
        sessions, actions = self.of("Session"), self.of("Action") or self.of("Session")
        try:
            if write == "gap":
                start = store.next_vertex_id
                try:
                    with store.transaction():
                        for _ in range(64 + pick(list(range(0, 200, 17)))):
                            store.create_vertex(["Person"], {})
                        raise RuntimeError("rolled back")
                except RuntimeError:
                    self.free = list(range(start, store.next_vertex_id))
            elif write == "late" and self.free and sessions:
                vertex_id = self.free.pop(pick(list(range(len(self.free)))))
                self.message(pick(sessions), vertex_id, code=pick([False, True]))
            elif write == "message" and sessions:
                self.message(pick(sessions))
            elif write == "code" and sessions:
                self.message(pick(sessions), code=True)
            elif write == "prose" and self.coded():
                self.prose_vector(pick(self.coded()))
            elif write == "edit_code" and self.coded():  # its prose changes: a prose vector held is stale
                store.set_vertex_property(pick(self.coded()), "text", self.text(code=True))
            elif write == "fact":
                ends = self.of("User") + [i for i, v in store.vertices.items() if "text" in v.props
                                          and not v.labels]
                store.add_edge(pick(ends), pick(ends), "KNOWS", {
                    "source_id": pick(self.ids()), "text": f"fact{90_000 + self.texts} words",
                    "valid_at": "2024-03-01", "confidence": 0.5, "role": "user", "embedding": axis(8),
                    "embedding_model": MODEL})
                self.texts += 1
            elif write == "edit_text" and self.of("Action"):
                store.set_vertex_property(pick(self.of("Action")), "text", self.text())
            elif write == "edit_id" and self.of("Action"):
                store.set_vertex_property(pick(self.of("Action")), "action_id", pick(self.ids()))
            elif write == "integer_id" and self.of("Action"):
                store.set_vertex_property(pick(self.of("Action")), "action_id", pick(self.typed_ids()))
            elif write == "second_parent" and sessions:
                store.add_edge(pick(self.of("User")), pick(sessions), "HAD_SESSION")
            elif write == "drop_edge":
                edges = sorted(i for i, e in store.edges.items() if e.type in ("HAD_SESSION", "HAS_ACTION"))
                if edges:
                    store.delete_edge(pick(edges))
            elif write == "label" and actions:
                vertex = pick(actions)
                if "Action" in store.get_vertex(vertex).labels:
                    store.remove_vertex_label(vertex, "Action")
                else:
                    store.add_vertex_label(vertex, "Action")
            elif write == "new_user":
                with store.transaction():
                    user = store.create_vertex(["User"], {"user_id": f"late{self.texts}"})
                    session = store.create_vertex(["Session"], {"session_id": f"late{self.texts}-s"})
                    store.create_edge(user, session, "HAD_SESSION")
                self.message(session.id)
        except ConstraintViolation:
            pass  # refused whole: the store is as before


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), unique_ids=st.booleans())
def test_no_row_of_another_user_ever_appears_under_generated_writes(data, unique_ids):
    """Gaps of 64 or more missing ids, rolled-back batches, ids committed out of order, edits of texts,
    action_ids and labels, second parents and removed edges, messages holding code with prose vectors
    written with them, later, from an older text or never, and their texts edited, between calls of
    every form; each call's rows are checked against the oracle over the store as it is then (the turns
    lane's scores too: by a current prose vector, else by the passage). At the end, past the maximum
    age, every owned turn is found again (what the cache sees later it sees within that bound)."""
    elements = with_meta(data.draw(multi_user_graphs(unique_ids=unique_ids)), "token-writes")
    os.environ["RECALL_CACHE_MAX_AGE"] = "0.3"
    try:
        rt = runtime(elements)
    finally:
        del os.environ["RECALL_CACHE_MAX_AGE"]
    writer = Writer(rt.store, lambda options: data.draw(st.sampled_from(options)))
    for write in data.draw(st.lists(st.sampled_from(WRITES), min_size=3, max_size=12)):
        writer.apply(write)
        owned = Owned(store_elements(rt.store), attributed(rt.store), writer.held_prose)
        user = data.draw(st.sampled_from(sorted(owned.users)))
        form = data.draw(st.sampled_from(["string", "node", "fast"]))
        procedure = data.draw(st.sampled_from(["recall.render", "recall.lanes"]))
        rows = db_call(rt, "memgraph", user, form, procedure)
        if procedure == "recall.lanes":
            owned.check_lanes(user, rows, complete=False)
        else:
            owned.check_render(user, rows[0]["text"], rows[0]["recalled"])
    time.sleep(0.35)
    owned = Owned(store_elements(rt.store), attributed(rt.store), writer.held_prose)
    for _ in range(sweep_cycle_calls(rt.store)):  # the string form's bound for new users: one sweep cycle
        rt.call("recall.lanes", "nobody", QUESTION, {"query_vector": EVERYTHING})
    for user in sorted(owned.users):
        for form in ("string", "fast"):
            rows = db_call(rt, "memgraph", user, form, "recall.lanes")
            found_by_string = not beyond_the_sweep(rt.store, owned.users[user])
            owned.check_lanes(user, rows, complete=form == "fast" or found_by_string)


def sweep_cycle_calls(store) -> int:
    """Calls enough for one cycle of the directory's sweep over the largest range it can have."""
    reach = max(2 * max(store.vertices) + directory.GAP, directory.MIN_REACH)
    return reach // directory.SWEEP + 1


def beyond_the_sweep(store, vertex_id: int) -> bool:
    """The directory's documented exception (`recall_lib.directory`): a vertex past a run of at least GAP
    missing ids, beyond the sweep's reach from the ids before that run (twice the highest, plus GAP, at
    least MIN_REACH), may stay unseen by the string form until the graph grows past it."""
    below = sorted(i for i in store.vertices if i < vertex_id)
    ends = [vertex_id, *below[::-1]]
    for after, before in zip(ends, ends[1:], strict=False):
        if after - before - 1 >= directory.GAP:
            return vertex_id >= max(2 * before + directory.GAP, directory.MIN_REACH)
    return False
