"""``/v1/agents``: agent definitions, stored by ``agent_def_hash``."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Status

from editor.api.schemas import AgentCreatedOut, AgentListOut, AgentOut, ErrorOut
from editor.services import agents
from editor.services.paging import DEFAULT_LIMIT, MAX_LIMIT

router = Router(tags=["agents"])

AGENT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "An agent definition (spec 01), read strictly: unknown keys refused.",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


@router.post(
    "/agents",
    response={201: AgentCreatedOut, 400: ErrorOut, 403: ErrorOut},
    openapi_extra=AGENT_BODY,
    summary="Store an agent definition",
)
def post_agent(request: HttpRequest) -> Status[agents.StoredAgent]:
    """Store a definition; the same one again stores nothing, and renames it when named."""
    return Status(201, agents.create_agent(request.auth, request.body))


@router.get("/agents", response={200: AgentListOut, 400: ErrorOut}, summary="List")
def list_agents(
    request: HttpRequest,
    cursor: str | None = None,
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
) -> dict[str, Any]:
    """Stored definitions sorted by name, then hash."""
    page = agents.list_agents(cursor=cursor, limit=limit)
    return {"agents": page.items, "next": page.next}


@router.get("/agents/{agent}", response={200: AgentOut, 404: ErrorOut}, summary="Get")
def get_agent(request: HttpRequest, agent: str) -> agents.AgentInfo:
    """One stored definition: its hash, name and hashed form."""
    return agents.get_agent(agent)
