"""The graph document core: pure Python, no Django.

Reads, checks, hashes and writes ``salvor_graph`` v1 documents exactly as the
reference implementation does (specs 01–03), plus Gatehouse's validation
extensions. Everything public is re-exported here.
"""

from editor.graph.agents import (
    AgentDefinition,
    agent_def_hash,
    llm_env_problems,
    parse_agent_definition,
)
from editor.graph.closed_schemas import CompiledSchema, SchemaUnusable, compile_schema
from editor.graph.diff import diff_graphs
from editor.graph.document import DEFAULT_MAX_BYTES, check_document, validate_document
from editor.graph.errors import (
    ErrorData,
    ExpressionError,
    GraphError,
    InvalidAgentDefinition,
    JsonError,
    JsonPosition,
    MalformedDocument,
)
from editor.graph.expressions import (
    MISSING,
    Expression,
    Reference,
    parse_expression,
    parse_reference,
)
from editor.graph.jsonio import (
    canonical_json,
    hash_bytes,
    hash_value,
    hex_digits,
    read_json,
    short_hash,
)
from editor.graph.model import (
    SCHEMA_VERSION,
    AgentNode,
    BranchNode,
    DelayNode,
    Edge,
    FoldNode,
    GateNode,
    Graph,
    MapNode,
    Node,
    SubgraphPath,
    ToolNode,
)
from editor.graph.parsing import parse_document, parse_graph
from editor.graph.schema import graph_json_schema
from editor.graph.validation import DEFAULT_MAX_EDGES, DEFAULT_MAX_NODES, summarize, validate
from editor.graph.wire import GraphHash, canonical_graph, graph_hash, wire_json, wire_value

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_EDGES",
    "DEFAULT_MAX_NODES",
    "MISSING",
    "SCHEMA_VERSION",
    "AgentDefinition",
    "AgentNode",
    "BranchNode",
    "CompiledSchema",
    "DelayNode",
    "Edge",
    "ErrorData",
    "Expression",
    "ExpressionError",
    "FoldNode",
    "GateNode",
    "Graph",
    "GraphError",
    "GraphHash",
    "InvalidAgentDefinition",
    "JsonError",
    "JsonPosition",
    "MalformedDocument",
    "MapNode",
    "Node",
    "Reference",
    "SchemaUnusable",
    "SubgraphPath",
    "ToolNode",
    "agent_def_hash",
    "canonical_graph",
    "canonical_json",
    "check_document",
    "compile_schema",
    "diff_graphs",
    "graph_hash",
    "graph_json_schema",
    "hash_bytes",
    "hash_value",
    "hex_digits",
    "llm_env_problems",
    "parse_agent_definition",
    "parse_document",
    "parse_expression",
    "parse_graph",
    "parse_reference",
    "read_json",
    "short_hash",
    "summarize",
    "validate",
    "validate_document",
    "wire_json",
    "wire_value",
]
