"""The Bolt backend through the real `neo4j` driver: every wait bounded, every failure named.

Servers here are loopback sockets (`fake_bolt`): one that accepts and never answers, one that
answers the handshake and then goes quiet, one that answers with Memgraph's own error texts.
Each test that waits is bounded to a few seconds by small `timeout`/`connect_timeout` values.
"""

import socket
import time
from datetime import date

import pytest
from fake_bolt import TRANSIENT, Failure, FakeBolt, HangUp, Node, Rows, Silence
from memgraph_recall.client import RecallClient
from memgraph_recall.errors import (
    RecallArgumentError,
    RecallConflictError,
    RecallConnectionError,
    RecallNotLoaded,
    RecallProcedureError,
    RecallTimeoutError,
)
from memgraph_recall.shape import FAST_QUERIES

CONFLICT = ("Cannot resolve conflicting transactions. Retry this transaction when the conflicting "
            "transaction is finished. For more details, visit https://memgraph.com/docs")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def client_of(url: str, timeout: float = 1.0, connect_timeout: float = 0.5) -> RecallClient:
    return RecallClient.from_url(url, timeout=timeout, connect_timeout=connect_timeout)


def test_unreachable_server_names_host_and_port():
    port = free_port()
    with RecallClient.connect("127.0.0.1", port) as client:
        with pytest.raises(RecallConnectionError, match=f"cannot reach Memgraph at 127.0.0.1:{port}"):
            client.render("maya", "anything")


def test_a_server_that_accepts_and_never_answers_is_given_up_after_connect_timeout():
    with FakeBolt(handshake=False) as server, client_of(server.url) as client:
        started = time.monotonic()
        with pytest.raises(RecallConnectionError) as caught:
            client.render("maya", "When is my trip?")
        elapsed = time.monotonic() - started
    assert 0.4 < elapsed < 2.5
    assert f"127.0.0.1:{server.port}" in str(caught.value)
    assert "no Bolt answer within connect_timeout 0.5 s" in str(caught.value)


def test_a_server_that_goes_quiet_mid_call_is_given_up_after_the_call_timeout():
    with FakeBolt(lambda query, parameters: Silence()) as server, client_of(server.url) as client:
        started = time.monotonic()
        with pytest.raises(RecallTimeoutError) as caught:
            client.status()
        elapsed = time.monotonic() - started
    assert 0.9 < elapsed < 3.0
    message = str(caught.value)
    assert message.startswith("recall.status: no answer from Memgraph at 127.0.0.1:")
    assert "timeout 1 s + connect_timeout 0.5 s" in message


def test_the_call_timeout_travels_to_the_server_as_the_transaction_timeout():
    seen = []

    class Recording(FakeBolt):
        def _message(self, connection):
            tag, fields = super()._message(connection)
            if tag == 0x10:
                seen.append(fields[2])  # RUN's extra map
            return tag, fields

    with Recording(lambda query, parameters: Rows(("dropped",), [[0]])) as server:
        with client_of(server.url, timeout=7.5) as client:
            assert client.invalidate() == 0
    assert seen and seen[0]["tx_timeout"] == 7500


def test_an_unresolvable_host_is_named():
    with client_of("bolt://nohost.invalid:7687") as client:
        with pytest.raises((RecallConnectionError, RecallTimeoutError), match="nohost.invalid"):
            client.render("maya", "anything")


def test_a_connection_lost_before_the_answer_says_the_call_may_have_run():
    with FakeBolt(lambda query, parameters: HangUp()) as server, client_of(server.url) as client:
        with pytest.raises(RecallConnectionError, match="recall.invalidate: lost the connection to Memgraph "
                           f"at 127.0.0.1:{server.port} before its answer .* may or may not have run"):
            client.invalidate()


@pytest.mark.parametrize(("failure", "expected", "words"), [
    (Failure(CONFLICT, TRANSIENT), RecallConflictError, "Cannot resolve conflicting transactions"),
    (Failure("recall.embed: Traceback (most recent call last):\n  File \"recall.py\", line 9\n"
             "mgp.SerializationError: Operation cannot be serialized."),
     RecallConflictError, "conflict with a concurrent write: Operation cannot be serialized."),
    (Failure("Transaction was asked to abort because of transaction timeout."), RecallTimeoutError,
     "aborted the call at its transaction timeout"),
    (Failure("There is no procedure named 'recall.embed'."), RecallNotLoaded, "is this the memgraph-recall"),
    (Failure("recall.embed: ValueError: config key 'limt' is not a recall config key"), RecallArgumentError,
     "'limt'"),
    (Failure("recall.embed: RuntimeError: model could not load"), RecallProcedureError, "could not load"),
    (Failure("Authentication failure", "Memgraph.ClientError.Security.Unauthenticated"),
     RecallConnectionError, "refused the credentials"),
])
def test_memgraph_error_texts_become_the_client_errors(failure, expected, words):
    with FakeBolt(lambda query, parameters: failure) as server, client_of(server.url) as client:
        with pytest.raises(expected, match=words) as caught:
            client.embed_once()
    assert "\n" not in str(caught.value)


def test_values_arrive_as_plain_python_nodes_as_graph_elements():
    def answer(query, parameters):
        if "recall.lanes" in query:
            node = Node(7, ("Action",), {"action_id": "maya-1"})
            return Rows(("lane", "rank", "score", "key", "text", "turn", "passage", "node", "relationship"),
                        [["turns", 1, 0.5, "maya-1", "Lisbon in June", None, 0, node, None]])
        recalled = {"question": parameters["q"], "turns": [{"action_id": "maya-1", "session_id": "maya-s2"}],
                    "valid": date(2024, 4, 10)}
        return Rows(("text", "recalled"), [["TURN [session maya-s2]: Lisbon", recalled]])

    with FakeBolt(answer) as server, client_of(server.url) as client:
        recalled = client.render("maya", "Where am I going?", today=date(2024, 5, 20), turns_k=2)
        hits = client.lanes("maya", "Where am I going?")
        sent = dict(server.queries)
    assert recalled.text.startswith("TURN") and recalled.turns[0].session_id == "maya-s2"
    assert recalled.to_json()["valid"] == "2024-04-10"
    assert hits[0].node.labels == ("Action",) and hits[0].node.id == 7
    assert hits[0].node.properties == {"action_id": "maya-1"}
    render = sent[FAST_QUERIES["recall.render"]]  # the fast call shape: the user_id as a parameter only
    assert render["user"] == "maya" and render["config"] == {"turns_k": 2}
    assert render["today"] == (ord("D"), [(date(2024, 5, 20) - date(1970, 1, 1)).days])


def test_a_caller_interrupted_while_waiting_cancels_the_call_it_waited_for(ctrl_c):
    """Ctrl-C while a call is out: the call's coroutine is cancelled, not left running unwatched on a
    loop that is about to stop (its late failure then printed "Task exception was never retrieved")."""
    import asyncio
    import os
    import signal
    import threading

    from memgraph_recall.bolt import _LoopThread

    loop, ended = _LoopThread(), threading.Event()

    async def waiting_for_the_server():
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            ended.set()
            raise

    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run(waiting_for_the_server())
        assert ended.wait(5)
    finally:
        loop.stop()
