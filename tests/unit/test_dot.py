"""The canvas's DOT source: names, kinds, marks, and safety of every user string."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest

from editor.graph import parse_document, templates, validate
from editor.graph.dot import KIND_SHAPES, dot_source, drawing

HASH = "sha256:" + "a" * 64


def graph(nodes: list[dict[str, Any]], edges: list[dict[str, Any]] | None = None) -> Any:
    return parse_document(json.dumps({"schema_version": 1, "nodes": nodes, "edges": edges or []}))


def node_line(source: str, tooltip: str) -> str:
    (line,) = [line for line in source.splitlines() if f'tooltip="{tooltip}"' in line]
    return line


def render(source: str) -> str:
    result = subprocess.run(
        ["dot", "-Tsvg"], input=source.encode(), capture_output=True, timeout=20
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.decode()


def test_each_kind_has_its_own_shape():
    assert len({shape for shape, _ in KIND_SHAPES.values()}) == len(KIND_SHAPES) == 7


def test_a_node_shows_its_display_name_or_its_id_and_its_kind():
    source = dot_source(
        graph(
            [
                {
                    "kind": "tool",
                    "payload": {"id": "publish", "tool": "echo", "name": "Publish it"},
                },
                {"kind": "tool", "payload": {"id": "archive", "tool": "echo"}},
            ]
        )
    )
    assert 'label="▶ Publish it\\ntool"' in node_line(source, "tool node publish")
    assert 'label="▶ archive\\ntool"' in node_line(source, "tool node archive")


def test_a_delay_node_has_its_own_shape_and_shows_its_wait_as_a_person_reads_it():
    source = dot_source(
        graph(
            [
                {"kind": "delay", "payload": {"id": "cooloff", "seconds": 5400}},
                {"kind": "delay", "payload": {"id": "remind", "name": "Remind", "seconds": 172800}},
            ]
        )
    )
    line = node_line(source, "delay node cooloff")
    assert 'label="▶ cooloff\\ndelay · 1 h 30 min"' in line
    assert "shape=ellipse" in line
    assert 'label="▶ Remind\\ndelay · 2 d"' in node_line(source, "delay node remind")


def test_entry_nodes_are_bold_and_terminal_nodes_have_a_double_border():
    source = dot_source(
        graph(
            [
                {"kind": "tool", "payload": {"id": "a", "tool": "echo"}},
                {"kind": "tool", "payload": {"id": "b", "tool": "echo"}},
            ],
            [{"from": "a", "to": "b"}],
        )
    )
    first, last = node_line(source, "tool node a"), node_line(source, "tool node b")
    assert "style=bold" in first and "peripheries" not in first
    assert "peripheries=2" in last and "bold" not in last


def test_branch_edges_carry_their_labels():
    source = dot_source(templates.approval_gate(HASH))
    assert re.search(r"-> n\d+ \[label=approved id=\"edge-e\d+\"\]", source)
    assert re.search(r"-> n\d+ \[label=rejected id=\"edge-e\d+\"\]", source)


def test_nodes_and_edges_with_errors_are_red_dashed_and_marked():
    broken = graph(
        [
            {"kind": "agent", "payload": {"id": "a", "agent_hash": "bad"}},
            {"kind": "tool", "payload": {"id": "b", "tool": "echo"}},
        ],
        [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}],
    )
    source = dot_source(broken, errors=validate(broken))
    line = node_line(source, "agent node a")
    assert "⚠" in line and "dashed" in line and "#c62828" in line
    assert sum("style=dashed" in edge and "#c62828" in edge for edge in source.splitlines()) == 2


def test_a_node_with_a_held_field_is_dotted_and_says_so_apart_from_an_error():
    both = graph(
        [
            {"kind": "agent", "payload": {"id": "a", "agent_hash": "bad"}},
            {"kind": "tool", "payload": {"id": "b", "tool": "echo"}},
        ],
        [{"from": "a", "to": "b"}],
    )
    source = drawing(both, errors=validate(both), held=[((), "a"), ((), "b")]).source
    held = node_line(source, "tool node b")
    assert "✎ b" in held and "tool · not saved" in held
    assert "dotted" in held and "dashed" not in held and "#c62828" not in held
    assert 'class="top-level held"' in held
    # An error's red and dashes win; the words say both.
    broken = node_line(source, "agent node a")
    assert "⚠ ✎" in broken and "dashed" in broken and "#c62828" in broken


def test_a_body_node_hangs_on_a_dashed_body_edge_without_entry_or_terminal_marks():
    source = dot_source(
        graph(
            [
                {
                    "kind": "map",
                    "payload": {
                        "id": "m",
                        "over": "items",
                        "concurrency": 1,
                        "body": {"kind": "node", "value": "work"},
                    },
                },
                {"kind": "tool", "payload": {"id": "work", "tool": "echo"}},
            ]
        )
    )
    body = node_line(source, "tool node work")
    assert "bold" not in body and "peripheries" not in body and "▶" not in body
    assert "label=body" in source and "arrowhead=none" in source


def test_a_subgraph_body_is_a_cluster():
    source = dot_source(templates.rounds(HASH, HASH, ["a", "b"], 2))
    assert "subgraph cluster_" in source
    assert 'label="body of panel"' in source
    assert "lhead=cluster_" in source


def test_only_top_level_nodes_carry_the_class_the_editor_marks_the_open_node_by():
    source = dot_source(templates.rounds(HASH, HASH, ["a", "b"], 2))
    svg = render(source)
    top = re.findall(r'<g id="node&#45;n\d+" class="node top&#45;level">', svg)
    nodes = re.findall(r'<g id="node&#45;n\d+" class="node[^"]*">', svg)
    assert 0 < len(top) < len(nodes)


def test_links_are_only_what_the_caller_builds_and_ids_never_become_dot_identifiers():
    hostile = 'x" URL="javascript:alert(1)'
    source = dot_source(
        graph([{"kind": "tool", "payload": {"id": hostile, "tool": "echo"}}]),
        node_url=lambda level, node_id: "/graphs/doc/?node=x%22",
    )
    assert re.findall(r"^\s*(n\d+) \[", source, flags=re.MULTILINE) == ["n1"]
    links = re.findall(r'xlink:href="([^"]*)"', render(source))
    assert links == ["/graphs/doc/?node=x%22"]


@pytest.mark.parametrize(
    "name",
    [
        "<img src=x onerror=alert(1)>",
        "<<b>bold</b>>",
        "back\\slash \\N \\G \\l",
        'quote " inside',
        "</text><script>alert(1)</script>",
    ],
)
def test_hostile_names_come_out_of_dot_as_escaped_text(name):
    svg = render(
        dot_source(graph([{"kind": "tool", "payload": {"id": "t", "tool": "echo", "name": name}}]))
    )
    assert "<script" not in svg and "<img" not in svg and "<b>" not in svg
    text = re.search(r"<text [^>]*>▶ (.*?)</text>", svg).group(1)
    assert re.search(r"<text [^>]*>tool</text>", svg)
    unescaped = (
        text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    )
    assert unescaped == name


def test_every_template_renders():
    for template in (
        templates.blank(),
        templates.approval_gate(HASH),
        templates.parallel(HASH, HASH, ["a", "b", "c"]),
        templates.rounds(HASH, HASH, ["a", "b"], 3),
    ):
        assert render(dot_source(template)).rstrip().endswith("</svg>")
