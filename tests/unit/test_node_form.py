"""The editor's node form: fields from the model's field table, a post read back into payload
updates (or the fields it cannot read, with the text typed), and errors filed by field key."""

from __future__ import annotations

import pytest

from editor.graph.model import PAYLOAD_FIELDS
from editor.presentation.node_form import (
    AgentChoice,
    field_key_of_error,
    form_fields,
    node_form,
    read_node_form,
)

HASH = "sha256:" + "a" * 64


@pytest.mark.parametrize("kind", sorted(PAYLOAD_FIELDS))
def test_every_field_of_the_field_table_is_on_the_form_in_wire_order(kind: str) -> None:
    assert [field.key for field in form_fields(kind)] == [
        spec.name for spec in PAYLOAD_FIELDS[kind]
    ]


def test_optional_text_left_empty_unsets_the_field() -> None:
    read = read_node_form("gate", {"name": "", "prompt": "  ", "approval_schema": "{}"})

    assert read.problems == {}
    assert read.fields == {"name": None, "prompt": None, "approval_schema": {}}


def test_schemas_are_read_as_strict_json_and_the_text_typed_is_kept() -> None:
    read = read_node_form("agent", {"agent_hash": "x", "output_schema": '{"a": NaN}'})

    assert set(read.problems) == {"output_schema"}
    assert read.typed == {"output_schema": '{"a": NaN}'}
    assert read.fields["agent_hash"] == "x"
    assert "output_schema" not in read.fields


def test_an_empty_approval_schema_is_refused_as_required() -> None:
    read = read_node_form("gate", {"approval_schema": ""})

    assert "required" in read.problems["approval_schema"]


def test_a_tool_input_must_map_names_to_strings() -> None:
    assert set(read_node_form("tool", {"tool": "echo", "input": '{"text": 5}'}).problems) == {
        "input"
    }
    assert read_node_form("tool", {"tool": "echo", "input": "{}"}).fields["input"] is None


@pytest.mark.parametrize("raw", ["", "-1", "1.5", "4294967296", "three", "٣", "²", "+3", "1 2"])
def test_counts_are_whole_ascii_numbers_in_the_u32_range(raw: str) -> None:
    read = read_node_form(
        "fold", {"body_node": "w", "max_iterations": raw, "stop_when": "true", "join_kind": "last"}
    )

    assert set(read.problems) == {"max_iterations"}
    assert read.typed["max_iterations"] == raw


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

    assert read_node_form("branch", data).fields["cases"] == [
        {"name": "case3", "when": {"kind": "expression", "value": "x == 1"}},
        {"name": "ask", "when": {"kind": "model_decision"}},
        {"name": "case4", "when": {"kind": "expression", "value": "true"}},
    ]


def test_remove_case_leaves_that_case_out() -> None:
    data = {"case_count": "2", "case-0-name": "a", "case-1-name": "b", "remove_case": "0"}

    assert [case["name"] for case in read_node_form("branch", data).fields["cases"]] == ["b"]


