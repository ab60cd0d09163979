"""A loopback server that speaks just enough Bolt 4.4 for the `neo4j` driver, with scripted answers.

No Memgraph binary exists here, so the Bolt backend's failure paths (a server that accepts and
never answers, one that stops mid-call, Memgraph's error messages, an answer lost after a write)
are driven through the real driver against this server. `answer(query, parameters)` decides each
RUN: rows, a FAILURE with Memgraph's code and message, silence, or a hang-up. Written here rather
than taken from the driver's private PackStream classes, which are not an API.

For `neo4j://` URLs the driver first sends ROUTE (0x66: routing context, bookmarks, and an extra
map that carries `db` only when one was asked for). A server given a table by `route_to` answers
it the way a Memgraph coordinator does (`SUCCESS {rt: {ttl, db, servers}}`, `db` the database asked
for or null, src/glue/SessionHL.cpp); one without a table answers ROUTE with a FAILURE. Every RUN is
kept with its extra map (`runs`): `mode: "r"` marks a read, no `mode` a write (Bolt 4.x).
"""

import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

SERVER_AGENT = "Neo4j/v5.11.0 compatible graph database server - Memgraph"  # what Memgraph announces
SUCCESS, RECORD, IGNORED, FAILURE = 0x70, 0x71, 0x7E, 0x7F
RUN, PULL, DISCARD, RESET, GOODBYE, HELLO, ROUTE = 0x10, 0x3F, 0x2F, 0x0F, 0x02, 0x01, 0x66
TRANSIENT = "Memgraph.TransientError.MemgraphError.MemgraphError"
CLIENT_ERROR = "Memgraph.ClientError.MemgraphError.MemgraphError"
NO_ROUTING = "fake_bolt: this server has no routing table (not a coordinator)"


