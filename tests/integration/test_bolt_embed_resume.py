"""Over Bolt an interrupted `embed` keeps every call that finished: each `recall.embed` is its own
auto-commit write transaction on the server, and the next run embeds only what is left.

The chats are generated for a user of their own (`datasets.chatter`) and removed afterwards: the
other tests compare the whole server graph with the embedded one.
"""

from datetime import datetime

import pytest
from memgraph_recall.bolt import READ
from memgraph_recall.datasets import chatter
from memgraph_recall.datasets.chats import ChatHistory
from memgraph_recall.importing import import_over_bolt

pytestmark = pytest.mark.integration

USER = "resume-ivo"
EMBEDDED = ("MATCH (:User {user_id: $user})-[:HAD_SESSION]->()-[:HAS_ACTION]->(a) "
            "WHERE a.passage_embeddings IS NOT NULL RETURN count(a) AS embedded")
REMOVE = ("MATCH (u:User {user_id: $user})-[:HAD_SESSION]->(s)-[:HAS_ACTION]->(a) "
          "OPTIONAL MATCH (a)-[:HAS_CHUNK]->(c) DETACH DELETE u, s, a, c")


def embedded_messages(client) -> int:
    return client.backend.run("count embedded", EMBEDDED, {"user": USER}, mode=READ)[0]["embedded"]


def test_an_interrupted_embed_keeps_its_finished_calls_on_the_server_and_the_next_run_embeds_the_rest(
        bolt, monkeypatch):
    history = ChatHistory()
    for session, messages in chatter.sessions(USER, 7, 6, datetime(2024, 1, 1), datetime(2024, 6, 1)):
        for role, at, text in messages:
            history.add_message(USER, session, at, text, role=role)
    total = len(history.messages)
    import_over_bolt(history, bolt.backend, "generated chats")
    try:
        made, call = [], bolt.backend.call

        def interrupted(procedure, arguments):  # Ctrl-C after the third call came back
            if procedure == "recall.embed" and len(made) == 3:
                raise KeyboardInterrupt
            made.append(procedure)
            return call(procedure, arguments)

        with monkeypatch.context() as patched, pytest.raises(KeyboardInterrupt):
            patched.setattr(bolt.backend, "call", interrupted)
            bolt.embed(USER, limit=4)
        assert made == ["recall.embed"] * 3
        assert embedded_messages(bolt) == 12
        rest = bolt.embed(USER, limit=4)
        assert rest.messages == total - 12 and rest.remaining == 0
        assert embedded_messages(bolt) == total
    finally:
        bolt.backend.run("clean up", REMOVE, {"user": USER})
