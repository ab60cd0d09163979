"""`memgraph-recall mcp`: recall as an MCP server, over stdio or streamable HTTP (extra `[mcp]`).

Built on the official Python SDK (`mcp` 2.x, `mcp.server.mcpserver.MCPServer`). Two tools:
`recall` (the rendered rows as text) and `recall_status` (the doctor, for the caller's user).

Who the user is never comes from the model. On stdio it is fixed when the server starts
(`--user` or the config file). Over HTTP each request must carry a bearer token that the token file
maps to one user (`mcp_tokens`); the user is read from the token of every request, and the SDK
binds a session to the credential that opened it, so a session id presented with another user's
token is refused. Off loopback the Host (and Origin) values clients may use must be configured
(DNS-rebinding protection), else the server does not start.

Every call runs in a worker thread under the `timeout` setting (`memgraph_recall.timeouts`): past
it the tool returns a timeout error. The database-side work is bounded by the server's own query
timeout too (over Bolt the client sends `timeout` as the transaction timeout).
"""

import ipaddress
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import Field

from memgraph_recall import __version__
from memgraph_recall.client import RecallClient
from memgraph_recall.errors import RecallError, RecallNotLoaded
from memgraph_recall.integrations.mcp_tokens import TokenFile, TokenFileVerifier
from memgraph_recall.table import table
from memgraph_recall.timeouts import Timeouts

