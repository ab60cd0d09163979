"""The CLI's config file: TOML with a `[recall]` table (the procedures' `config` map) and `[client]`.

Lookup order: `--config FILE`, then `$MEMGRAPH_RECALL_CONFIG` when non-empty, then
`$XDG_CONFIG_HOME/memgraph-recall/config.toml` (default `~/.config/...`) when it exists. `[recall]`
keys are the procedures' own config keys (lane widths, `lanes`, `embedding_model`, ...); the module
checks them, so an unknown key is reported by name whichever backend runs. `[client]` has `bolt`,
the server URL used when no `--bolt`/`--graph` is given. Flags override the file.
"""

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG_ENV = "MEMGRAPH_RECALL_CONFIG"
CLIENT_KEYS = ("bolt",)


@dataclass(frozen=True)
class ConfigFile:
    """What a config file says: the `[recall]` config map and the `[client]` settings."""

    recall: dict[str, Any] = field(default_factory=dict)
    bolt: str | None = None


def default_config_path() -> Path | None:
    """The config file used when no `--config` is given, or None when there is none."""
    from_env = os.environ.get(CONFIG_ENV, "")
    if from_env:
        return Path(from_env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    candidate = Path(base) / "memgraph-recall" / "config.toml"
    return candidate if candidate.is_file() else None


def load_config(path: Path | None) -> ConfigFile:
    """Read a config file (nothing when `path` is None); unknown tables or client keys are errors."""
    if path is None:
        return ConfigFile()
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ValueError(f"--config: no such file {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"--config: {path} is not valid TOML: {exc}") from exc
    unknown = sorted(set(document) - {"recall", "client"})
    if unknown:
        raise ValueError(f"--config: {path} has {unknown}; expected only the tables [recall] and [client]")
    recall, client = document.get("recall", {}), document.get("client", {})
    if not isinstance(recall, dict) or not isinstance(client, dict):
        raise ValueError(f"--config: [recall] and [client] in {path} must be tables")
    bad = sorted(set(client) - set(CLIENT_KEYS))
    if bad:
        raise ValueError(f"--config: [client] in {path} has {bad}; expected only {list(CLIENT_KEYS)}")
    bolt = client.get("bolt")
    if bolt is not None and not isinstance(bolt, str):
        raise ValueError(f"--config: [client] bolt in {path} must be a URL string, got {bolt!r}")
    return ConfigFile(recall=recall, bolt=bolt)


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
