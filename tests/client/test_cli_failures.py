"""The CLI against a broken world: one line on stderr naming what failed, and an exit status per kind."""

import json

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
