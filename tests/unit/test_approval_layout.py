"""How a gate's card lays out its form (``docs/inbox.md``): field order, the decision's two
buttons, the schema's own comment, the constraints the browser checks, and
where the focus goes after a refused submit."""

from __future__ import annotations

from typing import Any

import pytest

from editor.graph.templates import APPROVAL_SCHEMA
from editor.presentation.approval_forms import approval_form, read_approval, with_errors
from editor.presentation.approval_rules import constraints_of, decision_labels, ordered_keys


def keys(schema: dict[str, Any]) -> list[str]:
    return [field.key for field in approval_form(schema, None).fields or ()]


def test_the_approval_gate_template_shows_the_draft_then_the_comment_and_decides_by_buttons() -> (
    None
):
    form = approval_form(APPROVAL_SCHEMA, {"draft": "Tea is good."})

    assert [field.key for field in form.shown_fields] == ["draft", "comment"]
    assert form.decision is not None
    assert (form.decision.key, form.decision.yes_label, form.decision.no_label) == (
        "approved",
        "Approve",
        "Reject",
    )
    assert form.comment_key == "comment"


def test_required_fields_come_in_the_order_of_required_then_the_rest_by_name() -> None:
    schema = {
        "type": "object",
        "properties": {name: {"type": "string"} for name in ("zeta", "alpha", "mid", "beta")},
        "required": ["zeta", "mid"],
    }

    assert keys(schema) == ["zeta", "mid", "alpha", "beta"]


def test_order_hints_come_before_the_position_in_required_and_the_name() -> None:
    properties = {
        "a": {"type": "string"},
        "b": {"type": "string", "x-order": 2},
        "c": {"type": "string", "propertyOrder": 1},
        "d": {"type": "string", "x-order": 0},
        "e": {"type": "string", "x-order": True},  # not a number: no hint
    }

    assert ordered_keys(properties, ["a", "b"]) == ["b", "a", "d", "c", "e"]


def test_only_the_first_required_boolean_becomes_buttons() -> None:
    schema = {
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "urgent": {"type": "boolean"},
            "notify": {"type": "boolean"},
        },
        "required": ["urgent", "ok"],
    }

    kinds = {field.key: field.kind for field in approval_form(schema, None).fields or ()}

    assert kinds == {"urgent": "decision", "ok": "checkbox", "notify": "checkbox"}


def test_a_form_without_a_required_boolean_keeps_its_checkbox_and_resolve_button() -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    form = approval_form(schema, None)

    assert form.decision is None
    assert [field.kind for field in form.shown_fields] == ["checkbox"]


def test_without_a_decision_every_boolean_is_a_checkbox_read_as_one() -> None:
    # A test run's sample input is a form by the same rules, with nothing to decide.
    schema = {
        "type": "object",
        "properties": {"urgent": {"type": "boolean"}, "amount": {"type": "integer"}},
        "required": ["urgent"],
    }

    form = approval_form(schema, {"urgent": True}, decision=False)

    assert form.decision is None
    assert {field.key: field.kind for field in form.shown_fields} == {
        "urgent": "checkbox",
        "amount": "number",
    }
    value, problem = read_approval(schema, {"field-amount": "3"}, decision=False)
    assert value == {"urgent": False, "amount": 3}
    assert not problem


@pytest.mark.parametrize(
    ("title", "labels"),
    [
        (None, ("Approve", "Reject")),
        ("", ("Approve", "Reject")),
        ("Approve", ("Approve", "Reject")),
        ("Approve publishing", ("Approve publishing", "Reject publishing")),
        ("accept the offer", ("accept the offer", "decline the offer")),
        ("Looks right", ("Looks right", "Not “Looks right”")),
    ],
)
def test_the_buttons_are_the_title_and_its_negation(
    title: str | None, labels: tuple[str, str]
) -> None:
    assert decision_labels(title) == labels


def test_the_buttons_post_true_or_false_and_nothing_else() -> None:
    assert read_approval(APPROVAL_SCHEMA, {"field-draft": "x", "field-approved": "true"})[0] == {
        "draft": "x",
        "approved": True,
    }
    assert read_approval(APPROVAL_SCHEMA, {"field-draft": "x", "field-approved": "false"})[0] == {
        "draft": "x",
        "approved": False,
    }
    for posted in ({}, {"field-approved": "on"}, {"field-approved": "True"}):
        _, problem = read_approval(APPROVAL_SCHEMA, {"field-draft": "x", **posted})
        assert problem.errors == {"approved": ["Choose Approve or Reject."]}


def test_a_schema_comment_is_part_of_the_input() -> None:
    value, problem = read_approval(
        APPROVAL_SCHEMA,
        {"field-draft": "x", "field-approved": "true", "field-comment": "fine", "comment": "no"},
    )

    assert not problem
    assert value == {"draft": "x", "approved": True, "comment": "fine"}


def test_number_limits_become_attributes_and_words() -> None:
    bounded = constraints_of("number", {"minimum": 1, "maximum": 5}, required=True, integer=True)
    open_integer = constraints_of(
        "number", {"exclusiveMinimum": 0, "exclusiveMaximum": 10.5}, required=False, integer=True
    )
    open_number = constraints_of(
        "number", {"exclusiveMinimum": 0, "multipleOf": 0.5}, required=False, integer=False
    )

    assert bounded.attributes == (("required", ""), ("min", "1"), ("max", "5"))
    assert [text for text, _ in bounded.words] == ["a whole number", "1 to 5"]
    assert open_integer.attributes == (("min", "1"), ("max", "10"))
    assert open_number.attributes == ()
    assert [text for text, _ in open_number.words] == ["more than 0", "a multiple of 0.5"]


def test_text_limits_become_attributes_and_a_pattern_to_check() -> None:
    spec = {"minLength": 3, "maxLength": 20000, "pattern": "^[A-Z]"}

    required = constraints_of("textarea", spec, required=True, integer=False)
    optional = constraints_of("text", {"maxLength": 1}, required=False, integer=False)
    blank_allowed = constraints_of("text", {"maxLength": 9}, required=True, integer=False)

    assert required.attributes == (("required", ""), ("minlength", "3"), ("maxlength", "20000"))
    assert required.pattern == "^[A-Z]"
    assert required.words == (
        ("3 to 20,000 characters", False),
        ("matches", False),
        ("^[A-Z]", True),
    )
    assert optional.words == (("at most 1 character", False),)
    # A blank required text is "" and fine without a minimum length: the browser allows it too.
    assert ("required", "") not in blank_allowed.attributes


@pytest.mark.parametrize("kind", ["number", "select", "json"])
def test_a_required_field_that_would_be_left_out_when_blank_is_required_in_the_browser(
    kind: str,
) -> None:
    assert ("required", "") in constraints_of(kind, {}, required=True, integer=False).attributes
    assert constraints_of(kind, {}, required=False, integer=False).attributes == ()


def test_after_a_refusal_the_first_field_with_an_error_as_shown_takes_the_focus() -> None:
    form = approval_form(APPROVAL_SCHEMA, None)

    both = with_errors(form, {"approved": ["Choose"], "comment": ["too long"]}, [])
    decision_only = with_errors(form, {"approved": ["Choose"]}, [])
    general = with_errors(form, {}, ["Additional properties are not allowed"])

    assert [field.key for field in both.fields or () if field.focus] == ["comment"]
    assert [field.key for field in decision_only.fields or () if field.focus] == ["approved"]
    assert general.focus_general
    assert not both.focus_general
