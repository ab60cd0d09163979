"""One user's recall never pays for other users' data (issue #19), in procedure-API calls, not times.

The same asking user in two databases whose other users hold 10x apart in data: every kind of call
reads the asking user's data and what changed, so its counts stay within 10%. The database's first
call (its directory's one full pass) is made before anything is measured, as it is once per database.
"""

import pytest
from cache_kit import add_message, add_session
from memgraph_recall.datasets.memory_graph import MemoryGraph
from memgraph_recall.embedded import ApiCounts
from recall_kit import MODEL, axis, runtime

MESSAGES = 40  # per user, in sessions of 10
VECTOR = {"passage_embeddings": [axis(1)], "embedding_model": MODEL}


def tenants(others: int) -> MemoryGraph:
    g = MemoryGraph()
    g.recall_meta()
    for number in range(others + 1):
        user = g.user(f"u{number}")
        for s in range(MESSAGES // 10):
            session = g.session(user, f"u{number}-s{s}")
            for m in range(10):
                stamp = f"2024-01-{s + 1:02d}T10:{m:02d}:00Z"
                text = f"user {number} note {s} {m} kayak"
                g.message(session, f"u{number}-s{s}-m{m}", text, stamp, **VECTOR)
    return g


def counted(rt, user, question: str = "kayak notes") -> int:
    counts = ApiCounts()
    rt.call("recall.render", user, question, None, {"query_vector": axis(1)}, api_counts=counts)
    return counts.total


def phases(others: int, form: str) -> dict[str, int]:
    rt = runtime(tenants(others).elements())

    def name(user_id: str):
        return rt.vertex(rt.find_vertex("User", "user_id", user_id).id) if form == "node" else user_id

    rt.call("recall.render", "u1", "the database's first call", None, {"query_vector": axis(1)})
    figures = {"first call": counted(rt, name("u0")), "warm": counted(rt, name("u0"))}
    if form == "string":
        figures["unknown user_id"] = counted(rt, "nobody")
        figures["100 unknown user_ids"] = sum(counted(rt, f"nobody-{i}") for i in range(100))
    store = rt.store
    late = store.add_vertex(["User"], {"user_id": "late"})
    store.add_edge(late, session := store.add_vertex(["Session"], {"session_id": "late-s"}), "HAD_SESSION")
    add_message(rt, session, "late-1", "created after the module looked: kayak", "2024-02-01T10:00:00Z")
    figures["a new user's first call"] = counted(rt, name("late"))
    written = add_session(rt, "u0", "u0-new")
    add_message(rt, written, "u0-new-1", "just written about a kayak", "2024-03-01T10:00:00Z")
    figures["after writing a session"] = counted(rt, name("u0"))
    return figures


@pytest.mark.parametrize("form", ["string", "node"])
def test_ten_times_the_other_users_data_leaves_the_asking_users_call_counts_within_ten_percent(form):
    small, large = phases(3, form), phases(30, form)
    for phase, count in small.items():
        assert large[phase] <= 1.1 * count, (phase, count, large[phase])