def test_a_fold_join_and_a_subgraph_body_are_read_from_their_controls() -> None:
    read = read_node_form(
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

    assert read.fields["body"] == {"kind": "subgraph", "value": {"schema_version": 1, "nodes": []}}
    assert read.fields["join"] == {"kind": "best_by", "value": "score"}


def test_the_agent_field_takes_a_stored_agents_name() -> None:
    def by_name(name: str) -> str | None:
        return HASH if name == "Writer" else None

    assert (
        read_node_form("agent", {"agent_hash": "Writer"}, agent_by_name=by_name).fields[
            "agent_hash"
        ]
        == HASH
    )
    assert (
        read_node_form("agent", {"agent_hash": "Nobody"}, agent_by_name=by_name).fields[
            "agent_hash"
        ]
        == "Nobody"
    )


def test_errors_are_filed_under_the_key_their_control_is_posted_as() -> None:
    branch = {"payload": {"cases": [{"name": "yes"}, {"name": "no"}]}}

    assert field_key_of_error({"code": "malformed_agent_hash", "node": "a"}, None) == "agent_hash"
    assert field_key_of_error({"code": "invalid_reference", "field": "input.text"}, None) == "input"
    assert (
        field_key_of_error({"code": "invalid_branch_expression", "case": "no"}, branch)
        == "case-1-value"
    )
    assert field_key_of_error({"code": "cycle", "path": "a -> a"}, None) == ""
    form = node_form(
        {"kind": "branch", "payload": {"id": "b", "cases": [{"name": "no", "when": {}}]}},
        token="t",
        errors={"case-0-value": ["broken"]},
    )
    assert form["cases"][0]["errors"]["value"] == ["broken"]
    assert ("case-0-value", ["broken"], []) in form["oob_errors"]


def test_the_agent_field_shows_a_stored_agent_by_name_and_says_its_hash() -> None:
    agents = [AgentChoice(HASH, "Writer"), AgentChoice("sha256:" + "b" * 64, None)]
    form = node_form(
        {"kind": "agent", "payload": {"id": "w", "agent_hash": HASH}},
        token="t",
        agents=lambda: agents,
    )

    agent = next(field for field in form["fields"] if field["key"] == "agent_hash")
    assert agent["value"] == "Writer"
    assert agent["chosen"].agent == HASH
    assert [item["value"] for item in agent["choices"]] == ["Writer", "sha256:" + "b" * 64]


def test_an_unknown_tool_stays_chosen_and_is_marked() -> None:
    form = node_form(
        {"kind": "tool", "payload": {"id": "t", "tool": "mystery"}},
        token="t",
        tools=lambda: ["echo", "template"],
    )

    tool = next(field for field in form["fields"] if field["key"] == "tool")
    assert tool["unknown"] is True
    assert tool["options"] == ["echo", "template"]


def test_closed_world_schema_errors_and_long_ids_find_their_field() -> None:
    reference = {"code": "schema_reference_not_local", "node": "a", "field": "input_schema"}
    assert field_key_of_error(reference, None) == "input_schema"
    assert field_key_of_error({"code": "node_id_too_long", "node": "a" * 300}, None) == "id"


@pytest.mark.parametrize(
    ("typed", "seconds"),
    [
        ("5400", 5400),
        (" 90m ", 5400),
        ("1h30m", 5400),
        ("1 h 30 min", 5400),
        ("1 hour 30 minutes", 5400),
        ("2 days", 172800),
        ("45s", 45),
        ("0", 0),
    ],
)
def test_a_delay_wait_is_typed_as_a_duration_and_stored_as_seconds(
    typed: str, seconds: int
) -> None:
    read = read_node_form("delay", {"name": "", "seconds": typed})

    assert read.problems == {}
    assert read.fields == {"name": None, "seconds": seconds}


@pytest.mark.parametrize(
    "typed", ["", "soon", "1.5h", "30 min 1 h", "-5", "h", "99999999999999999999"]
)
def test_a_wait_that_is_not_a_duration_is_refused_and_kept_as_typed(typed: str) -> None:
    read = read_node_form("delay", {"seconds": typed})

    assert "seconds" not in read.fields
    assert read.problems["seconds"].startswith("needs a duration: whole seconds (5400)")
    assert read.typed["seconds"] == typed


def test_the_delay_form_shows_the_wait_as_a_person_reads_it_and_the_seconds_saved() -> None:
    form = node_form({"kind": "delay", "payload": {"id": "d", "seconds": 5400}}, token="t")
    wait = next(entry for entry in form["fields"] if entry["key"] == "seconds")

    assert wait["widget"] == "duration"
    assert wait["label"] == "Wait"
    assert wait["value"] == "1 h 30 min"
    assert wait["seconds"] == 5400


@pytest.mark.parametrize(("chosen", "stored"), [("", None), ("join", "join"), ("fail", "fail")])
def test_on_bound_is_written_only_when_the_author_sets_it(chosen: str, stored: str | None) -> None:
    posted = {
        "max_iterations": "3",
        "stop_when": "done",
        "join_kind": "last",
        "body_node": "w",
        "on_bound": chosen,
    }
    read = read_node_form("fold", posted)

    assert read.problems == {}
    assert read.fields["on_bound"] == stored


def test_the_on_bound_control_offers_not_set_join_and_fail_and_says_what_each_means() -> None:
    payload = {"id": "f", "body": {"kind": "node", "value": "w"}, "on_bound": "fail"}
    form = node_form({"kind": "fold", "payload": payload}, token="t")
    on_bound = next(entry for entry in form["fields"] if entry["key"] == "on_bound")

    assert on_bound["widget"] == "on_bound"
    assert on_bound["value"] == "fail"
    assert [value for value, _ in on_bound["options"]] == ["", "join", "fail"]
    assert "Fail: the run ends failed" in on_bound["help"]
    assert "Join: the passes are joined" in on_bound["help"]
    assert read_node_form("fold", {"on_bound": "retry"}).problems["on_bound"] == (
        "needs join, fail or not set"
    )


def test_the_0_10_errors_find_their_fields() -> None:
    assert field_key_of_error({"code": "non_positive_delay", "node": "d"}, None) == "seconds"
    assert field_key_of_error({"code": "fold_stop_path_not_in_body_schema"}, None) == "stop_when"
    assert field_key_of_error({"code": "fold_join_reference_not_in_body_schema"}, None) == "join"


def test_switching_a_body_to_a_subgraph_starts_it_empty_and_draws_the_form_again() -> None:
    read = read_node_form(
        "map",
        {"over": "items", "concurrency": "1", "body_kind": "subgraph", "body_shown": "node"},
    )

    assert not read
    assert read.fields["body"] == {
        "kind": "subgraph",
        "value": {"schema_version": 1, "nodes": [], "edges": []},
    }
    assert read.redraw


def test_a_schema_posted_by_its_builder_is_read_from_its_rows() -> None:
    read = read_node_form(
        "gate",
        {
            "approval_schema-mode": "fields",
            "approval_schema-shape": "fields:boolean,True",
            "approval_schema-count": "1",
            "approval_schema-0-name": "ok",
            "approval_schema-0-type": "boolean",
            "approval_schema-0-required": "on",
        },
    )

    assert not read
    assert read.fields["approval_schema"] == {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
    }
    assert not read.redraw
