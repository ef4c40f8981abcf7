"""Agent definitions: stored content-addressed by ``agent_def_hash``, like graphs.

The hash leaves the name out, so posting the same definition under a new name renames
the stored one instead of storing a second copy (spec 01, *Agent definitions*). What is
served as ``definition`` is the hashed form (:meth:`AgentDefinition.identity`: defaults
written out, no name), so ``hash_value(definition)`` is the agent's hash; the name is
served beside it. The exception: a reference agent file the reference could run as it is
(``editor.graph.reference_agents.uses_reference_identity``) is stored under the reference's
own ``agent_def_hash`` (its ``[[mcp_servers]]`` matched against the operator's catalogue by
``editor.services.agent_servers``, their tools the definition's ``tools``), so that a graph
pinning that hash resolves here.

A definition arrives as JSON (Gatehouse's fields, or the reference's) or as the reference's
agent file in TOML (``editor.graph.agent_files``); ``format`` says which, and a TOML file is
kept as it was sent (``source``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from editor.engine import ANSWER_TOOL
from editor.engine.ports import ANSWER_TOOL_TAKEN
from editor.graph import (
    AgentDefinition as Definition,
)
from editor.graph import (
    InvalidAgentDefinition,
    JsonError,
    agent_def_hash,
    llm_env_problems,
    parse_agent_definition,
    read_json,
)
from editor.graph.agent_files import (
    is_reference_definition,
    parse_reference_agent,
    read_agent_toml,
)
from editor.graph.reference_agents import (
    McpServerRef,
    read_mcp_servers,
    reference_agent_def_hash,
    uses_reference_identity,
)
from editor.models import AgentDefinition
from editor.services import quotas
from editor.services.access import ActingUser, author_of, can_author
from editor.services.agent_servers import match_servers
from editor.services.errors import InvalidAgent, NotAllowed, UnknownAgent, UnsupportedMediaType
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, encode_cursor, page_of
from editor.services.storable import nul_path

__all__ = [
    "AgentInfo",
    "StoredAgent",
    "agent_hash_by_name",
    "create_agent",
    "get_agent",
    "list_agents",
    "page_starting_at",
]

_HASH = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class StoredAgent:
    """The outcome of posting a definition: its hash, and whether it was newly stored."""

    agent: str
    created: bool


@dataclass(frozen=True, slots=True)
class AgentInfo:
    agent: str
    name: str | None
    definition: dict[str, Any]
    #: ``json`` or ``toml``: how the definition was first posted.
    format: str = "json"
    #: The TOML agent file as it was posted (``None`` for JSON).
    source: str | None = None


def _info(row: AgentDefinition) -> AgentInfo:
    return AgentInfo(
        agent=row.hash,
        name=row.name or None,
        definition=row.definition,
        format=row.format,
        source=row.source or None,
    )


#: The media types ``POST /v1/agents`` reads, by format.
JSON_TYPES = ("application/json",)
TOML_TYPES = ("application/toml", "text/toml", "application/x-toml", "text/x-toml")


def body_format(content_type: str) -> str:
    """``json`` or ``toml`` for a request's media type (no type at all reads as JSON);
    raises :class:`UnsupportedMediaType` for any other."""
    media = content_type.split(";", 1)[0].strip().lower()
    if not media or media in JSON_TYPES or media.endswith("+json"):
        return "json"
    if media in TOML_TYPES:
        return "toml"
    raise UnsupportedMediaType(media, (*JSON_TYPES, TOML_TYPES[0]))


@dataclass(frozen=True, slots=True)
class _Parsed:
    definition: Definition
    #: The reference's fields as sent (``None`` for Gatehouse's own JSON fields).
    reference: dict[str, Any] | None = None
    servers: tuple[McpServerRef, ...] = ()


def _parse(data: bytes | str, form: str) -> _Parsed:
    if form == "toml":
        return _parse_reference(read_agent_toml(data))
    try:
        raw = read_json(data)
    except JsonError as error:
        raise InvalidAgentDefinition(
            [{"code": "malformed_definition", "message": str(error), "field": ""}]
        ) from None
    if is_reference_definition(raw):
        return _parse_reference(raw)
    return _Parsed(parse_agent_definition(raw))


def _parse_reference(table: dict[str, Any]) -> _Parsed:
    """The reference's fields: ``[[mcp_servers]]`` read here (matched against the catalogue
    later, once nothing else is wrong), the rest by :func:`parse_reference_agent`."""
    servers, problems = read_mcp_servers(table.get("mcp_servers"))
    fields = {key: value for key, value in table.items() if key != "mcp_servers"}
    try:
        definition = parse_reference_agent(fields)
    except InvalidAgentDefinition as error:
        problems = [*error.errors, *problems]
    if problems:
        raise InvalidAgentDefinition(problems)
    return _Parsed(definition, table, tuple(servers))


def _identity(parsed: _Parsed) -> tuple[Definition, str]:
    """The definition to store, with its MCP servers' tools, and its hash: the reference's
    ``agent_def_hash`` for a file the reference could run as it is (``uses_reference_identity``),
    else Gatehouse's. Matching the servers is the one step that may start a process (each
    matched catalogue server's short listing); it runs last, after every other check."""
    definition = parsed.definition
    matched = match_servers(parsed.servers)
    if matched:
        names = {tool.name for server in matched for tool in server.tools}
        definition = replace(definition, tools=tuple(sorted(names | set(definition.tools))))
    if parsed.reference is not None and uses_reference_identity(parsed.reference):
        tools = [tool for server in matched for tool in server.descriptors()]
        return definition, reference_agent_def_hash(parsed.reference, tools)
    return definition, agent_def_hash(definition)


