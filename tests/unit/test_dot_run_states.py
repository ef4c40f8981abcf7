"""The run page's canvas: nodes coloured by their state in a run, and labelled with it too."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from editor.graph import parse_document
from editor.graph.dot import RUN_STATES, RunMarks, dot_source
from editor.graph.templates import rounds
from editor.services.runs.pages import suggested_input


def graph(*nodes: dict[str, Any], edges: list[dict[str, Any]] | None = None) -> Any:
    document = {"schema_version": 1, "nodes": list(nodes), "edges": edges or []}
    return parse_document(json.dumps(document))


def tool(node_id: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "tool", "payload": {"id": node_id, "tool": "echo", **extra}}


def node_line(source: str, node_id: str) -> str:
    (line,) = [line for line in source.splitlines() if f'tooltip="tool node {node_id}"' in line]
    return line


def test_each_state_fills_the_node_and_says_the_state_in_its_label() -> None:
    nodes = [tool(state) for state in RUN_STATES]
    source = dot_source(graph(*nodes), states={state: state for state in RUN_STATES})

    for state, (mark, fill, _, _) in RUN_STATES.items():
        line = node_line(source, state)
        assert f'fillcolor="{fill}"' in line
        assert "filled" in line
        assert f"tool · {state}" in line
        assert f"{mark}" in line
        assert f"run-{state}" in line


def test_fills_differ_by_more_than_colour() -> None:
    marks = {mark for mark, _, _, _ in RUN_STATES.values()}

    assert len(marks) == len(RUN_STATES)


def test_nodes_not_reached_are_drawn_plain() -> None:
    source = dot_source(
        graph(tool("a"), tool("b"), edges=[{"from": "a", "to": "b"}]), states={"a": "done"}
    )

    assert "filled" not in node_line(source, "b")
    assert "tool · " not in node_line(source, "b")


def test_a_hostile_name_stays_text_with_a_state() -> None:
    source = dot_source(graph(tool("a", name='<b>"x"</b>\\')), states={"a": "failed"})

    result = subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True)
    svg = result.stdout.decode()
    assert result.returncode == 0
    assert "&lt;b&gt;" in svg
    assert "<b>" not in svg


def test_marks_colour_nodes_inside_bodies_and_draw_the_walked_edges_bold() -> None:
    document = graph(
        {
            "kind": "map",
            "payload": {
                "id": "m",
                "over": "items",
                "concurrency": 1,
                "body": {
                    "kind": "subgraph",
                    "value": {
                        "schema_version": 1,
                        "nodes": [tool("x"), tool("y")],
                        "edges": [{"from": "x", "to": "y"}],
                    },
                },
            },
        },
        tool("after"),
        edges=[{"from": "m", "to": "after"}],
    )
    marks = RunMarks(
        states={((), "m"): "failed", (("m",), "x"): "done", (("m",), "y"): "failed"},
        notes={(("m",), "x"): "×3"},
        walked=frozenset({(("m",), "x", "y", None)}),
    )
    source = dot_source(document, marks=marks)

    assert "tool · done · ×3" in node_line(source, "x")
    assert "run-failed" in node_line(source, "y")
    assert "filled" not in node_line(source, "after")
    (walked,) = [line for line in source.splitlines() if "class=walked" in line]
    assert "penwidth=2.5" in walked and "bold" in walked
    svg = subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True).stdout
    assert b'class="edge walked"' in svg


def test_start_run_proposes_null_or_the_entry_schemas_defaults() -> None:
    plain = graph(tool("a"))
    with_default = graph(tool("a", input_schema={"default": [1, 2]}))
    with_properties = graph(
        tool(
            "a",
            input_schema={
                "type": "object",
                "properties": {"topic": {"default": "tea"}, "n": {"type": "integer"}},
            },
        )
    )

    assert suggested_input(plain) == "null"
    assert json.loads(suggested_input(with_default)) == [1, 2]
    assert json.loads(suggested_input(with_properties)) == {"topic": "tea"}


def test_start_run_proposes_the_defaults_of_a_folds_body_entry() -> None:
    # A fold's first pass gets the fold's input: the critic panel in rounds proposes its
    # critics just as the parallel one does (they are in the embedded body's entry tool).
    personas = ["a", "b"]
    panel_rounds = rounds("sha256:" + "1" * 64, "sha256:" + "2" * 64, personas, 2)
    fold_of_node = graph(
        {
            "kind": "fold",
            "payload": {
                "id": "again",
                "body": {"kind": "node", "value": "a"},
                "max_iterations": 2,
                "stop_when": "done == true",
                "join": {"kind": "last"},
            },
        },
        tool("a", input_schema={"default": {"done": False}}),
    )

    assert json.loads(suggested_input(panel_rounds)) == {"critics": personas}
    assert json.loads(suggested_input(fold_of_node)) == {"done": False}
