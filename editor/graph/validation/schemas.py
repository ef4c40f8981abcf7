"""Checks on the free JSON values of a document: schema validity (E6) and closed-world
schemas (E10).

Checking a schema against the Draft 2020-12 meta-schema costs about a millisecond, so
results are memoised by the schema's canonical bytes. What makes a schema unsafe to evaluate
(references that leave it, dangle or recurse, patterns RE2 cannot run, another dialect) is
found by :mod:`editor.graph.closed_schemas`, the module the engine compiles schemas with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from editor.graph.closed_schemas import Finding, meta_schema_problem, schema_findings
from editor.graph.jsonio import canonical_json
from editor.graph.model import PAYLOAD_FIELDS, Node

if TYPE_CHECKING:
    from editor.graph.validation.level import Level

__all__ = ["check_node_schemas", "schema_problem"]

_SCHEMA_MEMO: dict[bytes, str | None] = {}
_SCHEMA_MEMO_SIZE = 4096

_SCHEMA_FIELDS = ("approval_schema", "input_schema", "output_schema", "accumulator_schema")
_NODE_SCHEMA_FIELDS = {
    kind: tuple(spec.name for spec in specs if spec.name in _SCHEMA_FIELDS)
    for kind, specs in PAYLOAD_FIELDS.items()
}


def schema_problem(schema: Any, key: bytes | None = None) -> str | None:
    """jsonschema's best-match message when ``schema`` is not a valid Draft 2020-12 schema.

    Memoised by the schema's canonical bytes (``key``, when the caller already
    has them): checking costs about a millisecond and documents repeat schemas.
    """
    if key is None:
        key = canonical_json(schema)
    if key in _SCHEMA_MEMO:
        return _SCHEMA_MEMO[key]
    problem = meta_schema_problem(schema)
    if len(_SCHEMA_MEMO) >= _SCHEMA_MEMO_SIZE:
        _SCHEMA_MEMO.clear()
    _SCHEMA_MEMO[key] = problem
    return problem


def _closed_world_error(level: Level, node: Node, field: str, finding: Finding) -> None:
    level.add(
        "E10",
        finding.code,
        f"{node.kind} node `{node.id}`: " + finding.describe(f"`{field}`"),
        node=node.id,
        field=field,
        **finding.keys,
    )


def check_node_schemas(level: Level, node: Node) -> None:
    """E6 and E10 for one node's schema fields, in wire order.

    E10 reads only a schema that passed E6: the meta-schema check has made sure its keywords
    have the shapes the closed-world reading expects.
    """
    for field in _NODE_SCHEMA_FIELDS[node.kind]:
        schema = getattr(node, field)
        if field == "approval_schema":
            if type(schema) is not dict:
                continue  # check 4c reported it
        elif schema is None:
            continue
        key = level.key(schema)
        problem = schema_problem(schema, key)
        if problem is not None:
            level.add(
                "E6",
                "invalid_json_schema",
                f"{node.kind} node `{node.id}`: `{field}` is not a valid JSON Schema: {problem}",
                node=node.id,
                field=field,
                error=problem,
            )
            continue
        for finding in schema_findings(schema, key):
            _closed_world_error(level, node, field, finding)
