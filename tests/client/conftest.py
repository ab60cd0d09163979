"""Shared, expensive fixtures of the client tests: one embedded sample, embedded once per session."""

import pytest
from memgraph_recall.client import RecallClient
from memgraph_recall.datasets import sample


@pytest.fixture(scope="session")
def sample_client():
    """The bundled sample in the embedded runtime, embedded with the packaged MiniLM."""
    client = RecallClient.embedded(sample.elements())
    client.embed()
    return client


@pytest.fixture(scope="session")
def sample_graph_file(sample_client, tmp_path_factory):
    """The embedded sample saved as an export_util.json file, for `--graph` CLI runs."""
    return sample_client.save_graph(tmp_path_factory.mktemp("graph") / "sample.json")

