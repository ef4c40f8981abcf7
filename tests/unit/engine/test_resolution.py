"""Run-time resolution (spec 02): every name a graph uses, resolved against this installation."""

from __future__ import annotations

from editor.engine.ports import Installation
from editor.engine.resolution import resolve_names
from editor.graph import AgentDefinition, Graph, agent_def_hash, templates, validate
from editor.graph.model import (
    AgentNode,
    BranchCase,
    BranchNode,
    Edge,
    FoldNode,
    JoinLast,
    MapNode,
    ModelDecision,
    NodeBody,
    SubgraphBody,
    ToolNode,
)
from editor.providers import build_registry as build_providers
from editor.tools import build_registry as build_tools

WRITER = AgentDefinition(model="echo", prompt="Write.")
RESEARCHER = AgentDefinition(model="scripted", prompt="Research.", tools=("pick", "serch", "merge"))
REMOTE = AgentDefinition(model="openai:gpt-test", prompt="Think.")
WRITER_HASH = agent_def_hash(WRITER)
RESEARCHER_HASH = agent_def_hash(RESEARCHER)
REMOTE_HASH = agent_def_hash(REMOTE)
MISSING_HASH = "sha256:" + "0" * 64


class Directory:
    def __init__(self, *definitions: AgentDefinition) -> None:
        self.by_hash = {agent_def_hash(definition): definition for definition in definitions}
        self.asked: list[str] = []

    def get(self, agent_hash: str) -> AgentDefinition | None:
        self.asked.append(agent_hash)
        return self.by_hash.get(agent_hash)


def installation(
    *definitions: AgentDefinition, openai: str | None = None, http_allow: tuple[str, ...] = ()
) -> Installation:
    return Installation(
        tools=build_tools(http_allow=http_allow),
        providers=build_providers(openai, None),
        agents=Directory(*definitions),
    )


def test_a_graph_whose_names_all_resolve_is_runnable() -> None:
    graph = Graph(
        1,
        (AgentNode("write", WRITER_HASH), ToolNode("publish", "echo")),
        (Edge("write", "publish"),),
    )
    assert resolve_names(graph, installation(WRITER)) == []


def test_an_unknown_tool_is_reported_with_a_suggestion_from_the_registered_names() -> None:
    graph = Graph(1, (ToolNode("fill", "templte"), ToolNode("other", "zzzzzzzz")))
    assert resolve_names(graph, installation()) == [
        {
            "code": "unknown_tool",
            "message": "tool node `fill`: no tool registered under the name `templte` "
            "(did you mean `template`?)",
            "node": "fill",
            "tool": "templte",
            "suggestion": "template",
        },
        {
            "code": "unknown_tool",
            "message": "tool node `other`: no tool registered under the name `zzzzzzzz`",
            "node": "other",
            "tool": "zzzzzzzz",
            "suggestion": None,
        },
    ]


def test_a_disabled_tool_is_reported() -> None:
    graph = Graph(1, (ToolNode("call", "http_request"),))
    assert resolve_names(graph, installation()) == [
        {
            "code": "tool_disabled",
            "message": "tool node `call`: the tool `http_request` is disabled on this installation",
            "node": "call",
            "tool": "http_request",
        }
    ]
    assert resolve_names(graph, installation(http_allow=("example.org",))) == []


def test_an_unknown_agent_is_reported() -> None:
    graph = Graph(1, (AgentNode("write", MISSING_HASH),))
    assert resolve_names(graph, installation(WRITER)) == [
        {
            "code": "unknown_agent",
            "message": f"agent node `write`: no agent registered for hash `{MISSING_HASH}`",
            "node": "write",
            "agent_hash": MISSING_HASH,
        }
    ]


def test_a_branch_decision_agent_is_resolved_like_an_agent_node() -> None:
    branch = BranchNode("decide", (BranchCase("yes", ModelDecision()),), agent_hash=MISSING_HASH)
    errors = resolve_names(Graph(1, (branch,)), installation())
    assert [(e["code"], e["node"], e["message"]) for e in errors] == [
        (
            "unknown_agent",
            "decide",
            f"agent node `decide`: no agent registered for hash `{MISSING_HASH}`",
        ),
    ]


def test_each_unregistered_tool_an_agent_lists_is_reported_in_its_order() -> None:
    graph = Graph(1, (AgentNode("research", RESEARCHER_HASH),))
    assert resolve_names(graph, installation(RESEARCHER)) == [
        {
            "code": "unknown_agent_tool",
            "message": "agent node `research`: its agent lists the tool `serch`, "
            "which is not registered",
            "node": "research",
            "agent_hash": RESEARCHER_HASH,
            "tool": "serch",
        }
    ]


def test_an_unconfigured_model_provider_is_reported() -> None:
    graph = Graph(1, (AgentNode("think", REMOTE_HASH),))
    assert resolve_names(graph, installation(REMOTE)) == [
        {
            "code": "provider_unavailable",
            "message": "agent node `think`: the model provider `openai:gpt-test` "
            "is not configured here",
            "node": "think",
            "model": "openai:gpt-test",
        }
    ]
    assert resolve_names(graph, installation(REMOTE, openai="http://127.0.0.1:9/v1")) == []


def test_every_failure_is_collected_in_document_order() -> None:
    graph = Graph(
        1,
        (
            ToolNode("z_tool", "nope"),
            AgentNode("a_agent", MISSING_HASH),
            AgentNode("m_remote", REMOTE_HASH),
            ToolNode("b_tool", "http_request"),
        ),
    )
    errors = resolve_names(graph, installation(REMOTE))
    assert [(e["code"], e["node"]) for e in errors] == [
        ("unknown_tool", "z_tool"),
        ("unknown_agent", "a_agent"),
        ("provider_unavailable", "m_remote"),
        ("tool_disabled", "b_tool"),
    ]


