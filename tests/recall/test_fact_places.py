"""Facts take their places in a budget as one ranking (`rows.fact_places`), so a budget shows a fact per
turn of the fused ranking, not one per fact lane for each turn."""

from datetime import date

from memgraph_recall.datasets.memory_graph import MemoryGraph
from recall_kit import MODEL, axis, mix, render, runtime
from recall_lib.lanes import Hit
from recall_lib.rows import fact_places


def test_facts_found_by_similarity_come_by_it_and_those_reached_through_an_entity_follow():
    facts = {
        7: [Hit("facts", 1, 0.9, 7)],
        3: [Hit("entity_facts", 1, 0.8, 3)],
        5: [Hit("entity_facts", 2, 0.99, 5), Hit("user_facts", 2, 0.6, 5)],
        4: [Hit("user_facts", 1, 0.95, 4), Hit("facts", 3, 0.5, 4)],
        9: [Hit("turn_facts", 1, 1.0, 9)],
        8: [Hit("entity_facts", 3, 0.4, 8)],
    }
    assert fact_places(facts) == {4: 1, 7: 2, 5: 3, 3: 4, 8: 5, 9: 6}


def _history():
    """Ana's move: ten messages near the question (axis 1), each less so, and two fact lanes of eight
    facts each, all read from messages far from the question: the `facts` lane finds its eight by their
    vectors, the `entities` lane the other eight (more confident) through the entity "Lisbon"."""
    g = MemoryGraph()
    g.recall_meta()
    ana = g.user("ana")
    s1 = g.session(ana, "s1")
    for n in range(10):
        said = g.message(s1, f"t{n}", f"Moving day notes, part {n}: boxes, keys and the van.",
                         f"2024-05-01T09:{n:02}:00Z", embedding_model=MODEL,
                         passage_embeddings=[mix((1, 1.0 - 0.05 * n), (50 + n, 0.5))])
    for n in range(16):
        g.message(s1, f"far{n}", f"Unrelated chat {n} about the weather.", f"2024-05-02T10:{n:02}:00Z",
                  passage_embeddings=[axis(100 + n)], embedding_model=MODEL)
    lisbon = g.entity("Lisbon", embedding=axis(1), embedding_model=MODEL)
    g.mention(lisbon, g.chunk(said, "the Lisbon flat"), "t9")
    for n in range(16):
        near = n < 8  # the facts lane's; the others only the entity reaches
        g.fact(ana, "MOVED", lisbon, f"far{n}", f"Ana noted moving detail number {n} for the Lisbon flat.",
               valid_at=date(2024, 5, 2), confidence=0.3 if near else 0.9 - 0.01 * n, role="user",
               embedding_model=MODEL,
               embedding=mix((1, 0.9 - 0.05 * n), (200 + n, 0.5)) if near else axis(300 + n))
    return runtime(g.elements())


def test_a_budget_shows_a_fact_per_turn_whatever_the_number_of_fact_lanes():
    config = {"query_vector": axis(1), "lanes": ["turns", "entities", "facts"], "fact_turns_k": 0,
              "turns_k": 10, "entities_k": 1, "edges_per_entity": 8, "facts_k": 8}
    _, everything = render(_history(), "ana", "Where did I move?", "2024-06-01", max_chars=0, **config)
    assert len(everything["facts"]) == 16 and len(everything["turns"]) == 10
    _, recalled = render(_history(), "ana", "Where did I move?", "2024-06-01", max_chars=1800, **config)
    facts, turns = len(recalled["facts"]), len(recalled["turns"])
    assert 4 <= turns and abs(facts - turns) <= 1, (facts, turns)
    shown = [t["action_id"] for t in recalled["turns"]]
    assert shown == [f"t{n}" for n in range(turns)]  # the turns nearest the question, by the budget
