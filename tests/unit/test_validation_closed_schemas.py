"""Validation refuses schemas the server could not evaluate safely (E10), and node ids over the
length cap (E11): see docs/graph-core.md, *Schemas are closed worlds*.

The codes and messages are ours (extensions); everything the reference defines stays as it
was. Validating never fetches a reference or reads a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from editor.graph import validate_document
from tests.outside_world import SECRET, CountingServer, counting_server, secret_file
from tests.unit.fuzzing import fuzz_settings
from tests.unit.strategies import json_schemas
from tests.unit.test_validation import agent, doc, fold_node, gate, map_node, subgraph, tool

__all__ = ["counting_server", "secret_file"]  # fixtures used here


def errors_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    body = validate_document(json.dumps(document))
    assert body["valid"] is False, body
    return body["errors"]


def only_error(document: dict[str, Any]) -> dict[str, Any]:
    errors = errors_of(document)
    assert len(errors) == 1, errors
    return errors[0]


def is_valid(document: dict[str, Any]) -> bool:
    return validate_document(json.dumps(document))["valid"]


# --- E10: references -------------------------------------------------------------------------


def test_a_remote_reference_is_refused_naming_the_node_the_field_and_the_schema_path(
    counting_server: CountingServer,
) -> None:
    url = f"{counting_server.url}/schema.json#/$defs/x"
    error = only_error(doc([tool("fetch", input_schema={"properties": {"a": {"$ref": url}}})]))

    assert error == {
        "code": "schema_reference_not_local",
        "message": (
            f"tool node `fetch`: `input_schema` refers outside itself at `/properties/a/$ref`: "
            f"`{url}` (only local `#…` references are allowed)"
        ),
        "node": "fetch",
        "field": "input_schema",
        "path": "/properties/a/$ref",
        "reference": url,
    }
    assert counting_server.hits == []


def test_a_file_reference_is_refused_without_reading_the_file(secret_file: Path) -> None:
    reference = f"{secret_file.as_uri()}#/x"
    document = doc([gate("review", {"type": "object", "properties": {"x": {"$ref": reference}}})])

    body = validate_document(json.dumps(document))

    assert [error["code"] for error in body["errors"]] == ["schema_reference_not_local"]
    assert SECRET not in json.dumps(body)


@pytest.mark.parametrize(
    "reference", ["other.json", "urn:example:x", "/etc/passwd", "//host/x", "https://a.example/"]
)
def test_every_reference_that_does_not_start_with_a_hash_is_not_local(reference: str) -> None:
    error = only_error(doc([agent("a", output_schema={"$ref": reference})]))
    assert (error["code"], error["path"], error["reference"]) == (
        "schema_reference_not_local",
        "/$ref",
        reference,
    )


def test_a_remote_dynamic_reference_is_refused(counting_server: CountingServer) -> None:
    url = f"{counting_server.url}/meta#items"
    error = only_error(doc([agent("a", input_schema={"items": {"$dynamicRef": url}})]))
    assert (error["code"], error["path"]) == ("schema_reference_not_local", "/items/$dynamicRef")
    assert counting_server.hits == []


def test_a_dangling_local_reference_is_refused() -> None:
    schema = {"$defs": {"name": {"type": "string"}}, "properties": {"n": {"$ref": "#/$defs/nam"}}}
    error = only_error(
        doc([map_node("m", {"kind": "node", "value": "w"}, output_schema=schema), agent("w")])
    )
    assert error == {
        "code": "schema_reference_dangling",
        "message": (
            "map node `m`: `output_schema` has a reference `#/$defs/nam` at "
            "`/properties/n/$ref` that points to no schema in it"
        ),
        "node": "m",
        "field": "output_schema",
        "path": "/properties/n/$ref",
        "reference": "#/$defs/nam",
    }


def test_a_reference_to_something_that_is_not_a_schema_is_dangling() -> None:
    error = only_error(doc([agent("a", input_schema={"required": ["x"], "$ref": "#/required"})]))
    assert error["code"] == "schema_reference_dangling"


def test_an_unknown_anchor_is_dangling_and_a_known_one_is_fine() -> None:
    known = {"$defs": {"n": {"$anchor": "num", "type": "number"}}, "items": {"$ref": "#num"}}
    assert is_valid(doc([agent("a", input_schema=known)]))
    error = only_error(doc([agent("a", input_schema={"items": {"$ref": "#numb"}})]))
    assert (error["code"], error["reference"]) == ("schema_reference_dangling", "#numb")


def test_a_recursive_reference_is_refused_even_when_it_descends_into_the_value() -> None:
    tree = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            }
        },
        "$ref": "#/$defs/node",
    }
    error = only_error(
        doc([fold_node("f", {"kind": "node", "value": "w"}, accumulator_schema=tree), agent("w")])
    )
    assert error == {
        "code": "schema_reference_recursive",
        "message": (
            "fold node `f`: `accumulator_schema` has a reference `#/$defs/node` at "
            "`/$defs/node/properties/children/items/$ref` that leads back to itself "
            "(recursive schemas are not supported)"
        ),
        "node": "f",
        "field": "accumulator_schema",
        "path": "/$defs/node/properties/children/items/$ref",
        "reference": "#/$defs/node",
    }


def test_every_reference_of_a_cycle_is_reported_in_schema_order() -> None:
    schema = {
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
        "$ref": "#/$defs/a",
    }
    errors = errors_of(doc([agent("a", input_schema=schema)]))
    assert [(e["code"], e["path"]) for e in errors] == [
        ("schema_reference_recursive", "/$defs/a/$ref"),
        ("schema_reference_recursive", "/$defs/b/allOf/0/$ref"),
    ]


def test_a_reference_to_the_root_is_recursive() -> None:
    error = only_error(doc([agent("a", input_schema={"properties": {"x": {"$ref": "#"}}})]))
    assert (error["code"], error["reference"]) == ("schema_reference_recursive", "#")


def test_a_reference_bomb_is_refused() -> None:
    depth = 30
    defs = {
        f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]}
        for i in range(depth)
    }
    defs[f"a{depth}"] = {"type": "integer"}
    error = only_error(doc([agent("a", input_schema={"$defs": defs, "$ref": "#/$defs/a0"})]))
    assert error == {
        "code": "schema_references_too_large",
        "message": (
            "agent node `a`: `input_schema` grows by more than 10000 subschemas once its "
            "references are followed"
        ),
        "node": "a",
        "field": "input_schema",
        "max": 10000,
    }


def test_shared_definitions_that_stay_small_are_fine() -> None:
    address = {
        "type": "object",
        "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
    }
    schema = {
        "$defs": {
            "address": address,
            "person": {
                "properties": {
                    "home": {"$ref": "#/$defs/address"},
                    "work": {"$ref": "#/$defs/address"},
                }
            },
        },
        "properties": {"buyer": {"$ref": "#/$defs/person"}, "seller": {"$ref": "#/$defs/person"}},
    }
    assert is_valid(doc([agent("a", input_schema=schema)]))


# --- E10: patterns and dialects --------------------------------------------------------------


def test_a_pattern_with_a_backreference_is_refused_with_the_engines_reason() -> None:
    error = only_error(doc([gate("g", {"properties": {"code": {"pattern": r"^(a)\1$"}}})]))
    assert error == {
        "code": "schema_pattern_unsupported",
        "message": (
            "gate node `g`: `approval_schema` has a pattern at `/properties/code/pattern` "
            "that cannot be used: invalid escape sequence: \\1 (patterns run on RE2, which has "
            "no backreferences or lookaround)"
        ),
        "node": "g",
        "field": "approval_schema",
        "path": "/properties/code/pattern",
        "pattern": r"^(a)\1$",
        "error": "invalid escape sequence: \\1",
    }


def test_pattern_property_keys_are_patterns_too_and_their_path_is_escaped() -> None:
    error = only_error(doc([agent("a", input_schema={"patternProperties": {"(?!x)a/b~": {}}})]))
    assert (error["code"], error["path"], error["pattern"]) == (
        "schema_pattern_unsupported",
        "/patternProperties/(?!x)a~1b~0",
        "(?!x)a/b~",
    )


def test_a_pattern_that_does_not_parse_is_refused_the_same_way() -> None:
    error = only_error(doc([agent("a", input_schema={"pattern": "("})]))
    assert (error["code"], error["error"]) == ("schema_pattern_unsupported", "missing ): (")


def test_patterns_json_schema_allows_and_re2_runs_are_fine() -> None:
    schema = {
        "properties": {"name": {"pattern": r"^\p{L}+( \p{L}+)*$"}, "code": {"pattern": "^(a+)+$"}}
    }
    assert is_valid(doc([agent("a", input_schema=schema)]))


def test_another_dialect_is_refused_and_2020_12_at_the_top_is_fine() -> None:
    draft7 = "http://json-schema.org/draft-07/schema#"
    error = only_error(doc([agent("a", input_schema={"items": {"$schema": draft7}})]))
    assert error == {
        "code": "schema_dialect_unsupported",
        "message": (
            f"agent node `a`: `input_schema` declares `$schema` `{draft7}` at `/items/$schema`; "
            "only Draft 2020-12 is supported, declared at the top of the schema"
        ),
        "node": "a",
        "field": "input_schema",
        "path": "/items/$schema",
        "dialect": draft7,
    }
    assert only_error(doc([agent("a", input_schema={"$schema": draft7})]))["path"] == "/$schema"
    top = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
    assert is_valid(doc([agent("a", input_schema=top)]))


# --- E10's place among the checks --------------------------------------------------------------


def test_e10_comes_after_e9_per_node_in_field_order_and_skips_what_e6_reported() -> None:
    document = doc(
        [
            agent("a", input_schema={"$ref": "x.json"}, output_schema={"pattern": "(?=a)"}),
            tool("t", input_schema={"type": 5, "$ref": "y.json"}),
        ]
    )
    errors = errors_of(document)
    assert [(e["code"], e["node"], e.get("field")) for e in errors] == [
        ("invalid_json_schema", "t", "input_schema"),
        ("schema_reference_not_local", "a", "input_schema"),
        ("schema_pattern_unsupported", "a", "output_schema"),
    ]


def test_subgraph_schemas_are_checked_with_the_owner_prefix() -> None:
    inner = doc([agent("w", input_schema={"$ref": "#/nope"})])
    error = only_error(doc([map_node("m", subgraph(inner))]))
    assert error["code"] == "schema_reference_dangling"
    assert error["subgraph"] == ["m"]
    assert error["message"].startswith("in the subgraph of `m`: agent node `w`: ")


# --- E10: how many subschemas a document may hold ----------------------------------------------


def wide(count: int) -> dict[str, Any]:
    """A schema of ``count`` subschemas, itself included."""
    return {"allOf": [{"type": "string"}] * (count - 1)}


def test_a_document_whose_schemas_hold_too_many_subschemas_is_refused_unchecked() -> None:
    """Found: the meta-schema check costs about half a millisecond per subschema; a document of
    200,000 empty ones took over a minute to validate (an 8 MiB one, ten)."""
    error = only_error(doc([agent("a", input_schema={"allOf": [{}] * 200_000})]))

    assert error == {
        "code": "schemas_too_large",
        "message": "agent node `a`: `input_schema` takes the document's schemas past 10000 "
        "subschemas, the most one document may hold",
        "node": "a",
        "field": "input_schema",
        "max": 10_000,
    }


@pytest.fixture
def cap_of_100(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap at 100 subschemas, so that reaching it costs little."""
    monkeypatch.setattr("editor.graph.validation.schemas.MAX_DOCUMENT_SUBSCHEMAS", 100)


