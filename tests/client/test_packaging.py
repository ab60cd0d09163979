"""The agent integrations are optional: the base install and the CLI never need `mcp` or LangChain."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_extras_are_declared_and_dev_includes_them():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    assert "mcp" not in base and "langchain" not in base
    assert any(requirement.startswith("mcp>=2.3") for requirement in extras["mcp"])
    assert any(requirement.startswith("langchain-core>=1.8") for requirement in extras["langchain"])
    assert "memgraph-recall[embedded,mcp,langchain]" in extras["dev"]


def test_importing_the_client_and_the_cli_loads_neither_integration():
    code = ("import sys, memgraph_recall.client, memgraph_recall.cli; "
            "print(sorted(m for m in ('mcp', 'langchain_core', 'uvicorn') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            timeout=60)
    assert loaded.stdout.strip() == "[]"
