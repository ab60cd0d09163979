"""The CLI's config file: a TOML `[recall]` table passed to the procedures as their `config` map.

Lookup order: `--config FILE`, then `$MEMGRAPH_RECALL_CONFIG` when non-empty, then
`$XDG_CONFIG_HOME/memgraph-recall/config.toml` (default `~/.config/...`) when it exists. Keys are
the procedures' own config keys (lane widths, `lanes`, `embedding_model`, ...); the module checks
them, so an unknown key is reported by name whichever backend runs. Flags override the file.
"""

import os
import tomllib
from pathlib import Path
from typing import Any

CONFIG_ENV = "MEMGRAPH_RECALL_CONFIG"


def default_config_path() -> Path | None:
    """The config file used when no `--config` is given, or None when there is none."""
    from_env = os.environ.get(CONFIG_ENV, "")
    if from_env:
        return Path(from_env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    candidate = Path(base) / "memgraph-recall" / "config.toml"
    return candidate if candidate.is_file() else None


def load_recall_table(path: Path | None) -> dict[str, Any]:
    """Read the `[recall]` table of a TOML file (empty when `path` is None)."""
    if path is None:
        return {}
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ValueError(f"--config: no such file {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"--config: {path} is not valid TOML: {exc}") from exc
    table = document.get("recall", {})
    if not isinstance(table, dict):
        raise ValueError(f"--config: [recall] in {path} must be a table of config keys")
    unknown = sorted(set(document) - {"recall"})
    if unknown:
        raise ValueError(f"--config: {path} has tables {unknown}; expected only [recall]")
    return table


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
