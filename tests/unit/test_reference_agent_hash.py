"""The reference's ``agent_def_hash`` of its own example agent files, from the files and what
their MCP servers list (``editor.graph.reference_agents``).

Each example's servers are run here (``tools/list`` over stdio, as the reference's client asks),
and the hashes computed must be exactly those the example's graphs name: the only expected
values are the graphs' own ``agent_hash`` fields."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from editor.graph.agent_files import read_agent_toml
from editor.graph.reference_agents import (
    ListedTool,
    listed_tool,
    read_mcp_servers,
    reference_agent_def_hash,
    reference_definition,
    tool_descriptor,
    tool_effect,
    uses_reference_identity,
)
from tests.reference_examples import EXAMPLES, REFERENCE, needs_examples

#: The examples' agent files name their servers relative to the reference's root
#: (``args = ["examples/payroll/server.py"]``).
AGENT_FILES = sorted(EXAMPLES.glob("*/agents/*.toml"))

pytestmark = needs_examples()


def listing(command: str, args: list[str]) -> list[dict[str, Any]]:
    """What the server at ``command args`` answers to ``tools/list``, after ``initialize``."""
    executable = shutil.which(command)
    assert executable is not None, f"`{command}` is not on PATH"
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "gatehouse-tests", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]  # fmt: skip
    done = subprocess.run(
        [executable, *args],
        cwd=REFERENCE,
        input="".join(json.dumps(message) + "\n" for message in messages),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    for line in done.stdout.splitlines():
        answer = json.loads(line)
        if answer.get("id") == 2:
            tools: list[dict[str, Any]] = answer["result"]["tools"]
            return tools
    raise AssertionError(f"no tools/list answer from {command} {args}: {done.stderr}")


def hash_of(path: Path) -> str:
    table = read_agent_toml(path.read_bytes())
    servers, problems = read_mcp_servers(table.get("mcp_servers"))
    assert problems == []
    descriptors = [
        tool_descriptor(listed_tool(wire), server.effect_overrides)
        for server in servers
        for wire in listing(server.command or "", list(server.args))
    ]
    return reference_agent_def_hash(table, descriptors)


def hashes_named_by_graphs(folder: Path) -> set[str]:
    def walk(value: Any) -> Iterator[str]:
        if isinstance(value, dict):
            if isinstance(value.get("agent_hash"), str):
                yield value["agent_hash"]
            for item in value.values():
                yield from walk(item)
        elif isinstance(value, list):
            for item in value:
                yield from walk(item)

    return {
        digest
        for document in folder.glob("*.json")
        for digest in walk(json.loads(document.read_text(encoding="utf-8")))
    }


@pytest.mark.parametrize(
    "folder",
    sorted({path.parent.parent for path in AGENT_FILES}),
    ids=lambda folder: folder.name,
)
def test_each_example_agent_file_hashes_to_an_agent_its_example_graph_names(
    folder: Path,
) -> None:
    named = hashes_named_by_graphs(folder)
    computed = {path.name: hash_of(path) for path in sorted(folder.glob("agents/*.toml"))}

    assert named, f"no graph in {folder.name} names an agent"
    # Every file's hash is one its graph names, and every agent the graph names is one file's.
    assert set(computed.values()) == named, computed
    assert len(set(computed.values())) == len(computed)


def test_every_example_agent_file_is_known_by_the_references_identity() -> None:
    assert all(uses_reference_identity(read_agent_toml(path.read_bytes())) for path in AGENT_FILES)


def test_the_hash_reads_the_files_effect_overrides_over_the_servers_hints() -> None:
    tool = ListedTool("pay", "Pays.", {"type": "object"}, idempotent_hint=True)
    table = {"model": "claude-x"}

    hinted = reference_agent_def_hash(table, [tool_descriptor(tool, {})])
    pinned = reference_agent_def_hash(table, [tool_descriptor(tool, {"pay": "write"})])

    assert tool_effect(tool, {}) == "idempotent"
    assert tool_effect(ListedTool("x", read_only_hint=True, idempotent_hint=True), {}) == "read"
    assert tool_effect(ListedTool("x", read_only_hint=False), {}) == "write"
    assert hinted != pinned


def test_name_llm_and_transport_fields_are_not_hashed_but_prompt_budgets_and_schema_are() -> None:
    base = {"model": "claude-x", "system_prompt": "Do it.", "budgets": {"steps": 3}}
    same = {**base, "name": "other", "llm": {"base_url_env": "X"}, "max_response_tokens": 9,
            "record_prompts": True}  # fmt: skip

    assert reference_agent_def_hash(base, []) == reference_agent_def_hash(same, [])
    for changed in (
        {**base, "system_prompt": "Do it!"},
        {**base, "budgets": {"steps": 4}},
        {**base, "output_schema": {"type": "object"}},
        {k: v for k, v in base.items() if k != "system_prompt"},
    ):
        assert reference_agent_def_hash(changed, []) != reference_agent_def_hash(base, [])


def test_doubles_are_hashed_as_the_reference_holds_them() -> None:
    value = reference_definition(
        {"model": "m", "budgets": {"cost_usd": 2, "wall_time_seconds": 600},
         "pricing": {"input_per_mtok": 3, "output_per_mtok": 15.0}},
        [],
    )  # fmt: skip

    assert value["budgets"] == {"max_cost_usd": 2.0, "max_steps": None, "max_tokens": None,
                                "max_wall_time_seconds": 600.0}  # fmt: skip
    assert type(value["budgets"]["max_cost_usd"]) is float
    assert type(value["pricing"]["input_per_mtok"]) is float
    # A Duration holds whole nanoseconds: 0.1 s is 100,000,000 ns and back.
    tenth = reference_definition({"model": "m", "budgets": {"wall_time_seconds": 0.1}}, [])
    assert tenth["budgets"]["max_wall_time_seconds"] == 0.1
    tiny = reference_definition({"model": "m", "budgets": {"wall_time_seconds": 1e-12}}, [])
    assert tiny["budgets"]["max_wall_time_seconds"] == 0.0


def test_tools_are_hashed_sorted_by_name_whatever_order_servers_list_them() -> None:
    first = tool_descriptor(ListedTool("b"), {})
    second = tool_descriptor(ListedTool("a", output_schema={"type": "object"}), {})

    value = reference_definition({"model": "m"}, [first, second])

    assert [tool["name"] for tool in value["tools"]] == ["a", "b"]
    assert "output_schema" in value["tools"][0] and "output_schema" not in value["tools"][1]
    assert reference_agent_def_hash({"model": "m"}, [first, second]) == reference_agent_def_hash(
        {"model": "m"}, [second, first]
    )


@pytest.mark.parametrize(
    ("entry", "code", "where"),
    [
        ({"command": "python3", "env": {"A": "1"}}, "unsupported_field", "mcp_servers[0].env"),
        ({"command": "python3", "cwd": "/tmp"}, "unsupported_field", "mcp_servers[0].cwd"),
        ({"args": ["x"]}, "malformed_definition", "mcp_servers[0]"),
        ({"command": "a", "url": "http://h/mcp"}, "malformed_definition", "mcp_servers[0]"),
        ({"url": "http://h/mcp", "args": ["x"]}, "malformed_definition", "mcp_servers[0].args"),
        ({"command": "a", "bearer_token_env": "T"}, "malformed_definition",
         "mcp_servers[0].bearer_token_env"),
        ({"command": "a", "effect_overrides": {"t": "destroy"}}, "malformed_definition",
         "mcp_servers[0].effect_overrides.t"),
        ({"command": "a", "idempotency_keys": {"t": "a..b"}}, "malformed_definition",
         "mcp_servers[0].idempotency_keys.t"),
        ({"command": "a", "timeout": 3}, "malformed_definition", "mcp_servers[0].timeout"),
    ],
)  # fmt: skip
def test_an_mcp_servers_entry_is_read_as_the_reference_reads_it_without_env_or_cwd(
    entry: dict[str, Any], code: str, where: str
) -> None:
    servers, problems = read_mcp_servers([entry])

    assert servers == []
    assert (problems[0]["code"], problems[0]["field"]) == (code, where)
    assert where.removeprefix("mcp_servers[0]").lstrip(".").split(".")[0] in problems[0]["message"]


def test_an_agent_file_may_name_at_most_sixteen_servers() -> None:
    entries = [{"command": "a"}] * 17

    servers, problems = read_mcp_servers(entries)

    assert servers == []
    assert [(problem["code"], problem["field"]) for problem in problems] == [
        ("too_many_mcp_servers", "mcp_servers")
    ]
    assert "17 `[[mcp_servers]]` entries, more than the 16" in problems[0]["message"]
    assert len(read_mcp_servers(entries[:16])[0]) == 16
