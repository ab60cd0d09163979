"""Retries of what is safe to repeat, through the real driver against a loopback Bolt server.

`recall.embed` writes only what is still missing, so a serialization conflict is retried with
backoff. `load` batches MERGE on per-load ids, so a batch repeated after a lost answer finds what it
wrote; a load that still fails says how far it got.
"""

import itertools

import pytest
from fake_bolt import CLIENT_ERROR, TRANSIENT, Failure, FakeBolt, HangUp, Rows
from memgraph_recall.bolt_io import CLEAN_UP, LOAD_KEY, load_elements
from memgraph_recall.cli import EXIT_SERVER, main
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets import sample
from memgraph_recall.errors import RecallConflictError, RecallConnectionError, RecallProcedureError
from memgraph_recall.retry import Backoff

# What Memgraph says for a conflicting transaction (src/query/exceptions.hpp,
# TransactionSerializationException, a TransientError), and what a procedure's own write raises
# (mgp.SerializationError, src/query/procedure/py_module.cpp).
COMMIT_CONFLICT = Failure("Cannot resolve conflicting transactions. Retry this transaction when the "
                          "conflicting transaction is finished. For more details, visit "
                          "https://memgraph.com/docs", TRANSIENT)
WRITE_CONFLICT = Failure("recall.embed: Traceback (most recent call last):\n  File "
                         "\"/usr/lib/memgraph/recall.py\", line 412, in embed\n"
                         "mgp.SerializationError: Operation cannot be serialized.", CLIENT_ERROR)
EMBED_FIELDS = ("messages", "entities", "edges", "memories", "remaining", "model")
QUICK = Backoff(attempts=4, first=0.01, longest=0.02)


def scripted(*answers):
    """An `answer` function giving `answers` in turn for recall.embed, the last one ever after."""
    sequence = itertools.chain(answers, itertools.repeat(answers[-1]))
    return lambda query, parameters: next(sequence)


def embed_row(messages: int, remaining: int) -> Rows:
    return Rows(EMBED_FIELDS, [[messages, 0, 0, 0, remaining, "minilm"]])


def bolt_client(server: FakeBolt, retry: Backoff = QUICK) -> RecallClient:
    client = RecallClient.from_url(server.url, timeout=2, connect_timeout=1)
    client.retry = retry
    return client


@pytest.mark.parametrize("conflict", [COMMIT_CONFLICT, WRITE_CONFLICT])
def test_embed_retries_a_serialization_conflict_and_finishes(conflict):
    answers = scripted(conflict, conflict, embed_row(10, 5), conflict, embed_row(5, 0))
    with FakeBolt(answers) as server, bolt_client(server) as client:
        done = client.embed()
        calls = len(server.queries)
    assert (done.messages, done.remaining) == (15, 0)
    assert calls == 5


def test_embed_gives_up_after_the_attempts_in_one_line():
    with FakeBolt(scripted(COMMIT_CONFLICT)) as server, bolt_client(server) as client:
        with pytest.raises(RecallConflictError) as caught:
            client.embed()
        calls = len(server.queries)
    message = str(caught.value)
    assert calls == QUICK.attempts
    assert message.startswith("recall.embed: gave up after 4 attempts in ")
    assert "Cannot resolve conflicting transactions" in message and "\n" not in message


def test_other_embed_failures_are_not_retried():
    failure = Failure("recall.embed: RuntimeError: embedding_model 'x' could not load")
    with FakeBolt(scripted(failure)) as server, bolt_client(server) as client:
        with pytest.raises(RecallProcedureError, match="could not load") as caught:
            client.embed()
        calls = len(server.queries)
    assert calls == 1 and not isinstance(caught.value, RecallConflictError)