INSTRUCTIONS = (
    "This server holds the user's own memory: their earlier conversations with you, facts read from "
    "them, and notes they saved. Before you answer anything that depends on the user's past (their "
    "plans, people, preferences, dates, or what they told you before), call `recall` with the question "
    "in the user's words and answer from the rows it returns. The rows are only ever this user's own "
    "past; when they do not show the answer, say that it is not in memory rather than guessing."
)
RECALL_DESCRIPTION = """\
Search the user's own memory for what their past says about a question. Call it before answering \
anything that depends on earlier conversations: plans, people, preferences, dates, "what did I say \
about ...". Pass the question in the user's words.

Returns text: a short header on how to read the rows, then one row per line, best evidence kept:
- TURN [session, time, speaker]: a message from an earlier conversation; TURN [same session, time, \
speaker]: a later message of the session and day of the row above
- FACT: head -[RELATION @ date]-> tail -- speaker: "sentence": a fact read from an earlier message
- MEMORY [path, updated date]: a note the user saved on purpose
Relative dates inside a row ("next week") count from that row's date; relative dates in the question \
("last week") count from {today}. Every row is this user's own past, never another user's. "(nothing in \
memory matched)" means memory holds nothing relevant; "(user ... not found ...)" means memory holds \
nothing at all for this user. If the header says vector lanes are off or messages lack vectors, rows \
were found by word match only."""
STATUS_DESCRIPTION = """\
Why recall answers the way it does, for this user only: whether the recall module is loaded, the \
embedding model and whether it loads, and how many of the user's messages, entities, facts and notes \
have vectors. Call it when `recall` reports degraded mode or returns nothing unexpectedly."""
# Dates arrive as strings and are parsed by `_day`, so a bad one is a one-line tool error that names
# the argument (the SDK's own validation would answer with pydantic's multi-line report).
DAY = Field(json_schema_extra={"format": "date"}, examples=["2024-05-20"])
STATUS_SECTIONS = ("module", "model", "units", "with_vectors", "without_vectors")
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HttpOptions:
    """Where to listen and who may call: the token file, and the Host/Origin values allowed."""

    host: str
    port: int
    tokens: Path
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        """Where clients connect (an IPv6 host in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"

    def security(self) -> TransportSecuritySettings:
        """DNS-rebinding protection: loopback names on loopback, else exactly what was configured."""
        if is_loopback(self.host):
            hosts = [*LOOPBACK_HOSTS, *self.allowed_hosts]
            origins = [*LOOPBACK_ORIGINS, *self.allowed_origins]
        elif not self.allowed_hosts:
            raise ValueError(f"--http {self.host}:{self.port}: serving beyond loopback needs the Host values "
                             "clients will use (--allowed-host, e.g. recall.example.com:8080, or [mcp] "
                             "allowed_hosts), so DNS-rebinding protection can check them")
        else:
            hosts, origins = list(self.allowed_hosts), list(self.allowed_origins)
        return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                         allowed_origins=origins)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_listen(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `[::1]:PORT` or `PORT` (host 127.0.0.1)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--http: expected HOST:PORT (e.g. 127.0.0.1:8765), got {text!r}")
    return host, int(port)


class RecallService:
    """What the tools do, for a user the caller resolved: one client shared by every request.

    `open_client` runs on first use (under a lock), so a bundled sample is embedded by the first
    call, not at start-up. Calls may run in several worker threads at once: the Bolt backend gives
    each its own session, the embedded runtime takes a read lock. `today` fixes the date relative
    dates are read against (default: the server's date at each call).
    """

    def __init__(self, open_client: Callable[[], RecallClient], timeouts: Timeouts | None = None,
                 config: Mapping[str, Any] | None = None, today: date | None = None,
                 bolt: bool = False) -> None:
        self.open_client = open_client
        self.timeouts = timeouts or Timeouts()
        self.config = dict(config or {})
        self.today = today
        self.bolt = bolt
        self._client: RecallClient | None = None
        self._lock = threading.Lock()

    @property
    def bound(self) -> float:
        """Seconds a tool call may take: the call timeout, plus connecting when a server is used."""
        return self.timeouts.longest_wait if self.bolt else self.timeouts.call

    def client(self) -> RecallClient:
        with self._lock:
            if self._client is None:
                self._client = self.open_client()
            return self._client

    def recall(self, user: str, question: str, since: str | None = None, until: str | None = None) -> str:
        if not question.strip():
            raise ValueError("question: expected the question to recall memory for, got an empty string")
        window = {key: _day(key, value) for key, value in (("since", since), ("until", until)) if value}
        config = {**self.config, **window}
        recalled = self.client().render(user, question, self.today or date.today(), config)
        if recalled.user_found is False:
            return f"(user {user!r} not found: memory holds nothing for this user, so nothing to recall)"
        return recalled.text

    def check_server(self) -> None:
        """Reach the backend now and check the recall module is there (an HTTP server checks at start)."""
        client = self.client()
        if not client.procedures():
            raise RecallNotLoaded(f"no recall.* procedures on {client.backend.description}: is this the "
                                  "memgraph-recall image? (`memgraph-recall status` shows what is loaded)")

    def status(self, user: str) -> str:
        client = self.client()
        procedures = client.procedures()
        lines = [f"recall status for user {user!r} on {client.backend.description}",
                 "procedures: " + (", ".join(procedures) or "none: the recall module is not loaded")]
        if procedures:
            rows = [row for row in client.status(user) if row.get("section") in STATUS_SECTIONS]
            lines.append(table(rows))
        return "\n".join(lines)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()


def build_server(service: RecallService, user_of: Callable[[], str | None],
                 verifier: TokenFileVerifier | None = None, issuer: str = "http://127.0.0.1") -> MCPServer:
    """The MCP server with both tools; `user_of` names the caller's user for the current request."""
    auth = AuthSettings(issuer_url=issuer, resource_server_url=None) if verifier is not None else None
    server = MCPServer(name="memgraph-recall", instructions=INSTRUCTIONS, version=__version__,
                       token_verifier=verifier, auth=auth, log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    async def call(work: Callable[[str], str]) -> str:
        user = user_of()
        if user is None:
            raise ToolError("no user: this request carries no credential the server maps to a user")
        try:
            with anyio.fail_after(service.bound):
                return await anyio.to_thread.run_sync(lambda: work(user), abandon_on_cancel=True)
        except TimeoutError:
            raise ToolError(f"timed out after {service.bound:g} s (the `timeout` setting); the database "
                            "may still be working on it") from None
        except (RecallError, ValueError) as exc:
            raise ToolError(" ".join(str(exc).split())) from None

    @server.tool(name="recall", title="Recall the user's past", description=recall_description(service.today),
                 annotations=read_only, structured_output=False)
    async def recall(
        question: Annotated[str, Field(description="The question, in the user's words")],
        since: Annotated[str | None, DAY, Field(description="Only turns and facts from this day on")] = None,
        until: Annotated[str | None, DAY, Field(description="Only turns and facts up to this day")] = None,
    ) -> str:
        return await call(lambda user: service.recall(user, question, since, until))

    @server.tool(name="recall_status", title="Recall status for this user", description=STATUS_DESCRIPTION,
                 annotations=read_only, structured_output=False)
    async def recall_status() -> str:
        return await call(service.status)

    return server


def recall_description(today: date | None) -> str:
    """The `recall` tool's description, saying which date the question's relative dates count from."""
    if today is not None:
        return RECALL_DESCRIPTION.format(today=f"{today.isoformat()}, the date this server was started with")
    return RECALL_DESCRIPTION.format(today="the date of the machine this server runs on, at each call")


def _day(name: str, text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{name}: expected a date YYYY-MM-DD, got {text!r}") from None


def user_from_token() -> str | None:
    """The user the current HTTP request's bearer token maps to (set by the SDK's auth middleware)."""
    token = get_access_token()
    return token.subject if token is not None else None


def http_app(service: RecallService, options: HttpOptions) -> Any:
    """The Starlette app serving MCP at `/mcp`: bearer tokens required, Host/Origin checked."""
    verifier = TokenFileVerifier(TokenFile(options.tokens))
    server = build_server(service, user_from_token, verifier, issuer=f"http://{options.host}:{options.port}")
    return server.streamable_http_app(host=options.host, transport_security=options.security())


def client_config(arguments: list[str], name: str = "memory") -> str:
    """The `mcpServers` entry that launches `memgraph-recall <arguments>` by this interpreter's absolute
    path: MCP clients such as Claude Desktop start servers with a clean PATH, where a bare
    `memgraph-recall` (in the venv's bin/) is "command not found"."""
    import json
    import sys

    entry = {"command": sys.executable, "args": ["-m", "memgraph_recall", *arguments]}
    return json.dumps({"mcpServers": {name: entry}}, indent=2)


def serve_stdio(service: RecallService, user: str) -> None:
    """Serve until the client closes stdin; the backend is closed on the way out."""
    try:
        build_server(service, lambda: user).run("stdio")
    finally:
        service.close()


def serve_http(service: RecallService, app: Any, options: HttpOptions) -> None:
    """Serve `http_app(service, options)` until interrupted; the backend is closed on the way out."""
    import uvicorn

    try:
        uvicorn.Server(uvicorn.Config(app, host=options.host, port=options.port, log_level="warning")).run()
    finally:
        service.close()
