"""The CLI against a broken world: one line on stderr naming what failed, and an exit status per kind."""

import json
import subprocess
import sys
import time

import pytest
from fake_bolt import Failure, FakeBolt, Silence
from memgraph_recall import cli
from memgraph_recall.cli import EXIT_CONNECTION, EXIT_INTERNAL, EXIT_SERVER, EXIT_TIMEOUT, EXIT_USAGE, main
from memgraph_recall.settings import CONFIG_ENV

QUESTION = "When is my trip to Lisbon?"


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


def bad_file(path, content: bytes | None):
    """`path` holding `content`, or a directory where a file is expected when `content` is None."""
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    return path


def assert_one_line(err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_exit_statuses_are_distinct_and_documented():
    codes = [EXIT_SERVER, EXIT_USAGE, EXIT_CONNECTION, EXIT_TIMEOUT, EXIT_INTERNAL]
    assert len(set(codes)) == len(codes) and 0 not in codes
    assert all(code in cli.EXIT_CODES for code in codes)
    assert "exit status:\n  0    success\n  1    the server" in cli.EPILOG


@pytest.mark.parametrize(("content", "problem"), [
    (None, "is a directory, expected a TOML file"),
    (bytes(range(128, 256)) * 3, "is not UTF-8 text (byte 0): not a TOML file"),
    (b"\x00\x01junk\x02", "is not valid TOML"),
    (b"[recall]\nturns_k = 3\n[recall\n", "is not valid TOML"),
    (b"[recall]\nlanes = " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "nests too deeply to be a TOML file"),
    (b"# " + b"x" * (1 << 20) + b"\n", "larger than a config file may be"),
    (b"[client]\ntimeout = -1\n", "[client] timeout: expected seconds greater than 0"),
    (b"[client]\nconnect_timeout = 'soon'\n", "[client] connect_timeout: expected a number of seconds"),
])
def test_a_bad_config_file_is_one_line_naming_the_file(tmp_path, capsys, content, problem):
    path = bad_file(tmp_path / "config.toml", content)
    code, err = run(capsys, "ask", "--config", str(path), "--user", "maya", QUESTION)
    assert code == EXIT_USAGE
    assert_one_line(err, f"config file {path} (--config)", problem)


def test_a_config_file_from_the_environment_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path))
    code, err = run(capsys, "status")
    assert code == EXIT_USAGE
    assert_one_line(err, f"config file {tmp_path} (${CONFIG_ENV}): is a directory")


@pytest.mark.parametrize(("content", "problem"), [
    (None, "is a directory"),
    (bytes(range(128, 256)), "is not UTF-8 text"),
    (b"[" * 100_000, "nests too deeply to be an export_util.json file"),
    (b"{not json", "is not a usable export_util.json file: not valid JSON"),
    (json.dumps([{"id": 1, "type": "relationship", "start": 5, "end": 6, "label": "X"}]).encode(),
     "is not a usable export_util.json file: element 0"),
])
def test_a_bad_graph_file_is_one_line_naming_the_file(tmp_path, capsys, content, problem):
    path = bad_file(tmp_path / "graph.json", content)
    code, err = run(capsys, "ask", "--graph", str(path), "--user", "maya", QUESTION)
    assert code == EXIT_USAGE
    assert_one_line(err, f"--graph: {path}", problem)
    code, err = run(capsys, "load", str(path), "--bolt", "bolt://127.0.0.1:1")
    assert code == EXIT_USAGE
    assert_one_line(err, f"load: {path}", problem)


def test_a_server_that_never_answers_is_a_connection_error_within_the_connect_timeout(capsys):
    with FakeBolt(handshake=False) as server:
        code, err = run(capsys, "status", "--bolt", server.url, "--connect-timeout", "0.5", "--timeout", "1")
    assert code == EXIT_CONNECTION
    assert_one_line(err, "memgraph-recall status: RecallConnectionError: cannot reach Memgraph at "
                    f"127.0.0.1:{server.port}", "connect_timeout 0.5 s")


def test_a_call_without_an_answer_is_a_timeout(capsys):
    with FakeBolt(lambda query, parameters: Silence()) as server:
        code, err = run(capsys, "ask", "--bolt", server.url, "--user", "maya", QUESTION, "--timeout", "0.5",
                        "--connect-timeout", "0.5")
    assert code == EXIT_TIMEOUT
    assert_one_line(err, "RecallTimeoutError: recall.render: no answer from Memgraph", f":{server.port}")


