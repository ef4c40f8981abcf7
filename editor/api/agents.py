"""``/v1/agents``: agent definitions, stored by ``agent_def_hash``.

A definition is posted as JSON (Gatehouse's fields, or the reference's) or as the reference's
agent file (``Content-Type: application/toml``); any other body type is ``415``.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Status

from editor.api.auth import AuthenticatedRequest
from editor.api.schemas import AgentCreatedOut, AgentListOut, AgentOut, ErrorOut
from editor.services import agents
from editor.services.paging import DEFAULT_LIMIT, MAX_LIMIT
from editor.streams.lists import json_list_response

router = Router(tags=["agents"])

AGENT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": (
            "An agent definition (spec 01), read strictly: unknown keys refused. JSON in "
            "Gatehouse's fields or the reference's, or the reference's agent file as TOML."
        ),
        "content": {
            "application/json": {"schema": {"type": "object"}},
            "application/toml": {"schema": {"type": "string"}},
        },
    }
}


@router.post(
    "/agents",
    response={201: AgentCreatedOut, 400: ErrorOut, 403: ErrorOut, 415: ErrorOut},
    openapi_extra=AGENT_BODY,
    summary="Store an agent definition",
)
def post_agent(request: AuthenticatedRequest) -> Status[agents.StoredAgent]:
    """Store a definition; the same one again stores nothing, and renames it when named."""
    content_type = request.headers.get("Content-Type", "")
    return Status(201, agents.create_agent(request.auth, request.body, content_type))


def _agent_json(agent: agents.AgentInfo) -> dict[str, Any]:
    return AgentOut.from_orm(agent).model_dump()


@router.get("/agents", response={200: AgentListOut, 400: ErrorOut}, summary="List")
def list_agents(
    request: HttpRequest,
    cursor: str | None = None,
    limit: int | None = Query(None, ge=1, le=MAX_LIMIT),
) -> Any:
    """Stored definitions sorted by name, then hash; every one of them unless `cursor` or
    `limit` is given (then a page and its `next`)."""
    if cursor is None and limit is None:
        return json_list_response(
            request,
            "agents",
            lambda after, size: agents.list_agents(cursor=after, limit=size),
            _agent_json,
        )
    page = agents.list_agents(cursor=cursor, limit=limit or DEFAULT_LIMIT)
    return {"agents": page.items, "next": page.next}


@router.get("/agents/{agent}", response={200: AgentOut, 404: ErrorOut}, summary="Get")
def get_agent(request: HttpRequest, agent: str) -> agents.AgentInfo:
    """One stored definition: its hash, name, `format` (`json` or `toml`) and hashed form
    (and for TOML, the file as it was posted: `source`)."""
    return agents.get_agent(agent)