@pytest.mark.usefixtures("cap_of_100")
def test_the_subschemas_of_every_distinct_schema_of_every_level_count_once() -> None:
    half = wide(50)
    assert is_valid(doc([agent("a", input_schema=half), agent("b", input_schema=half)]))
    assert is_valid(doc([agent("a", input_schema=half, output_schema=wide(50))]))  # the same

    inner = doc([agent("b", input_schema=wide(51))])
    error = only_error(doc([agent("a", input_schema=half), map_node("m", subgraph(inner))]))
    assert (error["code"], error["node"], error["subgraph"]) == ("schemas_too_large", "b", ["m"])
    assert error["message"].startswith("in the subgraph of `m`: agent node `b`: `input_schema` ")


@pytest.mark.usefixtures("cap_of_100")
def test_a_schema_that_would_pass_the_cap_is_not_checked_but_later_ones_are() -> None:
    errors = errors_of(
        doc(
            [
                agent("a", input_schema=wide(90)),
                agent("b", input_schema=wide(20)),
                agent("c", input_schema={"type": "nope"}),
            ]
        )
    )

    assert [(e["code"], e["node"]) for e in errors] == [
        ("invalid_json_schema", "c"),
        ("schemas_too_large", "b"),
    ]


# --- E11: node ids ---------------------------------------------------------------------------


