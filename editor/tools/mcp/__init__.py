"""Tools from MCP servers the operator names in ``GATEHOUSE_MCP_SERVERS`` (docs/registries.md).

* :mod:`~editor.tools.mcp.catalogue` reads and checks the catalogue file (pure);
* :mod:`~editor.tools.mcp.connections` holds the sessions with its servers (one per server per
  process, started on demand, restarted after a crash, never outliving the process);
* :mod:`~editor.tools.mcp.tools` turns a server's listing into registry tools.
"""

from editor.tools.mcp.catalogue import (
    Catalogue,
    CatalogueError,
    CatalogueProblem,
    McpServerEntry,
    check_catalogue,
    read_catalogue,
)
from editor.tools.mcp.connections import McpConnections, McpServerUnavailable
from editor.tools.mcp.tools import (
    McpToolsError,
    ServerListing,
    declared_key,
    effect_for,
    list_servers,
    mcp_tool_specs,
    register_mcp_tools,
)

__all__ = [
    "Catalogue",
    "CatalogueError",
    "CatalogueProblem",
    "McpConnections",
    "McpServerEntry",
    "McpServerUnavailable",
    "McpToolsError",
    "ServerListing",
    "check_catalogue",
    "declared_key",
    "effect_for",
    "list_servers",
    "mcp_tool_specs",
    "read_catalogue",
    "register_mcp_tools",
]
