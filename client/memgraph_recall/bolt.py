"""The Bolt backend: `recall.*` calls on a Memgraph server, every wait bounded by `Timeouts`.

Why the `neo4j` driver and not pymgclient (which gqlalchemy 1.8.0 uses): neither gqlalchemy nor
pymgclient has a connect or read timeout, and pymgclient holds the GIL while it blocks on the
socket (measured: a thread stuck in `mgclient.connect` against a server that never answers stops
every other Python thread), so no watchdog can even run beside it. The `neo4j` driver, which
Memgraph documents as a supported client, is pure Python and bounds what we need:
- opening a connection (TCP, Bolt handshake, authentication) by `connect_timeout`;
- each call on the server, by sending `timeout` as the Bolt transaction timeout (Memgraph reads
  `tx_timeout` and keeps the lower of it and its own `--query-execution-timeout-sec`);
- each call on the client, through the driver's async API under `asyncio.wait_for`: a server that
  stops answering mid-call is cut off after `connect_timeout + timeout`. Cancellation is a
  supported path of the async driver (it kills the connection instead of reusing it), unlike
  closing sockets under a sync call from another thread.

The async driver runs on one private event loop thread per backend, so `call` stays a plain
blocking function for the synchronous `RecallClient`, and concurrent callers (the MCP server's
worker threads) each get their own session from the driver's pool: no connection is shared
between threads.

Every call carries its access mode (`MODES`): recall's read procedures READ, `recall.embed` and the
package's loading and DDL queries WRITE. Over `bolt://` the one server named runs both (it only
sees `mode: "r"` on reads); over `neo4j://` the driver asks the router (a Memgraph HA coordinator)
for a routing table and sends READ calls to a reader (a REPLICA) and WRITE calls to the writer
(MAIN). Each call is an auto-commit `session.run` in a session opened with that
`default_access_mode`, not a managed transaction (`execute_read`/`execute_write`): those retry
transient errors and lost servers themselves for up to `max_transaction_retry_time` (30 s), which
would repeat `recall.embed` under the client's own backoff (`RecallClient.retry`) and spend the
`connect + call` bound on attempts the caller never hears about. Auto-commit keeps one RUN per call,
carrying its `tx_timeout`. Under routing the driver still skips a server it cannot connect to and
tries the table's next one for that mode; a call that fails once it runs is reported, not repeated.
With no database named, the driver fetches the routing table before every session (Memgraph has no
server-side routing, so the driver cannot cache the home database): one ROUTE to a coordinator per
call.
"""

import asyncio
import logging
import re
import threading
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from memgraph_recall.errors import (
    RecallConflictError,
    RecallConnectionError,
    RecallError,
    RecallTimeoutError,
    from_server_message,
)
from memgraph_recall.results import GraphElement
from memgraph_recall.shape import FAST_QUERIES
from memgraph_recall.timeouts import Timeouts

T = TypeVar("T")

# Fixed query text per procedure: arguments only ever travel as parameters.
BOLT_QUERIES = {
    "recall.render": "CALL recall.render($user, $q, $today, $config)",
    "recall.lanes": "CALL recall.lanes($user, $q, $config)",
    "recall.embed": "CALL recall.embed($config)",
    "recall.status": "CALL recall.status($config)",
    "recall.invalidate": "CALL recall.invalidate($user)",
}
SHOW_INDEXES = "SHOW INDEX INFO"
RECALL_PROCEDURES = ("CALL mg.procedures() YIELD name WHERE name STARTS WITH 'recall.' "
                     "RETURN name ORDER BY name")
#: The driver's access modes (`neo4j.READ_ACCESS`, `neo4j.WRITE_ACCESS`), kept as text so importing
#: this module does not import the driver.
READ, WRITE = "READ", "WRITE"
#: Which access mode each call runs in: under routing, READ runs on a replica and WRITE on MAIN.
MODES = {
    "recall.render": READ,
    "recall.lanes": READ,
    "recall.status": READ,
    "recall.invalidate": READ,
    "recall.embed": WRITE,
    "mg.procedures": READ,
}
DIRECT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "memgraph")
ROUTING_SCHEMES = ("neo4j", "neo4j+s", "neo4j+ssc")
SCHEMES = DIRECT_SCHEMES + ROUTING_SCHEMES
# The driver logs each connection failure it also raises; with no logging configured, Python's
# last-resort handler would print those records to stderr beside our own one-line error. A handler
# here stops only that fallback: applications that configure logging still receive the records.
logging.getLogger("neo4j").addHandler(logging.NullHandler())