def test_a_node_id_of_256_characters_is_fine_and_257_is_too_long() -> None:
    assert is_valid(doc([agent("é" * 256)]))
    long_id = "é" * 257
    assert only_error(doc([agent(long_id)])) == {
        "code": "node_id_too_long",
        "message": f"node `{'é' * 64}…`: the id is 257 characters, over the 256-character cap",
        "node": long_id,
        "len": 257,
        "max": 256,
    }


def test_a_long_id_in_a_subgraph_carries_the_owner() -> None:
    inner = doc([agent("x" * 300)])
    error = only_error(doc([map_node("m", subgraph(inner))]))
    assert error["code"] == "node_id_too_long"
    assert error["subgraph"] == ["m"]


@fuzz_settings()
@given(schema=json_schemas())
def test_validating_any_schema_answers_and_a_schema_it_accepts_can_be_evaluated(
    schema: Any,
) -> None:
    from editor.engine.schemas import violations

    body = validate_document(json.dumps(doc([agent("a", input_schema=schema)])))
    if body["valid"]:
        for value in (None, 1, "a", [1, "b"], {"a": 1, "b": [2]}):
            assert not any(
                v["message"].startswith("the schema cannot be used")
                for v in violations(schema, value)
            ), schema


def test_a_reference_into_a_value_reads_what_it_finds_there() -> None:
    from editor.engine.schemas import violations

    schema = {"const": {"x": [{"type": "string"}]}, "$ref": "#/const/x/0"}
    assert is_valid(doc([agent("a", input_schema=schema)]))
    assert [v["path"] for v in violations(schema, 5)] == ["$", "$"]  # const, then type
    not_a_schema = {"const": {"x": [1]}, "$ref": "#/const/x/0"}
    error = only_error(doc([agent("a", input_schema=not_a_schema)]))
    assert (error["code"], error["reference"]) == ("schema_reference_dangling", "#/const/x/0")
