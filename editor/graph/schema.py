"""The JSON Schema (Draft 2020-12) of a graph document, generated from the model.

Everything here is read off :data:`~editor.graph.model.PAYLOAD_FIELDS` and the
tagged-variant tables that the strict parser uses, so the schema cannot describe
a different format from the one the parser accepts. The golden copy lives at
``docs/schemas/graph.schema.json``; a test fails when the two drift apart.
"""

from __future__ import annotations

from typing import Any

from editor.graph.jsonio import pretty_json
from editor.graph.model import (
    BODY_KINDS,
    CONDITION_KINDS,
    JOIN_KINDS,
    ON_BOUND_WORDS,
    PAYLOAD_FIELDS,
    U32_MAX,
    UNIT_VARIANTS,
    FieldSpec,
)

__all__ = ["graph_json_schema", "graph_json_schema_text"]

_U32 = {"type": "integer", "minimum": 0, "maximum": U32_MAX}


def _title(kind: str) -> str:
    return "".join(part.capitalize() for part in kind.split("_"))


def _field_schema(spec: FieldSpec) -> dict[str, Any]:
    if spec.type == "string":
        schema: dict[str, Any] = {"type": ["string", "null"] if spec.optional else "string"}
    elif spec.type == "u32":
        schema = {"$ref": "#/$defs/U32"}
    elif spec.type == "u64":
        schema = {"type": "integer", "minimum": 0, "maximum": 18446744073709551615}
    elif spec.type == "on_bound":
        schema = {"enum": [*ON_BOUND_WORDS, None]}
    elif spec.type == "json":
        schema = {}
    elif spec.type == "string_map":
        schema = {"type": "object", "additionalProperties": {"type": "string"}}
    elif spec.type == "cases":
        schema = {"type": "array", "items": {"$ref": "#/$defs/BranchCase"}}
    elif spec.type == "body":
        schema = {"$ref": "#/$defs/Body"}
    elif spec.type == "join":
        schema = {"$ref": "#/$defs/Join"}
    else:
        raise AssertionError(f"no JSON Schema for field type {spec.type}")
    return {**schema, "description": spec.description}


def _tagged(kinds: tuple[str, ...], value_schemas: dict[str, Any]) -> dict[str, Any]:
    variants = []
    for kind in kinds:
        if kind in UNIT_VARIANTS:
            value: dict[str, Any] = {"type": "null"}
            required = ["kind"]
        else:
            value = value_schemas[kind]
            required = ["kind", "value"]
        variants.append(
            {
                "type": "object",
                "additionalProperties": False,
                "required": required,
                "properties": {"kind": {"const": kind}, "value": value},
            }
        )
    return {"oneOf": variants}


def graph_json_schema() -> dict[str, Any]:
    """The JSON Schema of a ``salvor_graph`` v1 document."""
    definitions: dict[str, Any] = {"U32": _U32}
    node_refs = []
    for kind, specs in PAYLOAD_FIELDS.items():
        name = _title(kind)
        definitions[f"{name}Payload"] = {
            "type": "object",
            "additionalProperties": False,
            "required": [spec.name for spec in specs if spec.required],
            "properties": {spec.name: _field_schema(spec) for spec in specs},
        }
        definitions[f"{name}Node"] = {
            "type": "object",
            "additionalProperties": False,
            "required": ["kind", "payload"],
            "properties": {
                "kind": {"const": kind},
                "payload": {"$ref": f"#/$defs/{name}Payload"},
            },
        }
        node_refs.append({"$ref": f"#/$defs/{name}Node"})
    definitions["Node"] = {"oneOf": node_refs}
    definitions["BranchCase"] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "when"],
        "properties": {
            "name": {"type": "string", "description": "The case name; an edge label routes it."},
            "when": {"$ref": "#/$defs/BranchCondition"},
        },
    }
    definitions["BranchCondition"] = _tagged(
        CONDITION_KINDS, {"expression": {"type": "string", "description": "A condition (03)."}}
    )
    definitions["Body"] = _tagged(
        BODY_KINDS,
        {
            "node": {"type": "string", "description": "The id of a node of this document."},
            "subgraph": {"$ref": "#", "description": "An embedded graph document."},
        },
    )
    definitions["Join"] = _tagged(
        JOIN_KINDS, {"best_by": {"type": "string", "description": "A path (03)."}}
    )
    definitions["Edge"] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["from", "to"],
        "properties": {
            "from": {"type": "string", "description": "The source node id."},
            "to": {"type": "string", "description": "The target node id."},
            "label": {
                "type": ["string", "null"],
                "description": "On an edge out of a branch: the case it realises.",
            },
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "salvor_graph document, schema_version 1",
        "description": (
            "A graph document as Gatehouse parses it: unknown keys are refused at every "
            "level, and an explicit null for an optional field means unset."
        ),
        "type": "object",
        "additionalProperties": False,
        "required": ["schema_version", "nodes"],
        "properties": {
            "schema_version": {"$ref": "#/$defs/U32"},
            "nodes": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            "edges": {"type": "array", "items": {"$ref": "#/$defs/Edge"}},
        },
        "$defs": definitions,
    }


def graph_json_schema_text() -> str:
    """The schema as the golden file holds it: indented, with a final newline."""
    return pretty_json(graph_json_schema()) + "\n"
