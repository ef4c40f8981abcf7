"""Checks on the free JSON values of a document: schema validity (E6) and closed-world
schemas (E10).

Checking a schema against the Draft 2020-12 meta-schema costs about a millisecond, so
results are memoised by the schema's canonical bytes. What makes a schema unsafe to evaluate
(references that leave it, dangle or recurse, patterns RE2 cannot run, another dialect) is
found by :mod:`editor.graph.closed_schemas`, the module the engine compiles schemas with.

The meta-schema check costs about half a millisecond per subschema, which the document's
size does not bound (an 8 MiB document of ``{"allOf": [{}, {}, …]}`` is two million of them:
ten minutes of one request). So the document's distinct schemas may hold at most
:data:`MAX_DOCUMENT_SUBSCHEMAS` subschemas in all (:class:`SchemaBudget`); a schema that
would take them past it is reported (``schemas_too_large``, under E10) and not checked.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from editor.graph.closed_schemas import (
    Finding,
    count_subschemas,
    meta_schema_problem,
    schema_findings,
)
from editor.graph.closed_schemas.memo import DigestMemo
from editor.graph.jsonio import canonical_json
from editor.graph.model import PAYLOAD_FIELDS, Node

if TYPE_CHECKING:
    from editor.graph.validation.level import Level

__all__ = ["MAX_DOCUMENT_SUBSCHEMAS", "SchemaBudget", "check_node_schemas", "schema_problem"]

#: The most subschemas a document's distinct schemas may hold in all (about five seconds of
#: meta-schema checking on a slow machine; real documents hold a few hundred).
MAX_DOCUMENT_SUBSCHEMAS = 10_000


@dataclass(slots=True)
class SchemaBudget:
    """What the schemas of one document (every level of it) have used of
    :data:`MAX_DOCUMENT_SUBSCHEMAS`; a schema seen before (by canonical bytes) is free. It
    lives as long as one validation, so it may keep the bytes."""

    limit: int = dataclasses.field(default_factory=lambda: MAX_DOCUMENT_SUBSCHEMAS)
    used: int = 0
    seen: set[bytes] = dataclasses.field(default_factory=set)

    def admit(self, schema: Any, key: bytes) -> bool:
        """Whether ``schema`` fits in what is left (it is then counted)."""
        if key in self.seen:
            return True
        size = count_subschemas(schema, self.limit - self.used)
        if self.used + size > self.limit:
            return False
        self.used += size
        self.seen.add(key)
        return True


#: Keyed by a digest of the canonical bytes, not the bytes (megabytes, for a large schema).
_SCHEMA_MEMO: DigestMemo[str | None] = DigestMemo(4096)

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
    return _SCHEMA_MEMO.get(key, lambda: meta_schema_problem(schema))


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
        if not level.schema_budget.admit(schema, key):
            limit = level.schema_budget.limit
            level.add(
                "E10",
                "schemas_too_large",
                f"{node.kind} node `{node.id}`: `{field}` takes the document's schemas past "
                f"{limit} subschemas, the most one document may hold",
                node=node.id,
                field=field,
                max=limit,
            )
            continue
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
