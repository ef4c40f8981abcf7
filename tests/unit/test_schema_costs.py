"""What checking a value against a schema may cost (docs/graph-core.md, *What a check may
cost*): linear ``uniqueItems`` and ``enum`` with jsonschema's own verdicts and messages, short
messages, few violations, and a time limit when the caller gives one."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from editor.engine import violations
from editor.engine.records import RESUME_CHECK_SECONDS
from editor.graph.closed_schemas import (
    MAX_ERRORS,
    MAX_MESSAGE,
    CheckTooSlow,
    compile_schema,
)
from editor.graph.closed_schemas.costs import shorten
from editor.graph.jsonio import canonical_json
from tests.unit.fuzzing import fuzz_settings
from tests.unit.strategies import json_values


def messages(schema: Any, value: Any) -> list[str]:
    return [error.message for error in compile_schema(schema).errors(value)]


def jsonschemas_messages(schema: Any, value: Any) -> list[str]:
    """jsonschema's own, on the schema as the closed world reads it (from canonical bytes),
    shortened as the closed world shortens them."""
    canonical = json.loads(canonical_json(schema))
    return [shorten(error.message) for error in Draft202012Validator(canonical).iter_errors(value)]


# --- uniqueItems and enum: jsonschema's verdicts, in linear time ----------------------------------

#: Values that jsonschema's equality tells apart, or not, in ways Python's does not.
TRICKY = [0, 1, 1.0, -0.0, True, False, None, "1", [1], [1.0], [True], {"a": 1}, {"a": 1.0},
          {"a": True}, [{"a": [1]}], [{"a": [True]}], [], {}, "", 2**64, float(2**64)]  # fmt: skip


@pytest.mark.parametrize("left", TRICKY, ids=repr)
@pytest.mark.parametrize("right", TRICKY, ids=repr)
def test_unique_items_and_enum_agree_with_jsonschema_on_every_pair(left: Any, right: Any) -> None:
    for schema, value in [
        ({"uniqueItems": True}, [left, right]),
        ({"enum": [left]}, right),
        ({"enum": [left, "x"]}, right),
    ]:
        assert messages(schema, value) == jsonschemas_messages(schema, value), (schema, value)


@fuzz_settings()
@given(st.lists(json_values(), max_size=6), json_values())
def test_unique_items_and_enum_agree_with_jsonschema_on_any_values(
    items: list[Any], value: Any
) -> None:
    for schema, checked in [
        ({"uniqueItems": True}, items),
        ({"uniqueItems": True}, [*items, value]),
        ({"enum": items or [None]}, value),
    ]:
        assert messages(schema, checked) == jsonschemas_messages(schema, checked)


def test_unique_items_over_twenty_thousand_objects_answers() -> None:
    """Found: jsonschema compares objects pair by pair (20,000: minutes, in the web process
    when a gate is resolved)."""
    objects = [{"k": n} for n in range(20_000)]

    assert messages({"uniqueItems": True}, objects) == []
    assert messages({"uniqueItems": True}, [*objects, {"k": 7}])[0].endswith(
        "has non-unique elements"
    )


def test_a_large_enum_is_checked_by_lookup() -> None:
    members = list(range(50_000))
    schema = {"type": "array", "items": {"enum": members}}

    assert messages(schema, [49_999] * 10_000) == []


# --- Messages and violations stay small -----------------------------------------------------------


def test_a_long_message_keeps_its_start_and_its_end() -> None:
    """Found: each item missing a 50,000-member enum had a 300 kB message (a thousand items:
    300 MB, and an answer as large)."""
    schema = {"type": "array", "items": {"enum": list(range(50_000))}}

    [first, *rest] = messages(schema, [-1] * 1000)

    assert first.startswith("-1 is not one of [0, 1, 2, ")
    assert first.endswith(", 49998, 49999]")
    assert "…" in first
    assert len(first) <= MAX_MESSAGE
    assert len(rest) == MAX_ERRORS - 1


def test_a_message_that_fits_is_jsonschemas_own() -> None:
    schema = {"enum": list(range(20))}

    assert messages(schema, 99) == jsonschemas_messages(schema, 99)


def test_any_long_message_is_shortened_with_its_verdict_kept() -> None:
    text = "x" * 5000

    [message] = messages({"type": "integer"}, text)

    assert len(message) == MAX_MESSAGE
    assert message.startswith("'xxx")
    assert message.endswith("xxx' is not of type 'integer'")


# --- A time limit, when the caller gives one ----------------------------------------------------

#: 2,000 branches, each checking every item of the value: 200 million checks of 100,000 items.
SLOW = {"allOf": [{"items": {"type": "integer"}}] * 2000}


def test_a_check_past_its_time_limit_stops_and_says_so() -> None:
    began = time.monotonic()

    with pytest.raises(CheckTooSlow) as stopped:
        compile_schema(SLOW).errors(list(range(100_000)), seconds=0.2)

    assert time.monotonic() - began < 30  # stopped, not run to its end (minutes)
    assert str(stopped.value) == ("the value could not be checked against the schema within 0.2 s")


def test_a_resume_input_too_slow_to_check_is_one_violation_naming_the_limit() -> None:
    found = violations(SLOW, list(range(100_000)), seconds=RESUME_CHECK_SECONDS)

    assert found == [
        {
            "path": "$",
            "message": "the value could not be checked against the schema within 2 s",
        }
    ]


def test_without_a_time_limit_nothing_is_timed() -> None:
    schema = {"allOf": [{"items": {"type": "integer"}}] * 20}

    assert compile_schema(schema).errors(list(range(1000))) == []
    assert compile_schema(schema).errors(list(range(1000)), seconds=60) == []
