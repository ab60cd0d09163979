"""Routing (`neo4j://`) and access modes, through the real driver against loopback Bolt servers.

A `FakeBolt` with a routing table plays a Memgraph HA coordinator; two more play a REPLICA (the
table's reader) and MAIN (its writer). Every RUN is recorded with its extra map, so the tests see
which server each call reached and in which access mode it was sent (`mode: "r"` for a read, no
`mode` for a write in Bolt 4.x).
"""

import socket
import time

import neo4j
import pytest
from fake_bolt import TRANSIENT, Failure, FakeBolt, Node, Rows, Silence
from memgraph_recall.bolt import BOLT_QUERIES, MODES, BoltAddress
from memgraph_recall.cli import main
from memgraph_recall.client import RecallClient
from memgraph_recall.errors import RecallConflictError, RecallConnectionError, RecallTimeoutError
from memgraph_recall.retry import Backoff

QUICK = Backoff(attempts=3, first=0.01, longest=0.02)
CONFLICT = Failure("Cannot resolve conflicting transactions. Retry this transaction when the conflicting "
                   "transaction is finished.", TRANSIENT)
EMBED_ROW = Rows(("messages", "entities", "edges", "memories", "remaining", "model"),
                 [[3, 0, 0, 0, 0, "minilm"]])


def answer(query: str, parameters: dict) -> Rows:
    """A plausible row for each of the client's queries, told apart by the procedure they call."""
    if "recall.render" in query:
        return Rows(("text", "recalled"), [["TURN [session maya-s1]: Lisbon", {"question": parameters["q"]}]])
    if "recall.lanes" in query:
        node = Node(7, ("Action",), {"action_id": "maya-1"})
        return Rows(("lane", "rank", "score", "key", "text", "turn", "passage", "node", "relationship"),
                    [["turns", 1, 0.5, "maya-1", "Lisbon", None, 0, node, None]])
    if "recall.embed" in query:
        return EMBED_ROW
    if "recall.invalidate" in query:
        return Rows(("dropped",), [[2]])
    if "mg.procedures" in query:
        return Rows(("name",), [["recall.render"], ["recall.status"]])
    if "recall.status" in query:
        return Rows(("key", "value"), [["module_version", "test"]])
    return Rows(())  # the package's own DDL and setup queries


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def procedures_run(server: FakeBolt) -> list[tuple[str, str]]:
    """(procedure, access mode) of each RUN the server received, in order."""
    names = [*BOLT_QUERIES, "mg.procedures"]
    return [(next((name for name in names if name in run.query), run.query), run.mode) for run in server.runs]


def use_every_call(client: RecallClient) -> None:
    client.render("maya", "When is my trip?")
    client.lanes("maya", "When is my trip?")
    client.status()
    client.invalidate("maya")
    client.procedures()
    client.embed_once()


@pytest.fixture
def cluster():
    """(router, reader, writer): the router's table names the reader for READ and the writer for WRITE."""
    with FakeBolt(answer) as reader, FakeBolt(answer) as writer, FakeBolt() as router:
        router.route_to(readers=[reader], writers=[writer])
        yield router, reader, writer


@pytest.mark.parametrize(("url", "routing", "encrypted", "trust_any"), [
    ("neo4j://coordinator:7690", True, False, False),
    ("neo4j+s://coordinator:7690", True, True, False),
    ("neo4j+ssc://coordinator:7690", True, True, True),
    ("bolt://db:7690", False, False, False),
    ("bolt+s://db:7690", False, True, False),
    ("bolt+ssc://db:7690", False, True, True),
    ("db:7690", False, False, False),
])
def test_routing_and_tls_schemes_parse(url, routing, encrypted, trust_any):
    address = BoltAddress.parse(url)
    assert address.routing == routing
    assert (address.encrypted, address.trust_any_certificate) == (encrypted, trust_any)
    assert address.where.endswith(":7690")
    assert ("router" in address.server) == routing


def test_an_unknown_scheme_names_both_url_forms():
    with pytest.raises(ValueError, match="bolt://host:7687 or neo4j://coordinator:7687"):
        BoltAddress.parse("http://db:7687")


def test_every_call_has_a_driver_access_mode():
    assert set(BOLT_QUERIES) <= set(MODES)
    assert set(MODES.values()) == {neo4j.READ_ACCESS, neo4j.WRITE_ACCESS}
    assert MODES["recall.embed"] == neo4j.WRITE_ACCESS


def test_a_routing_client_reads_on_the_replica_and_embeds_on_main(cluster):
    router, reader, writer = cluster
    with RecallClient.from_url(f"neo4j://{router.address}", timeout=5, connect_timeout=2) as client:
        use_every_call(client)
        client.setup()
    assert procedures_run(reader) == [
        ("recall.render", "r"), ("recall.lanes", "r"), ("recall.status", "r"),
        ("SHOW INDEX INFO", "r"), ("recall.invalidate", "r"), ("mg.procedures", "r"),
    ]
    embeds, setup = writer.runs[0], writer.runs[1:]
    assert "recall.embed" in embeds.query and embeds.mode == "w"
    assert setup and all(run.mode == "w" and "recall." not in run.query for run in setup)
    assert not router.runs  # the router only hands out the table
    assert all(run.extra["tx_timeout"] == 5000 for run in reader.runs + writer.runs)


