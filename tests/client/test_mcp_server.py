"""`memgraph-recall mcp` driven by the MCP SDK's own client: in-memory, over stdio, and over HTTP.

HTTP servers listen on 127.0.0.1 only, on a port the OS picks, and every wait is bounded.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")
httpx2 = pytest.importorskip("httpx2")
import uvicorn  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from memgraph_recall.client import RecallClient  # noqa: E402
from memgraph_recall.integrations.mcp_server import (  # noqa: E402
    INSTRUCTIONS,
    HttpOptions,
    RecallService,
    build_server,
    http_app,
    parse_listen,
)
from memgraph_recall.integrations.mcp_tokens import token_hash  # noqa: E402
from memgraph_recall.timeouts import Timeouts  # noqa: E402

TODAY = date(2024, 5, 20)
TRIP = "When is my trip to Lisbon and who am I going with?"
TOM_ONLY = "When did I finish the Rotterdam marathon, and how is my knee?"
TOM_WORDS = ("Rotterdam", "marathon", "Rui", "shellfish", "Ella", "tom-s")
MAYA_TOKEN, TOM_TOKEN = "maya-token-" + "a" * 32, "tom-token-" + "b" * 32
SESSION = re.compile(r"^TURN \[session ([^,\]]+)", re.MULTILINE)
PROTOCOL = "2025-06-18"


def sessions(text: str) -> set[str]:
    return set(SESSION.findall(text))


def rows(text: str) -> str:
    """The rows under the header (the header echoes the question, so words are looked for below it)."""
    head, marker, body = text.partition("\nRows:\n")
    assert marker, text
    return body


def call(server, tool: str, arguments: dict):
    async def go():
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(go)


@pytest.fixture(scope="module")
def service(sample_client):
    return RecallService(lambda: sample_client, today=TODAY)


def test_tools_list_shows_both_tools_with_their_schemas_and_the_instructions(service):
    async def go():
        async with Client(build_server(service, lambda: "maya")) as client:
            return await client.list_tools(), client.instructions

    listed, instructions = anyio.run(go)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {"recall", "recall_status"}
    schema = tools["recall"].input_schema
    assert schema["required"] == ["question"] and schema["properties"]["question"]["type"] == "string"
    assert {"since", "until"} <= set(schema["properties"])
    assert schema["properties"]["since"]["format"] == schema["properties"]["until"]["format"] == "date"
    assert tools["recall_status"].input_schema["properties"] == {}
    assert all(tool.output_schema is None for tool in tools.values())
    assert "own past" in tools["recall"].description and "TURN [" in tools["recall"].description
    assert instructions == INSTRUCTIONS and "call `recall`" in instructions


def test_recall_returns_the_users_own_rows_as_text_only(service):
    maya = call(build_server(service, lambda: "maya"), "recall", {"question": TRIP})
    tom = call(build_server(service, lambda: "tom"), "recall", {"question": TRIP})
    for result in (maya, tom):
        assert not result.is_error and result.structured_content is None
        assert [content.type for content in result.content] == ["text"]
    maya_text, tom_text = maya.content[0].text, tom.content[0].text
    assert "Today is 2024-05-20." in maya_text and "Lisbon" in rows(maya_text)
    assert sessions(maya_text) and all(s.startswith("maya-") for s in sessions(maya_text))
    assert sessions(tom_text) and all(s.startswith("tom-") for s in sessions(tom_text))
    assert not any(word in rows(maya_text) for word in TOM_WORDS)


def test_a_question_only_another_user_can_answer_gives_none_of_their_rows(service):
    text = call(build_server(service, lambda: "maya"), "recall", {"question": TOM_ONLY}).content[0].text
    assert rows(text).strip() and not any(word in rows(text) for word in TOM_WORDS)
    assert all(s.startswith("maya-") for s in sessions(text))


def test_the_time_window_reaches_the_module(service):
    text = call(build_server(service, lambda: "maya"), "recall",
                {"question": TRIP, "since": "2024-05-01", "until": "2024-05-31"}).content[0].text
    days = re.findall(r"^TURN \[session [^,]+, (\d{4}-\d\d-\d\d)", text, re.M)
    assert days and all("2024-05-01" <= day <= "2024-05-31" for day in days)
    assert all(s.startswith("maya-") for s in sessions(text))


@pytest.mark.parametrize(("arguments", "message"), [
    ({"question": "   "}, "question: expected the question to recall memory for"),
    ({"question": TRIP, "since": "last week"}, "since: expected a date YYYY-MM-DD, got 'last week'"),
    ({"question": TRIP, "until": "2024-13-01"}, "until: expected a date YYYY-MM-DD"),
])
def test_bad_arguments_are_one_line_tool_errors(service, arguments, message):
    result = call(build_server(service, lambda: "maya"), "recall", arguments)
    assert result.is_error and message in result.content[0].text
    assert "\n" not in result.content[0].text and "Traceback" not in result.content[0].text


def test_a_user_with_no_memory_at_all_is_said_in_the_tools_text(service):
    result = call(build_server(service, lambda: "Maya"), "recall", {"question": TRIP})
    assert not result.is_error
    assert result.content[0].text == (
        "(user 'Maya' not found: memory holds nothing for this user, so nothing to recall)")


def test_the_recall_tool_says_which_date_relative_dates_count_from():
    async def description(today):
        async with Client(build_server(RecallService(lambda: None, today=today), lambda: "maya")) as client:
            tools = (await client.list_tools()).tools
            return next(tool.description for tool in tools if tool.name == "recall")

    assert "count from the date of the machine this server runs on, at each call" in anyio.run(
        description, None)
    assert "count from 2024-05-20, the date this server was started with" in anyio.run(description, TODAY)


def test_degraded_mode_is_not_an_error(tmp_path):
    from memgraph_recall.datasets import sample

    unembedded = RecallService(lambda: RecallClient.embedded(sample.elements()), today=TODAY)
    result = call(build_server(unembedded, lambda: "maya"), "recall", {"question": TRIP})
    assert not result.is_error
    assert "Vector lanes are off (this user has no vectors" in result.content[0].text
    assert "TURN [session maya-s2" in rows(result.content[0].text)


def test_recall_status_is_about_the_callers_user_only(service):
    result = call(build_server(service, lambda: "tom"), "recall_status", {})
    text = result.content[0].text
    assert not result.is_error and result.structured_content is None
    assert text.startswith("recall status for user 'tom' on embedded runtime")
    assert "recall.render" in text and "with_vectors" in text and "tom" in text
    assert "cache" not in text and "maya" not in text


def test_a_server_that_is_down_is_a_one_line_tool_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = RecallService(lambda: RecallClient.connect("127.0.0.1", port, connect_timeout=0.5), bolt=True)
    result = call(build_server(down, lambda: "maya"), "recall", {"question": TRIP})
    assert result.is_error and f"cannot reach Memgraph at 127.0.0.1:{port}" in result.content[0].text
    assert "\n" not in result.content[0].text


def test_a_call_past_the_timeout_returns_a_timeout_error():
    class Stuck:
        def render(self, *args, **kwargs):
            time.sleep(3)

    slow = RecallService(lambda: Stuck(), timeouts=Timeouts(call=0.3))
    started = time.monotonic()
    result = call(build_server(slow, lambda: "maya"), "recall", {"question": TRIP})
    assert time.monotonic() - started < 2
    assert result.is_error and "timed out after 0.3 s (the `timeout` setting)" in result.content[0].text


def without_progress_setting() -> dict[str, str]:
    """The test's environment (offline, this checkout's package) less what the CLI must set itself."""
    return {key: value for key, value in os.environ.items() if key != "HF_HUB_DISABLE_PROGRESS_BARS"}


def printed_config(*flags: str) -> dict:
    """`memgraph-recall mcp FLAGS --print-config`, run as a user would, parsed."""
    done = subprocess.run([sys.executable, "-m", "memgraph_recall", "mcp", *flags, "--print-config"],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)["mcpServers"]["memory"]


def test_the_printed_config_launches_over_stdio_with_a_clean_path_and_answers_one_call(tmp_path):
    """A real subprocess, started as Claude Desktop starts it: the printed command and arguments, a PATH
    without the venv's bin/ (where a bare `memgraph-recall` is "command not found"), another folder."""
    entry = printed_config("--graph", "sample", "--user", "maya", "--today", "2024-05-20")
    assert Path(entry["command"]).is_absolute() and entry["args"][:3] == ["-m", "memgraph_recall", "mcp"]
    clean = {**without_progress_setting(), "PATH": "/usr/bin:/bin"}
    assert shutil.which("memgraph-recall", path=clean["PATH"]) is None
    params = StdioServerParameters(command=entry["command"], args=entry["args"], cwd=tmp_path, env=clean)

    async def go(errors):
        with anyio.fail_after(120):
            async with Client(stdio_client(params, errlog=errors), mode="legacy") as client:
                return client.instructions, await client.call_tool("recall", {"question": TRIP})

    with open(tmp_path / "stderr.txt", "w") as errors:  # the server's stderr (model loading), kept apart
        instructions, result = anyio.run(go, errors)
    assert instructions == INSTRUCTIONS
    assert not result.is_error and "TURN [session maya-s2" in result.content[0].text
    assert "Loading weights" not in (tmp_path / "stderr.txt").read_text()  # the CLI turns the bar off
    assert all(s.startswith("maya-") for s in sessions(result.content[0].text))


