"""Benchmark of the editor's live validation: one field change, answered in place.

Sets Django up on a throwaway SQLite database in a temporary directory, creates an author and
three drafts built by :func:`graph_core.build_document` (20, 100 and 500 nodes), then changes
one gate's display name again and again, each time at the draft's current revision, and prints
the p50/p95 server-side time of:

* the round trip: ``POST /graphs/<slug>/edit/node/`` as htmx sends it, through Django's test
  client (the whole stack without a socket: middleware, form reading, save with the revision
  check, validation, canvas, and the out-of-band fragments of ``editor/page.html#live``),
  with the keys of the canvas and lists the page shows, as ``static/js/editor.js`` posts
  them; the answer must hold the new canvas (drawn by Graphviz) and the new error list;
* the pipeline alone: :func:`editor.services.documents.editing.open_draft`, then
  :func:`~editor.services.documents.editing.apply_edit` and
  :func:`~editor.services.documents.editing.draw_canvas` (read + save + validate + draw).

Every edit changes the DOT source, so every canvas is a cache miss, as when someone types.
Then, for the 100-node draft, the canvas render (:func:`editor.rendering.render_svg`, a cache
miss) as a ratio to running ``dot -Tsvg`` alone on the same source, and the cached render.
Run it with ``make bench``.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django_setup import setup_django  # this folder, put on sys.path by running it
from graph_core import build_document

ROOT = Path(__file__).resolve().parents[2]
SIZES = ((20, 60), (100, 40), (500, 15))  # nodes, measured edits
WARM_UP = 3
RENDER_REPEATS = 15
#: The keys the page shows, as editor.js reads them before each edit (editor/views/editor.py).
SHOWN_KEYS = {
    "shown_canvas": re.compile(r'<figure class="canvas" id="canvas" data-canvas data-key="(\w+)"'),
    "shown_structure": re.compile(r'<ul class="node-list" id="node-list" data-key="(\w+)"'),
}


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def gate_form(document: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The first gate of ``document`` and the fields its node form posts."""
    for node in document["nodes"]:
        if node["kind"] == "gate":
            payload = node["payload"]
            return payload["id"], {
                "node": payload["id"],
                "id": payload["id"],
                "name": payload.get("name", ""),
                "prompt": payload.get("prompt", ""),
                "approval_schema": json.dumps(payload["approval_schema"], indent=2),
            }
    raise AssertionError("the document has no gate")


def shown_keys(html: str, shown: dict[str, str]) -> dict[str, str]:
    """``shown`` updated with the keys of the pieces ``html`` (a page or an answer) carries."""
    found = {name: pattern.search(html) for name, pattern in SHOWN_KEYS.items()}
    return {**shown, **{name: match.group(1) for name, match in found.items() if match}}


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="gatehouse-bench-") as temporary:
        setup_django(Path(temporary))
        run(Path(temporary))


