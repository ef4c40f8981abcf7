"""The catalogue's MCP tools in the registry: ``GET /v1/tools``, the Tools page, and what stops
the registry from being built (spec 04, *Registries*; docs/registries.md, *MCP servers*)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.services import documents, installation
from editor.tools.mcp import McpToolsError
from tests.integration.api.callers import Caller
from tests.integration.mcp.servers import PAYROLL, payroll_catalogue, processes_marked
from tests.reference_examples import needs_examples

pytestmark = [
    pytest.mark.django_db,
    needs_examples(PAYROLL),
]


@pytest.fixture
def catalogue(settings: Any) -> Iterator[Callable[[Path], None]]:
    def use(path: Path) -> None:
        settings.GATEHOUSE_MCP_SERVERS = str(path)
        installation.reset()

    try:
        yield use
    finally:
        installation.reset()


def test_tools_lists_the_mcp_servers_tools_with_their_server_and_effect(
    reader: Caller, catalogue: Callable[[Path], None], tmp_path: Path
) -> None:
    override = 'effect_overrides = { flag_exceptions = "write" }\n'
    path, marker = payroll_catalogue(tmp_path, extra=override)
    catalogue(path)

    response = reader.get("/v1/tools")

    assert response.status_code == 200
    tools = {tool["name"]: tool for tool in response.json()["tools"]}
    assert tools["pull_roster"]["server"] == "payroll"
    assert tools["pull_roster"]["effect"] == "read"  # readOnlyHint
    assert tools["pay_employee"]["effect"] == "idempotent"  # idempotentHint
    assert tools["send_summary"]["effect"] == "write"  # no hint
    assert tools["flag_exceptions"]["effect"] == "write"  # the override wins over readOnlyHint
    assert tools["pull_roster"]["input_schema"]["required"] == ["pay_period"]
    assert tools["echo"]["server"] is None
    assert processes_marked(marker) == []  # the short listing stopped the server again


def test_the_tools_page_names_each_mcp_tools_server(
    client: Client, author: Any, catalogue: Callable[[Path], None], tmp_path: Path
) -> None:
    catalogue(payroll_catalogue(tmp_path)[0])
    client.force_login(author)

    page = client.get("/tools/")

    assert page.status_code == 200
    assert "MCP server: payroll" in page.content.decode()


def test_two_servers_offering_one_tool_name_stop_the_registry_naming_both(
    catalogue: Callable[[Path], None], tmp_path: Path
) -> None:
    path, _ = payroll_catalogue(tmp_path)
    text = path.read_text()
    path.write_text(text + text.replace("[servers.payroll]", "[servers.payroll-copy]"))
    catalogue(path)

    with pytest.raises(McpToolsError) as stopped:
        installation.tools()

    assert "the tool `pull_roster` is offered by both MCP servers `payroll` and `payroll-copy`" in (
        str(stopped.value)
    )


def test_an_idempotency_key_for_a_tool_the_server_does_not_offer_is_refused(
    catalogue: Callable[[Path], None], tmp_path: Path
) -> None:
    path, _ = payroll_catalogue(tmp_path)
    path.write_text(path.read_text().replace('pay_employee = "id"', 'pay_employe = "id"'))
    catalogue(path)

    with pytest.raises(McpToolsError) as refused:
        installation.tools()

    assert str(refused.value).startswith(
        "GATEHOUSE_MCP_SERVERS: server `payroll`: `idempotency_keys` declares a key for tool "
        "`pay_employe`, but this server advertises: pull_roster, flag_exceptions, pay_employee, "
        "send_summary."
    )


def test_a_server_that_cannot_be_listed_leaves_the_other_tools_listed(
    reader: Caller, catalogue: Callable[[Path], None], tmp_path: Path
) -> None:
    path = tmp_path / "servers.toml"
    path.write_text('[servers.ghost]\ncommand = "no-such-mcp-server-here"\n')
    catalogue(path)

    response = reader.get("/v1/tools")

    assert response.status_code == 200
    assert "echo" in {tool["name"] for tool in response.json()["tools"]}
    (listing,) = installation.mcp_listings()
    assert listing.problem is not None
    assert "MCP server `ghost` could not be started" in listing.problem


def test_the_editors_tool_picker_shows_each_mcp_tools_effect_server_and_description(
    author_client: Client, author: Any, catalogue: Callable[[Path], None], tmp_path: Path
) -> None:
    catalogue(payroll_catalogue(tmp_path)[0])
    text = json.dumps(wire_value(approval_gate("sha256:" + "a" * 64)), indent=2) + "\n"
    documents.create_document(author, title="Flow", slug="flow", text=text)

    page = author_client.get("/graphs/flow/?node=publish").content.decode()

    assert '<option value="pull_roster" title="Resolve a pay-period id to its roster' in page
    assert ">pull_roster (read, MCP server payroll)</option>" in page
    assert ">send_summary (write, MCP server payroll)</option>" in page
    assert ">echo (read)</option>" in page
