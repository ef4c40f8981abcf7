"""The node form's schema builder (``editor/presentation/schema_builder.py``): what it shows for a
stored schema, when an answer draws it again, where the focus goes, and what it holds back."""

from __future__ import annotations

import json
from typing import Any

from editor.graph.edits import NEW_NODE_DEFAULTS
from editor.presentation.schema_builder import builder_of, read_builder
from editor.presentation.typed import read_typed_json

GATE = NEW_NODE_DEFAULTS["gate"]["approval_schema"]


def read_json(text: str) -> tuple[Any, str]:
    value, problem = read_typed_json(text)
    return value, "" if problem is None else problem.error


def posted(schema: Any = GATE, **changes: str) -> dict[str, str]:
    """What the builder of ``schema`` posts unchanged, with ``changes``."""
    shown = builder_of("approval_schema", schema, optional=False)
    data = {
        "approval_schema-mode": shown.mode,
        "approval_schema-shape": shown.shape,
        "approval_schema-count": str(len(shown.rows)),
        "approval_schema-required": shown.required_order,
    }
    for row in shown.rows:
        for part, text in row.texts.items():
            if part != "required" or text:
                data[f"approval_schema-{row.index}-{part}"] = text
    data.update(changes)
    return data


def read(data: dict[str, str]) -> Any:
    found = read_builder("approval_schema", data, optional=False, read_json=read_json)
    assert found is not None
    return found


def test_a_new_gates_form_is_two_fields_the_decision_first() -> None:
    shown = builder_of("approval_schema", GATE, optional=False)

    assert shown.mode == "fields"
    assert [row.texts["name"] for row in shown.rows] == ["approved", "comment"]
    assert [mode for mode, _ in shown.modes] == ["fields", "json"]  # required: never unset


def test_typing_a_name_saves_without_drawing_the_form_again() -> None:
    found = read(posted(**{"approval_schema-1-name": "note"}))

    assert not found.problem and not found.redraw
    assert set(found.value["properties"]) == {"approved", "note"}


def test_a_type_changed_or_a_button_pressed_draws_it_again() -> None:
    assert read(posted(**{"approval_schema-1-type": "integer"})).redraw
    assert read(posted(**{"approval_schema-add": "1"})).redraw


def test_a_row_moved_as_far_as_it_goes_keeps_the_focus_on_its_other_button() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}},
    }
    found = read(posted(schema, **{"approval_schema-up": "1"}))
    shown = builder_of("approval_schema", found.value, optional=False, typed=found.shown)

    assert [row.texts["name"] for row in shown.rows] == ["b", "a", "c"]
    assert [row.focus for row in shown.rows] == ["down", "", ""]


def test_asking_for_json_shows_the_schema_as_json_with_the_focus_in_it() -> None:
    found = read(posted(**{"approval_schema-mode": "json"}))
    shown = builder_of("approval_schema", found.value, optional=False, typed=found.shown)

    assert found.redraw
    assert shown.mode == "json"
    assert json.loads(shown.json_text) == GATE
    assert shown.focus_json


def test_rows_that_cannot_be_read_are_held_as_typed_and_shown_again() -> None:
    found = read(posted(**{"approval_schema-1-type": "number", "approval_schema-1-default": "x"}))

    assert found.problem == (
        "has fields that need fixing — field 2 (`comment`): the default needs a number"
    )
    shown = builder_of(
        "approval_schema", GATE, optional=False, typed={"approval_schema": found.held}
    )
    assert shown.mode == "fields"
    assert shown.rows[1].texts["default"] == "x"
