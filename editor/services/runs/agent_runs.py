"""Agent runs: the reference's ``POST /v1/runs {"agent", "input", "labels"?}``.

An agent run here is a graph run underneath: a graph of one ``agent`` node naming the agent's
hash, stored content-addressed like any graph (the same agent always makes the same graph),
and started through :func:`editor.services.runs.start_run` like every run, so roles, quotas,
rates and the start-input cap apply to it unchanged. The run remembers the agent
(``Run.agent``) so that pages and ``GET /v1/runs`` show it as that agent's run.
"""

from __future__ import annotations

from typing import Any

import orjson

from editor.models import AgentDefinition
from editor.services.access import ActingUser, can_operate
from editor.services.documents.graphs import check_graph, is_graph_hash, save_graph
from editor.services.errors import NotAllowed, UnknownAgent
from editor.services.runs import start_run
from editor.services.runs.rows import RunInfo

__all__ = ["AGENT_NODE", "agent_graph_document", "agent_names", "start_agent_run"]

#: The id of the one node of an agent run's graph.
AGENT_NODE = "agent"


def agent_graph_document(agent: str) -> bytes:
    """The one-node graph an agent run of ``agent`` runs."""
    return orjson.dumps(
        {
            "schema_version": 1,
            "nodes": [{"kind": "agent", "payload": {"id": AGENT_NODE, "agent_hash": agent}}],
            "edges": [],
        }
    )


def start_agent_run(user: ActingUser, agent: Any, input: Any = None, labels: Any = None) -> RunInfo:
    """Start a run of the stored agent ``agent``: ``UnknownAgent`` (``404 unknown_agent``)
    when no agent is stored under it; every other refusal is :func:`start_run`'s."""
    if not can_operate(user):
        raise NotAllowed()  # before anything is stored
    text = agent if isinstance(agent, str) else ""
    # An agent hash has a graph hash's form; anything else names no stored agent.
    if not is_graph_hash(text) or not AgentDefinition.objects.filter(hash=text).exists():
        raise UnknownAgent(text[:80])
    stored = save_graph(check_graph(agent_graph_document(text)), by=user)
    return start_run(user, stored.graph, input, labels, agent=text)


def agent_names(hashes: set[str]) -> dict[str, str]:
    """The names of the stored agents among ``hashes`` (one query; unnamed ones left out)."""
    if not hashes:
        return {}
    rows = AgentDefinition.objects.filter(hash__in=hashes).exclude(name="")
    return dict(rows.values_list("hash", "name"))
