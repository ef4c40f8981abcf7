"""Starting points for new documents (spec 06 *Graphs list*, spec 04 *Critic panels*).

Each template returns a :class:`~editor.graph.model.Graph` that validates. They
name built-in tools (``echo``, ``panel_prompts``, ``panel_collect``) that the run
engine registers; validation does not need the registry.

The critic panels take the run input ``{"subject": str, "critics": [persona, …]}``.
The personas chosen when the document is made are written into the entry tool's
``input_schema`` as the ``default`` of ``critics`` (so a run form can propose
them), and their number sets the map's concurrency, so every critic of a round
is asked at once.
"""

from __future__ import annotations

from typing import Any

from editor.graph.model import (
    AgentNode,
    BranchCase,
    BranchNode,
    Edge,
    ExpressionCondition,
    FoldNode,
    GateNode,
    Graph,
    JoinLast,
    MapNode,
    NodeBody,
    SubgraphBody,
    ToolNode,
)

__all__ = [
    "MAX_PERSONAS",
    "MAX_ROUNDS",
    "MIN_PERSONAS",
    "TEMPLATES",
    "approval_gate",
    "blank",
    "parallel",
    "rounds",
]

MIN_PERSONAS = 2
MAX_PERSONAS = 8
MAX_ROUNDS = 5

#: The templates offered by **New graph**: key → label.
TEMPLATES = {
    "blank": "Blank",
    "approval_gate": "Approval gate",
    "parallel": "Critic panel — parallel",
    "rounds": "Critic panel — rounds",
}

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "draft": {"type": "string", "maxLength": 20000, "title": "Draft"},
        "approved": {"type": "boolean", "title": "Approve"},
        "comment": {"type": "string"},
    },
    "required": ["draft", "approved"],
}


def blank() -> Graph:
    """An empty document."""
    return Graph(1, (), ())


def approval_gate(writer_agent_hash: str) -> Graph:
    """``write`` (agent) → ``review`` (gate) → ``decide`` (branch) → ``publish`` | ``archive``."""
    return Graph(
        1,
        (
            AgentNode(id="write", agent_hash=writer_agent_hash),
            GateNode(id="review", approval_schema=APPROVAL_SCHEMA),
            BranchNode(
                id="decide",
                cases=(
                    BranchCase("approved", ExpressionCondition("approved == true")),
                    BranchCase("rejected", ExpressionCondition("!(approved == true)")),
                ),
            ),
            ToolNode(id="publish", tool="echo", input={"text": "draft"}),
            ToolNode(id="archive", tool="echo"),
        ),
        (
            Edge("write", "review"),
            Edge("review", "decide"),
            Edge("decide", "publish", "approved"),
            Edge("decide", "archive", "rejected"),
        ),
    )


def _check_personas(personas: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    personas = tuple(personas)
    if not MIN_PERSONAS <= len(personas) <= MAX_PERSONAS:
        raise ValueError(
            f"a critic panel needs {MIN_PERSONAS} to {MAX_PERSONAS} personas, got {len(personas)}"
        )
    for persona in personas:
        if not isinstance(persona, str) or not persona.strip():
            raise ValueError("each persona must be a non-empty text")
    if len(set(personas)) != len(personas):
        raise ValueError("the personas must be different from each other")
    return personas


def _panel_input_schema(personas: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "subject": {"type": "string", "title": "Subject"},
            "critics": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "title": "Critics",
                "default": list(personas),
            },
        },
        "required": ["subject", "critics"],
    }


def _panel_round(critic_agent_hash: str, personas: tuple[str, ...]) -> tuple[Any, ...]:
    return (
        ToolNode(
            id="prompts",
            tool="panel_prompts",
            name="Prompt the critics",
            input_schema=_panel_input_schema(personas),
        ),
        MapNode(
            id="critiques",
            name="Each critic answers",
            over="prompts",
            concurrency=len(personas),
            body=NodeBody("critic"),
        ),
        AgentNode(id="critic", agent_hash=critic_agent_hash, name="Critic"),
    )


def parallel(
    critic_agent_hash: str, synthesizer_agent_hash: str, personas: list[str] | tuple[str, ...]
) -> Graph:
    """Seed 004's Parallel topology: every critic answers the subject once, then a synthesis."""
    personas = _check_personas(personas)
    return Graph(
        1,
        (
            *_panel_round(critic_agent_hash, personas),
            AgentNode(id="synthesize", agent_hash=synthesizer_agent_hash, name="Synthesize"),
        ),
        (Edge("prompts", "critiques"), Edge("critiques", "synthesize")),
    )


def rounds(
    critic_agent_hash: str,
    synthesizer_agent_hash: str,
    personas: list[str] | tuple[str, ...],
    max_rounds: int,
) -> Graph:
    """Seed 004's Rounds topology: a fold of panel rounds until no rebuttal, then a synthesis."""
    personas = _check_personas(personas)
    if not 1 <= max_rounds <= MAX_ROUNDS:
        raise ValueError(f"a critic panel runs 1 to {MAX_ROUNDS} rounds, got {max_rounds}")
    body = Graph(
        1,
        (
            *_panel_round(critic_agent_hash, personas),
            ToolNode(id="collect", tool="panel_collect", name="Collect the round"),
        ),
        (Edge("prompts", "critiques"), Edge("critiques", "collect")),
    )
    return Graph(
        1,
        (
            FoldNode(
                id="panel",
                name="Panel rounds",
                body=SubgraphBody(body),
                max_iterations=max_rounds,
                stop_when="converged == true",
                join=JoinLast(),
            ),
            AgentNode(id="synthesize", agent_hash=synthesizer_agent_hash, name="Synthesize"),
        ),
        (Edge("panel", "synthesize"),),
    )
