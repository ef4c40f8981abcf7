"""Benchmark of an MCP tool call through Gatehouse against the same call made directly.

The payroll example's stdio server (``../shared/reference/examples/payroll/server.py``),
``pull_roster`` 500 times each way, one call of each in turn, after 20 warm-up calls:

* **direct**: the official ``mcp`` client's ``ClientSession.call_tool`` awaited in a loop;
* **through Gatehouse**: the registry's tool function (``McpToolCall``: the session held by
  ``McpConnections`` on its own loop thread, the call handed over from the caller's thread,
  the whole ``CallToolResult`` recorded as JSON and its size checked), as the engine calls it.

Prints the median and p95 of each (ms) and the ratio. Target: through Gatehouse ≤ 1.5 × direct
+ 2 ms. Run it with ``make bench`` (or ``python tests/benchmarks/mcp_tools.py``).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from editor.engine.ports import ToolContext, ToolSpec  # noqa: E402
from editor.tools.mcp import McpConnections, list_servers, read_catalogue  # noqa: E402

CALLS = 500
WARM_UP = 20
SERVER = next(
    (
        folder / "shared/reference/examples/payroll/server.py"
        for folder in ROOT.parents
        if (folder / "shared/reference/examples/payroll/server.py").exists()
    ),
    None,
)
ARGUMENTS = {"pay_period": "2025-11-B"}


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95) - 1] * 1000


async def measure(tool: ToolSpec) -> tuple[list[float], list[float]]:
    """Both ways, one call of each in turn, so that a busy machine slows both alike. The direct
    session is this coroutine's; Gatehouse's call blocks it, as the engine's thread blocks."""
    parameters = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    context = ToolContext("bench", "pull_roster", "key", 30.0)
    theirs, ours = [], []
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for index in range(WARM_UP + CALLS):
            started = time.perf_counter()
            await session.call_tool("pull_roster", ARGUMENTS)
            middle = time.perf_counter()
            tool.func(ARGUMENTS, context)
            ended = time.perf_counter()
            if index >= WARM_UP:
                theirs.append(middle - started)
                ours.append(ended - middle)
    return theirs, ours


def measured(folder: Path) -> tuple[list[float], list[float]]:
    catalogue_file = folder / "servers.toml"
    catalogue_file.write_text(
        f'[servers.payroll]\ncommand = "{sys.executable}"\nargs = ["{SERVER}"]\n'
    )
    catalogue = read_catalogue(catalogue_file, os.environ)
    connections = McpConnections(catalogue)
    try:
        (listing,) = list_servers(catalogue, connections)
        tool = next(spec for spec in listing.tools if spec.name == "pull_roster")
        return asyncio.run(measure(tool))
    finally:
        connections.close()


def main() -> None:
    if SERVER is None:
        print("the reference's payroll example is not beside the checkout: skipped")
        return
    with tempfile.TemporaryDirectory() as folder:
        theirs, ours = measured(Path(folder))
    direct_median, direct_p95 = summary(theirs)
    ours_median, ours_p95 = summary(ours)
    print(f"MCP pull_roster, {CALLS} calls")
    print(f"  direct (mcp ClientSession):   median {direct_median:.2f} ms, p95 {direct_p95:.2f} ms")
    print(f"  through Gatehouse (registry): median {ours_median:.2f} ms, p95 {ours_p95:.2f} ms")
    for name, ours, theirs in (
        ("median", ours_median, direct_median),
        ("p95", ours_p95, direct_p95),
    ):
        target = 1.5 * theirs + 2
        verdict = "within" if ours <= target else "OVER"
        print(f"  {name}: {ours / theirs:.2f}x; target {target:.2f} ms: {verdict}")


if __name__ == "__main__":
    main()
