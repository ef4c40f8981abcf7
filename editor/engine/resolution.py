"""Run-time resolution (spec 02, *Run-time resolution*): is a valid graph runnable *here*?

Every name a graph uses is looked up in this installation's registries — tool names, agent
hashes (agent nodes and branch decision agents), the tools each agent definition lists, and
each agent's model provider — in document order, descending into a map's or fold's subgraph
body as soon as its owner is reached (depth-first). All failures are collected.

Errors are plain dicts with the codes, keys and messages of the spec's table. An error found
inside a subgraph is located the way validation locates one (spec 02, E8): a ``subgraph`` key
listing the enclosing map/fold ids, outermost first, and one ``in the subgraph of `{owner}`: ``
prefix per level on its message (subgraph node ids may repeat top-level ones).
"""

from __future__ import annotations

from typing import Unpack

from editor.engine.ports import ANSWER_TOOL, ANSWER_TOOL_TAKEN, Installation
from editor.graph import AgentDefinition, AgentNode, BranchNode, Graph
from editor.graph.closed_schemas import Finding, schema_findings
from editor.graph.errors import ErrorData, ErrorKeys
from editor.graph.model import SubgraphBody, SubgraphPath
from editor.graph.suggest import Suggester, suggest_suffix
from editor.graph.validation.schemas import schema_problem

__all__ = ["resolve_names"]


class _Resolver:
    def __init__(self, installation: Installation) -> None:
        self.installation = installation
        self.errors: list[ErrorData] = []
        self._suggester: Suggester | None = None
        self._agents: dict[str, AgentDefinition | None] = {}
        self._providers: dict[str, bool] = {}
        self._schema_readings: dict[str, tuple[str | None, tuple[Finding, ...]]] = {}

    def suggest(self, name: str) -> str | None:
        if self._suggester is None:
            self._suggester = Suggester(self.installation.tools.names())
        return self._suggester(name)

    def agent(self, agent_hash: str) -> AgentDefinition | None:
        if agent_hash not in self._agents:
            self._agents[agent_hash] = self.installation.agents.get(agent_hash)
        return self._agents[agent_hash]

    def provider_available(self, model: str) -> bool:
        if model not in self._providers:
            self._providers[model] = self.installation.providers.provider_for(model) is not None
        return self._providers[model]

    def add(self, owners: SubgraphPath, code: str, message: str, **keys: Unpack[ErrorKeys]) -> None:
        prefix = "".join(f"in the subgraph of `{owner}`: " for owner in owners)
        error: ErrorData = {"code": code, "message": prefix + message, **keys}
        if owners:
            error["subgraph"] = list(owners)
        self.errors.append(error)

    def level(self, graph: Graph, owners: SubgraphPath) -> None:
        for node in graph.nodes:
            if node.kind == "tool":
                self.tool_node(node.id, node.tool, owners)
            elif isinstance(node, (AgentNode, BranchNode)) and node.agent_hash is not None:
                # A branch's decision agent is checked, and reported, as an agent node is.
                self.agent_node(node.id, node.agent_hash, owners)
                if isinstance(node, AgentNode) and node.output_schema is None:
                    self.agent_output_schema(node.id, node.agent_hash, owners)
            body = getattr(node, "body", None)
            if isinstance(body, SubgraphBody):
                self.level(body.graph, (*owners, node.id))

    def tool_node(self, node: str, tool: str, owners: SubgraphPath) -> None:
        spec = self.installation.tools.get(tool)
        if spec is None:
            suggestion = self.suggest(tool)
            self.add(
                owners,
                "unknown_tool",
                f"tool node `{node}`: no tool registered under the name "
                f"`{tool}`{suggest_suffix(suggestion)}",
                node=node,
                tool=tool,
                suggestion=suggestion,
            )
        elif not spec.enabled:
            self.add(
                owners,
                "tool_disabled",
                f"tool node `{node}`: the tool `{tool}` is disabled on this installation",
                node=node,
                tool=tool,
            )

    def agent_node(self, node: str, agent_hash: str, owners: SubgraphPath) -> None:
        definition = self.agent(agent_hash)
        if definition is None:
            self.add(
                owners,
                "unknown_agent",
                f"agent node `{node}`: no agent registered for hash `{agent_hash}`",
                node=node,
                agent_hash=agent_hash,
            )
            return
        if ANSWER_TOOL in definition.tools:  # stored before the name was reserved
            self.add(
                owners,
                "answer_tool_name_taken",
                f"agent node `{node}`: {ANSWER_TOOL_TAKEN}",
                node=node,
                agent_hash=agent_hash,
            )
        for tool in definition.tools:
            if tool == ANSWER_TOOL:
                continue
            if self.installation.tools.get(tool) is None:
                self.add(
                    owners,
                    "unknown_agent_tool",
                    f"agent node `{node}`: its agent lists the tool `{tool}`, "
                    "which is not registered",
                    node=node,
                    agent_hash=agent_hash,
                    tool=tool,
                )
        if not self.provider_available(definition.model):
            self.add(
                owners,
                "provider_unavailable",
                f"agent node `{node}`: the model provider `{definition.model}` "
                "is not configured here",
                node=node,
                model=definition.model,
            )

    def agent_output_schema(self, node: str, agent_hash: str, owners: SubgraphPath) -> None:
        """The agent's ``output_schema``, which checks the node's answers when the node
        declares none, read as a node's schema is (E6, E10): a definition stored before
        registration read it so would otherwise validate here and fail every run."""
        definition = self.agent(agent_hash)
        schema = definition.output_schema if definition is not None else None
        if schema is None:
            return
        if agent_hash not in self._schema_readings:  # once per agent, however many nodes
            problem = schema_problem(schema)
            findings = schema_findings(schema) if problem is None else ()
            self._schema_readings[agent_hash] = (problem, findings)
        problem, findings = self._schema_readings[agent_hash]
        subject = "its agent's `output_schema`"
        if problem is not None:
            self.add(
                owners,
                "invalid_json_schema",
                f"agent node `{node}`: {subject} is not a valid JSON Schema: {problem}",
                node=node,
                agent_hash=agent_hash,
                field="output_schema",
                error=problem,
            )
            return
        for finding in findings:
            self.add(
                owners,
                finding.code,
                f"agent node `{node}`: " + finding.describe(subject),
                node=node,
                agent_hash=agent_hash,
                field="output_schema",
                **finding.keys,
            )


def resolve_names(graph: Graph, installation: Installation) -> list[ErrorData]:
    """Every name of ``graph`` this installation cannot resolve; empty when it can run here.

    Per node: a tool node gives ``unknown_tool`` or ``tool_disabled``; an agent node (or a
    branch with a decision agent) gives ``unknown_agent``, or else one ``unknown_agent_tool``
    per unregistered listed tool (in the definition's order) and then ``provider_unavailable``;
    an agent node declaring no ``output_schema`` of its own, then ``invalid_json_schema`` or
    the closed-world codes (E10's) for its agent's ``output_schema``.
    """
    resolver = _Resolver(installation)
    resolver.level(graph, ())
    return resolver.errors
