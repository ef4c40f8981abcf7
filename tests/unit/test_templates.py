"""The starting points of **New graph** (spec 06 *Graphs list*, spec 04 *Critic panels*).

Every template validates, survives wire -> parse with the same hash, and has the structure the
specs describe.
"""

from __future__ import annotations

from typing import Any

import pytest

from editor.graph import templates
from editor.graph.model import (
    AgentNode,
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
from editor.graph.parsing import parse_document
from editor.graph.validation import validate
from editor.graph.wire import graph_hash, wire_json

WRITER = "sha256:" + "1" * 64
CRITIC = "sha256:" + "c" * 64
SYNTHESIZER = "sha256:" + "5" * 64
PERSONAS = ["Skeptic", "Editor", "Lawyer", "Engineer", "Designer", "Historian", "Poet", "Child"]


def _all_templates() -> list[tuple[str, Graph]]:
    return [
        ("blank", templates.blank()),
        ("approval_gate", templates.approval_gate(WRITER)),
        ("parallel, 2 personas", templates.parallel(CRITIC, SYNTHESIZER, PERSONAS[:2])),
        ("parallel, 8 personas", templates.parallel(CRITIC, SYNTHESIZER, PERSONAS)),
        ("rounds, 1 round", templates.rounds(CRITIC, SYNTHESIZER, PERSONAS[:3], 1)),
        ("rounds, 5 rounds", templates.rounds(CRITIC, SYNTHESIZER, PERSONAS[:2], 5)),
        ("rounds, 8 personas", templates.rounds(CRITIC, SYNTHESIZER, PERSONAS, 3)),
    ]


TEMPLATES = _all_templates()
IDS = [name for name, _ in TEMPLATES]


@pytest.mark.parametrize("graph", [graph for _, graph in TEMPLATES], ids=IDS)
def test_every_template_validates(graph: Graph) -> None:
    assert validate(graph) == []


@pytest.mark.parametrize("graph", [graph for _, graph in TEMPLATES], ids=IDS)
def test_every_template_survives_wire_then_parse_with_the_same_hash(graph: Graph) -> None:
    wire = wire_json(graph)
    parsed = parse_document(wire)
    assert graph_hash(parsed) == graph_hash(graph)
    assert wire_json(parsed) == wire
    assert validate(parsed) == []


def test_the_templates_offered_are_blank_approval_gate_and_the_two_critic_panels() -> None:
    assert list(templates.TEMPLATES) == ["blank", "approval_gate", "parallel", "rounds"]


def test_the_blank_template_is_an_empty_version_1_document() -> None:
    assert wire_json(templates.blank()) == '{"schema_version":1,"nodes":[],"edges":[]}'


# --- approval gate -------------------------------------------------------------------------------


def _by_id(graph: Graph) -> dict[str, Any]:
    nodes = {node.id: node for node in graph.nodes}
    assert len(nodes) == len(graph.nodes), "ids are unique"
    return nodes


def test_the_approval_gate_is_write_review_decide_then_publish_or_archive() -> None:
    graph = templates.approval_gate(WRITER)
    nodes = _by_id(graph)
    assert [node.id for node in graph.nodes] == ["write", "review", "decide", "publish", "archive"]
    assert [node.kind for node in graph.nodes] == ["agent", "gate", "branch", "tool", "tool"]
    edges = sorted(graph.edges, key=lambda edge: (edge.source, edge.target))
    assert edges == [
        Edge("decide", "archive", "rejected"),
        Edge("decide", "publish", "approved"),
        Edge("review", "decide"),
        Edge("write", "review"),
    ]
    write = nodes["write"]
    assert isinstance(write, AgentNode)
    assert write.agent_hash == WRITER


def test_the_review_gate_asks_for_the_draft_an_approval_and_a_comment() -> None:
    review = _by_id(templates.approval_gate(WRITER))["review"]
    assert isinstance(review, GateNode)
    assert review.approval_schema == {
        "type": "object",
        "properties": {
            "draft": {"type": "string", "maxLength": 20000, "title": "Draft"},
            "approved": {"type": "boolean", "title": "Approve"},
            "comment": {"type": "string"},
        },
        "required": ["draft", "approved"],
    }


def test_the_decide_branch_routes_approved_and_its_negation() -> None:
    decide = _by_id(templates.approval_gate(WRITER))["decide"]
    assert isinstance(decide, BranchNode)
    assert [(case.name, case.when) for case in decide.cases] == [
        ("approved", ExpressionCondition("approved == true")),
        ("rejected", ExpressionCondition("!(approved == true)")),
    ]


def test_publish_echoes_the_draft_and_archive_has_no_input_mapping() -> None:
    nodes = _by_id(templates.approval_gate(WRITER))
    publish, archive = nodes["publish"], nodes["archive"]
    assert isinstance(publish, ToolNode) and isinstance(archive, ToolNode)
    assert (publish.tool, publish.input) == ("echo", {"text": "draft"})
    assert (archive.tool, archive.input) == ("echo", {})
    wire = wire_json(templates.approval_gate(WRITER))
    assert '{"kind":"tool","payload":{"id":"archive","tool":"echo"}}' in wire
    assert '"input":{"text":"draft"}' in wire


# --- critic panels -------------------------------------------------------------------------------


def _panel_round(graph: Graph, personas: int) -> tuple[ToolNode, MapNode, AgentNode]:
    """Check panel_prompts -> map over `prompts` of the `critic` agent; return the three."""
    nodes = _by_id(graph)
    prompts = [node for node in graph.nodes if isinstance(node, ToolNode)]
    prompts = [node for node in prompts if node.tool == "panel_prompts"]
    maps = [node for node in graph.nodes if isinstance(node, MapNode)]
    assert len(prompts) == 1 and len(maps) == 1
    prompt_tool, fan_out = prompts[0], maps[0]
    assert fan_out.over == "prompts"
    assert fan_out.concurrency == personas
    assert fan_out.body == NodeBody("critic")
    critic = nodes["critic"]
    assert isinstance(critic, AgentNode)
    assert critic.agent_hash == CRITIC
    assert Edge(prompt_tool.id, fan_out.id) in graph.edges
    return prompt_tool, fan_out, critic


@pytest.mark.parametrize("count", [2, 3, 8])
def test_the_parallel_panel_prompts_maps_the_critic_then_synthesizes(count: int) -> None:
    graph = templates.parallel(CRITIC, SYNTHESIZER, PERSONAS[:count])
    _, fan_out, _ = _panel_round(graph, count)
    synthesize = _by_id(graph)["synthesize"]
    assert isinstance(synthesize, AgentNode)
    assert synthesize.agent_hash == SYNTHESIZER
    assert Edge(fan_out.id, "synthesize") in graph.edges
    assert len(graph.edges) == 2
    assert not any(edge.source == "critic" or edge.target == "critic" for edge in graph.edges)


@pytest.mark.parametrize(("count", "rounds"), [(2, 1), (3, 2), (2, 5), (8, 5)])
def test_the_rounds_panel_folds_panel_rounds_then_synthesizes(count: int, rounds: int) -> None:
    graph = templates.rounds(CRITIC, SYNTHESIZER, PERSONAS[:count], rounds)
    folds = [node for node in graph.nodes if isinstance(node, FoldNode)]
    assert len(folds) == 1
    fold = folds[0]
    assert fold.max_iterations == rounds
    assert fold.stop_when == "converged == true"
    assert fold.join == JoinLast()
    assert isinstance(fold.body, SubgraphBody)
    synthesize = _by_id(graph)["synthesize"]
    assert isinstance(synthesize, AgentNode)
    assert synthesize.agent_hash == SYNTHESIZER
    assert graph.edges == (Edge(fold.id, "synthesize"),)

    body = fold.body.graph
    _, fan_out, _ = _panel_round(body, count)
    collect = [node for node in body.nodes if isinstance(node, ToolNode)]
    collect = [node for node in collect if node.tool == "panel_collect"]
    assert len(collect) == 1
    assert Edge(fan_out.id, collect[0].id) in body.edges
    assert len(body.edges) == 2


def test_the_panel_writes_the_number_of_personas_into_the_concurrency_on_the_wire() -> None:
    wire = wire_json(templates.parallel(CRITIC, SYNTHESIZER, PERSONAS[:5]))
    assert '"over":"prompts","concurrency":5,"body":{"kind":"node","value":"critic"}' in wire


@pytest.mark.parametrize("count", [0, 1, 9, 12])
def test_a_panel_needs_2_to_8_personas(count: int) -> None:
    personas = [f"persona {index}" for index in range(count)]
    with pytest.raises(ValueError):
        templates.parallel(CRITIC, SYNTHESIZER, personas)
    with pytest.raises(ValueError):
        templates.rounds(CRITIC, SYNTHESIZER, personas, 2)


@pytest.mark.parametrize("rounds", [0, 6, -1, 100])
def test_a_rounds_panel_runs_1_to_5_rounds(rounds: int) -> None:
    with pytest.raises(ValueError):
        templates.rounds(CRITIC, SYNTHESIZER, PERSONAS[:2], rounds)


def test_the_hash_depends_on_the_agents_and_the_panel_size() -> None:
    hashes = {
        graph_hash(templates.parallel(CRITIC, SYNTHESIZER, PERSONAS[:2])),
        graph_hash(templates.parallel(CRITIC, SYNTHESIZER, PERSONAS[:3])),
        graph_hash(templates.parallel(SYNTHESIZER, CRITIC, PERSONAS[:2])),
        graph_hash(templates.rounds(CRITIC, SYNTHESIZER, PERSONAS[:2], 2)),
        graph_hash(templates.rounds(CRITIC, SYNTHESIZER, PERSONAS[:2], 3)),
    }
    assert len(hashes) == 5


def test_templates_are_built_fresh_each_time() -> None:
    first = templates.approval_gate(WRITER)
    second = templates.approval_gate(WRITER)
    assert graph_hash(first) == graph_hash(second)
    assert wire_json(first) == wire_json(second)
