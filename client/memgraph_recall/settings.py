"""The CLI's config file: TOML with a `[recall]` table (the procedures' `config` map) and `[client]`.

Lookup order: `--config FILE`, then `$MEMGRAPH_RECALL_CONFIG` when non-empty, then
`$XDG_CONFIG_HOME/memgraph-recall/config.toml` (default `~/.config/...`) when it exists. `[recall]`
keys are the procedures' own config keys (lane widths, `lanes`, `embedding_model`, ...); the module
checks them, so an unknown key is reported by name whichever backend runs. `[client]` has `bolt`,
the server URL used when no `--bolt`/`--graph` is given (it may carry credentials, which the
command line should not), and the `timeout`/`connect_timeout` seconds (`memgraph_recall.timeouts`).
`[mcp]` configures `memgraph-recall mcp` (`MCP_KEYS`). Flags override the file.

Every way a file can be wrong (missing, a directory, unreadable, not UTF-8, not TOML, nested past
Python's recursion limit, too large) is a `ValueError` that names the file and where its path came
from, so the CLI prints one line instead of a traceback.
"""

import os
import tomllib
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from memgraph_recall.files import READ_ERRORS, unreadable
from memgraph_recall.timeouts import seconds

CONFIG_ENV = "MEMGRAPH_RECALL_CONFIG"
CLIENT_KEYS = ("bolt", "timeout", "connect_timeout")
MCP_KEYS = {"user": str, "tokens": str, "http": str, "allowed_hosts": list, "allowed_origins": list,
            "today": date}
TABLES = ("recall", "client", "mcp")
LARGEST_FILE = 1 << 20
"""A config file is a few lines; a megabyte means a wrong path (a log, a model file)."""


@dataclass(frozen=True)
class ConfigFile:
    """What a config file says: the `[recall]` config map and the `[client]` settings."""

    recall: dict[str, Any] = field(default_factory=dict)
    bolt: str | None = None
    timeout: float | None = None
    connect_timeout: float | None = None
    mcp: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfigPath:
    """A config file's path and where that path came from (a flag, the environment, the default)."""

    path: Path
    source: str = "--config"

    def error(self, problem: str) -> ValueError:
        return ValueError(f"config file {self.path} ({self.source}): {problem}")


def default_config_path() -> ConfigPath | None:
    """The config file used when no `--config` is given, or None when there is none."""
    from_env = os.environ.get(CONFIG_ENV, "")
    if from_env:
        return ConfigPath(Path(from_env), f"${CONFIG_ENV}")
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    candidate = Path(base) / "memgraph-recall" / "config.toml"
    return ConfigPath(candidate, "the default location") if candidate.is_file() else None


def read_toml(where: ConfigPath) -> dict[str, Any]:
    """The file's TOML document, or a `ValueError` that names the file and what is wrong with it."""
    path = where.path
    try:
        size = path.stat().st_size
        if size > LARGEST_FILE and not path.is_dir():
            raise where.error(f"is {size} bytes, larger than a config file may be ({LARGEST_FILE} bytes)")
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise where.error(f"is not valid TOML: {exc}") from exc
    except READ_ERRORS as exc:
        raise where.error(unreadable(exc, "a TOML file")) from exc


def load_config(where: ConfigPath | Path | None) -> ConfigFile:
    """Read a config file (nothing when `where` is None); unknown tables or client keys are errors."""
    if where is None:
        return ConfigFile()
    if isinstance(where, Path):
        where = ConfigPath(where)
    document = read_toml(where)
    unknown = sorted(set(document) - set(TABLES))
    if unknown:
        raise where.error(f"has {unknown}; expected only the tables [recall], [client] and [mcp]")
    recall, client, mcp = (document.get(name, {}) for name in TABLES)
    if not all(isinstance(table, dict) for table in (recall, client, mcp)):
        raise where.error("[recall], [client] and [mcp] must be tables")
    bad = sorted(set(client) - set(CLIENT_KEYS))
    if bad:
        raise where.error(f"[client] has {bad}; expected only {list(CLIENT_KEYS)}")
    bolt = client.get("bolt")
    if bolt is not None and not isinstance(bolt, str):
        raise where.error(f"[client] bolt must be a URL string, got {bolt!r}")
    try:
        timeouts = {key: seconds(key, client[key]) for key in ("timeout", "connect_timeout") if key in client}
    except ValueError as exc:
        raise where.error(f"[client] {exc}") from exc
    for key, value in mcp.items():
        expected = MCP_KEYS.get(key)
        if expected is None:
            raise where.error(f"[mcp] has {key!r}; expected only {list(MCP_KEYS)}")
        fits = isinstance(value, expected)
        if not fits or (expected is list and not all(isinstance(item, str) for item in value)):
            kind = "a list of strings" if expected is list else f"a {expected.__name__}"
            raise where.error(f"[mcp] {key} must be {kind}, got {value!r}")
    return ConfigFile(recall=recall, bolt=bolt, mcp=mcp, **timeouts)


def parse_assignment(text: str) -> tuple[str, Any]:
    """Read `--set key=value`: the value as a TOML value (number, list, date, bool), else a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"--set: expected KEY=VALUE (e.g. turns_k=4), got {text!r}")
    try:
        value = tomllib.loads(f"value = {raw.strip()}")["value"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return key, value
