"""Public benchmark data for the tests that need it, found through one setting.

`memgraph_recall.datasets.data_folder()`: `$MEMGRAPH_RECALL_DATA`, else `shared/data` beside the
checkout. Without the data such a test is skipped with a line saying where to get it. Nothing of the
data is copied into the project.
"""

import functools

import pytest
from memgraph_recall.datasets.locomo import find_conversation
from memgraph_recall.datasets.public import dataset_folder, missing


@functools.cache
def _conversation(name: str) -> dict | None:
    return find_conversation(dataset_folder("locomo"), name)


def locomo_conversation(name: str) -> dict:
    """LoCoMo conversation `name` (e.g. `conv-26`), from its own file or from `locomo10.json`."""
    found = _conversation(name)
    if found is None:
        pytest.skip(missing("locomo"))
    return found
