"""Build Dockerfile.mage and run it with testcontainers; skip, with one reason, where Docker is absent.

The image is built with the packaged test model baked in (build arg RECALL_MODELS) and made the
default. Both sides hold the same graph: the bundled sample, which `recall.embed` embeds with that
model on each side (for the one test of a real question), and the vector fixture
(`vector_fixture.py`), whose stored vectors and fixed query vectors let server and embedded answers be
compared row by row without either side's model numerics in the way.
"""

import json
import time
from pathlib import Path

import pytest
from memgraph_recall.client import RecallClient
from memgraph_recall.errors import RecallError
from memgraph_recall.locate import PACKAGED_MODEL
from vector_fixture import with_sample

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
                    "build and run Dockerfile.mage with testcontainers (the row comparison and the "
                    "fixture they use are tested without Docker: test_row_compare.py, "
                    "test_vector_fixture.py)")
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
    """A client of the container with the sample and the fixture loaded over Bolt, and what
    recall.embed did to them (it embeds the sample; the fixture's vectors are current)."""
    from memgraph_recall.bolt_io import load_elements

    host, port = server
    client = RecallClient.connect(host, port)
    load_elements(client.backend, with_sample())
    client.setup()  # the fast call shape's indexes and RecallMeta, as a deployment runs it once
    yield client, client.embed()
    client.close()


@pytest.fixture(scope="session")
def bolt(bolt_loaded):
    return bolt_loaded[0]


@pytest.fixture(scope="session")
def embedded_loaded():
    """The same graph in the embedded runtime, embedded the same way."""
    client = RecallClient.embedded(with_sample())
    return client, client.embed()


@pytest.fixture(scope="session")
def embedded(embedded_loaded):
    return embedded_loaded[0]
