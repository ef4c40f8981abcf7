"""MCP tool results that park a run (spec 08, section 5), against a real MCP server: the
result's ``_meta.salvor`` reaches the engine, which parks the run; a park on a failed call
fails it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from editor.engine.ports import ToolEffect
from editor.graph.model import ToolNode
from editor.tools.mcp import McpConnections, list_servers, read_catalogue, register_mcp_tools
from tests.integration.mcp.servers import PYTHON
from tests.unit.engine.harness import FakeClock, Harness, graph

SERVER = Path(__file__).with_name("parking_server.py")
START = datetime(2026, 9, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def connections() -> Iterator[list[McpConnections]]:
    opened: list[McpConnections] = []
    yield opened
    for connection in opened:
        connection.close()


def world(folder: Path, salvor: Any, opened: list[McpConnections]) -> Harness:
    """A harness whose registry holds the parking server's tools, answering with ``salvor``."""
    catalogue = folder / "mcp-servers.toml"
    meta = json.dumps(salvor).replace("\\", "\\\\").replace('"', '\\"')
    catalogue.write_text(
        f'[servers.parks]\ncommand = "{PYTHON}"\nargs = ["{SERVER}"]\n'
        f'env = {{ PARK_META = "{meta}" }}\n',
        encoding="utf-8",
    )
    connections = McpConnections(read_catalogue(catalogue, os.environ))
    opened.append(connections)
    h = Harness()
    h.clock = FakeClock(START)
    register_mcp_tools(h.tools, list_servers(read_catalogue(catalogue, os.environ), connections))
    park = h.tools.get("park")
    assert park is not None and park.effect is ToolEffect.WRITE  # no hint: the careful default
    return h


def test_a_signal_suspend_from_an_mcp_server_parks_the_run_and_the_resume_is_its_output(
    tmp_path: Path, connections: list[McpConnections]
) -> None:
    salvor = {"suspend": {"reason": "Waiting for the bank", "input_schema": {"type": "object"},
                          "kind": "signal"}}  # fmt: skip
    h = world(tmp_path, salvor, connections)
    run_id = h.run(graph(ToolNode("ask", "park", input={"ticket": "ticket"})), {"ticket": "T-1"})

    status = h.store.status(run_id)
    assert (status["state"], status["kind"], status["reason"]) == (
        "suspended",
        "signal",
        "Waiting for the bank",
    )
    (completed,) = h.of(run_id, "ToolCallCompleted")
    assert completed["output"]["_meta"]["salvor"] == salvor  # recorded as returned
    h.resume(run_id, {"paid": True}, by="ops")
    h.drive(run_id)
    assert h.output(run_id) == {"paid": True}


def test_a_sleep_until_from_an_mcp_server_sleeps_and_passes_the_result_on_without_it(
    tmp_path: Path, connections: list[McpConnections]
) -> None:
    h = world(tmp_path, {"sleep_until": "2026-09-01T13:00:00Z"}, connections)
    run_id = h.run(graph(ToolNode("ask", "park", input={"ticket": "ticket"})), {"ticket": "T-1"})

    assert h.store.status(run_id) == {
        "state": "sleeping",
        "wake_at": "2026-09-01T13:00:00.000000Z",
        "node": "ask",
    }
    assert h.clock is not None
    h.clock.advance(3600)
    h.drive(run_id)
    output = h.output(run_id)
    assert output["_meta"] == {"trace": "abc"}
    assert output["structuredContent"] == {"ticket": "T-1"}


def test_a_park_on_a_failed_mcp_call_fails_the_call(
    tmp_path: Path, connections: list[McpConnections]
) -> None:
    h = world(tmp_path, {"sleep_until": "2026-09-01T13:00:00Z"}, connections)
    run_id = h.run(
        graph(ToolNode("ask", "failing_park", input={"ticket": "ticket"})), {"ticket": "T"}
    )
    assert h.error(run_id) == (
        "tool node `ask` failed: `_meta.salvor` asks to park the run on a result flagged "
        "`isError`. A call that failed parks nothing: return the park on a successful result, "
        "or drop the `_meta.salvor` key and let the failure stand"
    )


def test_a_malformed_park_from_an_mcp_server_fails_the_call_naming_it(
    tmp_path: Path, connections: list[McpConnections]
) -> None:
    h = world(tmp_path, {"sleep_until": "in an hour"}, connections)
    run_id = h.run(graph(ToolNode("ask", "park", input={"ticket": "ticket"})), {"ticket": "T"})
    assert h.error(run_id).startswith(
        "tool node `ask` failed: `_meta.salvor.sleep_until` is not an RFC 3339 timestamp: "
        "`in an hour` ("
    )