def create_agent(user: ActingUser, data: bytes | str, content_type: str = "") -> StoredAgent:
    """Store a definition (parsed strictly), or rename the stored one when its name differs.

    ``content_type`` picks the reader: JSON (Gatehouse's fields or the reference's) or the
    reference's TOML agent file. A definition without a name keeps the stored name.
    """
    if not can_author(user):
        raise NotAllowed()
    form = body_format(content_type)
    try:
        parsed = _parse(data, form)
    except InvalidAgentDefinition as error:
        raise InvalidAgent(error.errors) from None
    definition = parsed.definition
    # `[llm]` names variables of this server's environment: only those the operator allows.
    refused = llm_env_problems(definition, settings.GATEHOUSE_LLM_ENV_ALLOW)
    if refused:
        raise InvalidAgent(refused)
    if ANSWER_TOOL in definition.tools:  # the structured loop's own tool (spec 08, section 4)
        raise InvalidAgent(
            [{"code": "answer_tool_name_taken", "message": ANSWER_TOOL_TAKEN, "field": "tools"}]
        )
    where = nul_path(definition.as_json())
    if where is not None:
        raise InvalidAgent(
            [
                {
                    "code": "malformed_definition",
                    "message": f"`{where}` must not contain NUL (U+0000) characters",
                    "field": where,
                }
            ]
        )
    try:
        definition, digest = _identity(parsed)
    except InvalidAgentDefinition as error:
        raise InvalidAgent(error.errors) from None
    try:
        with transaction.atomic():
            stored = AgentDefinition.objects.create(
                hash=digest,
                name=definition.name or "",
                definition=definition.identity(),
                format=form,
                source=_text(data) if form == "toml" else "",
                created_by=author_of(user),
            )
            size = quotas.agent_size(stored.definition, stored.source)
            quotas.charge_bytes(user, size, "this agent definition")
    except IntegrityError:
        if not AgentDefinition.objects.filter(hash=digest).exists():
            raise
        if definition.name is not None:
            AgentDefinition.objects.filter(hash=digest).exclude(name=definition.name).update(
                name=definition.name, updated_at=timezone.now()
            )
        return StoredAgent(digest, created=False)
    return StoredAgent(digest, created=True)


def _text(data: bytes | str) -> str:
    return data.decode("utf-8") if isinstance(data, bytes) else data


def get_agent(digest: str) -> AgentInfo:
    """One stored definition; raises :class:`UnknownAgent`."""
    if not _HASH.fullmatch(digest):
        raise UnknownAgent(digest)
    try:
        return _info(AgentDefinition.objects.get(hash=digest))
    except AgentDefinition.DoesNotExist:
        raise UnknownAgent(digest) from None


def list_agents(*, cursor: str | None = None, limit: int = DEFAULT_LIMIT) -> Page[AgentInfo]:
    """Stored definitions sorted by name, then hash."""
    rows = AgentDefinition.objects.order_by("name", "hash")
    if cursor is not None:
        name, digest = decode_cursor(cursor, (str, str))
        rows = rows.filter(Q(name__gt=name) | Q(name=name, hash__gt=digest))
    page = page_of(list(rows[: limit + 1]), limit, lambda row: [row.name, row.hash])
    return Page([_info(row) for row in page.items], page.next)


def agent_hash_by_name(name: str) -> str | None:
    """The hash of the one stored agent definition named ``name``; ``None`` when none or
    several have that name (then only the hash can say which)."""
    found = list(
        AgentDefinition.objects.filter(name=name.strip()).values_list("hash", flat=True)[:2]
    )
    return found[0] if len(found) == 1 else None


def page_starting_at(digest: str) -> str | None:
    """The cursor of the list page that starts with the definition ``digest`` (``None``: the
    first page), for a link straight to it."""
    agent = AgentDefinition.objects.filter(hash=digest).values_list("name", "hash").first()
    if agent is None:
        return None
    name, _ = agent
    before = (
        AgentDefinition.objects.filter(Q(name__lt=name) | Q(name=name, hash__lt=digest))
        .order_by("-name", "-hash")
        .values_list("name", "hash")
        .first()
    )
    return encode_cursor(list(before)) if before else None