@dataclass(frozen=True)
class BoltAddress:
    host: str = "localhost"
    port: int = 7687
    username: str = ""
    password: str = ""
    encrypted: bool = False
    trust_any_certificate: bool = False
    routing: bool = False

    @classmethod
    def parse(cls, url: str) -> "BoltAddress":
        """Read `bolt://[user[:password]@]host[:port]`, or `neo4j://...` for a router (HA coordinator).

        `+s` is TLS checked against the system's CAs, `+ssc` TLS to a self-signed server.
        """
        parts = urlsplit(url if "://" in url else f"bolt://{url}")
        if parts.scheme not in SCHEMES:
            raise ValueError(f"--bolt: expected a URL like bolt://host:7687 or neo4j://coordinator:7687, "
                             f"got {url!r}")
        try:
            port = parts.port or 7687
        except ValueError as exc:
            raise ValueError(f"--bolt: the port in {url!r} is not a number") from exc
        return cls(host=parts.hostname or "localhost", port=port, username=unquote(parts.username or ""),
                   password=unquote(parts.password or ""), encrypted=parts.scheme.endswith(("+s", "+ssc")),
                   trust_any_certificate=parts.scheme.endswith("+ssc"),
                   routing=parts.scheme in ROUTING_SCHEMES)

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def server(self) -> str:
        """What errors name: the server, or the router the calls go through."""
        return f"Memgraph through the router at {self.where}" if self.routing else f"Memgraph at {self.where}"


class _LoopThread:
    """A private asyncio loop in a daemon thread, started on first use, for blocking callers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name="memgraph-recall-bolt",
                                                daemon=True)
                self._thread.start()
            loop = self._loop
        future = asyncio.run_coroutine_threadsafe(coroutine, loop)
        try:
            return future.result()
        except BaseException:
            # e.g. Ctrl-C while waiting: end the call too, rather than leave it running unwatched on
            # a loop about to stop (its late failure would then print as "never retrieved")
            future.cancel()
            raise

    @property
    def started(self) -> bool:
        return self._loop is not None

    def stop(self) -> None:
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()


class BoltBackend:
    """A Memgraph server reached through the `neo4j` driver's async API, bounded by `Timeouts`."""

    def __init__(self, address: BoltAddress, call_form: str = "fast",
                 timeouts: Timeouts | None = None) -> None:
        """`call_form`: "fast" sends `render`/`lanes` in the fast call shape (`memgraph_recall.shape`),
        "string" the bare user_id."""
        self.address = address
        self.call_form = call_form
        self.timeouts = timeouts or Timeouts()
        self.description = address.server
        self._loop = _LoopThread()
        self._driver: Any = None

    def call(self, procedure: str, arguments: Mapping[str, Any]) -> list[dict]:
        fast = self.call_form == "fast" and procedure in FAST_QUERIES
        query = FAST_QUERIES[procedure] if fast else BOLT_QUERIES[procedure]
        return self.run(procedure, query, dict(arguments), MODES[procedure])

    def procedures(self) -> list[str]:
        rows = self.run("mg.procedures", RECALL_PROCEDURES, mode=MODES["mg.procedures"])
        return [row["name"] for row in rows]

    def indexes(self) -> list[dict]:
        """`SHOW INDEX INFO`: the server's indexes (rows with `index type`, `label`, `property`)."""
        return self.run("SHOW INDEX INFO", SHOW_INDEXES, mode=READ)

    def run(self, what: str, query: str, parameters: dict | None = None, mode: str = WRITE) -> list[dict]:
        """Run one of this package's fixed queries; `what` names it in errors.

        `mode` is the access mode (READ or WRITE): the package's own queries (index DDL, loads, the
        RecallMeta setup) write, so WRITE is the default; under routing it picks MAIN or a replica.
        """
        try:
            return self._loop.run(self._fetch(query, parameters or {}, mode))
        except RecallError:
            raise
        except Exception as exc:  # the driver's and asyncio's errors, classified in one place
            raise bolt_error(exc, what, self.address, self.timeouts) from exc

    async def _fetch(self, query: str, parameters: dict, mode: str) -> list[dict]:
        from neo4j import Query

        driver = self._open()

        async def fetch() -> list[dict]:
            async with driver.session(default_access_mode=mode) as session:
                result = await session.run(Query(query, timeout=self.timeouts.call), parameters)
                return [{key: plain(value) for key, value in record.items()} async for record in result]

        return await asyncio.wait_for(fetch(), self.timeouts.longest_wait)

    def _open(self) -> Any:
        """The driver, created on the loop thread at first use (it opens connections lazily)."""
        if self._driver is None:
            from neo4j import AsyncGraphDatabase, TrustAll, TrustSystemCAs

            address, connect = self.address, self.timeouts.connect
            trust = TrustAll() if address.trust_any_certificate else TrustSystemCAs()
            security = {"encrypted": True, "trusted_certificates": trust} if address.encrypted else {}
            scheme = "neo4j" if address.routing else "bolt"  # TLS is set below, not by the scheme
            self._driver = AsyncGraphDatabase.driver(
                f"{scheme}://{address.host}:{address.port}", auth=(address.username, address.password),
                connection_timeout=connect, connection_acquisition_timeout=connect,
                user_agent="memgraph-recall", **security)
        return self._driver

    def close(self) -> None:
        if self._driver is not None:
            driver, self._driver = self._driver, None
            try:
                self._loop.run(asyncio.wait_for(driver.close(), self.timeouts.connect))
            except Exception:  # closing a connection that is already gone is not worth an error  # noqa: S110
                pass
        self._loop.stop()


