"""The approval form generated from a gate's ``approval_schema`` (spec 06, *Approval inbox*)."""

from __future__ import annotations

from typing import Any

import pytest

from editor.presentation.approval_forms import (
    FALLBACK,
    MAX_FIELDS,
    approval_form,
    field_errors,
    read_approval,
    with_errors,
    with_post,
)


def only_field(schema: dict[str, Any], value: Any = None) -> Any:
    form = approval_form({"type": "object", "properties": {"x": schema}}, value)
    assert form.fields is not None
    (field,) = form.fields
    return field


@pytest.mark.parametrize(
    ("schema", "kind"),
    [
        ({"type": "boolean"}, "checkbox"),
        ({"type": "string", "enum": ["a", "b"]}, "select"),
        ({"enum": [1, 2]}, "select"),
        ({"type": "number"}, "number"),
        ({"type": "integer"}, "number"),
        ({"type": "string", "maxLength": 200}, "textarea"),
        ({"type": "string", "maxLength": 199}, "text"),
        ({"type": "string"}, "text"),
        ({"type": "array", "items": {"type": "string"}}, "json"),
        ({"type": "object"}, "json"),
        ({"type": ["null", "integer"]}, "number"),
        ({"type": ["boolean", "null"]}, "checkbox"),
        ({"type": "string", "enum": []}, "text"),
        ({"description": "anything"}, "json"),
    ],
)
def test_each_property_becomes_the_field_its_type_asks_for(
    schema: dict[str, Any], kind: str
) -> None:
    assert only_field(schema).kind == kind


def test_a_boolean_enum_is_still_a_checkbox() -> None:
    assert only_field({"type": "boolean", "enum": [True]}).kind == "checkbox"


def test_the_label_is_the_title_or_else_the_key_and_the_description_is_help() -> None:
    titled = only_field({"type": "string", "title": "Reviewer note", "description": "Why"})
    bare = only_field({"type": "string"})

    assert (titled.label, titled.help) == ("Reviewer note", "Why")
    assert (bare.label, bare.help) == ("x", "")


def test_required_properties_are_marked_and_come_first() -> None:
    form = approval_form(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["b"],
        },
        None,
    )

    assert [(field.key, field.required) for field in form.fields or ()] == [
        ("b", True),
        ("a", False),
    ]


def test_fields_are_prefilled_from_the_run_before_the_default() -> None:
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "default": "Proposed title"},
            "count": {"type": "integer", "default": 3},
            "ok": {"type": "boolean", "default": True},
            "tone": {"enum": ["calm", "loud"], "default": "loud"},
            "tags": {"type": "array"},
        },
    }

    form = approval_form(schema, {"title": "From the draft", "tags": ["a", "b"]})
    fields = {field.key: field for field in form.fields or ()}

    assert (fields["title"].initial, fields["title"].source) == ("From the draft", "run")
    assert (fields["count"].initial, fields["count"].source) == ("3", "proposed")
    assert (fields["ok"].checked, fields["ok"].source) == (True, "proposed")
    assert (fields["tone"].selected, fields["tone"].source) == ("1", "proposed")
    assert fields["tags"].source == "run"
    assert '"a"' in fields["tags"].initial


def test_a_field_with_neither_is_blank() -> None:
    field = only_field({"type": "string"}, {"other": 1})

    assert (field.initial, field.source) == ("", "")


def test_an_integer_field_steps_by_one_and_a_number_field_by_anything() -> None:
    assert only_field({"type": "integer"}).step == "1"
    assert only_field({"type": "number"}).step == "any"


@pytest.mark.parametrize(
    "schema",
    [
        None,
        True,
        {"type": "string"},
        {"type": "object"},
        {"type": "object", "properties": {}},
        {"type": "array", "properties": {"a": {}}},
        {"anyOf": [{"type": "string"}, {"type": "number"}]},
    ],
)
def test_any_other_schema_falls_back_to_one_json_text_area(schema: Any) -> None:
    form = approval_form(schema, {"a": 1})

    assert form.is_fallback