def test_the_cli_says_it_gave_up_on_one_line(capsys, monkeypatch):
    monkeypatch.setattr("memgraph_recall.client.Backoff", lambda: QUICK)
    with FakeBolt(scripted(COMMIT_CONFLICT)) as server:
        code = main(["embed", "--bolt", server.url, "--timeout", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_SERVER and len(err) == 1
    assert err[0].startswith("memgraph-recall embed: RecallConflictError: recall.embed: gave up after "
                             "4 attempts")


class LoadServer:
    """Answers a load; `lose` is the number of the row-carrying query whose answer is lost after it ran."""

    def __init__(self, lose: set[int] = frozenset(), fail: set[int] = frozenset(), dead_after_failure=False):
        self.lose, self.fail, self.dead_after_failure = lose, fail, dead_after_failure
        self.written: list[tuple[str, list[dict]]] = []
        self.failed = False

    def __call__(self, query, parameters):
        if self.failed and self.dead_after_failure:
            return HangUp()
        if "rows" not in parameters:
            return Rows(())
        self.written.append((query, parameters["rows"]))
        number = len(self.written)
        if number in self.fail:
            self.failed = True
            return Failure("Relationship type and property index limit reached")
        return HangUp() if number in self.lose else Rows(())


def distinct_ids(written):
    return {row["id"] for _, rows in written for row in rows}


def test_a_batch_whose_answer_was_lost_is_sent_again_unchanged_and_merged_on_its_load_id():
    elements = sample.elements()
    server_answers = LoadServer(lose={2, 5})
    with FakeBolt(server_answers) as server, bolt_client(server) as client:
        nodes, relationships = load_elements(client.backend, elements, batch=20, retry=QUICK)
        queries = [query for query, _ in server.queries]
    written = server_answers.written
    assert written[1] == written[2] and written[4] == written[5]  # the same batch, the same ids
    assert all("MERGE (n:" in query or "MERGE (a)-[r:" in query for query, _ in written)
    assert all(f"{{{LOAD_KEY}: row.id}}" in query for query, _ in written)
    assert len(distinct_ids(written)) == len(elements) == nodes + relationships
    assert sum(len(rows) for _, rows in written) == len(elements) + len(written[1][1]) + len(written[4][1])
    assert CLEAN_UP in queries


def test_a_load_that_fails_says_how_far_it_got_and_cleans_up():
    elements = sample.elements()
    node_count = sum(e["type"] == "node" for e in elements)
    server_answers = LoadServer(fail={8})
    with FakeBolt(server_answers) as server, bolt_client(server) as client:
        with pytest.raises(RecallProcedureError) as caught:
            load_elements(client.backend, elements, batch=20, retry=QUICK)
        queries = [query for query, _ in server.queries]
    written_before = sum(len(rows) for _, rows in server_answers.written[:7])
    message = str(caught.value)
    assert message.startswith("load stopped at ")
    assert f"{min(written_before, node_count)} of {node_count} nodes" in message
    assert "were written and stay on the server (loading the file again adds them again). Cause: " in message
    assert "index limit reached" in message
    assert CLEAN_UP in queries  # the temporary label and ids of this load are removed


def test_a_load_that_loses_the_server_names_the_manual_clean_up():
    elements = sample.elements()
    with FakeBolt(LoadServer(fail={3}, dead_after_failure=True)) as server, bolt_client(server) as client:
        with pytest.raises(RecallProcedureError) as caught:
            load_elements(client.backend, elements, batch=20, retry=QUICK)
    assert "could not be removed: MATCH (n:__RecallLoad) REMOVE n:__RecallLoad, n.__recall_load_id" in str(
        caught.value)


def test_a_load_retries_a_lost_connection_a_bounded_number_of_times():
    lose_everything = LoadServer(lose=set(range(1, 100)))
    with FakeBolt(lose_everything) as server, bolt_client(server) as client:
        with pytest.raises(RecallConnectionError) as caught:
            load_elements(client.backend, sample.elements(), batch=20, retry=QUICK)
    assert len(lose_everything.written) == QUICK.attempts
    assert "load stopped at " in str(caught.value) and "0 of " in str(caught.value)
    assert "gave up after 4 attempts" in str(caught.value)


def test_backoff_waits_grow_are_capped_and_jittered():
    backoff = Backoff(attempts=6, first=0.2, factor=2.0, longest=1.0)
    for retry, nominal in [(1, 0.2), (2, 0.4), (3, 0.8), (4, 1.0), (5, 1.0)]:
        waits = [backoff.delay(retry) for _ in range(50)]
        assert all(nominal / 2 <= wait <= nominal for wait in waits)
        assert len(set(waits)) > 1
    with pytest.raises(ValueError, match="attempts: expected an integer >= 1"):
        Backoff(attempts=0)