def test_subgraphs_are_visited_depth_first_where_their_owner_stands() -> None:
    inner = Graph(1, (ToolNode("deep", "nope_deep"),))
    body = Graph(
        1,
        (
            ToolNode("step", "nope_step"),
            FoldNode("inner", SubgraphBody(inner), 2, "done == true", JoinLast()),
        ),
    )
    graph = Graph(
        1,
        (
            ToolNode("first", "nope_first"),
            MapNode("each", "items", 2, SubgraphBody(body)),
            ToolNode("last", "nope_last"),
        ),
    )
    errors = resolve_names(graph, installation())
    assert [(e["node"], e.get("subgraph")) for e in errors] == [
        ("first", None),
        ("step", ["each"]),
        ("deep", ["each", "inner"]),
        ("last", None),
    ]
    assert errors[2]["message"] == (
        "in the subgraph of `each`: in the subgraph of `inner`: "
        "tool node `deep`: no tool registered under the name `nope_deep`"
    )
    assert "subgraph" not in errors[0]


def test_a_node_body_is_resolved_as_the_node_it_names() -> None:
    graph = Graph(
        1,
        (MapNode("each", "items", 1, NodeBody("work")), AgentNode("work", MISSING_HASH)),
        (),
    )
    assert [e["node"] for e in resolve_names(graph, installation())] == ["work"]


def test_the_critic_panel_templates_run_here_with_echo_critics() -> None:
    critic = AgentDefinition(model="echo", prompt="Criticise.")
    synthesizer = AgentDefinition(model="echo", prompt="Synthesize.")
    critic_hash, synth_hash = agent_def_hash(critic), agent_def_hash(synthesizer)
    for graph in (
        templates.parallel(critic_hash, synth_hash, ["a", "b"]),
        templates.rounds(critic_hash, synth_hash, ["a", "b"], 3),
    ):
        assert validate(graph) == []
        assert resolve_names(graph, installation(critic, synthesizer)) == []


def test_each_agent_is_looked_up_once_per_resolution() -> None:
    graph = Graph(1, (AgentNode("a", WRITER_HASH), AgentNode("b", WRITER_HASH)))
    directory_installation = installation(WRITER)
    assert resolve_names(graph, directory_installation) == []
    assert directory_installation.agents.asked == [WRITER_HASH]


# An agent stored before its `output_schema` was read as node schemas are (the definition
# is built directly, as the store returns it, without parse_agent_definition's checks).
OUTSIDE = AgentDefinition(
    model="echo", prompt="Answer.", output_schema={"$ref": "https://schemas.example/answer"}
)
LOOKAROUND = AgentDefinition(
    model="echo", prompt="Answer.", output_schema={"type": "string", "pattern": "(?=x)"}
)
NOT_A_SCHEMA = AgentDefinition(model="echo", prompt="Answer.", output_schema={"type": 5})


def test_an_agents_output_schema_that_refers_outside_is_not_runnable() -> None:
    digest = agent_def_hash(OUTSIDE)
    graph = Graph(1, (AgentNode("answer", digest),))

    assert resolve_names(graph, installation(OUTSIDE)) == [
        {
            "code": "schema_reference_not_local",
            "message": "agent node `answer`: its agent's `output_schema` refers outside itself "
            "at `/$ref`: `https://schemas.example/answer` (only local `#…` references are "
            "allowed)",
            "node": "answer",
            "agent_hash": digest,
            "field": "output_schema",
            "path": "/$ref",
            "reference": "https://schemas.example/answer",
        }
    ]


def test_an_agents_output_schema_is_read_like_a_nodes_in_a_subgraph_too() -> None:
    digest = agent_def_hash(LOOKAROUND)
    body = SubgraphBody(Graph(1, (AgentNode("inner", digest),)))
    graph = Graph(1, (MapNode("each", "$.items", 2, body),))

    (error,) = resolve_names(graph, installation(LOOKAROUND))

    assert error["code"] == "schema_pattern_unsupported"
    assert error["subgraph"] == ["each"]
    assert error["message"].startswith(
        "in the subgraph of `each`: agent node `inner`: its agent's `output_schema` has a pattern"
    )


def test_an_agents_output_schema_that_is_not_a_json_schema_is_not_runnable() -> None:
    digest = agent_def_hash(NOT_A_SCHEMA)

    (error,) = resolve_names(Graph(1, (AgentNode("answer", digest),)), installation(NOT_A_SCHEMA))

    assert error["code"] == "invalid_json_schema"
    assert "its agent's `output_schema` is not a valid JSON Schema" in error["message"]


def test_a_node_declaring_its_own_output_schema_does_not_use_its_agents() -> None:
    node = AgentNode("answer", agent_def_hash(OUTSIDE), output_schema={"type": "string"})

    assert resolve_names(Graph(1, (node,)), installation(OUTSIDE)) == []


def test_a_stored_agent_listing_the_structured_answers_tool_is_refused_at_run_time() -> None:
    taken = AgentDefinition(model="echo", prompt="Answer.", tools=("salvor_answer",))
    digest = agent_def_hash(taken)
    graph = Graph(1, (AgentNode("write", digest),))
    assert resolve_names(graph, installation(taken)) == [
        {
            "code": "answer_tool_name_taken",
            "message": "agent node `write`: the tool name `salvor_answer` is reserved for "
            "the structured answer",
            "node": "write",
            "agent_hash": digest,
        }
    ]