def test_a_schema_of_more_properties_than_the_cap_falls_back_to_json() -> None:
    """Found: a card of 9,000 fields was 3.5 MB of page, and no browser could have posted it."""

    def properties(count: int) -> dict[str, Any]:
        return {"type": "object", "properties": {f"p{n}": {"type": "string"} for n in range(count)}}

    assert len(approval_form(properties(MAX_FIELDS), None).shown_fields) == MAX_FIELDS
    wide = properties(MAX_FIELDS + 1)
    assert approval_form(wide, None).is_fallback
    value, problem = read_approval(wide, {FALLBACK: '{"p0": "x"}'})
    assert value == {"p0": "x"}
    assert not problem


def test_the_fallback_is_prefilled_with_the_default_as_proposed() -> None:
    form = approval_form({"type": "string", "default": "yes"}, None)

    assert (form.json_text, form.json_source) == ('"yes"', "proposed")


SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "notify": {"type": "boolean"},
        "note": {"type": "string"},
        "summary": {"type": "string", "maxLength": 500},
        "score": {"type": "number"},
        "count": {"type": "integer"},
        "tone": {"enum": ["calm", 2, None]},
        "tags": {"type": "array"},
    },
    "required": ["approved", "summary"],
}


def test_reading_a_post_converts_every_kind_of_field() -> None:
    value, problem = read_approval(
        SCHEMA,
        {
            "field-approved": "true",
            "field-notify": "true",
            "field-note": " keep spaces ",
            "field-summary": "long text",
            "field-score": "2.5",
            "field-count": "7",
            "field-tone": "1",
            "field-tags": '["a", 1]',
        },
    )

    assert not problem
    assert value == {
        "approved": True,
        "notify": True,
        "note": " keep spaces ",
        "summary": "long text",
        "score": 2.5,
        "count": 7,
        "tone": 2,
        "tags": ["a", 1],
    }


def test_blank_optional_fields_are_left_out_and_an_unchecked_required_box_is_false() -> None:
    schema = {**SCHEMA, "required": ["approved", "summary", "notify"]}
    value, problem = read_approval(
        schema, {"field-approved": "true", "field-summary": "", "field-note": ""}
    )

    assert not problem
    # A required text field left blank is sent as "" (the schema decides whether that is fine);
    # a second required boolean stays a checkbox, unchecked: false.
    assert value == {"approved": True, "summary": "", "notify": False}


def test_what_cannot_be_read_is_reported_beside_its_field() -> None:
    _, problem = read_approval(
        SCHEMA,
        {"field-approved": "true", "field-score": "lots", "field-tags": "[1,", "field-tone": "9"},
    )

    assert set(problem.errors) == {"score", "tags", "tone"}
    assert problem.errors["score"] == ["Enter a number."]


def test_the_fallback_reads_json_and_refuses_anything_else() -> None:
    assert read_approval(None, {FALLBACK: ' {"ok": true} '}) == (
        {"ok": True},
        read_approval(None, {FALLBACK: "1"})[1],
    )
    _, problem = read_approval(None, {FALLBACK: "{nope"})
    assert list(problem.errors) == [FALLBACK]
    _, empty = read_approval(None, {FALLBACK: ""})
    assert empty.errors[FALLBACK] == ["Enter the approval as JSON."]


def test_violations_are_placed_beside_their_fields() -> None:
    by_field, general = field_errors(
        SCHEMA,
        [
            {"path": "$", "message": "'approved' is a required property"},
            {"path": "$.score", "message": "5 is greater than the maximum of 3"},
            {"path": "$.tags[0]", "message": "1 is not of type 'string'"},
            {"path": "$", "message": "Additional properties are not allowed"},
        ],
    )

    assert by_field == {
        "approved": ["This field is required."],
        "score": ["5 is greater than the maximum of 3"],
        "tags": ["1 is not of type 'string'"],
    }
    assert general == ["Additional properties are not allowed"]


def test_a_form_shown_again_keeps_what_was_typed_and_shows_the_errors() -> None:
    form = approval_form(SCHEMA, {"note": "from the run"})

    again = with_errors(
        with_post(form, SCHEMA, {"field-note": "typed", "comment": "why"}),
        {"note": ["too short"]},
        ["general"],
    )

    note = next(field for field in again.fields or () if field.key == "note")
    assert (note.initial, note.source, note.errors) == ("typed", "", ("too short",))
    assert again.comment == "why"
    assert again.errors == ("general",)
