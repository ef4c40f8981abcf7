"""Agent definitions: stored content-addressed by ``agent_def_hash``, like graphs.

The hash leaves the name out, so posting the same definition under a new name renames
the stored one instead of storing a second copy (spec 01, *Agent definitions*). What is
served as ``definition`` is the hashed form (:meth:`AgentDefinition.identity`: defaults
written out, no name), so ``hash_value(definition)`` is the agent's hash; the name is
served beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from editor.graph import InvalidAgentDefinition, agent_def_hash, parse_agent_definition
from editor.models import AgentDefinition
from editor.services.access import can_author
from editor.services.errors import InvalidAgent, NotAllowed, UnknownAgent
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_of
from editor.services.storable import nul_path

__all__ = [
    "AgentInfo",
    "StoredAgent",
    "agent_hash_by_name",
    "create_agent",
    "get_agent",
    "list_agents",
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


def _info(row: AgentDefinition) -> AgentInfo:
    return AgentInfo(agent=row.hash, name=row.name or None, definition=row.definition)


def create_agent(user: Any, data: bytes | str) -> StoredAgent:
    """Store a definition (parsed strictly), or rename the stored one when its name differs.

    A definition without a name keeps the stored name.
    """
    if not can_author(user):
        raise NotAllowed()
    try:
        definition = parse_agent_definition(data)
    except InvalidAgentDefinition as error:
        raise InvalidAgent(error.errors) from None
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
    digest = agent_def_hash(definition)
    try:
        with transaction.atomic():
            AgentDefinition.objects.create(
                hash=digest,
                name=definition.name or "",
                definition=definition.identity(),
                created_by=user if getattr(user, "pk", None) else None,
            )
    except IntegrityError:
        if not AgentDefinition.objects.filter(hash=digest).exists():
            raise
        if definition.name is not None:
            AgentDefinition.objects.filter(hash=digest).exclude(name=definition.name).update(
                name=definition.name, updated_at=timezone.now()
            )
        return StoredAgent(digest, created=False)
    return StoredAgent(digest, created=True)


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