def test_the_timeouts_come_from_the_config_file_unless_a_flag_says_otherwise(tmp_path, capsys):
    config = tmp_path / "config.toml"
    with FakeBolt(lambda query, parameters: Silence()) as server:
        config.write_text(f'[client]\nbolt = "{server.url}"\ntimeout = 0.5\nconnect_timeout = 0.25\n')
        code, err = run(capsys, "invalidate", "--config", str(config))
        assert code == EXIT_TIMEOUT and "(timeout 0.5 s + connect_timeout 0.25 s)" in err
        code, err = run(capsys, "invalidate", "--config", str(config), "--timeout", "0.25")
        assert code == EXIT_TIMEOUT and "(timeout 0.25 s + connect_timeout 0.25 s)" in err


def test_an_unresolvable_host_is_a_connection_error_naming_the_host(capsys):
    code, err = run(capsys, "status", "--bolt", "bolt://nohost.invalid:7687", "--connect-timeout", "1",
                    "--timeout", "1")
    assert code in (EXIT_CONNECTION, EXIT_TIMEOUT)  # a resolver that stalls past the bound is a timeout
    assert_one_line(err, "nohost.invalid")


def test_server_side_errors_and_refused_arguments_have_their_own_statuses(capsys):
    answers = {
        "recall.render": Failure("recall.render: RuntimeError: embedding_model 'x' could not load"),
        "recall.lanes": Failure("recall.lanes: ValueError: config key 'turns_kk' is not a recall config key"),
    }

    def answer(query, parameters):
        return next(failure for name, failure in answers.items() if name in query)

    with FakeBolt(answer) as server:
        code, err = run(capsys, "ask", "--bolt", server.url, "--user", "maya", QUESTION)
        assert code == EXIT_SERVER
        assert_one_line(err, "RecallProcedureError: recall.render failed: ", "could not load")
        code, err = run(capsys, "ask", "--bolt", server.url, "--user", "maya", QUESTION, "--hits")
        assert code == EXIT_USAGE
        assert_one_line(err, "error: recall.lanes: config key 'turns_kk'")


def test_debug_adds_the_traceback(capsys):
    with FakeBolt(handshake=False) as server:
        code, err = run(capsys, "status", "--bolt", server.url, "--connect-timeout", "0.25", "--debug")
    assert code == EXIT_CONNECTION
    assert "Traceback (most recent call last)" in err
    assert err.strip().splitlines()[-1].startswith("memgraph-recall status: RecallConnectionError")


def test_a_bug_is_an_internal_error_without_a_traceback(capsys, monkeypatch):
    def broken(args):
        raise KeyError("oops")

    monkeypatch.setitem(cli.COMMANDS, "invalidate", broken)
    code, err = run(capsys, "invalidate")
    assert code == EXIT_INTERNAL
    assert_one_line(err, "internal error: KeyError: 'oops' (run with --debug for the traceback)")


def test_bad_timeout_flags_are_usage_errors(capsys):
    for value in ("0", "-3", "nan", "soon", "100000"):
        with pytest.raises(SystemExit) as exit_info:
            main(["status", "--timeout", value])
        assert exit_info.value.code == EXIT_USAGE
        assert "--timeout: expected seconds greater than 0" in capsys.readouterr().err


# -- bad input is refused before anything loads ------------------------------------------------------
def test_a_usage_error_is_one_line_naming_the_argument(capsys):
    for argv, words in ((["ask", "--graph", "sample", QUESTION], ("required: --user",)),
                        (["ask", "--user", "maya", QUESTION, "--today", "20/05/2024"],
                         ("argument --today: expected an ISO date YYYY-MM-DD, got '20/05/2024'",)),
                        (["frobnicate"], ("argument COMMAND: invalid choice: 'frobnicate'",))):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == EXIT_USAGE
        err = capsys.readouterr().err
        assert_one_line(err, *words, "(see memgraph-recall")


