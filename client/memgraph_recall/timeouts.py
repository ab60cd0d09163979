"""The `timeout` setting family: how long the client waits to connect and for each call.

One pair of numbers, named the same everywhere: `timeout` (seconds one procedure call may take) and
`connect_timeout` (seconds to open a Bolt connection: TCP, the Bolt handshake and authentication).
`RecallClient`, the CLI flags `--timeout`/`--connect-timeout`, the config file's `[client]` table
and the MCP server all read them through `Timeouts`, so a value is checked, and its error worded,
in one place.
"""

import math
from dataclasses import dataclass
from typing import Any

DEFAULT_CALL = 60.0
DEFAULT_CONNECT = 10.0
LONGEST = 86_400.0
"""A day: anything longer is a typo (milliseconds given as seconds), not a wish."""


def seconds(name: str, value: Any) -> float:
    """`value` as a positive, finite number of seconds up to a day; the error names the setting."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name}: expected a number of seconds, got {value!r}")
    if not math.isfinite(value) or not 0 < value <= LONGEST:
        raise ValueError(f"{name}: expected seconds greater than 0 and at most {LONGEST:g}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Timeouts:
    """`call`: seconds per procedure call; `connect`: seconds to open a connection."""

    call: float = DEFAULT_CALL
    connect: float = DEFAULT_CONNECT

    @classmethod
    def of(cls, timeout: Any = None, connect_timeout: Any = None) -> "Timeouts":
        """Checked settings; None keeps a default (60 s per call, 10 s to connect)."""
        return cls(call=DEFAULT_CALL if timeout is None else seconds("timeout", timeout),
                   connect=DEFAULT_CONNECT if connect_timeout is None
                   else seconds("connect_timeout", connect_timeout))

    @property
    def longest_wait(self) -> float:
        """The most a call can block its caller: opening a connection, then the call itself."""
        return self.connect + self.call
