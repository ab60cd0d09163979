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


def test_every_base_dependency_is_imported_by_the_package():
    """A base dependency nothing imports is weight every Bolt-only user pays (gqlalchemy was 280 MB)."""
    import re

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [re.split(r"[<>=\[ ]", requirement)[0] for requirement in project["dependencies"]]
    source = "\n".join(path.read_text() for path in (ROOT / "client" / "memgraph_recall").rglob("*.py"))
    unused = [name for name in names if not re.search(rf"^\s*(from|import) {name}\b", source, re.M)]
    assert unused == [] and "gqlalchemy" not in names


def test_importing_the_client_and_the_cli_loads_neither_integration():
    code = ("import sys, memgraph_recall.client, memgraph_recall.cli; "
            "print(sorted(m for m in ('mcp', 'langchain_core', 'uvicorn') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            timeout=60)
    assert loaded.stdout.strip() == "[]"


def package_imports() -> dict[str, set[str]]:
    """Each module of memgraph_recall -> the package modules it imports, at top level or in a function."""
    import ast

    package = ROOT / "client" / "memgraph_recall"
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        graph[name] = {module for module in found if module in modules and module != name}
    return graph


def test_no_two_modules_of_the_package_import_each_other():
    """Not even inside functions: `cli` and the MCP server share the table printer through `table`."""
    graph = package_imports()
    cycles = []

    def walk(module: str, path: list[str]) -> None:
        for imported in graph[module]:
            if imported == path[0]:
                cycles.append(" -> ".join([*path, imported]))
            elif imported not in path and imported > path[0]:  # each cycle once, from its smallest module
                walk(imported, [*path, imported])

    for start in graph:
        walk(start, [start])
    assert cycles == []
    assert "memgraph_recall.table" in graph["memgraph_recall.integrations.mcp_server"]


def test_every_install_hint_names_this_checkout_and_an_extra_it_declares():
    from memgraph_recall.locate import checkout_root, install_hint

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert checkout_root() == ROOT
    for extra in ("embedded", "mcp", "langchain"):
        assert extra in extras
        assert f"pip install -e '{ROOT}[{extra}]'" in install_hint(extra)
    assert install_hint("embedded").startswith("pip install torch==2.13.0, then ")
    sources = (ROOT / "client" / "memgraph_recall").rglob("*.py")
    assert not [path for path in sources if "memgraph-recall[" in path.read_text()]  # not on a registry


def test_the_compose_files_settings_are_the_documented_ones_with_their_meaning():
    """Each RECALL_* the compose file sets is in the reference's table; the cache limit is the total."""
    import re

    compose = (ROOT / "docker-compose.yml").read_text()
    reference = (ROOT / "docs" / "reference.md").read_text()
    settings = re.findall(r"^\s+(RECALL_[A-Z_]+):", compose, re.M)
    assert settings and all(f"| `{name}` |" in reference for name in settings)
    comment = compose.split("RECALL_CACHE_BYTES")[0].rsplit("environment:", 1)[1]
    assert "per-user" not in comment.lower() and "together" in comment
