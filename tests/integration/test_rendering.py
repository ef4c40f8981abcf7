"""The canvas renderer: the real ``dot``, a time limit, a size cap and a cache."""

from __future__ import annotations

import subprocess

import pytest
from django.core.cache import caches
from django.core.cache.backends.db import DatabaseCache

from editor import rendering
from editor.graph import templates
from editor.graph.dot import dot_source
from editor.models import CanvasCacheEntry

#: The canvas cache is a table of the database.
pytestmark = pytest.mark.django_db

HASH = "sha256:" + "a" * 64


@pytest.fixture(autouse=True)
def _empty_cache():
    caches[rendering.CACHE].clear()
    yield
    caches[rendering.CACHE].clear()


def test_a_template_renders_to_inline_svg_without_a_prologue():
    canvas = rendering.render_svg(dot_source(templates.approval_gate(HASH)), nodes=5, edges=4)
    assert canvas.drawn and canvas.problem is None
    assert canvas.svg.startswith("<svg")
    assert "<?xml" not in canvas.svg and "<!DOCTYPE" not in canvas.svg
    assert ">review</text>" in canvas.svg


def test_a_second_render_of_the_same_source_comes_from_the_cache(monkeypatch):
    source = dot_source(templates.approval_gate(HASH))
    first = rendering.render_svg(source, nodes=5, edges=4)

    def refuse(*args, **kwargs):
        raise AssertionError("dot ran again")

    monkeypatch.setattr(subprocess, "run", refuse)
    assert rendering.render_svg(source, nodes=5, edges=4).svg == first.svg


def test_the_cache_is_a_table_every_process_reads_with_the_svg_compressed(monkeypatch):
    source = dot_source(templates.approval_gate(HASH))
    first = rendering.render_svg(source, nodes=5, edges=4)

    (entry,) = CanvasCacheEntry.objects.all()
    assert len(entry.value) < len(first.svg) / 2
    # Another process: a cache of its own over the same table, nothing in its memory.
    other = DatabaseCache(CanvasCacheEntry._meta.db_table, {})
    assert other.get(entry.cache_key.removeprefix(":1:"))[0] == "svg"
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("dot ran again"))
    monkeypatch.setattr(rendering, "caches", {rendering.CACHE: other})
    assert rendering.render_svg(source, nodes=5, edges=4).svg == first.svg


def test_the_cache_keeps_a_bounded_number_of_canvases(settings):
    settings.CACHES = {
        **settings.CACHES,
        rendering.CACHE: {
            **settings.CACHES[rendering.CACHE],
            "OPTIONS": {"MAX_ENTRIES": 10, "CULL_FREQUENCY": 4},
        },
    }
    for number in range(25):
        assert rendering.render_svg(f"digraph {{ n{number} }}", nodes=1, edges=0).drawn

    # Past 10, a quarter is dropped before the next one is kept.
    assert 8 <= CanvasCacheEntry.objects.count() <= 11


def test_a_graph_over_the_drawing_cap_is_not_laid_out(settings, monkeypatch):
    settings.GATEHOUSE_DRAW_MAX_NODES = 3
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("dot must not run"))
    canvas = rendering.render_svg("digraph {}", nodes=4, edges=0)
    assert not canvas.drawn
    assert canvas.problem.startswith("This graph is too large to draw here")
    assert "4 nodes" in canvas.problem


def test_a_layout_that_runs_out_of_time_says_the_graph_is_too_large(settings):
    settings.GATEHOUSE_GRAPHVIZ_TIMEOUT = 0.2
    # A dense graph keeps dot busy far longer than the limit.
    edges = " ".join(f"a{i} -> a{j};" for i in range(500) for j in range(i + 1, 500, 2))
    canvas = rendering.render_svg(f"digraph {{ {edges} }}", nodes=500, edges=0)
    assert not canvas.drawn
    assert (
        canvas.problem
        == "This graph is too large to draw here: laying out its 500 nodes and 0 edges took "
        "longer than 0.2 s."
    )


def test_dot_source_that_dot_refuses_is_reported_not_raised():
    canvas = rendering.render_svg("digraph { this is not dot", nodes=1, edges=0)
    assert not canvas.drawn
    assert canvas.problem == "Graphviz could not draw this graph."
