"""Shared, expensive fixtures of the client tests: one embedded sample, embedded once per session."""

import importlib.util

import pytest
from memgraph_recall.datasets import sample


def embedded_runtime_available() -> bool:
    return importlib.util.find_spec("memgraph_recall.embedded.host") is not None


@pytest.fixture(scope="session")
def sample_client():
    """The bundled sample in the embedded runtime, embedded with the packaged MiniLM."""
    if not embedded_runtime_available():
        pytest.skip("the embedded runtime (memgraph_recall.embedded) has not landed yet")
    from memgraph_recall.client import RecallClient

    client = RecallClient.embedded(sample.elements())
    for name in ("recall.render", "recall.embed"):
        skip_unless_defined(client, name)
    client.embed()
    return client


def skip_unless_defined(client, procedure: str) -> None:
    """Skip only while the recall module has not defined `procedure` yet."""
    if procedure not in client.procedures():
        pytest.skip(f"the recall module does not define {procedure} yet")


@pytest.fixture
def require(sample_client):
    """`require("recall.x")`: skip this test only while the module lacks that procedure."""
    return lambda procedure: skip_unless_defined(sample_client, procedure)


@pytest.fixture(scope="session")
def sample_graph_file(sample_client, tmp_path_factory):
    """The embedded sample saved as an export_util.json file, for `--graph` CLI runs."""
    return sample_client.save_graph(tmp_path_factory.mktemp("graph") / "sample.json")
