"""``manage.py mcp list`` and ``manage.py check`` over ``GATEHOUSE_MCP_SERVERS``."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError, SystemCheckError

from tests.integration.mcp.servers import PAYROLL, payroll_catalogue, processes_marked
from tests.reference_examples import needs_examples

pytestmark = [
    pytest.mark.django_db,  # `check` runs the database checks too
    needs_examples(PAYROLL),
]


def test_mcp_list_shows_each_servers_tools_with_their_effects(
    settings: Any, tmp_path: Path
) -> None:
    path, marker = payroll_catalogue(tmp_path)
    settings.GATEHOUSE_MCP_SERVERS = str(path)
    output = io.StringIO()

    call_command("mcp", "list", stdout=output)

    lines = output.getvalue().splitlines()
    assert lines[0].startswith("payroll (stdio: ")
    assert lines[1].startswith("  pull_roster  [read]  Resolve a pay-period id to its roster")
    assert any(line.startswith("  pay_employee  [idempotent]  ") for line in lines)
    assert any(line.startswith("  send_summary  [write]  ") for line in lines)
    assert processes_marked(marker) == []  # listed, then stopped


def test_mcp_list_names_a_server_it_cannot_list_and_exits_non_zero(
    settings: Any, tmp_path: Path
) -> None:
    path = tmp_path / "servers.toml"
    path.write_text('[servers.ghost]\ncommand = "no-such-mcp-server-here"\n')
    settings.GATEHOUSE_MCP_SERVERS = str(path)
    output = io.StringIO()

    with pytest.raises(CommandError, match="could not list: ghost"):
        call_command("mcp", "list", stdout=output)

    assert "✗ the MCP server `ghost` could not be started" in output.getvalue()


def test_mcp_list_without_a_catalogue_says_so(settings: Any) -> None:
    settings.GATEHOUSE_MCP_SERVERS = None
    output = io.StringIO()

    call_command("mcp", "list", stdout=output)

    assert output.getvalue() == "No MCP servers: GATEHOUSE_MCP_SERVERS names none.\n"


def test_check_names_each_bad_entry_of_the_catalogue(settings: Any, tmp_path: Path) -> None:
    path = tmp_path / "servers.toml"
    path.write_text('[servers.both]\ncommand = "x"\nurl = "https://h/mcp"\n')
    settings.GATEHOUSE_MCP_SERVERS = str(path)

    with pytest.raises(SystemCheckError) as refused:
        call_command("check", stderr=io.StringIO())

    assert (
        "GATEHOUSE_MCP_SERVERS[both]: (gatehouse.E010) GATEHOUSE_MCP_SERVERS: server `both`: has "
        "both `command` (stdio) and `url` (HTTP): a server has one transport"
    ) in str(refused.value)


def test_check_passes_a_good_catalogue_without_starting_anything(
    settings: Any, tmp_path: Path
) -> None:
    path, marker = payroll_catalogue(tmp_path)
    settings.GATEHOUSE_MCP_SERVERS = str(path)

    call_command("check", stdout=io.StringIO())

    assert processes_marked(marker) == []
