"""This installation, as the engine sees it: its tools, model providers and agent definitions,
and its run limits, all from the settings.

The tool and provider registries are built once per process (they import the modules of
``GATEHOUSE_TOOL_MODULES`` and take one short listing of each ``GATEHOUSE_MCP_SERVERS`` server,
which is then cached for the life of the process: a page or ``GET /v1/tools`` never starts a
server). The MCP sessions that run calls are opened on first use, so only a worker (which runs
tool calls) keeps servers running, one per server per worker process. The agent definitions
are read from the database on each look-up, so a definition posted after the worker started is
found.
"""

from __future__ import annotations

import os
from functools import cache

from django.conf import settings

from editor.engine.ports import Installation, Limits, ProviderRegistry
from editor.graph import AgentDefinition, InvalidAgentDefinition, parse_agent_definition
from editor.models import AgentDefinition as StoredAgentDefinition
from editor.providers import build_registry as build_providers
from editor.tools import build_registry as build_tools
from editor.tools.mcp import (
    Catalogue,
    McpConnections,
    McpServerEntry,
    ServerListing,
    list_servers,
    read_catalogue,
    register_mcp_tools,
)
from editor.tools.registry import Registry

__all__ = [
    "OrmAgentDirectory",
    "fresh_mcp_listings",
    "installation",
    "limits",
    "mcp_catalogue",
    "mcp_connections",
    "mcp_listings",
    "mcp_server_matching",
    "providers",
    "reset",
    "tools",
]


class OrmAgentDirectory:
    """:class:`editor.engine.ports.AgentDirectory` over the stored definitions.

    Each instance remembers what it looked up (one query per distinct hash): a directory lives
    for one drive or one request, and definitions are immutable by hash."""

    def __init__(self) -> None:
        self._seen: dict[str, AgentDefinition | None] = {}

    def get(self, agent_hash: str) -> AgentDefinition | None:
        if agent_hash not in self._seen:
            self._seen[agent_hash] = self._load(agent_hash)
        return self._seen[agent_hash]

    @staticmethod
    def _load(agent_hash: str) -> AgentDefinition | None:
        row = StoredAgentDefinition.objects.filter(hash=agent_hash).only("definition").first()
        if row is None:
            return None
        try:
            # Stored as the hashed form (no name), already parsed once when it was posted; one
            # stored before its output_schema was read in a closed world is still found, and
            # resolve_names says what is wrong with its schema.
            return parse_agent_definition(row.definition, closed_world=False)
        except InvalidAgentDefinition:
            return None


@cache
def tools() -> Registry:
    """The built-in tools, those of ``GATEHOUSE_TOOL_MODULES``, and the tools of every
    ``GATEHOUSE_MCP_SERVERS`` server that could be listed (a clash of names stops it)."""
    registry = build_tools(settings.GATEHOUSE_TOOL_MODULES, settings.GATEHOUSE_HTTP_ALLOW)
    register_mcp_tools(registry, mcp_listings())
    return registry


@cache
def mcp_catalogue() -> Catalogue:
    """``GATEHOUSE_MCP_SERVERS``, read once (``${VAR}`` from this process's environment); no
    file, no servers. A bad file raises :class:`editor.tools.mcp.CatalogueError`."""
    path = settings.GATEHOUSE_MCP_SERVERS
    return read_catalogue(path, os.environ) if path else Catalogue()


@cache
def mcp_connections() -> McpConnections:
    """This process's sessions with the catalogue's servers (opened by the calls that need
    them)."""
    return McpConnections(
        mcp_catalogue(),
        http_allow=settings.GATEHOUSE_HTTP_ALLOW,
        start_timeout=float(settings.GATEHOUSE_MCP_START_TIMEOUT),
        max_result_bytes=settings.GATEHOUSE_MCP_MAX_RESULT_BYTES,
    )


@cache
def mcp_listings() -> list[ServerListing]:
    """The short listing of every catalogue server, taken once per process."""
    return list_servers(mcp_catalogue(), mcp_connections())


def fresh_mcp_listings() -> list[ServerListing]:
    """A new short listing of every catalogue server, the file read again (``manage.py mcp
    list``)."""
    path = settings.GATEHOUSE_MCP_SERVERS
    catalogue = read_catalogue(path, os.environ) if path else Catalogue()
    connections = McpConnections(
        catalogue,
        http_allow=settings.GATEHOUSE_HTTP_ALLOW,
        start_timeout=float(settings.GATEHOUSE_MCP_START_TIMEOUT),
        max_result_bytes=settings.GATEHOUSE_MCP_MAX_RESULT_BYTES,
    )
    try:
        return list_servers(catalogue, connections)
    finally:
        connections.close()


def mcp_server_matching(
    *, command: str | None = None, args: tuple[str, ...] = (), url: str | None = None
) -> McpServerEntry | None:
    """The catalogue server an agent file's ``[[mcp_servers]]`` entry names (the same
    ``command`` and ``args``, or the same ``url``), or ``None``: nothing else may be started."""
    return mcp_catalogue().matching(command=command, args=args, url=url)


def reset() -> None:
    """Forget the registries and stop this process's MCP servers (tests; a settings change)."""
    if mcp_connections.cache_info().currsize:
        mcp_connections().close()
    for cached in (tools, providers, mcp_catalogue, mcp_connections, mcp_listings):
        cached.cache_clear()


@cache
def providers() -> ProviderRegistry:
    """``echo``, ``scripted``, and ``openai:<model>`` when an endpoint is configured."""
    return build_providers(settings.GATEHOUSE_OPENAI_BASE_URL, settings.GATEHOUSE_OPENAI_API_KEY)


def installation() -> Installation:
    return Installation(tools=tools(), providers=providers(), agents=OrmAgentDirectory())


def limits() -> Limits:
    return Limits(
        max_nodes_visited=settings.GATEHOUSE_RUN_MAX_NODES,
        max_map_items=settings.GATEHOUSE_RUN_MAX_MAP_ITEMS,
        wall_time=float(settings.GATEHOUSE_RUN_WALL_TIME),
        tool_timeout=float(settings.GATEHOUSE_TOOL_TIMEOUT),
        model_timeout=float(settings.GATEHOUSE_MODEL_TIMEOUT),
        max_event_bytes=settings.GATEHOUSE_EVENT_MAX_BYTES,
        tool_retries=settings.GATEHOUSE_TOOL_RETRIES,
        map_concurrency=settings.GATEHOUSE_RUN_MAP_CONCURRENCY,
        agent_max_steps=settings.GATEHOUSE_AGENT_MAX_STEPS,
    )
