"""An interrupted `embed` keeps its work: the graph file holds every call that finished, and the next
run embeds only the rest.

The graphs are small generated chat histories (`datasets.chatter`), one unit per message, embedded a
few messages per call (`limit`) so a run has many calls to be stopped between.
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
from fake_bolt import FakeBolt, Rows, Silence
from memgraph_recall.checkpoint import Checkpoints
from memgraph_recall.cli import main
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets import chatter
from memgraph_recall.datasets.chats import ChatHistory
from memgraph_recall.errors import RecallProcedureError


def chat_graph(path: Path, sessions: int) -> int:
    """A graph file of one user's generated chats, without vectors; how many messages it holds."""
    history = ChatHistory()
    for session, messages in chatter.sessions("ivo", 7, sessions, datetime(2024, 1, 1), datetime(2024, 6, 1)):
        for role, at, text in messages:
            history.add_message("ivo", session, at, text, role=role)
    path.write_text(json.dumps(history.elements()))
    return len(history.messages)


def vectors_in(path: Path) -> int:
    """Messages of the graph file that hold vectors."""
    return sum(1 for e in json.loads(path.read_text())
               if "Action" in e.get("labels", ()) and e["properties"].get("passage_embeddings"))


def embed_calls(client: RecallClient, fail_after: int | None = None,
                failure: BaseException | None = None) -> list[dict]:
    """The configs of `client`'s `recall.embed` calls, as they are made; with `fail_after`, the backend
    raises `failure` instead of making the call after that many."""
    made, call = [], client.backend.call

    def counted(procedure, arguments):
        if procedure == "recall.embed":
            if len(made) == fail_after:
                raise failure or KeyboardInterrupt()
            made.append(dict(arguments["config"]))
        return call(procedure, arguments)

    client.backend.call = counted
    return made


def test_a_write_is_due_once_the_work_since_the_last_took_nine_times_as_long():
    now, writes = [0.0], []

    def save():  # each write takes one second
        writes.append(now[0])
        now[0] += 1.0

    saves = Checkpoints(save, share=0.1, clock=lambda: now[0])
    assert not saves.flush()  # nothing committed, nothing to write
    now[0] = 2.0
    assert saves.committed()  # the first is written at once: what a write costs is not known yet
    now[0] = 11.9  # 8.9 s of work since the write ended at 3.0: under 9 times its 1 s
    assert not saves.committed() and saves.pending
    now[0] = 12.0
    assert saves.committed() and not saves.pending
    now[0] = 14.0
    assert not saves.committed()
    assert saves.flush() and not saves.flush()
    assert writes == [2.0, 12.0, 14.0]
    with pytest.raises(ValueError, match="share: expected a fraction"):
        Checkpoints(save, share=0)


@pytest.mark.parametrize("failure", [KeyboardInterrupt(), RecallProcedureError("recall.embed: model died")])
def test_an_interrupted_embed_keeps_every_finished_call_and_the_next_run_embeds_the_rest(tmp_path, failure):
    graph = tmp_path / "memory.json"
    total = chat_graph(graph, 8)
    client = RecallClient.embedded(graph)
    made = embed_calls(client, fail_after=3, failure=failure)
    with pytest.raises(type(failure)):
        client.embed(limit=5, save_to=graph)
    assert [config["limit"] for config in made] == [5, 5, 5]
    assert vectors_in(graph) == 15
    assert [p.name for p in tmp_path.iterdir()] == ["memory.json"]  # no temporary file left
    rest = RecallClient.embedded(graph).embed(limit=50, save_to=graph)
    assert rest.embedded == rest.messages == total - 15 and rest.remaining == 0
    assert vectors_in(graph) == total


def test_sigterm_stops_the_cli_like_ctrl_c_and_the_file_keeps_every_finished_call(tmp_path, capsys,
                                                                                 monkeypatch):
    graph = tmp_path / "memory.json"
    total = chat_graph(graph, 8)
    embed_once, calls = RecallClient.embed_once, []

    def once(self, *args, **kwargs):
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGTERM)  # its handler raises here, before the fourth call
        calls.append(kwargs.get("limit"))
        return embed_once(self, *args, **kwargs)

    monkeypatch.setattr(RecallClient, "embed_once", once)
    handler = signal.getsignal(signal.SIGTERM)
    assert main(["embed", "--graph", str(graph), "--limit", "4"]) == 130
    assert signal.getsignal(signal.SIGTERM) == handler  # put back once the run is over
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == (f"memgraph-recall embed: interrupted; the vectors of every finished call are saved in "
                   f"{graph}; the same command again embeds the rest")
    assert calls == [4, 4, 4] and vectors_in(graph) == 12
    monkeypatch.setattr(RecallClient, "embed_once", embed_once)
    assert main(["embed", "--graph", str(graph), "--output", str(tmp_path / "copy.json")]) == 0
    assert f"embedded {total - 12} messages" in capsys.readouterr().out
    assert vectors_in(graph) == 12  # --output: the input stays as it was
    assert main(["embed", "--graph", str(graph)]) == 0
    assert f"embedded {total - 12} messages" in capsys.readouterr().out
    assert vectors_in(graph) == total


