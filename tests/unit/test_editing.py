"""What the editor's node form turns into: payload fields, or the fields it cannot read."""

from __future__ import annotations

import pytest

from editor.services.editing import FormProblems, field_for_error, payload_from_form


def test_optional_text_left_empty_unsets_the_field() -> None:
    payload = payload_from_form("gate", {"name": "", "prompt": "  ", "approval_schema": "{}"})

    assert payload == {"name": None, "prompt": None, "approval_schema": {}}


def test_schemas_are_read_as_strict_json() -> None:
    with pytest.raises(FormProblems) as refused:
        payload_from_form("agent", {"agent_hash": "x", "output_schema": '{"a": NaN}'})

    assert set(refused.value.problems) == {"output_schema"}


def test_an_empty_approval_schema_is_refused_as_required() -> None:
    with pytest.raises(FormProblems) as refused:
        payload_from_form("gate", {"approval_schema": ""})

    assert "required" in refused.value.problems["approval_schema"]


def test_a_tool_input_must_map_names_to_strings() -> None:
    with pytest.raises(FormProblems) as refused:
        payload_from_form("tool", {"tool": "echo", "input": '{"text": 5}'})

    assert set(refused.value.problems) == {"input"}
    assert payload_from_form("tool", {"tool": "echo", "input": "{}"})["input"] is None


@pytest.mark.parametrize("raw", ["", "-1", "1.5", "4294967296", "three"])
def test_counts_are_whole_numbers_in_the_u32_range(raw: str) -> None:
    with pytest.raises(FormProblems) as refused:
        payload_from_form(
            "fold",
            {"body_node": "w", "max_iterations": raw, "stop_when": "true", "join_kind": "last"},
        )

    assert set(refused.value.problems) == {"max_iterations"}


def test_branch_cases_come_in_order_and_add_case_appends_a_fresh_name() -> None:
    data = {
        "case_count": "2",
        "case-0-name": "case3",
        "case-0-kind": "expression",
        "case-0-value": "x == 1",
        "case-1-name": "ask",
        "case-1-kind": "model_decision",
        "add_case": "1",
    }

    cases = payload_from_form("branch", data)["cases"]

    assert cases == [
        {"name": "case3", "when": {"kind": "expression", "value": "x == 1"}},
        {"name": "ask", "when": {"kind": "model_decision"}},
        {"name": "case4", "when": {"kind": "expression", "value": "true"}},
    ]


def test_remove_case_leaves_that_case_out() -> None:
    data = {"case_count": "2", "case-0-name": "a", "case-1-name": "b", "remove_case": "0"}

    assert [case["name"] for case in payload_from_form("branch", data)["cases"]] == ["b"]


def test_a_fold_join_and_a_subgraph_body_are_read_from_their_controls() -> None:
    payload = payload_from_form(
        "fold",
        {
            "body_kind": "subgraph",
            "body_subgraph": '{"schema_version": 1, "nodes": []}',
            "max_iterations": "2",
            "stop_when": "done",
            "join_kind": "best_by",
            "join_value": "score",
        },
    )

    assert payload["body"] == {"kind": "subgraph", "value": {"schema_version": 1, "nodes": []}}
    assert payload["join"] == {"kind": "best_by", "value": "score"}


def test_errors_find_their_field() -> None:
    branch = {"payload": {"cases": [{"name": "yes"}, {"name": "no"}]}}

    assert field_for_error({"code": "malformed_agent_hash", "node": "a"}, None) == "agent_hash"
    assert field_for_error({"code": "invalid_reference", "field": "input.text"}, None) == "input"
    assert (
        field_for_error({"code": "invalid_branch_expression", "case": "no"}, branch)
        == "case-1-value"
    )
    assert field_for_error({"code": "cycle", "path": "a -> a"}, None) == ""


def test_closed_world_schema_errors_and_long_ids_find_their_field() -> None:
    reference = {"code": "schema_reference_not_local", "node": "a", "field": "input_schema"}
    assert field_for_error(reference, None) == "input_schema"
    assert field_for_error({"code": "node_id_too_long", "node": "a" * 300}, None) == "id"