def test_a_direct_client_sends_the_same_modes_to_its_one_server():
    with FakeBolt(answer) as server:
        with RecallClient.from_url(server.url, timeout=5, connect_timeout=2) as client:
            use_every_call(client)
    reads = ["recall.render", "recall.lanes", "recall.status", "SHOW INDEX INFO", "recall.invalidate",
             "mg.procedures"]
    assert procedures_run(server) == [(name, "r") for name in reads] + [("recall.embed", "w")]
    assert not server.routes  # bolt:// never asks for a routing table


def test_each_call_through_a_router_first_asks_it_for_the_table(cluster):
    """With no database named, the driver resolves the home database per session (Memgraph has no
    server-side routing), so every call costs one ROUTE to the router before it runs."""
    router, reader, _ = cluster
    with RecallClient.from_url(f"neo4j://{router.address}", timeout=5, connect_timeout=2) as client:
        for _ in range(3):
            client.lanes("maya", "When is my trip?")
    assert len(router.routes) == 3 and len(reader.runs) == 3
    context, bookmarks, extra = router.routes[0]
    assert context == {"address": router.address} and bookmarks == [] and "db" not in extra
    assert "db" not in reader.runs[0].extra  # Memgraph's table names no database: its default is used


def test_a_replica_that_is_down_is_skipped():
    with FakeBolt(answer) as reader, FakeBolt(answer) as writer, FakeBolt() as router:
        router.route_to(readers=[f"127.0.0.1:{free_port()}", reader], writers=[writer])
        with RecallClient.from_url(f"neo4j://{router.address}", timeout=5, connect_timeout=2) as client:
            texts = [client.render("maya", "When is my trip?").text for _ in range(8)]
    assert all(text.startswith("TURN") for text in texts)
    assert procedures_run(reader) == [("recall.render", "r")] * 8 and not writer.runs


def test_no_reachable_replica_fails_the_read_and_not_the_embed():
    with FakeBolt(answer) as writer, FakeBolt() as router:
        router.route_to(readers=[f"127.0.0.1:{free_port()}"], writers=[writer])
        with RecallClient.from_url(f"neo4j://{router.address}", timeout=5, connect_timeout=2) as client:
            with pytest.raises(RecallConnectionError) as caught:
                client.render("maya", "When is my trip?")
            assert client.embed_once().messages == 3
    assert str(caught.value) == (
        f"recall.render: none of the servers the router at {router.address} names for reads could be reached "
        "(Failed to obtain connection towards 'READ' server.); the call did not run")


def test_a_replica_that_never_answers_is_a_timeout_within_the_bound():
    with FakeBolt(lambda query, parameters: Silence()) as reader, FakeBolt() as router:
        router.route_to(readers=[reader], writers=[reader])
        with RecallClient.from_url(f"neo4j://{router.address}", timeout=1, connect_timeout=0.5) as client:
            started = time.monotonic()
            with pytest.raises(RecallTimeoutError) as caught:
                client.status()
            elapsed = time.monotonic() - started
    assert reader.runs and 1.0 <= elapsed < 10  # it waited for the call; the upper bound is loose on purpose
    assert str(caught.value).startswith(
        f"recall.status: no answer from Memgraph through the router at {router.address} within 1.5 s "
        "(timeout 1 s + connect_timeout 0.5 s)")


def test_a_router_that_refuses_connections_is_named():
    port = free_port()
    with RecallClient.from_url(f"neo4j://127.0.0.1:{port}", timeout=1, connect_timeout=0.5) as client:
        with pytest.raises(RecallConnectionError) as caught:
            client.status()
    assert str(caught.value).startswith(f"cannot reach Memgraph through the router at 127.0.0.1:{port}: no "
                                        "routing table from it")


def test_a_server_that_is_not_a_router_says_neo4j_urls_need_a_coordinator():
    with FakeBolt(answer) as server:
        with RecallClient.from_url(f"neo4j://{server.address}", timeout=1, connect_timeout=0.5) as client:
            with pytest.raises(RecallConnectionError, match="neo4j:// needs a coordinator of a Memgraph HA "
                               r"cluster there \(bolt:// reaches one server directly\)"):
                client.status()
    assert server.routes and not server.runs


def test_embed_conflicts_are_retried_by_the_client_alone():
    """Auto-commit runs are not retried by the driver: each attempt is one RUN on MAIN."""
    answers = iter([CONFLICT, CONFLICT, EMBED_ROW])
    with FakeBolt(lambda query, parameters: next(answers)) as writer, FakeBolt() as router:
        router.route_to(readers=[writer], writers=[writer])
        with RecallClient.from_url(f"neo4j://{router.address}", timeout=5, connect_timeout=2) as client:
            client.retry = QUICK
            assert client.embed_once().messages == 3
    assert procedures_run(writer) == [("recall.embed", "w")] * 3

    with FakeBolt(lambda query, parameters: CONFLICT) as writer, FakeBolt() as router:
        router.route_to(readers=[writer], writers=[writer])
        with RecallClient.from_url(f"neo4j://{router.address}", timeout=5, connect_timeout=2) as client:
            client.retry = QUICK
            with pytest.raises(RecallConflictError, match="gave up after 3 attempts"):
                client.embed_once()
    assert len(writer.runs) == QUICK.attempts


def test_the_cli_asks_through_a_router(cluster, capsys):
    router, reader, writer = cluster
    code = main(["ask", "--user", "maya", "When is my trip?", "--bolt", f"neo4j://{router.address}",
                 "--timeout", "5"])
    assert code == 0 and "Lisbon" in capsys.readouterr().out
    assert procedures_run(reader) == [("recall.render", "r")] and not writer.runs
