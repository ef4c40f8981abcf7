"""The catalogue's MCP tools as registry tools (spec 04, *Registries*; the reference's mcp.rs).

Each server's tools join the registry under their own names. A tool's effect is the
reference's reading of the server's hints (``readOnlyHint`` → read, else ``idempotentHint`` →
idempotent, else write), and the catalogue's ``effect_overrides`` win. A call's output is the
whole ``CallToolResult`` (``content``, ``structuredContent``, ``isError``), so
``structuredContent.x`` references work downstream; ``isError: true`` fails the call with the
server's text.

``idempotency_keys`` declare, per tool, the input field that names the operation a call
performs: the call's idempotency key is then ``<tool>:<value>`` (a non-empty string verbatim,
a number through its JSON form) instead of the key derived from the run's position, and a call
whose input lacks the field is refused before anything runs. A key naming a tool the server
does not offer stops start-up, as the reference refuses it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp.types as types

from editor.engine.errors import ToolError
from editor.engine.parks import ParkRequestError, asks_to_park, park_request
from editor.engine.ports import ToolContext, ToolEffect, ToolSpec
from editor.tools.mcp.catalogue import Catalogue, McpServerEntry
from editor.tools.mcp.connections import McpConnections
from editor.tools.registry import Registry, ToolRegistryError

__all__ = [
    "McpToolsError",
    "ServerListing",
    "declared_key",
    "effect_for",
    "list_servers",
    "mcp_tool_specs",
    "register_mcp_tools",
]

logger = logging.getLogger("editor.tools.mcp")


class McpToolsError(ToolRegistryError):
    """The catalogue's tools cannot join the registry (a clash of names, a key for a tool the
    server does not offer); start-up stops with this message."""


@dataclass(frozen=True, slots=True)
class ServerListing:
    """One server's short listing: its tools, or why it could not be listed."""

    server: McpServerEntry
    tools: tuple[ToolSpec, ...] = ()
    problem: str | None = None


def effect_for(
    name: str, annotations: types.ToolAnnotations | None, overrides: Mapping[str, ToolEffect]
) -> ToolEffect:
    if name in overrides:
        return overrides[name]
    if annotations is not None and annotations.read_only_hint is True:
        return ToolEffect.READ
    if annotations is not None and annotations.idempotent_hint is True:
        return ToolEffect.IDEMPOTENT
    return ToolEffect.WRITE


def declared_key(tool: str, path: Sequence[str], value: Any) -> str:
    """``<tool>:<value>`` for the field at ``path`` in ``value``, or a refusal (ToolError)."""
    dotted = ".".join(path)
    present = (
        f"the input carries {', '.join(f'`{key}`' for key in value)}"
        if isinstance(value, dict) and value
        else "the input carries no fields"
    )
    current = value
    for index, segment in enumerate(path):
        where = "the input" if index == 0 else f"`{'.'.join(path[:index])}`"
        if not isinstance(current, dict):
            raise ToolError(_missing(tool, dotted, f"{where} is not a JSON object; {present}"))
        if segment not in current:
            detail = f"there is no `{segment}` in {where}; {present}"
            raise ToolError(_missing(tool, dotted, detail))
        current = current[segment]
    if isinstance(current, str) and current:
        return f"{tool}:{current}"
    if isinstance(current, int | float) and not isinstance(current, bool):
        return f"{tool}:{json.dumps(current)}"
    kind = "an empty string" if current == "" else f"{type(current).__name__} {json.dumps(current)}"
    raise ToolError(
        _missing(
            tool,
            dotted,
            f"it holds {kind}, which cannot name one operation "
            "(a non-empty string or a number can)",
        )
    )


def _missing(tool: str, path: str, detail: str) -> str:
    return (
        f"the tool `{tool}` declares its idempotency key at `{path}`, but {detail}; the call is "
        "refused rather than run without its key"
    )


