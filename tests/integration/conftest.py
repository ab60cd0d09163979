"""Build Dockerfile.mage and run it with testcontainers; skip, with one reason, where Docker is absent.

The image is built with the packaged test model baked in (build arg RECALL_MODELS) and made the
default, so its answers can be compared with the embedded runtime's on the same graph.
"""

import json
import time
from pathlib import Path

import pytest
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets import sample
from memgraph_recall.errors import RecallError
from memgraph_recall.locate import PACKAGED_MODEL

ROOT = Path(__file__).resolve().parents[2]
PROCEDURES = ["recall.embed", "recall.invalidate", "recall.lanes", "recall.render", "recall.status"]
BUILD_ARGS = {
    "RECALL_MODELS": json.dumps({PACKAGED_MODEL: "/home/memgraph/models/all-MiniLM-L6-v2"}),
    "RECALL_DEFAULT_MODEL": PACKAGED_MODEL,
}
STARTUP_SECONDS = 300


def docker_unavailable() -> str | None:
    """Why no Docker engine can be used here, or None when one answers."""
    try:
        import docker

        docker.from_env().ping()
    except Exception as exc:  # any failure to reach an engine means: skip
        return type(exc).__name__
    return None


def wait_for_recall(host: str, port: int, container) -> None:
    """Poll until Bolt answers and every recall.* procedure is registered, or fail with the log."""
    deadline = time.monotonic() + STARTUP_SECONDS
    last = "no answer yet"
    while time.monotonic() < deadline:
        try:
            with RecallClient.connect(host, port) as client:
                if client.procedures() == PROCEDURES:
                    return
                last = f"procedures: {client.procedures()}"
        except RecallError as exc:
            last = str(exc)
        time.sleep(2)
    stdout, stderr = container.get_logs()
    pytest.fail(f"memgraph-recall image not ready after {STARTUP_SECONDS} s ({last}); log:\n"
                f"{(stdout + stderr).decode(errors='replace')[-4000:]}")


@pytest.fixture(scope="session")
def server():
    """(host, port) of a running memgraph-recall container holding the embedded sample graph."""
    reason = docker_unavailable()
    if reason is not None:
        pytest.skip(f"no Docker engine reachable (docker.from_env().ping() raised {reason}): these tests "
                    "build and run Dockerfile.mage with testcontainers")
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.image import DockerImage

    with DockerImage(path=ROOT, dockerfile_path="Dockerfile.mage", tag="memgraph-recall:integration",
                     buildargs=BUILD_ARGS) as image:
        with DockerContainer(str(image)).with_exposed_ports(7687) as container:
            host, port = container.get_container_host_ip(), int(container.get_exposed_port(7687))
            wait_for_recall(host, port, container)
            yield host, port


@pytest.fixture(scope="session")
def bolt_loaded(server):
    """A client of the container with the sample loaded over Bolt, and what recall.embed did to it."""
    from memgraph_recall.bolt_io import load_elements

    host, port = server
    client = RecallClient.connect(host, port)
    load_elements(client.backend, sample.elements())
    yield client, client.embed()
    client.close()


@pytest.fixture(scope="session")
def bolt(bolt_loaded):
    return bolt_loaded[0]


@pytest.fixture(scope="session")
def embedded_loaded():
    """The same sample in the embedded runtime, embedded the same way."""
    client = RecallClient.embedded(sample.elements())
    return client, client.embed()


@pytest.fixture(scope="session")
def embedded(embedded_loaded):
    return embedded_loaded[0]
