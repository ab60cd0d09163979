"""The Bolt client without a server: a clear connection error naming host and port."""

import socket

import pytest
from memgraph_recall.client import RecallClient
from memgraph_recall.errors import RecallConnectionError


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_server_names_host_and_port():
    port = free_port()
    client = RecallClient.connect("127.0.0.1", port)
    with pytest.raises(RecallConnectionError, match=f"cannot reach Memgraph at 127.0.0.1:{port}"):
        client.render("maya", "anything")