def test_the_printed_config_names_files_by_absolute_path(tmp_path, monkeypatch):
    (tmp_path / "memory.json").write_text("[]")
    monkeypatch.chdir(tmp_path)
    entry = printed_config("--graph", "memory.json", "--user", "maya")
    assert entry["args"][3:] == ["--graph", str(tmp_path / "memory.json"), "--user", "maya"]


def test_a_user_the_memory_does_not_have_is_refused_at_start_with_a_near_miss(sample_graph_file, capsys):
    from memgraph_recall.cli import main

    assert main(["mcp", "--graph", "sample", "--user", "Maya"]) == 2
    assert "--user: no user 'Maya' in the bundled sample: did you mean 'maya'?" in capsys.readouterr().err
    assert main(["mcp", "--graph", str(sample_graph_file), "--user", "nobody"]) == 2
    assert "--user: no user 'nobody' in embedded runtime over" in capsys.readouterr().err


def test_the_http_server_prints_where_it_listens(token_file, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "memgraph_recall", "mcp", "--graph", "sample", "--http",
                               f"127.0.0.1:{port}", "--tokens", str(token_file)], stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path, env=without_progress_setting())
    try:
        line = server.stderr.readline()
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert f"serving MCP at http://127.0.0.1:{port}/mcp" in line and str(token_file) in line