@dataclass(frozen=True)
class Rows:
    fields: tuple[str, ...]
    rows: list[list[Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Failure:
    message: str
    code: str = CLIENT_ERROR


@dataclass(frozen=True)
class Silence:
    """Read the request, never answer (a stuck server)."""


@dataclass(frozen=True)
class HangUp:
    """Take the request (as if committed), then close the connection before answering."""


@dataclass(frozen=True)
class Run:
    """One RUN as received: `extra` holds `mode`, `tx_timeout`, `db` as the driver sent them."""

    query: str
    parameters: dict
    extra: dict

    @property
    def mode(self) -> str:
        return self.extra.get("mode", "w")


@dataclass(frozen=True)
class Node:
    id: int
    labels: tuple[str, ...]
    properties: dict


Answer = Rows | Failure | Silence | HangUp


def pack(value: Any) -> bytes:
    if value is None:
        return b"\xc0"
    if value is True or value is False:
        return b"\xc3" if value else b"\xc2"
    if isinstance(value, int):
        if -16 <= value < 128:
            return struct.pack(">b", value)
        return b"\xcb" + struct.pack(">q", value)
    if isinstance(value, float):
        return b"\xc1" + struct.pack(">d", value)
    if isinstance(value, str):
        data = value.encode()
        return _sized(len(data), 0x80, b"\xd0", b"\xd1", b"\xd2") + data
    if isinstance(value, (list, tuple)):
        return _sized(len(value), 0x90, b"\xd4", b"\xd5", b"\xd6") + b"".join(map(pack, value))
    if isinstance(value, dict):
        return _sized(len(value), 0xA0, b"\xd8", b"\xd9", b"\xda") + b"".join(
            pack(key) + pack(item) for key, item in value.items())
    if isinstance(value, date):
        return b"\xb1D" + pack((value - date(1970, 1, 1)).days)
    if isinstance(value, Node):
        return b"\xb3N" + pack(value.id) + pack(list(value.labels)) + pack(value.properties)
    raise TypeError(f"fake_bolt cannot pack {type(value).__name__}")


def _sized(size: int, tiny: int, *markers: bytes) -> bytes:
    if size < 16:
        return bytes([tiny | size])
    for marker, fmt in zip(markers, (">B", ">H", ">I"), strict=True):
        if size < 1 << (8 * struct.calcsize(fmt)):
            return marker + struct.pack(fmt, size)
    raise ValueError(size)


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        part = self.data[self.at:self.at + n]
        self.at += n
        return part

    def value(self) -> Any:
        marker = self.take(1)[0]
        if marker < 0x80 or marker >= 0xF0:
            return struct.unpack(">b", bytes([marker]))[0]
        high, low = marker & 0xF0, marker & 0x0F
        sized = {0x80: "str", 0x90: "list", 0xA0: "map", 0xB0: "struct"}
        if high in sized:
            return self.sized(sized[high], low)
        fixed = {0xC0: None, 0xC2: False, 0xC3: True}
        if marker in fixed:
            return fixed[marker]
        if marker == 0xC1:
            return struct.unpack(">d", self.take(8))[0]
        ints = {0xC8: ">b", 0xC9: ">h", 0xCA: ">i", 0xCB: ">q"}
        if marker in ints:
            fmt = ints[marker]
            return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
        lengths = {0xD0: ("str", ">B"), 0xD1: ("str", ">H"), 0xD2: ("str", ">I"), 0xD4: ("list", ">B"),
                   0xD5: ("list", ">H"), 0xD6: ("list", ">I"), 0xD8: ("map", ">B"), 0xD9: ("map", ">H"),
                   0xDA: ("map", ">I"), 0xCC: ("bytes", ">B"), 0xCD: ("bytes", ">H"), 0xCE: ("bytes", ">I")}
        kind, fmt = lengths[marker]
        return self.sized(kind, struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0])

    def sized(self, kind: str, size: int) -> Any:
        if kind in ("str", "bytes"):
            data = self.take(size)
            return data.decode() if kind == "str" else data
        if kind == "list":
            return [self.value() for _ in range(size)]
        if kind == "map":
            return {self.value(): self.value() for _ in range(size)}
        return (self.take(1)[0], [self.value() for _ in range(size)])  # struct: (tag, fields)


class FakeBolt:
    """Listens on 127.0.0.1; `handshake=False` accepts connections and never says a byte."""

    def __init__(self, answer: Callable[[str, dict], Answer] | None = None, handshake: bool = True) -> None:
        self.answer = answer or (lambda query, parameters: Rows(()))
        self.handshake = handshake
        self.runs: list[Run] = []
        self.routes: list[list] = []  # each ROUTE's fields: routing context, bookmarks, extra
        self.routing_table: dict | None = None
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.url = f"bolt://{self.address}"
        self._connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def queries(self) -> list[tuple[str, dict]]:
        return [(run.query, run.parameters) for run in self.runs]

    def route_to(self, readers: "list[FakeBolt | str]", writers: "list[FakeBolt | str]",
                 routers: "list[FakeBolt | str] | None" = None, ttl: int = 300) -> str:
        """Act as a router (a coordinator) handing out this table; returns this server's neo4j:// URL.

        Servers are FakeBolts or "host:port" text (e.g. a port nothing listens on); routers default to
        this server alone. Memgraph's coordinators announce a TTL of 300 s.
        """

        def addresses(servers: "list[FakeBolt | str]") -> list[str]:
            return [server if isinstance(server, str) else server.address for server in servers]

        self.routing_table = {"ttl": ttl, "servers": [
            {"addresses": addresses(routers or [self]), "role": "ROUTE"},
            {"addresses": addresses(readers), "role": "READ"},
            {"addresses": addresses(writers), "role": "WRITE"},
        ]}
        return f"neo4j://{self.address}"

    def close(self) -> None:
        self._server.close()
        for connection in self._connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            connection.close()

    def __enter__(self) -> "FakeBolt":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            self._connections.append(connection)
            if self.handshake:
                threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        try:
            self._exchange(connection)
        except (OSError, IndexError, struct.error):
            pass  # the client went away, or the test closed the server

    def _exchange(self, connection: socket.socket) -> None:
        _receive(connection, 20)  # magic + four version proposals
        connection.sendall(bytes([0, 0, 4, 4]))  # Bolt 4.4
        failed = False
        while True:
            tag, fields = self._message(connection)
            if tag == HELLO:
                self._send(connection, SUCCESS, {"server": SERVER_AGENT, "connection_id": "bolt-1"})
            elif tag == GOODBYE:
                return
            elif tag == RESET:
                failed = False
                self._send(connection, SUCCESS, {})
            elif tag in (PULL, DISCARD) and failed:
                self._send(connection, IGNORED)
            elif tag == ROUTE:
                self.routes.append(fields)
                if self.routing_table is None:
                    failed = True
                    self._send(connection, FAILURE, {"code": CLIENT_ERROR, "message": NO_ROUTING})
                else:
                    asked = fields[2].get("db") if isinstance(fields[2], dict) else None
                    self._send(connection, SUCCESS, {"rt": {**self.routing_table, "db": asked}})
            elif tag == RUN:
                query, parameters = fields[0], fields[1]
                self.runs.append(Run(query, parameters, fields[2]))
                answer = self.answer(query, parameters)
                if isinstance(answer, Silence):
                    while connection.recv(65536):  # until the client hangs up
                        pass
                    return
                if isinstance(answer, HangUp):
                    connection.close()
                    return
                if isinstance(answer, Failure):
                    failed = True
                    self._send(connection, FAILURE, {"code": answer.code, "message": answer.message})
                    continue
                self._send(connection, SUCCESS, {"fields": list(answer.fields), "t_first": 0})
                pull_tag, _ = self._message(connection)
                if pull_tag == PULL:
                    for row in answer.rows:
                        self._send(connection, RECORD, row)
                self._send(connection, SUCCESS, {"t_last": 0})
            else:
                self._send(connection, SUCCESS, {})

    def _message(self, connection: socket.socket) -> tuple[int, list]:
        data = b""
        while True:
            size = struct.unpack(">H", _receive(connection, 2))[0]
            if size == 0:
                if data:
                    break
                continue  # a NOOP keep-alive chunk
            data += _receive(connection, size)
        tag, fields = Reader(data).value()
        return tag, fields

    @staticmethod
    def _send(connection: socket.socket, tag: int, *fields: Any) -> None:
        body = bytes([0xB0 | len(fields), tag]) + b"".join(pack(f) for f in fields)
        chunks = (body[at:at + 0xFFFF] for at in range(0, len(body), 0xFFFF))
        connection.sendall(b"".join(struct.pack(">H", len(chunk)) + chunk for chunk in chunks) + b"\x00\x00")


def _receive(connection: socket.socket, size: int) -> bytes:
    """Exactly `size` bytes; an empty read means the peer closed (OSError ends the exchange)."""
    data = b""
    while len(data) < size:
        part = connection.recv(size - len(data))
        if not part:
            raise OSError("peer closed")
        data += part
    return data
