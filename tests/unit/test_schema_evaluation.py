"""Schemas evaluated at run time are closed worlds (issue 11, *Schemas are closed worlds*).

A graph stored before validation refused these schemas, or a tool whose own schema is
hostile, must never make the server fetch a URL or read a file, never hang on a pattern, and
never answer with an exception: checking a value against such a schema says clearly why the
schema cannot be used. Evaluation goes through :mod:`editor.engine.schemas`, as node checks,
accumulators and resume inputs do.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from editor.engine.schemas import first_violation, violations
from tests.outside_world import SECRET, CountingServer, counting_server, secret_file
from tests.unit.fuzzing import fuzz_settings
from tests.unit.strategies import json_schemas, json_values

__all__ = ["counting_server", "secret_file"]  # fixtures used here


def unusable(schema: Any, value: Any = "x") -> str:
    """The one violation of a schema that cannot be evaluated, checked as a resume input is."""
    found = violations(schema, value)
    assert len(found) == 1, found
    assert found[0]["path"] == "$"
    message = found[0]["message"]
    assert message.startswith("the schema cannot be used: "), message
    assert first_violation(schema, value) == message
    return message


# --- Nothing outside the schema is ever read ------------------------------------------------


@pytest.mark.parametrize("keyword", ["$ref", "$dynamicRef"])
def test_a_remote_reference_is_never_fetched_when_a_value_is_checked(
    counting_server: CountingServer, keyword: str
) -> None:
    url = f"{counting_server.url}/schema.json#/$defs/x"
    schema = {"properties": {"a": {keyword: url}}}

    message = unusable(schema, {"a": "not an integer"})

    assert counting_server.hits == []
    assert f"`{url}`" in message
    assert "`/properties/a/" + keyword + "`" in message
    assert "only local `#…` references are allowed" in message
    assert SECRET not in message


def test_a_remote_reference_behind_an_id_is_never_fetched(counting_server: CountingServer) -> None:
    schema = {"$id": f"{counting_server.url}/root.json", "$ref": "other.json"}

    unusable(schema)

    assert counting_server.hits == []


def test_a_file_reference_is_never_read(secret_file: Path) -> None:
    schema = {"$ref": f"{secret_file.as_uri()}#/$defs/x"}

    message = unusable(schema, 5)

    assert SECRET not in message
    assert secret_file.as_uri() in message


def test_a_tools_own_schema_is_a_closed_world_too(counting_server: CountingServer) -> None:
    from editor.tools.checked import with_input_check

    checked = with_input_check({"$ref": f"{counting_server.url}/x"}, lambda value, _: value)
    with pytest.raises(Exception, match="only local `#…` references are allowed"):
        checked("anything", None)  # type: ignore[arg-type]
    assert counting_server.hits == []


# --- References that point nowhere or back to themselves ------------------------------------


def test_a_dangling_local_reference_is_a_clear_violation() -> None:
    message = unusable({"$ref": "#/$defs/missing"})
    assert "`#/$defs/missing`" in message
    assert "points to no schema" in message


def test_a_dangling_anchor_is_a_clear_violation() -> None:
    assert "`#nowhere`" in unusable({"properties": {"a": {"$ref": "#nowhere"}}}, {"a": 1})


def test_a_recursive_reference_is_a_clear_violation_not_a_crash() -> None:
    schema = {
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        "$ref": "#/$defs/a",
    }
    message = unusable(schema)
    assert "leads back to itself" in message


def test_a_reference_bomb_is_refused_before_it_is_evaluated() -> None:
    depth = 40  # 2**40 subschemas once written out: evaluating it would never end
    defs = {
        f"a{i}": {"allOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]}
        for i in range(depth)
    }
    defs[f"a{depth}"] = {"type": "integer"}
    message = unusable({"$defs": defs, "$ref": "#/$defs/a0"})
    assert "once its references are followed" in message


def test_a_local_reference_works() -> None:
    schema = {
        "$defs": {"name": {"type": "string", "minLength": 1}},
        "type": "object",
        "properties": {"first": {"$ref": "#/$defs/name"}, "last": {"$ref": "#/$defs/name"}},
    }
    assert violations(schema, {"first": "Ada", "last": "Lovelace"}) == []
    assert [v["path"] for v in violations(schema, {"first": "", "last": 3})] == [
        "$.first",
        "$.last",
    ]


def test_a_reference_into_an_embedded_resource_works() -> None:
    schema = {
        "$id": "urn:example:root",
        "$defs": {
            "inner": {
                "$id": "urn:example:inner",
                "$defs": {"n": {"type": "integer"}},
                "$ref": "#/$defs/n",
            }
        },
        "properties": {"a": {"$ref": "#/$defs/inner"}},
    }
    assert violations(schema, {"a": 1}) == []
    assert [v["path"] for v in violations(schema, {"a": "one"})] == ["$.a"]


# --- Patterns: JSON Schema's regular expressions, in linear time ----------------------------


def test_a_pattern_end_anchor_does_not_match_before_a_trailing_newline() -> None:
    # ECMA-262, which JSON Schema's patterns follow: `$` is the end of the text. Python's `re`
    # would also match before a final newline.
    assert violations({"pattern": "^a$"}, "a") == []
    assert [v["path"] for v in violations({"pattern": "^a$"}, "a\n")] == ["$"]


def test_pattern_properties_and_additional_properties_use_the_same_engine() -> None:
    schema = {"patternProperties": {"^a$": {"type": "integer"}}, "additionalProperties": False}
    assert violations(schema, {"a": 1}) == []
    assert violations(schema, {"a\n": 1}) != []


def test_unevaluated_properties_use_the_same_engine() -> None:
    schema = {"allOf": [{"patternProperties": {"^a$": True}}], "unevaluatedProperties": False}
    assert violations(schema, {"a": 1}) == []
    assert violations(schema, {"a\n": 1}) != []


def test_a_pattern_violation_keeps_jsonschemas_message() -> None:
    assert violations({"pattern": "^[a-z]+$"}, "ABC") == [
        {"path": "$", "message": "'ABC' does not match '^[a-z]+$'"}
    ]


def test_a_catastrophic_pattern_answers() -> None:
    """`^(a+)+$` takes twice as long with each character under a backtracking engine: on this
    input that would be longer than the universe has existed. The check runs on a thread so
    that a regression fails here instead of hanging the suite."""
    answers: list[Any] = []
    thread = threading.Thread(
        target=lambda: answers.append(violations({"pattern": "^(a+)+$"}, "a" * 200 + "!")),
        daemon=True,
    )
    thread.start()
    thread.join(timeout=120)
    assert answers == [[{"path": "$", "message": f"'{'a' * 200}!' does not match '^(a+)+$'"}]]


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [(r"(a)\1", "invalid escape sequence: \\1"), ("(?=a)", "invalid perl operator: (?=")],
)
def test_a_pattern_the_engine_cannot_run_is_a_clear_violation(pattern: str, reason: str) -> None:
    message = unusable({"properties": {"a": {"pattern": pattern}}}, {"a": "a"})
    assert "`/properties/a/pattern`" in message
    assert reason in message
    assert "no backreferences or lookaround" in message


def test_a_subschema_may_not_switch_to_another_dialect() -> None:
    schema = {"properties": {"a": {"$schema": "http://json-schema.org/draft-07/schema#"}}}
    message = unusable(schema, {"a": 1})
    assert "only Draft 2020-12" in message


# --- Whatever the value, a check answers -----------------------------------------------------


def test_a_schema_that_breaks_the_meta_schema_is_a_clear_violation() -> None:
    assert "cannot be used" in unusable({"type": "nonsense"}, 1)


def test_a_huge_integer_against_a_fractional_multiple_is_a_clear_violation() -> None:
    assert "cannot be used" in unusable({"multipleOf": 0.1}, 10**400)


def test_compiled_schemas_are_memoised_in_a_bounded_cache() -> None:
    from editor.graph.closed_schemas import compile_schema, compiled_cache_info

    first = compile_schema({"type": "integer", "minimum": 3})
    assert compile_schema({"minimum": 3, "type": "integer"}) is first
    bound = compiled_cache_info().maxsize
    assert bound is not None
    for n in range(bound + 10):
        compile_schema({"const": n})
    assert compiled_cache_info().currsize == bound


# --- In a run: the worker fails the run with the reason, and reaches nothing -------------------


def test_a_stored_node_schema_with_a_remote_reference_fails_the_run_and_fetches_nothing(
    counting_server: CountingServer,
) -> None:
    from editor.graph.model import ToolNode
    from tests.unit.engine.harness import Harness, graph

    h = Harness()
    url = f"{counting_server.url}/x.json"
    run_id = h.run(graph(ToolNode("t", "echo", input_schema={"$ref": url})), 1)

    assert h.error(run_id) == (
        "tool node `t`: its input does not match its input_schema: the schema cannot be used: "
        f"it refers outside itself at `/$ref`: `{url}` (only local `#…` references are allowed)"
    )
    assert counting_server.hits == []


def test_a_registered_tools_remote_schema_fails_the_call_and_fetches_nothing(
    counting_server: CountingServer,
) -> None:
    from editor.graph.model import ToolNode
    from tests.unit.engine.harness import Harness, graph

    h = Harness()
    h.tool("hostile", lambda value, _: value, output_schema={"$ref": f"{counting_server.url}/"})
    run_id = h.run(graph(ToolNode("t", "hostile")), 1)

    assert h.error(run_id).startswith(
        "tool node `t` failed: its answer does not match the tool's output schema: "
        "the schema cannot be used: it refers outside itself"
    )
    assert counting_server.hits == []


def test_a_stored_accumulator_with_a_pattern_re2_cannot_run_fails_the_fold_clearly() -> None:
    from editor.graph.model import FoldNode, JoinLast, NodeBody, ToolNode
    from tests.unit.engine.harness import Harness, graph

    fold = FoldNode(
        "f",
        body=NodeBody("w"),
        max_iterations=2,
        stop_when="done",
        join=JoinLast(),
        accumulator_schema={"properties": {"s": {"pattern": "(?<=a)b"}}},
    )
    h = Harness()
    run_id = h.run(graph(fold, ToolNode("w", "echo")), {"s": "ab", "done": True})

    assert "accumulator_schema: the schema cannot be used: it has a pattern at " in h.error(run_id)
    assert "invalid perl operator: (?<" in h.error(run_id)


# --- Depth -----------------------------------------------------------------------------------


def test_a_schema_nested_to_the_reader_cap_is_checked() -> None:
    schema: Any = {"type": "integer"}
    for _ in range(126):
        schema = {"allOf": [schema]}
    assert violations(schema, 1) == []
    assert violations(schema, "x")[0]["path"] == "$"


def test_references_that_nest_past_the_cap_are_refused() -> None:
    defs = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(200)}
    defs["d200"] = {"type": "integer"}
    message = unusable({"$defs": defs, "$ref": "#/$defs/d0"})
    assert "nests deeper than 128 levels once its references are followed" in message


# --- Any stored value as a schema, any value to check: an answer, never an exception -----------


@fuzz_settings()
@given(schema=json_schemas(), value=json_values())
def test_checking_any_value_against_any_stored_schema_answers(schema: Any, value: Any) -> None:
    found = violations(schema, value)
    assert all(set(item) == {"path", "message"} for item in found)


def test_a_schema_that_is_not_json_is_a_clear_violation() -> None:
    assert "cannot be written as JSON" in unusable({"pattern": "\ud800"})


def test_only_the_closed_world_module_builds_a_jsonschema_validator() -> None:
    """The one compile step: anything else that built a validator would get jsonschema's
    default registry (which fetches remote references) and Python's `re` for patterns."""
    import re as regex

    import editor

    building = regex.compile(r"Draft\d+Validator|validator_for|RefResolver|jsonschema\.validate\b")
    root = Path(editor.__file__).parent
    offenders = [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*.py"))
        if "closed_schemas" not in path.parts and building.search(path.read_text("utf-8"))
    ]
    assert offenders == []
