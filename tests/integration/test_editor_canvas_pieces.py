"""The editor's canvas after an edit of names: only the changed items go to Graphviz, and the
drawing is the one Graphviz makes of the whole source, byte for byte (``editor.pieces``)."""

from __future__ import annotations

import itertools
import random
import subprocess
from typing import Any

import pytest
from django.core.cache import caches

from editor import pieces, rendering
from editor.graph import parse_document, templates, wire_value
from editor.graph.edits import format_draft, update_node
from editor.services.documents.canvas import CanvasSource, DrawnCanvas, editor_source, render_editor

HASH = "sha256:" + "a" * 64
LONG = "A much longer name than any step had before"

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _nothing_kept() -> Any:
    caches[rendering.CACHE].clear()
    pieces.forget()
    yield
    caches[rendering.CACHE].clear()
    pieces.forget()


@pytest.fixture
def graphviz_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The DOT sources handed to Graphviz, in order."""
    runs: list[str] = []
    real = rendering._run

    def spy(command: list[str], source: str, **sizes: int) -> bytes:
        runs.append(source)
        return real(command, source, **sizes)

    monkeypatch.setattr(rendering, "_run", spy)
    return runs


def chain(length: int) -> dict[str, Any]:
    """Tools in a line, named, with a branch in the middle whose edges carry labels."""
    nodes: list[dict[str, Any]] = [
        {"kind": "tool", "payload": {"id": f"step{i}", "tool": "echo", "name": f"Step {i}"}}
        for i in range(length)
    ]
    middle = length // 2
    nodes.insert(
        middle,
        {
            "kind": "branch",
            "payload": {
                "id": "route",
                "cases": [
                    {"name": "yes", "when": {"kind": "expression", "value": "true"}},
                    {"name": "no", "when": {"kind": "expression", "value": "false"}},
                ],
            },
        },
    )
    ids = [node["payload"]["id"] for node in nodes]
    edges = [{"from": a, "to": b} for a, b in itertools.pairwise(ids) if a != "route"]
    edges += [
        {"from": "route", "to": ids[middle + 1], "label": "yes"},
        {"from": "route", "to": ids[-1], "label": "no"},
    ]
    return {"schema_version": 1, "nodes": nodes, "edges": edges}


def draw(
    value: dict[str, Any], layout: dict[str, Any] | None = None
) -> tuple[CanvasSource, DrawnCanvas, dict[str, Any] | None]:
    """The editor's drawing of ``value`` at ``layout``'s places (laid out when ``None``)."""
    graph = parse_document(format_draft(value))
    source = editor_source(graph, layout=layout)
    drawn, laid = render_editor(source, graph)
    return source, drawn, laid or layout


def whole(source: str) -> str:
    """What ``neato -n2`` makes of the whole source."""
    output = subprocess.run(
        ["neato", "-n2", "-Tsvg"], input=source.encode(), capture_output=True, check=True
    ).stdout.decode()
    return rendering._PROLOGUE.sub("", output)


def renamed(value: dict[str, Any], node: str, name: str, **where: Any) -> dict[str, Any]:
    return update_node(value, node, {"name": name}, **where)


def test_a_longer_name_inside_the_drawing_goes_to_graphviz_alone(
    graphviz_runs: list[str],
) -> None:
    value = chain(12)
    _, _, layout = draw(value)
    graphviz_runs.clear()

    source, drawn, _ = draw(renamed(value, "step3", LONG), layout)

    assert source.pinned
    assert drawn.svg == whole(source.source)
    assert LONG in drawn.svg
    # One small graph: the renamed node, the edges that touch it and their other ends.
    assert len(graphviz_runs) == 1
    (small,) = graphviz_runs
    assert LONG in small
    assert "tool node step2" in small and "tool node step4" in small
    assert "tool node step0" not in small and "tool node step11" not in small


def test_a_name_that_reaches_past_the_drawing_s_edge_draws_the_whole_again(
    graphviz_runs: list[str],
) -> None:
    value = chain(12)
    _, first, layout = draw(value)
    graphviz_runs.clear()

    source, drawn, _ = draw(renamed(value, "step0", LONG * 3), layout)

    # The entry node is the leftmost: its wider box widens the drawing, so it is drawn whole.
    assert graphviz_runs[-1] == source.source
    assert drawn.svg == whole(source.source)
    assert drawn.svg.split('"', 2)[1] != first.svg.split('"', 2)[1]  # the SVG's width grew


def test_a_node_inside_a_body_is_drawn_with_the_whole_drawing(
    graphviz_runs: list[str],
) -> None:
    value = wire_value(templates.rounds(HASH, HASH, ["a", "b"], 2))
    _, _, layout = draw(value)
    graphviz_runs.clear()

    source, drawn, _ = draw(renamed(value, "critiques", LONG, level=("panel",)), layout)

    assert graphviz_runs == [source.source]
    assert drawn.svg == whole(source.source)


def test_every_drawing_after_edits_of_names_and_marks_is_graphviz_s_own(
    graphviz_runs: list[str],
) -> None:
    chooser = random.Random(12)
    value = chain(16)
    _, _, layout = draw(value)
    names = ["x", LONG, '<b>&amp;</b> \\ "quoted"', "Ünïcode ✓", "", "two\nlines"]
    alone = 0
    for _ in range(30):
        node = chooser.choice(value["nodes"])["payload"]["id"]
        value = renamed(value, node, chooser.choice(names) or None)
        graph = parse_document(format_draft(value))
        errors = [{"code": "x", "message": "m", "node": node}] if chooser.random() < 0.3 else []
        source = editor_source(graph, errors=errors, layout=layout)
        graphviz_runs.clear()
        drawn, _ = render_editor(source, graph, errors=errors)
        assert drawn.svg == whole(source.source)
        alone += graphviz_runs[-1] != source.source
    assert alone >= 10


def test_a_part_that_runs_out_of_time_is_not_remembered_as_the_whole_being_too_large(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    value = chain(12)
    _, _, layout = draw(value)
    edited = renamed(value, "step3", LONG)
    real = rendering._run
    whole_sources: list[str] = []

    def slow_parts(command: list[str], source: str, **sizes: int) -> bytes:
        if source.count("\n") < 20:  # a part, not the 13-node drawing
            raise rendering._Refused("took too long", timed_out=True)
        whole_sources.append(source)
        return real(command, source, **sizes)

    monkeypatch.setattr(rendering, "_run", slow_parts)
    _, drawn, _ = draw(edited, layout)
    assert drawn.svg is None and drawn.problem == "took too long"

    monkeypatch.setattr(rendering, "_run", real)
    source, again, _ = draw(edited, layout)
    assert again.svg == whole(source.source)
