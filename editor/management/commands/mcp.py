"""``manage.py mcp list``: each ``GATEHOUSE_MCP_SERVERS`` server and the tools it offers.

Starts each server for a short listing (as the web process does once) and stops it again. A
server that cannot be listed is reported with why, and the command exits 1; a bad catalogue
file exits 1 with its problems (``manage.py check`` shows the same).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from editor.services.installation import fresh_mcp_listings
from editor.tools.mcp import CatalogueError, McpToolsError


class Command(BaseCommand):
    help = "List the MCP servers of GATEHOUSE_MCP_SERVERS and their tools (mcp list)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="{list}")
        actions.add_parser("list", help="start each server, list its tools, stop it")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            listings = fresh_mcp_listings()
        except (CatalogueError, McpToolsError) as error:
            raise CommandError(str(error)) from None
        if not listings:
            self.stdout.write("No MCP servers: GATEHOUSE_MCP_SERVERS names none.")
            return
        failed = []
        for listing in listings:
            server = listing.server
            where = (
                server.url
                if server.url is not None
                else " ".join([server.command or "", *server.args])
            )
            self.stdout.write(f"{server.name} ({server.transport}: {where})")
            if listing.problem is not None:
                self.stdout.write(f"  ✗ {listing.problem}")
                failed.append(server.name)
                continue
            for spec in listing.tools:
                summary = (
                    spec.description.strip().splitlines()[0] if spec.description.strip() else ""
                )
                self.stdout.write(f"  {spec.name}  [{spec.effect.value}]  {summary}")
        if failed:
            raise CommandError(f"could not list: {', '.join(failed)}")
