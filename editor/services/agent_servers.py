"""An agent file's ``[[mcp_servers]]``, matched against the operator's catalogue.

The reference starts whatever ``command`` an agent file names. Here an entry is accepted only
when it names a server of ``GATEHOUSE_MCP_SERVERS``: the same ``command`` and ``args``, or the
same ``url`` (``bearer_token_env`` too, when the entry gives one). Every entry is matched before
anything starts, so a file naming one unknown server starts nothing at all. Then each matched
server gives its short listing (started, listed, stopped), from which the agent's tools and the
reference's hash are taken, and the agent's calls go to the catalogue's server through the tool
registry.

What the catalogue decides stays the catalogue's: the effect a tool runs with (the file's
``effect_overrides`` must read every tool as the catalogue does, or the hash would name an
effect the calls do not have) and the idempotency keys calls are made with (the file may repeat
the catalogue's; one that names a tool the server does not list is refused as the reference
refuses it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from editor.engine.errors import ToolError
from editor.graph import InvalidAgentDefinition
from editor.graph.reference_agents import (
    ListedTool,
    McpServerRef,
    listed_tool,
    tool_descriptor,
    tool_effect,
)
from editor.services import installation
from editor.tools.mcp import Catalogue, CatalogueError, McpServerEntry

__all__ = ["MatchedServer", "match_servers"]


@dataclass(frozen=True, slots=True)
class MatchedServer:
    """An entry of the file, the catalogue server it names, and what that server lists."""

    ref: McpServerRef
    entry: McpServerEntry
    tools: tuple[ListedTool, ...]

    def descriptors(self) -> list[dict[str, Any]]:
        """The server's tools as the reference's hash holds them (the file's overrides)."""
        return [tool_descriptor(tool, self.ref.effect_overrides) for tool in self.tools]


def _problem(code: str, message: str, where: str) -> dict[str, str]:
    return {"code": code, "message": message, "field": where}


def match_servers(refs: Sequence[McpServerRef]) -> list[MatchedServer]:
    """The catalogue server of each entry, with its tools; raises
    :class:`InvalidAgentDefinition` listing every entry that cannot be used."""
    if not refs:
        return []
    try:
        catalogue = installation.mcp_catalogue()
    except CatalogueError as error:
        raise InvalidAgentDefinition(
            [
                _problem(
                    "unknown_mcp_server",
                    f"this installation's MCP catalogue cannot be read, so no entry of "
                    f"`mcp_servers` can be matched: {error}",
                    "mcp_servers",
                )
            ]
        ) from None
    entries = [_entry_for(ref, catalogue) for ref in refs]
    problems = [problem for _, problem in entries if problem is not None]
    if problems:
        raise InvalidAgentDefinition(problems)
    matched = []
    for ref, (entry, _) in zip(refs, entries, strict=True):
        assert entry is not None
        tools = _listing(ref, entry)
        matched.append(MatchedServer(ref, entry, tools))
    problems = [problem for server in matched for problem in _agreement(server)]
    problems += _duplicates(matched)
    if problems:
        raise InvalidAgentDefinition(problems)
    return matched


def _entry_for(
    ref: McpServerRef, catalogue: Catalogue
) -> tuple[McpServerEntry | None, dict[str, str] | None]:
    entry = catalogue.matching(command=ref.command, args=ref.args, url=ref.url)
    if entry is None:
        names = ", ".join(f"`{name}`" for name in catalogue.names()) or "no servers at all"
        return None, _problem(
            "unknown_mcp_server",
            f"{ref.describe()} matches no MCP server of this installation: an agent file may "
            "name only a server of the operator's catalogue (GATEHOUSE_MCP_SERVERS), with the "
            f"same `command` and `args`, or the same `url`. The catalogue has {names}",
            ref.where,
        )
    if ref.bearer_token_env is not None and ref.bearer_token_env != entry.bearer_token_env:
        return None, _problem(
            "unknown_mcp_server",
            f"{ref.describe()} names the token variable `{ref.bearer_token_env}`, but the "
            f"catalogue's server `{entry.name}` is reached with "
            + (
                f"`{entry.bearer_token_env}`"
                if entry.bearer_token_env
                else "no token: the token is the operator's to name"
            ),
            f"{ref.where}.bearer_token_env",
        )
    return entry, None


def _listing(ref: McpServerRef, entry: McpServerEntry) -> tuple[ListedTool, ...]:
    try:
        tools = installation.mcp_connections().list_tools(entry.name)
    except ToolError as error:
        raise InvalidAgentDefinition(
            [
                _problem(
                    "mcp_server_unavailable",
                    f"{ref.describe()} names the catalogue's server `{entry.name}`, whose tools "
                    f"cannot be listed now: {error}",
                    ref.where,
                )
            ]
        ) from None
    return tuple(
        listed_tool(tool.model_dump(by_alias=True, mode="json", exclude_none=True))
        for tool in tools
    )


def _agreement(server: MatchedServer) -> list[dict[str, str]]:
    """Where the file's declarations part from the catalogue's, which are what runs."""
    ref, entry = server.ref, server.entry
    offered = [tool.name for tool in server.tools]
    problems = []
    for name, path in ref.idempotency_keys.items():
        where = f"{ref.where}.idempotency_keys.{name}"
        if name not in offered:
            listed = (
                f"this server advertises: {', '.join(offered)}"
                if offered
                else "this server advertises no tools at all"
            )
            problems.append(
                _problem(
                    "unknown_tool",
                    f"`idempotency_keys` declares a key for tool `{name}`, but {listed}. A key "
                    "that binds to no tool would leave the tool it was meant for keyless, so "
                    "this is refused rather than ignored. Check the spelling, or drop the entry",
                    where,
                )
            )
            continue
        declared = entry.idempotency_keys.get(name)
        if declared != tuple(path.split(".")):
            runs_with = f"`{'.'.join(declared)}`" if declared else "no key"
            problems.append(
                _problem(
                    "idempotency_key_not_in_catalogue",
                    f"`idempotency_keys` declares `{name}` keyed by `{path}`, but the catalogue's "
                    f"server `{entry.name}` calls it with {runs_with}: calls are keyed as the "
                    "operator's catalogue says, so a file may only repeat its keys",
                    where,
                )
            )
    catalogue_overrides = {name: str(effect) for name, effect in entry.effect_overrides.items()}
    for tool in server.tools:
        reads = tool_effect(tool, ref.effect_overrides)
        runs = tool_effect(tool, catalogue_overrides)
        if reads != runs:
            problems.append(
                _problem(
                    "effect_not_in_catalogue",
                    f"{ref.describe()} reads the tool `{tool.name}` as `{reads}`, but the "
                    f"catalogue's server `{entry.name}` runs it as `{runs}`: an agent's tools "
                    "run with the catalogue's effects, so the file must read each tool as the "
                    f'catalogue does (`effect_overrides = {{ {tool.name} = "{runs}" }}`, or '
                    "ask the operator to pin it)",
                    f"{ref.where}.effect_overrides",
                )
            )
    return problems


def _duplicates(matched: Sequence[MatchedServer]) -> list[dict[str, str]]:
    seen: dict[str, MatchedServer] = {}
    problems = []
    for server in matched:
        for tool in server.tools:
            first = seen.setdefault(tool.name, server)
            if first is not server:
                problems.append(
                    _problem(
                        "duplicate_tool",
                        f"a tool named `{tool.name}` is registered twice: by "
                        f"{first.ref.describe()} and by {server.ref.describe()}",
                        server.ref.where,
                    )
                )
    return problems
