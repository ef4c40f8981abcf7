"""What the agents list holds before and after an attack that must store no agent (other
attacks of the corpus store agents, so the list is compared, never expected empty)."""

from __future__ import annotations

from typing import Any


def note_stored_agents(corpus: Any) -> None:
    """What ``GET /v1/agents`` lists before the attack."""
    corpus.names["agents_before"] = _stored_agents(corpus)


def no_agent_was_stored(corpus: Any) -> None:
    assert _stored_agents(corpus) == corpus.names["agents_before"], "a refused agent was stored"


def _stored_agents(corpus: Any) -> list[str]:
    answer = corpus.request("GET", "/v1/agents")
    assert answer.status_code == 200, answer.text[:1000]
    return sorted(agent["agent"] for agent in answer.json()["agents"])
