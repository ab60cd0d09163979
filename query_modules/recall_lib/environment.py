"""Numbers read from the environment of the database process: one rule for every `RECALL_*` setting.

A value that is not a number, or below its minimum, or infinite, is reported (the caller shows the
problems in `recall.status`) and the default is used: a typo must not stop the module from loading.
"""

from collections.abc import Mapping
from typing import Any


def env_number(
    env: Mapping[str, str], name: str, kind: type, default: Any, minimum: float, problems: list[str]
) -> Any:
    """`env[name]` as `kind` (int or float), at least `minimum`; else `default`, with a problem noted."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or not minimum <= value < float("inf"):
        expected = "an integer" if kind is int else "a number"
        problems.append(f"{name} must be {expected} >= {minimum:g}, got {raw!r}")
        return default
    return value
