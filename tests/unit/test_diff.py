"""The structural diff behind **Compare** and ``GET /v1/documents/{slug}/diff``."""

from __future__ import annotations

import json
from typing import Any

from editor.graph import diff_graphs, parse_document

HASH = "sha256:" + "a" * 64


def graph(nodes: list[dict[str, Any]], edges: list[dict[str, Any]] | None = None) -> Any:
    document = {"schema_version": 1, "nodes": nodes, "edges": edges or []}
    return parse_document(json.dumps(document))


def tool(node_id: str, **payload: Any) -> dict[str, Any]:
    return {"kind": "tool", "payload": {"id": node_id, "tool": "echo", **payload}}


def test_a_graph_compared_with_itself_is_identical_and_lists_nothing():
    before = graph([tool("a"), tool("b")], [{"from": "a", "to": "b"}])
    assert diff_graphs(before, before) == {
        "identical": True,
        "nodes": {"added": [], "removed": [], "changed": []},
        "edges": {"added": [], "removed": []},
    }


def test_key_order_and_explicit_nulls_do_not_make_a_difference():
    before = graph([tool("a", name="A")])
    after = parse_document(
        '{"nodes":[{"payload":{"name":"A","tool":"echo","id":"a","input_schema":null},'
        '"kind":"tool"}],"schema_version":1}'
    )
    assert diff_graphs(before, after)["identical"] is True


def test_added_and_removed_nodes_are_listed_by_id_in_document_order():
    before = graph([tool("a"), tool("gone")])
    after = graph([tool("z"), tool("a"), tool("new")])
    result = diff_graphs(before, after)
    assert result["identical"] is False
    assert result["nodes"]["added"] == ["z", "new"]
    assert result["nodes"]["removed"] == ["gone"]
    assert result["nodes"]["changed"] == []


def test_changed_fields_carry_their_path_and_both_values():
    before = graph([tool("a", name="Old", input={"text": "draft", "gone": "x"})])
    after = graph([tool("a", name="New", input={"text": "body"})])
    assert diff_graphs(before, after)["nodes"]["changed"] == [
        {
            "node": "a",
            "fields": [
                {"path": "input.gone", "from": "x"},
                {"path": "input.text", "from": "draft", "to": "body"},
                {"path": "name", "from": "Old", "to": "New"},
            ],
        }
    ]


def test_a_field_set_only_on_one_side_omits_the_other_value():
    before = graph([tool("a")])
    after = graph([tool("a", output_schema={"type": "object"})])
    fields = diff_graphs(before, after)["nodes"]["changed"][0]["fields"]
    assert fields == [{"path": "output_schema", "to": {"type": "object"}}]


def test_list_items_are_compared_by_position():
    def branch(*cases: str) -> dict[str, Any]:
        return {
            "kind": "branch",
            "payload": {
                "id": "b",
                "cases": [
                    {"name": name, "when": {"kind": "expression", "value": "x == 1"}}
                    for name in cases
                ],
            },
        }

    result = diff_graphs(graph([branch("yes", "no")]), graph([branch("yes", "maybe", "no")]))
    assert result["nodes"]["changed"][0]["fields"] == [
        {"path": "cases[1].name", "from": "no", "to": "maybe"},
        {
            "path": "cases[2]",
            "to": {"name": "no", "when": {"kind": "expression", "value": "x == 1"}},
        },
    ]


def test_a_changed_kind_is_reported_first():
    before = graph([tool("a")])
    after = graph([{"kind": "gate", "payload": {"id": "a", "approval_schema": {}}}])
    fields = diff_graphs(before, after)["nodes"]["changed"][0]["fields"]
    assert fields[0] == {"path": "kind", "from": "tool", "to": "gate"}
    assert {"path": "approval_schema", "to": {}} in fields
    assert {"path": "tool", "from": "echo"} in fields


def test_numbers_compare_as_json_values_so_one_and_one_point_zero_differ():
    before = graph([tool("a", output_schema={"minimum": 1})])
    after = graph([tool("a", output_schema={"minimum": 1.0})])
    assert diff_graphs(before, after)["nodes"]["changed"] == [
        {"node": "a", "fields": [{"path": "output_schema.minimum", "from": 1, "to": 1.0}]}
    ]


def test_edges_are_compared_as_a_multiset_of_from_to_and_label():
    before = graph(
        [tool("a"), tool("b")],
        [
            {"from": "a", "to": "b"},
            {"from": "a", "to": "b"},
            {"from": "b", "to": "a", "label": "x"},
        ],
    )
    after = graph(
        [tool("a"), tool("b")],
        [{"from": "a", "to": "b"}, {"from": "b", "to": "a", "label": "y"}],
    )
    assert diff_graphs(before, after)["edges"] == {
        "added": [{"from": "b", "to": "a", "label": "y"}],
        "removed": [{"from": "a", "to": "b"}, {"from": "b", "to": "a", "label": "x"}],
    }


def test_reordering_edges_is_no_edge_change_but_is_not_identical():
    before = graph([tool("a"), tool("b")], [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}])
    after = graph([tool("a"), tool("b")], [{"from": "b", "to": "a"}, {"from": "a", "to": "b"}])
    result = diff_graphs(before, after)
    assert result["edges"] == {"added": [], "removed": []}
    assert result["identical"] is False
