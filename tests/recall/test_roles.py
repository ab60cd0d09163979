"""The role signal: what it does to a rendered ranking on a small hand-built history (fails when the
signal is removed). Which side a question asks about is read in `recall_lib.question` (its tests)."""

from memgraph_recall.datasets.memory_graph import MemoryGraph
from recall_kit import MODEL, mix, render, runtime


def history() -> MemoryGraph:
    """One session: the user states a fact in passing, the assistant's reply talks about the topic at
    length (more shared words, a closer vector), and an unrelated user turn."""
    g = MemoryGraph()
    session = g.session(g.user("kai"), "kai-s1")
    said = [
        ("k1", "user_message", "user", "Also I set up a tank for my friend's kid last weekend.",
         mix((1, 0.6), (2, 0.8))),
        ("k2", "assistant_message", "assistant",
         "Tanks for fish: a tank needs a filter, and every tank wants a heater. How many tanks is right "
         "depends on the fish.", mix((1, 0.9), (3, 0.44))),
        ("k3", "user_message", "user", "Thanks, now about my resume.", mix((4, 1.0))),
    ]
    for minute, (key, kind, speaker, text, vector) in enumerate(said):
        g.message(session, key, text, f"2024-05-01T10:0{minute}:00Z", action_type=kind, speaker=speaker,
                  passage_embeddings=[vector], embedding_model=MODEL)
    return g


def fused_order(recalled: dict) -> list[str]:
    return [t["action_id"] for t in sorted(recalled["turns"], key=lambda t: t["fused"]["rank"])]


def test_a_first_person_question_ranks_the_users_own_turn_above_the_assistants_restatement():
    rt = runtime(history().elements())
    question, vector = "How many tanks do I have?", mix((1, 1.0))
    _, off = render(rt, "kai", question, query_vector=vector, role_boost=0, explain=True)
    assert fused_order(off)[:2] == ["k2", "k1"]  # control: the assistant's reply wins on words and vector
    _, on = render(rt, "kai", question, query_vector=vector, explain=True)  # the default role_boost
    assert fused_order(on)[0] == "k1" and fused_order(on).index("k1") < fused_order(on).index("k2")
    lifted = next(t for t in on["turns"] if t["action_id"] == "k1")
    assert any(lift.startswith("role") for lift in lifted["fused"]["lifts"])


def test_a_question_about_what_the_assistant_said_ranks_the_assistants_turn():
    rt = runtime(history().elements())
    question, vector = "What did you say about a tank for my friend's kid?", mix((2, 1.0))
    _, off = render(rt, "kai", question, query_vector=vector, role_boost=0, explain=True)
    assert fused_order(off)[0] == "k1"
    _, on = render(rt, "kai", question, query_vector=vector, explain=True)
    assert fused_order(on)[0] == "k2"
