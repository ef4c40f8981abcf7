"""What flows into and out of each node, the paths a schema describes, and the editor's hints.

The data-driven cases live in ``cases/dataflow.json``: each holds a document, what chosen nodes
receive and give (as the paths their schemas describe; ``null`` when nothing describes it), and
the exact list of its hints. The tests below run every case, then cover what reads better as
code: the listing's bounds, values' paths, fixes, and that hints never touch the verdict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from editor.graph import graph_hash, parse_graph, validate
from editor.graph.dataflow import (
    MAX_PATHS,
    DataFlow,
    array_paths,
    shape_paths,
    value_paths,
)
from editor.graph.edits import EditRefused, add_edge, choose_over, relabel_edge
from editor.graph.fixes import fix_for
from editor.graph.hints import document_hints

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "cases" / "dataflow.json").read_text(encoding="utf-8")
)["cases"]


def paths(shape: Any) -> list[str] | None:
    return None if shape is None else [path.reference for path in shape_paths(shape)]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_each_node_receives_and_gives_what_the_case_says(case: dict[str, Any]) -> None:
    flow = DataFlow(parse_graph(case["document"]))
    for expected in case["flows"]:
        level, node = tuple(expected["in"]), expected["node"]
        assert paths(flow.received(level, node)) == expected["receives"], node
        assert paths(flow.gives(level, node)) == expected["gives"], node
        if "gives_schema" in expected:
            assert flow.gives(level, node) == (expected["gives_schema"],)
        if "sources" in expected:
            assert [way.source for way in flow.receives(level, node)] == expected["sources"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_each_case_has_exactly_its_hints(case: dict[str, Any]) -> None:
    hints = document_hints(parse_graph(case["document"]))
    found = []
    for hint, expected in zip(hints, case["hints"], strict=False):
        seen = {
            "code": hint.code,
            "node": hint.node,
            "field": hint.field,
            "path": hint.path,
            "in": list(hint.level),
        }
        for key in ("message", "case", "edge"):
            if key in expected:
                seen[key] = getattr(hint, key)
        found.append(seen)
    assert found == case["hints"]
    assert len(hints) == len(case["hints"])


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_hints_never_change_the_verdict_or_the_hash(case: dict[str, Any]) -> None:
    graph = parse_graph(case["document"])
    before = (validate(graph), graph_hash(graph))
    document_hints(graph)
    DataFlow(graph).gives((), graph.nodes[0].id)
    assert (validate(graph), graph_hash(graph)) == before


# --- Paths ----------------------------------------------------------------------------------------


def test_paths_follow_properties_items_and_every_branch_of_anyof_and_skip_unnameable_keys() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {
                "type": "object",
                "properties": {
                    "a": {"type": "integer"},
                    "list": {"type": "array", "items": {"type": "object", "properties": {"x": {}}}},
                    "two words": {"type": "string"},
                    "true": {"type": "string"},
                },
            },
        ]
    }

    listed = shape_paths((schema,))

    assert [(path.reference, path.type) for path in listed] == [
        ("a", "string or integer"),
        ("list", "array"),
        ("list.0", "object"),
        ("list.0.x", ""),
    ]
    assert [path.reference for path in array_paths(listed)] == ["list"]


def test_a_listing_is_bounded_in_depth_and_count_and_keeps_the_top_keys_first() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(10):
        deep = {"type": "object", "properties": {"d": deep}}
    wide = {f"k{index}": {"type": "string"} for index in range(200)}
    schema = {"type": "object", "properties": {"deep": deep, **wide}}

    listed = [path.reference for path in shape_paths((schema,))]

    assert len(listed) == MAX_PATHS
    assert listed[0] == "deep"
    assert max(path.count(".") for path in listed) < 4
    recursive: dict[str, Any] = {"type": "object", "properties": {}}
    recursive["properties"]["self"] = recursive
    assert [path.reference for path in shape_paths((recursive,))] == [
        "self",
        "self.self",
        "self.self.self",
        "self.self.self.self",
    ]


def test_a_values_paths_take_its_first_item_for_every_item() -> None:
    value = {"posts": [{"title": "a"}, {"title": "b", "extra": 1}], "n": 2, "ok": None}

    listed = value_paths(value)

    assert [(path.reference, path.type) for path in listed] == [
        ("posts", "array"),
        ("posts.0", "object"),
        ("posts.0.title", "string"),
        ("n", "integer"),
        ("ok", "null"),
    ]
    assert value_paths("text") == [] and value_paths([1, 2]) == []


# --- Edits: a new map's over, duplicate edges, relabelling ------------------------------------


def document(*nodes: dict[str, Any], edges: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"schema_version": 1, "nodes": list(nodes), "edges": edges or []}


POSTS = {
    "type": "object",
    "properties": {"posts": {"type": "array", "items": {"type": "string"}}},
}


def test_a_new_map_maps_over_the_one_list_flowing_in_else_keeps_items() -> None:
    writer = {"kind": "agent", "payload": {"id": "w", "agent_hash": "", "output_schema": POSTS}}
    fan = {
        "kind": "map",
        "payload": {
            "id": "fan",
            "over": "items",
            "concurrency": 1,
            "body": {"kind": "node", "value": ""},
        },
    }
    value = document(writer, fan, edges=[{"from": "w", "to": "fan"}])

    assert choose_over(value, "fan")["nodes"][1]["payload"]["over"] == "posts"
    two = {"type": "object", "properties": {"a": {"type": "array"}, "b": {"type": "array"}}}
    writer["payload"]["output_schema"] = two
    assert choose_over(value, "fan")["nodes"][1]["payload"]["over"] == "items"
    del writer["payload"]["output_schema"]
    assert choose_over(value, "fan") == value


def test_the_same_edge_twice_is_refused_but_another_case_to_the_same_node_is_not() -> None:
    branch = {
        "kind": "branch",
        "payload": {
            "id": "b",
            "cases": [
                {"name": "x", "when": {"kind": "expression", "value": "true"}},
                {"name": "y", "when": {"kind": "expression", "value": "true"}},
            ],
        },
    }
    tool = {"kind": "tool", "payload": {"id": "t", "tool": "echo"}}
    value = add_edge(document(branch, tool), "b", "t", "x")

    with pytest.raises(EditRefused, match="there is already an edge `b` → `t` for case `x`"):
        add_edge(value, "b", "t", "x")
    assert add_edge(value, "b", "t", "y")["edges"][-1] == {"from": "b", "to": "t", "label": "y"}


def test_relabelling_checks_the_edge_still_joins_the_same_nodes() -> None:
    tool = {"kind": "tool", "payload": {"id": "t", "tool": "echo"}}
    other = {"kind": "tool", "payload": {"id": "u", "tool": "echo"}}
    value = document(tool, other, edges=[{"from": "t", "to": "u"}])

    assert relabel_edge(value, 0, "x", source="t", target="u")["edges"] == [
        {"from": "t", "to": "u", "label": "x"}
    ]
    with pytest.raises(EditRefused, match="no longer goes from `u` to `t`"):
        relabel_edge(value, 0, "x", source="u", target="t")
    with pytest.raises(EditRefused, match="there is no edge number 2"):
        relabel_edge(value, 1, "x", source="t", target="u")
    with pytest.raises(EditRefused, match="choose the case"):
        relabel_edge(value, 0, "", source="t", target="u")


# --- Fixes of the branch pairing errors -----------------------------------------------------------


def branching(edges: list[dict[str, str]]) -> dict[str, Any]:
    cases = [
        {"name": name, "when": {"kind": "expression", "value": "true"}}
        for name in ("yes", "no", "maybe")
    ]
    return document(
        {"kind": "tool", "payload": {"id": "start", "tool": "echo"}},
        {"kind": "branch", "payload": {"id": "b", "cases": cases}},
        {"kind": "tool", "payload": {"id": "t", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "u", "tool": "echo"}},
        edges=[{"from": "start", "to": "b"}, *edges],
    )


def fixes(value: dict[str, Any]) -> list[tuple[str, str, Any, tuple[str, ...]]]:
    graph = parse_graph(value)
    found = []
    for error in validate(graph):
        fix = fix_for(error, graph)
        if fix is not None:
            found.append((error["code"], fix.kind, fix.edge, fix.choices))
    return found


def test_each_branch_pairing_error_has_its_fix_with_the_unrouted_cases_first() -> None:
    value = branching([{"from": "b", "to": "t", "label": "yes"}, {"from": "b", "to": "u"}])

    assert fixes(value) == [
        ("branch_case_without_edge", "route", None, ("t", "u")),
        ("branch_case_without_edge", "route", None, ("t", "u")),
        ("branch_edge_without_label", "label", 2, ("no", "maybe")),
    ]
    relabel = branching(
        [{"from": "b", "to": "t", "label": "yes"}, {"from": "b", "to": "u", "label": "mayb"}]
    )
    assert ("branch_edge_without_case", "relabel", 2, ("maybe", "no")) in fixes(relabel)


def test_a_case_is_never_routed_back_to_a_node_it_is_reached_from() -> None:
    value = branching([{"from": "b", "to": "t", "label": "yes"}, {"from": "t", "to": "u"}])
    graph = parse_graph(value)
    [error] = [e for e in validate(graph) if e.get("case") == "no"]

    fix = fix_for(error, graph)

    assert fix is not None and fix.choices == ("t", "u")
    assert "start" not in fix.choices and "b" not in fix.choices