class McpToolCall:
    """A registered MCP tool's function: one ``tools/call`` on the server's session."""

    def __init__(self, connections: McpConnections, entry: McpServerEntry, tool: str) -> None:
        self.connections = connections
        self.entry = entry
        self.tool = tool

    def __call__(self, value: Any, context: ToolContext) -> dict[str, Any]:
        if value is not None and not isinstance(value, dict):
            raise ToolError(
                f"the MCP tool `{self.tool}` takes a JSON object as input, not "
                f"{type(value).__name__}"
            )
        timeout = min(self.entry.timeout or context.timeout, context.timeout)
        result = self.connections.call(self.entry.name, self.tool, value, timeout)
        recorded = _recorded(result)
        size = len(json.dumps(recorded, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        if size > self.connections.max_result_bytes:
            raise ToolError(
                f"the MCP server `{self.entry.name}` answered `{self.tool}` with {size} bytes, "
                f"more than GATEHOUSE_MCP_MAX_RESULT_BYTES ({self.connections.max_result_bytes})"
            )
        if result.is_error and asks_to_park(recorded):
            try:
                park_request(recorded, is_error=True)
            except ParkRequestError as error:  # a failed call parks nothing (spec 08)
                raise ToolError(str(error)) from None
        if result.is_error:
            texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
            message = "\n".join(texts) or "the MCP tool reported an error with no message"
            raise ToolError(f"`{self.tool}` (MCP server `{self.entry.name}`): {message}")
        return recorded


def _recorded(result: types.CallToolResult) -> dict[str, Any]:
    """The result as the reference records it: ``content``, ``structuredContent`` when the
    server sent one, ``isError`` (and ``_meta`` when present)."""
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    recorded: dict[str, Any] = {"content": dumped.get("content", [])}
    if "structuredContent" in dumped:
        recorded["structuredContent"] = dumped["structuredContent"]
    recorded["isError"] = bool(result.is_error)
    if "_meta" in dumped:
        recorded["_meta"] = dumped["_meta"]
    return recorded


def mcp_tool_specs(
    entry: McpServerEntry, tools: Sequence[types.Tool], connections: McpConnections
) -> list[ToolSpec]:
    """The registry's tools for one server's listing; a key for a tool it does not offer is
    refused (:class:`McpToolsError`)."""
    offered = [tool.name for tool in tools]
    for declared in entry.idempotency_keys:
        if declared not in offered:
            listed = (
                f"this server advertises: {', '.join(offered)}"
                if offered
                else "this server advertises no tools at all"
            )
            raise McpToolsError(
                f"GATEHOUSE_MCP_SERVERS: server `{entry.name}`: `idempotency_keys` declares a key "
                f"for tool `{declared}`, but {listed}. A key that binds to no tool would leave "
                "the tool it was meant for keyless, so this is refused rather than ignored. "
                "Check the spelling, or drop the entry"
            )
    specs = []
    for tool in tools:
        path = entry.idempotency_keys.get(tool.name)
        key: Callable[[Any], str] | None = None
        if path is not None:
            key = _key_function(tool.name, path)
        specs.append(
            ToolSpec(
                tool.name,
                tool.description or "",
                McpToolCall(connections, entry, tool.name),
                effect_for(tool.name, tool.annotations, entry.effect_overrides),
                input_schema=dict(tool.input_schema) if tool.input_schema else None,
                output_schema=_result_schema(tool.output_schema),
                server=entry.name,
                declared_key=key,
            )
        )
    return specs


def _key_function(tool: str, path: tuple[str, ...]) -> Callable[[Any], str]:
    def key(value: Any) -> str:
        return declared_key(tool, path, value)

    return key


def _result_schema(structured: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The output is the whole ``CallToolResult``: a server's ``outputSchema`` describes its
    ``structuredContent``."""
    if structured is None:
        return None
    return {
        "type": "object",
        "properties": {
            "content": {"type": "array"},
            "structuredContent": dict(structured),
            "isError": {"type": "boolean"},
        },
        "required": ["content"],
    }


def list_servers(catalogue: Catalogue, connections: McpConnections) -> list[ServerListing]:
    """Every server's short listing; one that cannot be listed carries its problem (logged)."""
    listings = []
    for entry in catalogue.servers:
        try:
            tools = connections.list_tools(entry.name)
        except ToolError as error:
            logger.error("%s; its tools are not registered", error)
            listings.append(ServerListing(entry, problem=str(error)))
            continue
        listings.append(ServerListing(entry, tuple(mcp_tool_specs(entry, tools, connections))))
    return listings


def register_mcp_tools(registry: Registry, listings: Sequence[ServerListing]) -> None:
    """Add every listed tool; a name offered twice stops start-up naming both offers."""
    offered_by: dict[str, str] = {}
    for listing in listings:
        for spec in listing.tools:
            if spec.name in offered_by:
                raise McpToolsError(
                    f"GATEHOUSE_MCP_SERVERS: the tool `{spec.name}` is offered by both MCP "
                    f"servers `{offered_by[spec.name]}` and `{listing.server.name}`; a tool "
                    "name is registered once (drop or rename one of them)"
                )
            if spec.name in registry:
                raise McpToolsError(
                    f"GATEHOUSE_MCP_SERVERS: the MCP server `{listing.server.name}` offers "
                    f"`{spec.name}`, which this installation already registers (a built-in or "
                    "a GATEHOUSE_TOOL_MODULES tool)"
                )
            offered_by[spec.name] = listing.server.name
            registry.register(spec)
