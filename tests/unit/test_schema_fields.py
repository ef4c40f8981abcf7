"""A JSON Schema as a field list and back (``editor/presentation/schema_fields.py``): every
schema the list can show comes back byte for byte in canonical JSON, through the fields and
through the text a form posts; anything else is said to be unrepresentable, with why."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editor.graph.edits import NEW_NODE_DEFAULTS
from editor.graph.jsonio import canonical_json
from editor.presentation.approval_forms import approval_form
from editor.presentation.schema_fields import (
    MAX_FIELDS,
    FieldList,
    SchemaField,
    Unrepresentable,
    add_row,
    move_row,
    read_rows,
    read_schema,
    remove_row,
    rows_of,
    write_schema,
)
from tests.unit.fuzzing import fuzz_settings

RICH = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "title": "Approve", "default": False},
        "amount": {
            "type": "number",
            "title": "Amount",
            "minimum": 0,
            "maximum": 1e16,
            "default": 12.5,
            "description": "In euros.\nCents allowed.",
        },
        "size": {"type": "integer", "enum": [1, 2, 3], "default": 2, "x-order": 1.5},
        "reason": {
            "type": "string",
            "minLength": 3,
            "maxLength": 400,
            "pattern": "^[A-Z]",
            "default": "Looks fine",
        },
        "level": {"type": "string", "enum": ["low", "high"], "x-order": 2},
        "tags": {"type": "array", "default": ["a", {"b": -0.0}]},
        "extra": {"type": "object", "default": {"z": 1, "a": [True, None]}},
    },
    "required": ["reason", "approved"],
}


def through_the_form(schema: Any) -> Any:
    """The schema read into fields, shown as a form's text (posted with CR LF line breaks,
    as browsers post text areas), read back and written."""
    fields = read_schema(schema)
    assert isinstance(fields, FieldList)
    posted = [
        {part: text.replace("\n", "\r\n") for part, text in row.items()} for row in rows_of(fields)
    ]
    again, problems = read_rows(posted, fields.required_order)
    assert problems == []
    return write_schema(again)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},
        NEW_NODE_DEFAULTS["gate"]["approval_schema"],
        RICH,
        {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "string"}}},
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["b", "a"],
        },
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-order": 2},
                "b": {"type": "string", "x-order": 1},
            },
            "required": ["a", "b"],
        },
        {"type": "object", "properties": {"n": {"type": "number", "minimum": 0.1, "default": 3.0}}},
    ],
    ids=["empty", "new-gate", "rich", "by-name", "required-order", "hints-over-required", "floats"],
)
def test_a_schema_the_fields_can_show_comes_back_byte_for_byte(schema: Any) -> None:
    fields = read_schema(schema)

    assert isinstance(fields, FieldList)
    assert canonical_json(write_schema(fields)) == canonical_json(schema)
    assert canonical_json(through_the_form(schema)) == canonical_json(schema)


def test_the_fields_come_in_the_order_the_inbox_shows_them() -> None:
    fields = read_schema(RICH)

    assert isinstance(fields, FieldList)
    listed = [item.name for item in fields.fields]
    shown = [item.key for item in approval_form(RICH, None).fields or ()]
    assert listed == shown
    assert listed[:2] == ["reason", "approved"]


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (None, "is not an object schema"),
        ({"type": "object", "additionalProperties": False}, "uses `additionalProperties`"),
        ({"properties": {"a": {"type": "string"}}}, 'does not say `"type": "object"`'),
        ({"type": "object", "properties": {}}, "lists no field"),
        ({"type": "object", "required": []}, "`required` list"),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
            "`required` list",
        ),
        ({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}, "no single type"),
        (
            {"type": "object", "properties": {"a": {"type": "string", "format": "email"}}},
            "`format`",
        ),
        ({"type": "object", "properties": {"a": {"type": "boolean", "minimum": 1}}}, "`minimum`"),
        ({"type": "object", "properties": {"a": {"type": "string", "title": ""}}}, "`title`"),
        ({"type": "object", "properties": {"a": {"type": "integer", "default": 2.0}}}, "default"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": ["x\ny"]}}}, "enum"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": [" x"]}}}, "enum"),
        ({"type": "object", "properties": {" a": {"type": "string"}}}, "named"),
        ({"type": "object", "properties": {"a": {"type": "string", "default": ""}}}, "default"),
        ({"type": "object", "properties": {"a": {"type": "string", "minLength": -1}}}, "count"),
        (
            {"type": "object", "properties": {"a": {"type": "number", "minimum": 2, "maximum": 1}}},
            "the smallest value is above the largest",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "description": "\nx"}}},
            "`description`",
        ),
        (
            {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(201)}},
            f"more than {MAX_FIELDS}",
        ),
    ],
)
def test_a_schema_the_fields_cannot_show_is_said_to_be_so_with_why(
    schema: Any, reason: str
) -> None:
    found = read_schema(schema)

    assert isinstance(found, Unrepresentable)
    assert reason in found.reason


def test_a_schema_with_a_value_the_text_would_change_is_unrepresentable() -> None:
    # 2**64 is a float in a document (beyond 64 bits); its text would read back as 2**64.
    schema = {"type": "object", "properties": {"n": {"type": "number", "maximum": 2**70}}}

    found = read_schema(schema)

    assert isinstance(found, Unrepresentable)
    assert found.reason == "holds values the fields cannot show exactly"


def test_three_fields_typed_as_text_make_the_approval_schema_a_person_expects() -> None:
    rows = add_row(add_row(add_row([])))
    rows[0].update(name="approved", title="Approve", type="boolean", required="on")
    rows[1].update(name="amount", type="integer", minimum="0", maximum="5000", default="100")
    rows[2].update(name="note", title="Note", enum="short\r\n\r\n long \r\n")

    fields, problems = read_rows(rows)

    assert problems == []
    assert write_schema(fields) == {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "title": "Approve"},
            "amount": {"type": "integer", "minimum": 0, "maximum": 5000, "default": 100},
            "note": {"type": "string", "title": "Note", "enum": ["short", "long"]},
        },
        "required": ["approved"],
    }


def test_the_parts_a_type_does_not_have_are_left_out() -> None:
    rows = add_row([])
    rows[0].update(type="boolean", pattern="^x", min_length="2", enum="a\nb", minimum="1")

    fields, problems = read_rows(rows)

    assert problems == []
    assert write_schema(fields)["properties"] == {"field1": {"type": "boolean"}}


def test_what_cannot_be_read_is_said_per_field_and_part() -> None:
    rows = add_row(add_row(add_row([])))
    rows[0].update(name="n", type="number", default="lots", minimum="5", maximum="1")
    rows[1].update(name="n", type="integer", enum="1\n2.5")
    rows[2].update(name=" ", type="object", default="[1]")

    _, problems = read_rows(rows)

    assert [problem.sentence() for problem in problems] == [
        "Field 1 (`n`): the default needs a number.",
        "Field 1 (`n`): the smallest value is above the largest.",
        "Field 2 (`n`): the choice “2.5” needs a whole number.",
        "Field 2 (`n`): the name is used by field 1 too.",
        'Field 3: the default needs a JSON object, like {"a": 1}.',
        "Field 3: needs a name.",
    ]


def test_moving_a_field_writes_order_hints_only_when_names_alone_do_not_give_the_order() -> None:
    rows = add_row(add_row([]))
    rows[0]["name"], rows[1]["name"] = "beta", "alpha"

    fields, _ = read_rows(rows)
    written = write_schema(fields)
    assert written["properties"] == {
        "beta": {"type": "string", "x-order": 1},
        "alpha": {"type": "string", "x-order": 2},
    }

    fields, _ = read_rows(move_row(rows, 1, -1))
    assert write_schema(fields)["properties"] == {
        "alpha": {"type": "string"},
        "beta": {"type": "string"},
    }


def test_required_fields_stay_first_whatever_the_list_says() -> None:
    rows = add_row(add_row([]))
    rows[0].update(name="note")
    rows[1].update(name="approved", type="boolean", required="on")

    fields, _ = read_rows(rows)
    schema = write_schema(fields)

    found = read_schema(schema)
    assert isinstance(found, FieldList)
    assert [item.name for item in found.fields] == ["approved", "note"]


def test_adding_names_a_field_not_taken_and_removing_and_moving_keep_the_others() -> None:
    rows = add_row([])
    rows[0]["name"] = "field2"
    rows = add_row(rows)
    assert [row["name"] for row in rows] == ["field2", "field3"]
    assert [row["name"] for row in move_row(rows, 0, 1)] == ["field3", "field2"]
    assert [row["name"] for row in move_row(rows, 0, -1)] == ["field2", "field3"]
    assert [row["name"] for row in remove_row(rows, 0)] == ["field3"]


# --- Any schema the fields can show, generated --------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=8).filter(
    lambda text: text == text.strip()
)
_NUMBER = st.one_of(
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def _property(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["string", "number", "integer", "boolean", "array", "object"]))
    spec: dict[str, Any] = {"type": kind}
    if draw(st.booleans()):
        spec["title"] = draw(_TEXT)
    if draw(st.booleans()):
        spec["description"] = draw(_TEXT) + draw(st.sampled_from(["", "\nmore"]))
    if draw(st.booleans()):
        spec["x-order"] = draw(_NUMBER)
    value = {
        "string": _TEXT,
        "number": _NUMBER,
        "integer": st.integers(-(2**53), 2**53),
        "boolean": st.booleans(),
        "array": st.lists(_JSON, max_size=3),
        "object": st.dictionaries(st.text(max_size=3), _JSON, max_size=3),
    }[kind]
    if draw(st.booleans()):
        spec["default"] = draw(value)
    if kind in ("string", "number", "integer") and draw(st.booleans()):
        spec["enum"] = draw(st.lists(value, min_size=1, max_size=4))
    if kind in ("number", "integer"):
        bounds = sorted(draw(st.lists(_NUMBER, min_size=2, max_size=2)))
        for bound, number in zip(("minimum", "maximum"), bounds, strict=True):
            if draw(st.booleans()):
                spec[bound] = number
    if kind == "string":
        low = draw(st.none() | st.integers(0, 50))
        high = draw(st.none() | st.integers(50, 5000))
        if low is not None:
            spec["minLength"] = low
        if high is not None:
            spec["maxLength"] = high
        if draw(st.booleans()):
            spec["pattern"] = draw(_TEXT)
    return spec


@st.composite
def _schemas(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(st.dictionaries(_TEXT, _property(), max_size=6))
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = properties
        required = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
        if required:
            schema["required"] = required
    return schema


@fuzz_settings()
@given(schema=_schemas())
def test_any_schema_the_fields_can_show_comes_back_byte_for_byte(schema: dict[str, Any]) -> None:
    fields = read_schema(schema)

    if isinstance(fields, Unrepresentable):
        # Only a value whose text would not read back the same (a float the text rounds).
        assert fields.reason == "holds values the fields cannot show exactly"
        return
    assert canonical_json(write_schema(fields)) == canonical_json(schema)
    assert canonical_json(through_the_form(schema)) == canonical_json(schema)


def test_a_field_carries_only_what_it_was_given() -> None:
    assert SchemaField("a").has_default is False
    assert SchemaField("a", default=None).has_default is True
