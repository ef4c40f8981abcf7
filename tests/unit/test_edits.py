"""The draft edits behind the editor's forms."""

from __future__ import annotations

import json

import pytest

from editor.graph import parse_document, templates, validate, wire_value
from editor.graph.edits import (
    NEW_NODE_DEFAULTS,
    EditRefused,
    add_edge,
    add_node,
    delete_edge,
    delete_node,
    format_draft,
    rename_node,
    update_node,
)

HASH = "sha256:" + "a" * 64


def approval() -> dict:
    return wire_value(templates.approval_gate(HASH))


def test_the_draft_is_written_in_wire_order_indented_by_two_spaces():
    value = update_node(approval(), "review", {"name": "Review it"})
    text = format_draft(value)
    assert text.startswith('{\n  "schema_version": 1,\n  "nodes": [\n')
    review = json.loads(text)["nodes"][1]["payload"]
    assert list(review) == ["id", "name", "approval_schema"]
    assert parse_document(text)


def test_renaming_a_node_updates_every_edge_and_body_that_names_it():
    value = wire_value(templates.parallel(HASH, HASH, ["a", "b"]))
    value = rename_node(value, "critic", "reviewer")
    value = rename_node(value, "prompts", "ask")
    assert value["nodes"][1]["payload"]["body"] == {"kind": "node", "value": "reviewer"}
    assert value["edges"][0] == {"from": "ask", "to": "critiques"}
    assert validate(parse_document(format_draft(value))) == []


def test_renaming_to_an_id_in_use_is_refused_on_the_id_field():
    with pytest.raises(EditRefused) as refused:
        rename_node(approval(), "write", "review")
    assert refused.value.field == "id"
    assert str(refused.value) == "id `review` is already used"


def test_deleting_a_node_removes_its_edges_too():
    value = delete_node(approval(), "decide")
    assert [node["payload"]["id"] for node in value["nodes"]] == [
        "write",
        "review",
        "publish",
        "archive",
    ]
    assert value["edges"] == [{"from": "write", "to": "review"}]


@pytest.mark.parametrize("kind", sorted(NEW_NODE_DEFAULTS))
def test_a_new_node_starts_from_the_defaults_of_its_kind(kind):
    value = add_node({"schema_version": 1, "nodes": [], "edges": []}, kind, "fresh")
    graph = parse_document(format_draft(value))
    assert graph.nodes[0].kind == kind
    if kind in ("tool", "gate", "branch"):
        codes = [error["code"] for error in validate(graph)]
        assert codes in ([], ["branch_case_without_edge"])


def test_a_new_node_needs_an_unused_id():
    with pytest.raises(EditRefused, match="id `write` is already used"):
        add_node(approval(), "tool", "write")
    with pytest.raises(EditRefused, match="a node needs an id"):
        add_node(approval(), "tool", "  ")


def test_edges_are_added_at_the_end_and_deleted_by_position():
    value = add_edge(approval(), "archive", "publish", None)
    assert value["edges"][-1] == {"from": "archive", "to": "publish"}
    value = add_edge(value, "decide", "write", "approved")
    assert value["edges"][-1] == {"from": "decide", "to": "write", "label": "approved"}
    value = delete_edge(value, 0)
    assert value["edges"][0] == {"from": "review", "to": "decide"}
    with pytest.raises(EditRefused, match="there is no edge number 9"):
        delete_edge(value, 8)
    with pytest.raises(EditRefused, match="there is no node `ghost`"):
        add_edge(value, "ghost", "write")


def test_setting_a_field_to_none_removes_it_and_edits_never_change_their_argument():
    original = update_node(approval(), "review", {"prompt": "Publish?"})
    before = json.dumps(original)
    cleared = update_node(original, "review", {"prompt": None})
    assert "prompt" not in cleared["nodes"][1]["payload"]
    assert json.dumps(original) == before


def test_the_draft_text_is_what_the_standard_library_would_write():
    value = approval()
    value["nodes"][0]["payload"]["name"] = "Écrire «le brouillon» \u2028 ok"
    value["nodes"][1]["payload"]["approval_schema"] = {"type": "object", "maximum": 2.5}
    normal = wire_value(parse_document(json.dumps(value)))
    assert format_draft(value) == json.dumps(normal, indent=2, ensure_ascii=False) + "\n"