def plain(value: Any) -> Any:
    """A driver value as the client's plain Python values: nodes and relationships as `GraphElement`."""
    from neo4j.graph import Node, Relationship
    from neo4j.time import Date, DateTime, Duration, Time

    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (Date, DateTime, Time)):
        return value.to_native()
    if isinstance(value, Duration):
        return value.iso_format()
    if isinstance(value, Node):
        return GraphElement(id=_element_id(value), labels=tuple(sorted(value.labels)),
                            properties=plain(dict(value)))
    if isinstance(value, Relationship):
        return GraphElement(id=_element_id(value), type=value.type, properties=plain(dict(value)))
    return value


def _element_id(element: Any) -> int:
    """Memgraph's integer id, which it sends as the Bolt element id's text."""
    try:
        return int(element.element_id)
    except (TypeError, ValueError):
        return hash(element.element_id)


_SPACES = re.compile(r"\s+")


def bolt_error(exc: BaseException, what: str, address: BoltAddress, timeouts: Timeouts) -> RecallError:
    """Classify a driver or asyncio failure of `what` against `address` as one of the client's errors."""
    from neo4j.exceptions import (
        Neo4jError,
        ServiceUnavailable,
        SessionExpired,
        TransientError,
        UnsupportedServerProduct,
    )

    server, where = address.server, address.where
    if isinstance(exc, TimeoutError):  # asyncio.wait_for gave up: nothing came back in time
        return RecallTimeoutError(
            f"{what}: no answer from {server} within {timeouts.longest_wait:g} s "
            f"(timeout {timeouts.call:g} s + connect_timeout {timeouts.connect:g} s); the call was abandoned "
            "and its connection closed")
    if isinstance(exc, Neo4jError) and exc.code:  # the server's answer (the driver's own errors have no code)
        message = _SPACES.sub(" ", exc.message or str(exc)).strip()
        if ".Security." in (exc.code or ""):
            return RecallConnectionError(f"{server} refused the credentials: {message}")
        if isinstance(exc, TransientError):
            return RecallConflictError(f"{what}: {message}")
        return from_server_message(what, exc.message or str(exc))
    if isinstance(exc, UnsupportedServerProduct):
        return RecallConnectionError(f"cannot reach {server}: the server there does not speak "
                                     "Memgraph's Bolt (wrong port?)")
    if isinstance(exc, ValueError) and "resolve address" in str(exc):
        return RecallConnectionError(f"cannot reach {server}: the host name {address.host!r} "
                                     "does not resolve (check the --bolt URL)")
    if address.routing and isinstance(exc, SessionExpired) and "Failed to obtain connection" in str(exc):
        # the routing table named servers for this access mode, and none of them could be connected to
        kind = "reads" if "'READ'" in str(exc) else "writes"
        return RecallConnectionError(f"{what}: none of the servers the router at {where} names for {kind} "
                                     f"could be reached ({_reason(exc, timeouts)}); the call did not run")
    if isinstance(exc, SessionExpired) or "defunct connection" in str(exc):
        return RecallConnectionError(f"{what}: lost the connection to {server} before its answer "
                                     f"({_reason(exc, timeouts)}); the call may or may not have run")
    if address.routing and isinstance(exc, ServiceUnavailable) and "routing information" in str(exc):
        return RecallConnectionError(f"cannot reach {server}: no routing table from it "
                                     f"({_reason(exc, timeouts)}); neo4j:// needs a coordinator of a "
                                     "Memgraph HA cluster there (bolt:// reaches one server directly)")
    return RecallConnectionError(f"cannot reach {server} ({_reason(exc, timeouts)}): is the "
                                 "server running? (`docker compose up -d` starts the memgraph-recall image)")


def _reason(exc: BaseException, timeouts: Timeouts) -> str:
    """One line on why a connection failed: the OS's reason, a timeout, or the driver's first line."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, TimeoutError) or "deadline" in str(seen).lower():
            return f"no Bolt answer within connect_timeout {timeouts.connect:g} s"
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    first = str(exc).strip().splitlines()
    return first[0] if first else type(exc).__name__