# -- streamable HTTP ----------------------------------------------------------------------------------
class HttpServer:
    """The HTTP app under uvicorn in a thread, on 127.0.0.1 and a port the OS picked."""

    def __init__(self, app) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}/mcp"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the HTTP server did not start within 10 s"
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()


@pytest.fixture
def token_file(tmp_path) -> Path:
    path = tmp_path / "tokens"
    path.write_text(f"# hashes of bearer tokens\n{token_hash(MAYA_TOKEN)} maya\n"
                    f"{token_hash(TOM_TOKEN)} tom\n")
    return path


@pytest.fixture
def http(service, token_file):
    server = HttpServer(http_app(service, HttpOptions("127.0.0.1", 0, token_file)))
    yield server
    server.stop()


def post(url: str, body: dict, token: str | None = None, session: str | None = None, **headers: str):
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": PROTOCOL, **headers}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if session is not None:
        headers["Mcp-Session-Id"] = session
    return httpx2.post(url, json=body, headers=headers, timeout=30)


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                         "clientInfo": {"name": "test", "version": "0"}}}


def tool_call(question: str, request_id: int = 2) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "recall", "arguments": {"question": question}}}


def http_recall(url: str, token: str, question: str, mode: str = "legacy"):
    """One `recall` through the SDK's client: "legacy" is the initialize handshake with a session,
    "auto" negotiates the newest protocol the SDK speaks."""
    async def go():
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http_client:
            transport = streamable_http_client(url, http_client=http_client)
            with anyio.fail_after(60):
                async with Client(transport, mode=mode) as client:
                    return await client.call_tool("recall", {"question": question})

    return anyio.run(go)


def test_http_refuses_a_request_without_a_token_or_with_a_wrong_one(http):
    assert post(http.url, INITIALIZE).status_code == 401
    assert post(http.url, INITIALIZE, token="not-a-token").status_code == 401
    assert post(http.url, INITIALIZE, token=MAYA_TOKEN + "x").status_code == 401


def test_http_recalls_for_the_tokens_user_only(http):
    maya = http_recall(http.url, MAYA_TOKEN, TOM_ONLY)
    assert not maya.is_error and maya.structured_content is None
    assert not any(word in rows(maya.content[0].text) for word in TOM_WORDS)
    assert all(s.startswith("maya-") for s in sessions(maya.content[0].text))
    tom = http_recall(http.url, TOM_TOKEN, TOM_ONLY, mode="auto")
    assert "Rotterdam marathon" in rows(tom.content[0].text)
    assert sessions(tom.content[0].text) and all(s.startswith("tom-") for s in sessions(tom.content[0].text))


def test_a_session_opened_with_one_users_token_is_refused_with_anothers(http):
    opened = post(http.url, INITIALIZE, token=MAYA_TOKEN)
    assert opened.status_code == 200
    session = opened.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(http.url, initialized, token=MAYA_TOKEN, session=session).status_code == 202
    foreign = post(http.url, tool_call(TRIP), token=TOM_TOKEN, session=session)
    assert foreign.status_code == 404 and "Lisbon" not in foreign.text
    own = post(http.url, tool_call(TRIP), token=MAYA_TOKEN, session=session)
    assert own.status_code == 200 and "TURN [session maya-s2" in own.text