def run(directory: Path) -> None:
    from django.contrib.auth.models import Group, User
    from django.template.exceptions import TemplateDoesNotExist
    from django.template.loader import get_template
    from django.test import Client

    from editor.graph import parse_document
    from editor.graph.dot import dot_source
    from editor.graph.edits import update_node
    from editor.graph.model import graph_size
    from editor.presentation.node_form import read_node_form
    from editor.rendering import render_svg
    from editor.services import documents
    from editor.services.documents import editing
    from editor.services.documents.editing import CheckedDraft

    user = User.objects.create_user("bench", password="bench-password-not-secret")
    user.groups.add(Group.objects.get(name="authors"))
    client = Client()
    client.force_login(user)
    try:
        get_template("editor/page.html")
        http = True
    except TemplateDoesNotExist:
        http = False

    print("live validation: one display-name change on a gate, server-side, p50 / p95")
    print(f"{'nodes':>6} {'edges':>6} {'edits':>6} {'HTTP round trip':>22} {'apply_edit':>20}")
    drafts: dict[int, str] = {}
    for size, edits in SIZES:
        document = build_document(size)
        text = json.dumps(document, indent=2)
        slug = f"bench-{size}"
        documents.create_document(user, title=f"Bench {size}", slug=slug, text=text)
        drafts[size] = slug
        gate, fields = gate_form(document)
        url = f"/graphs/{slug}/edit/node/"
        round_trips: list[float] = []
        pipeline: list[float] = []
        shown: dict[str, str] = {}
        if http:
            shown = shown_keys(client.get(f"/graphs/{slug}/").content.decode(), shown)
        for edit in range(WARM_UP + edits):
            revision = documents.read_draft(slug).revision
            posted = {**fields, "name": f"Review {edit} of {size}", "revision": str(revision)}
            if http:
                elapsed, response = timed(
                    lambda posted={**posted, **shown}, url=url: client.post(
                        url, posted, HTTP_HX_REQUEST="true"
                    )
                )
                assert response.status_code == 200, (response.status_code, response.content[:300])
                answer = response.content.decode()
                assert f"Review {edit} of {size}" in answer
                # The new drawing and the verdict came back; the unchanged lists did not.
                assert 'id="canvas-panel"' in answer and 'id="problems"' in answer
                assert "<svg" in answer or "too large to draw" in answer
                shown = shown_keys(answer, shown)
                if edit >= WARM_UP:
                    round_trips.append(elapsed)
                revision += 1
            read = read_node_form("gate", {**posted, "name": f"Direct {edit} of {size}"})

            def change(value: Any, fields: dict[str, Any] = read.fields, gate: str = gate) -> Any:
                return update_node(value, gate, fields)

            def pipeline_run(change: Any = change, at: int = revision, slug: str = slug) -> Any:
                draft = editing.open_draft(user, slug, f"/graphs/{slug}/")
                result = editing.apply_edit(user, draft, at, change)
                assert isinstance(result, CheckedDraft), result
                canvas = editing.draw_canvas(result)  # laid out here, as the answer would
                assert canvas is not None
                return canvas

            elapsed, result = timed(pipeline_run)
            if edit >= WARM_UP:
                pipeline.append(elapsed)
        edges = len(document["edges"])
        nodes = len(document["nodes"])
        trip = (
            "{:7.1f}ms /{:7.1f}ms".format(*(s * 1000 for s in percentiles(round_trips)))
            if http
            else f"{'(no editor page)':>22}"
        )
        direct = "{:6.1f}ms /{:6.1f}ms".format(*(s * 1000 for s in percentiles(pipeline)))
        drawn = "" if result.svg is not None else "  (over the drawing cap: not drawn)"
        print(f"{nodes:>6} {edges:>6} {edits:>6} {trip:>22} {direct:>20}{drawn}")

    # The canvas of the 100-node draft: render_svg on a cache miss against dot alone.
    graph = parse_document(documents.read_draft(drafts[100]).text)
    nodes, edges = graph_size(graph)
    source = dot_source(graph)
    dot = shutil.which("dot")
    assert dot is not None, "Graphviz (dot) is needed"
    alone: list[float] = []
    ours: list[float] = []
    cached: list[float] = []
    for repeat in range(RENDER_REPEATS):
        # A comment makes each source new to the cache without changing the layout work.
        fresh = f"// {repeat} {time.time_ns()}\n{source}"
        elapsed, _ = timed(
            lambda fresh=fresh: subprocess.run(
                [dot, "-Tsvg"], input=fresh.encode(), capture_output=True, check=True
            )
        )
        alone.append(elapsed)
        elapsed, canvas = timed(lambda fresh=fresh: render_svg(fresh, nodes=nodes, edges=edges))
        assert canvas.svg is not None
        ours.append(elapsed)
        elapsed, again = timed(lambda fresh=fresh: render_svg(fresh, nodes=nodes, edges=edges))
        assert again.svg == canvas.svg
        cached.append(elapsed)
    print()
    print(f"canvas of the 100-node draft: {nodes} nodes, {edges} edges, {len(source)} bytes of DOT")
    print(f"  dot -Tsvg alone:          {statistics.median(alone) * 1000:7.1f}ms (median)")
    print(
        f"  render_svg, cache miss:   {statistics.median(ours) * 1000:7.1f}ms"
        f"  ({statistics.median(ours) / statistics.median(alone):.2f}x dot alone)"
    )
    print(f"  render_svg, cached:       {statistics.median(cached) * 1000:7.3f}ms")
    if not http:
        print()
        print("editor/page.html is missing: the HTTP round trip was not measured.")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
