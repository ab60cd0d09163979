"""Round trip of the MCP `recall` tool over stdio: `python scripts/bench_mcp.py [--calls N]`.

Launches `memgraph-recall mcp --graph sample --user maya` as a subprocess (what Claude Desktop/Code
do), talks to it with the MCP SDK's own client, makes one call to warm it (the bundled sample is
embedded and the model loaded on first use, timed separately), then times `--calls` warm calls of
`recall` cycling over the sample's questions for maya: client send to client receive, JSON-RPC over
the pipes included. Writes results/mcp_roundtrip.md.
"""

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "mcp_roundtrip.md"
QUESTIONS = ("When is my trip to Lisbon and who am I going with?",
             "What should you keep in mind when suggesting food for me?",
             "What do I do on Tuesday evenings?")
COMMAND = ["-m", "memgraph_recall.cli", "mcp", "--graph", "sample", "--user", "maya", "--today", "2024-05-20"]


async def measure(calls: int) -> tuple[float, float, list[float]]:
    params = StdioServerParameters(command=sys.executable, args=COMMAND)
    with open(os.devnull, "w") as quiet:
        started = time.perf_counter()
        async with Client(stdio_client(params, errlog=quiet), mode="legacy") as client:
            connected = time.perf_counter() - started
            started = time.perf_counter()
            first = await client.call_tool("recall", {"question": QUESTIONS[0]})
            warm_up = time.perf_counter() - started
            assert not first.is_error, first.content
            times = []
            for number in range(calls):
                started = time.perf_counter()
                result = await client.call_tool("recall", {"question": QUESTIONS[number % len(QUESTIONS)]})
                times.append(time.perf_counter() - started)
                assert not result.is_error and "TURN [session maya-" in result.content[0].text
    return connected, warm_up, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    args = parser.parse_args()
    connected, warm_up, times = anyio.run(measure, args.calls)
    ms = sorted(t * 1000 for t in times)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    lines = [
        "# MCP `recall` round trip over stdio",
        "",
        f"Command: `python scripts/bench_mcp.py --calls {args.calls}` (Python {platform.python_version()}, "
        f"{platform.machine()}); server `memgraph-recall mcp --graph sample --user maya`, the embedded "
        "runtime with the packaged all-MiniLM-L6-v2, client the MCP SDK's own over the subprocess's pipes.",
        "",
        "| measurement | result |",
        "|---|---|",
        f"| launch + initialize handshake | {connected * 1000:.0f} ms |",
        f"| first call (embeds the sample, loads the model) | {warm_up:.1f} s |",
        f"| warm `recall` round trip, median of {len(ms)} | {statistics.median(ms):.1f} ms |",
        f"| warm `recall` round trip, p90 / min / max | {p90:.1f} / {ms[0]:.1f} / {ms[-1]:.1f} ms |",
        "",
    ]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