def bad_graph_inputs(tmp_path):
    """(argv, what the one line names) for each kind of bad input `ask --graph` can get."""
    config = tmp_path / "bad.toml"
    config.write_text('[recall]\nturns_k = "many"\n')
    ask = ["ask", "--graph", "sample", "--user", "maya"]
    return [
        ([*ask, "   "], "question: expected the question to recall memory for"),
        ([*ask, "x" * 10_000], "question: expected at most 4000 characters (RECALL_MAX_QUESTION_CHARS), "
                               "got 10000"),
        ([*ask, QUESTION, "--set", "turns_kk=3"], "unknown config key 'turns_kk' (did you mean 'turns_k'?)"),
        ([*ask, QUESTION, "--set", "turns_k=999"], "config['turns_k'] is 999, above this server's ceiling"),
        ([*ask, QUESTION, "--set", "since=someday"], "config['since'] must be a date"),
        ([*ask, QUESTION, "--config", str(config)], "config['turns_k'] must be an integer >= 0, got 'many'"),
        ([*ask, QUESTION, "--config", str(tmp_path / "none.toml")], "none.toml (--config): no such file"),
        (["ask", "--graph", "./sample", "--user", "maya", QUESTION], "--graph: no such file ./sample"),
        (["ask", "--graph", str(tmp_path / "none.json"), "--user", "maya", QUESTION], "no such file"),
        (["ask", "--graph", "sample", "--user", "maya", QUESTION, "--hits", "--set", "explain=true",
          "--set", "fusion_k=0"], "config['fusion_k'] must be an integer from 1 to 1000"),
        (["embed", "--graph", "sample", "--set", "batch_size=65"], "config['batch_size'] must be an integer"),
        (["status", "--graph", "sample", "--set", "user=''"], "config['user'] must be a non-empty string"),
        (["mcp", "--graph", "sample", "--user", "maya", "--set", "lanes=['dreams']"], "unknown: 'dreams'"),
    ]


def test_bad_input_with_a_graph_is_refused_before_the_runtime_loads(tmp_path, capsys, monkeypatch):
    def loaded(*args, **kwargs):
        raise AssertionError("the embedded runtime was opened before the input was checked")

    monkeypatch.setattr(cli.RecallClient, "embedded", loaded)
    monkeypatch.chdir(tmp_path)
    for argv, words in bad_graph_inputs(tmp_path):
        code, err = run(capsys, *argv)
        assert code == EXIT_USAGE, (argv, err)
        assert_one_line(err, words)


def test_the_refusal_takes_well_under_a_second_of_a_fresh_process(tmp_path):
    """The same refusals as a user meets them: a new process, its imports included (the sample's
    embedding, which they used to wait for, takes 8-16 s)."""
    slowest = 0.0
    for argv, words in bad_graph_inputs(tmp_path)[:6]:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "memgraph_recall.cli", *argv], capture_output=True,
                              text=True, timeout=60, cwd=tmp_path)
        slowest = max(slowest, time.perf_counter() - started)
        assert done.returncode == EXIT_USAGE and words in done.stderr, done.stderr
    assert slowest < 3, f"slowest refusal took {slowest:.2f} s"  # about 0.3 s here; slack for a busy CI


def test_an_unknown_user_is_said_where_the_user_looks(sample_graph_file, capsys):
    code, err = run(capsys, "ask", "--graph", str(sample_graph_file), "--user", "Maya", QUESTION)
    assert code == EXIT_USAGE
    assert_one_line(err, "--user: no user 'Maya' in embedded runtime over", "did you mean 'maya'?")
    code, err = run(capsys, "ask", "--graph", str(sample_graph_file), "--user", "nobody", QUESTION)
    assert code == EXIT_USAGE
    assert_one_line(err, "--user: no user 'nobody' in embedded runtime over", "user ids are exact")
    assert capsys.readouterr().out == ""


def test_an_http_mcp_server_over_bolt_checks_memgraph_answers_before_serving(token_file, capsys):
    http = ["mcp", "--http", "127.0.0.1:8765", "--tokens", str(token_file)]
    with FakeBolt(handshake=False) as silent:
        code, err = run(capsys, *http, "--bolt", silent.url, "--connect-timeout", "0.5")
    assert code == EXIT_CONNECTION
    assert_one_line(err, f"cannot reach Memgraph at 127.0.0.1:{silent.port}")
    with FakeBolt() as bare:  # Bolt answers, but no recall.* procedure is registered
        code, err = run(capsys, *http, "--bolt", bare.url)
    assert code == EXIT_SERVER
    assert_one_line(err, "RecallNotLoaded: no recall.* procedures on Memgraph at", "memgraph-recall image")


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "tokens"
    path.write_text(f"{'0' * 64} maya\n")
    return path