def test_the_token_file_is_read_again_when_it_changes(http, token_file):
    newcomer = "priya-token-" + "c" * 32
    assert post(http.url, INITIALIZE, token=newcomer).status_code == 401
    token_file.write_text(token_file.read_text() + f"{token_hash(newcomer)} priya\n")
    assert post(http.url, INITIALIZE, token=newcomer).status_code == 200
    token_file.write_text(f"{token_hash(newcomer)} priya\n")  # maya's token revoked
    assert post(http.url, INITIALIZE, token=MAYA_TOKEN).status_code == 401
    token_file.write_text("this line is not a token hash\n")  # malformed: every token refused
    assert post(http.url, INITIALIZE, token=newcomer).status_code == 401


def test_a_foreign_host_header_is_refused(http):
    response = post(http.url, INITIALIZE, token=MAYA_TOKEN, Host="attacker.example:80")
    assert response.status_code == 421


def test_off_loopback_the_allowed_hosts_must_be_configured(token_file):
    with pytest.raises(ValueError, match="serving beyond loopback needs the Host values"):
        HttpOptions("0.0.0.0", 8765, token_file).security()
    settings = HttpOptions("0.0.0.0", 8765, token_file, ("recall.example.com:8765",)).security()
    assert settings.enable_dns_rebinding_protection and settings.allowed_hosts == ["recall.example.com:8765"]
    assert HttpOptions("::1", 8765, token_file).security().allowed_hosts[:1] == ["127.0.0.1:*"]


def test_listen_addresses():
    assert parse_listen("8765") == ("127.0.0.1", 8765)
    assert parse_listen("0.0.0.0:9000") == ("0.0.0.0", 9000)
    assert parse_listen("[::1]:9000") == ("::1", 9000)
    with pytest.raises(ValueError, match="--http: expected HOST:PORT"):
        parse_listen("localhost:http")


def test_bad_token_files_are_refused_by_line(tmp_path):
    from memgraph_recall.integrations.mcp_tokens import TokenFile

    path = tmp_path / "tokens"
    for text, message in [("abc maya\n", "line 1: expected '<sha256 hex of a token> <user_id>'"),
                          (f"# c\n{token_hash('t')} maya\n{token_hash('t')} tom\n",
                           "line 3: this token is already mapped to another user")]:
        path.write_text(text)
        with pytest.raises(ValueError, match=message) as caught:
            TokenFile(path)
        assert token_hash("t") not in str(caught.value)
    with pytest.raises(ValueError, match="token file .*missing: no such file"):
        TokenFile(tmp_path / "missing")


# -- the `mcp` command's refusals: each before anything is served --------------------------------------
@pytest.mark.parametrize(("argv", "message"), [
    (["mcp", "--graph", "sample"], "mcp: --user (or [mcp] user) is required on stdio"),
    (["mcp", "--http", "127.0.0.1:8765"], "--http: needs --tokens FILE"),
    (["mcp", "--http", "8765", "--tokens", "t", "--user", "maya"], "--user: not used with --http"),
    (["mcp", "--bolt", "bolt://ann:secret@db:7687", "--user", "maya"],
     "--bolt: put credentials in the config file ([client] bolt) or $MEMGRAPH_RECALL_USERNAME"),
    (["mcp", "--http", "0.0.0.0:8765", "--tokens", "TOKENS"],
     "serving beyond loopback needs the Host values"),
    (["mcp", "--http", "127.0.0.1:8765", "--tokens", "MISSING"], "token file MISSING: no such file"),
    (["mcp", "--http", "localhost:port", "--tokens", "TOKENS"], "--http: expected HOST:PORT"),
])
def test_the_mcp_command_refuses_what_it_cannot_serve_safely(argv, message, token_file, tmp_path, capsys,
                                                            monkeypatch):
    from memgraph_recall.cli import EXIT_USAGE, main

    monkeypatch.chdir(tmp_path)
    argv = [str(token_file) if arg == "TOKENS" else arg for arg in argv]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "secret" not in err[0]


def test_bolt_credentials_come_from_the_environment_when_the_url_has_none(monkeypatch):
    from memgraph_recall.cli import build_parser, open_client

    monkeypatch.setenv("MEMGRAPH_RECALL_USERNAME", "recall")
    monkeypatch.setenv("MEMGRAPH_RECALL_PASSWORD", "s3cret")
    address = open_client(build_parser().parse_args(["mcp", "--bolt", "bolt://db:7688", "--user", "maya"]))
    assert (address.backend.address.username, address.backend.address.password) == ("recall", "s3cret")
    own = open_client(build_parser().parse_args(["status", "--bolt", "bolt://ann:pw@db:7688"]))
    assert (own.backend.address.username, own.backend.address.password) == ("ann", "pw")