def test_stopped_before_any_call_finished_the_cli_says_nothing_was_saved(tmp_path, capsys, monkeypatch):
    graph = tmp_path / "memory.json"
    chat_graph(graph, 2)
    before = graph.read_bytes()

    def stopped(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(RecallClient, "embed_once", stopped)
    assert main(["embed", "--graph", str(graph)]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"memgraph-recall embed: interrupted; nothing was saved: {graph} is unchanged")
    copy = tmp_path / "copy.json"
    assert main(["embed", "--graph", str(graph), "--output", str(copy)]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"memgraph-recall embed: interrupted; nothing was saved in {copy}")
    assert graph.read_bytes() == before and not copy.exists()


@pytest.mark.parametrize("sig", [pytest.param(signal.SIGINT, id="SIGINT"),
                                 pytest.param(signal.SIGKILL, id="SIGKILL")])
def test_a_cli_run_stopped_by_a_signal_leaves_the_file_whole_with_what_it_saved(tmp_path, sig, ctrl_c):
    """The real thing: `memgraph-recall embed` in its own process, stopped once it has saved a call.
    SIGINT (Ctrl-C) saves what is done and exits 130; SIGKILL, a crash, keeps the last save."""
    graph = tmp_path / "memory.json"
    total = chat_graph(graph, 20)
    written = graph.stat().st_ino
    run = subprocess.Popen([sys.executable, "-m", "memgraph_recall", "embed", "--graph", str(graph),
                            "--limit", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while graph.stat().st_ino == written:  # every save is a new file renamed over the old one
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "no call was saved in two minutes"
            time.sleep(0.02)
        seen = vectors_in(graph)
        run.send_signal(sig)
        _, err = run.communicate(timeout=60)
    finally:
        run.kill()
    kept = vectors_in(graph)
    assert 0 < seen <= kept < total
    if sig == signal.SIGINT:
        assert run.returncode == 130
        assert re.search(r"interrupted; the vectors of every finished call are saved in .*memory\.json", err)
        assert [p.name for p in tmp_path.iterdir()] == ["memory.json"]
    else:
        assert run.returncode == -signal.SIGKILL
    rest = RecallClient.embedded(graph).embed()
    assert rest.embedded == total - kept


def test_ctrl_c_during_a_call_over_bolt_ends_it_and_says_the_finished_calls_are_on_the_server(capsys, ctrl_c):
    """Each `recall.embed` over Bolt commits on the server, so nothing is saved locally: Ctrl-C while
    the server works on a call stops waiting for it at once and exits 130 with one line."""
    fields = ("messages", "entities", "edges", "memories", "remaining", "model")

    def answer(query, parameters):
        if "recall.embed" not in query:
            return Rows(())
        embed_runs = sum("recall.embed" in q for q, _ in server.queries)
        if embed_runs == 4:  # the server is still working on the fourth call
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
            return Silence()
        return Rows(fields, [[4, 0, 0, 0, 100 - 4 * embed_runs, "m"]])

    with FakeBolt(answer) as server:
        started = time.monotonic()
        assert main(["embed", "--bolt", server.url, "--limit", "4"]) == 130
        assert time.monotonic() - started < 5  # not the call's 60 s timeout
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (f"memgraph-recall embed: interrupted; every finished call is committed on Memgraph at "
                       f"127.0.0.1:{server.port}; the same command again embeds the rest")
    assert not [line for line in err if "Traceback" in line or "never retrieved" in line]


def test_with_a_bar_a_small_first_call_sizes_it_and_it_shows_units_rate_and_time_left(tmp_path, capsys):
    graph = tmp_path / "memory.json"
    total = chat_graph(graph, 12)
    client = RecallClient.embedded(graph)
    made = embed_calls(client)
    done = client.embed(progress=True, limit=40)
    assert [config["limit"] for config in made] == [32] + [40] * ((total - 32 + 39) // 40)
    assert done.embedded == total
    frames = [frame.strip() for frame in re.split(r"[\r\n]", capsys.readouterr().err) if frame.strip()]
    assert frames[0].startswith("embedding with sentence-transformers/all-MiniLM-L6-v2:")
    assert all(f"/{total} [" in frame for frame in frames)  # the total is there from the first frame
    assert f"32/{total}" in frames[0]
    assert re.search(rf" {total}/{total} \[\d\d:\d\d<\d\d:\d\d, +[\d.]+ units/s\]$", frames[-1])
    assert re.search(r"<\d\d:\d\d, +[\d.]+ units/s", frames[1])  # a rate and the time left


def test_nothing_to_embed_leaves_the_file_untouched_but_output_is_still_written(tmp_path, capsys):
    graph = tmp_path / "memory.json"
    chat_graph(graph, 2)
    assert main(["embed", "--graph", str(graph)]) == 0
    before = graph.stat()
    capsys.readouterr()
    assert main(["embed", "--graph", str(graph)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"nothing to embed: {graph} is unchanged"
    assert (graph.stat().st_ino, graph.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    copy = tmp_path / "copy.json"
    assert main(["embed", "--graph", str(graph), "--output", str(copy)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"saved {copy}"
    assert json.loads(copy.read_text()) == json.loads(graph.read_text())


def test_save_to_and_output_are_for_graph_files_and_refused_before_any_call(capsys):
    client = RecallClient.connect("localhost", 1)  # nothing listens there: a call would fail otherwise
    with pytest.raises(ValueError, match="save_to: only the embedded runtime writes graph files"):
        client.embed(save_to="memory.json")
    assert main(["embed", "--bolt", "bolt://localhost:1", "--output", "memory.json"]) == 2
    assert "--output: only with --graph" in capsys.readouterr().err
