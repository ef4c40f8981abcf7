"""A node of the draft in its latest test run, beside the node's form (issue 24): what it
received and gave, its calls and timings (``editor/test_node.html#result``), and **Execute this
node** and **Test from here**. The editor's node panel loads the part (and loads it again when
the test results change); without JavaScript it is a page of its own.

The actions answer with the part again, the outcome said in it (``200``, a refusal too, so htmx
swaps it), and tell the page that the test runs changed (``HX-Trigger``), so the Test panel
fetches them and follows the new run's event stream.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import trigger_client_event

from editor.graph import MISSING
from editor.graph.jsonio import read_json
from editor.services.errors import (
    DraftInvalid,
    ForkHazard,
    InvalidRequest,
    NotAllowed,
    ServiceError,
    UnknownDocument,
    WritesUnconfirmed,
)
from editor.services.numbers import strict_int
from editor.services.runs import test_nodes, test_results
from editor.views.graphs import is_fragment_request
from editor.views.htmx import HtmxHttpRequest

__all__ = ["execute", "from_here", "node_result"]

PAGE = "editor/test_node.html"
#: The largest position a log stores (the column is a 32-bit integer on PostgreSQL).
SEQ_MAX = 2**31 - 1
#: The event the Test panel's list of test runs listens for.
RUNS_CHANGED = "test-runs-changed"


def _node(request: HtmxHttpRequest, data: Any) -> tuple[str, list[str]]:
    node = str(data.get("node", "")).strip()
    if not node:
        raise InvalidRequest("Name a node: ?node=<id>.", "node")
    return node, data.getlist("in")


def _render(
    request: HtmxHttpRequest, slug: str, node: str, level: list[str], **extra: Any
) -> HttpResponse:
    shown = test_results.node_panel(request.user, slug, node, level)
    fragment = is_fragment_request(request)
    # An action's outcome goes out of band beside the result (which reloads as runs move).
    acted = "message" in extra or "error" in extra
    context = {"panel": shown, "oob": fragment, "acted": acted, **extra}
    return render(request, f"{PAGE}#result" if fragment else PAGE, context)


@require_safe
@vary_on_headers("HX-Request")
def node_result(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """``?node=<id>`` (and ``in=<owner>`` for each subgraph body it sits in)."""
    node, level = _node(request, request.GET)
    return _render(request, slug, node, level)


def _said(error: ServiceError) -> str:
    if isinstance(error, DraftInvalid):
        shown = "; ".join(str(e.get("message")) for e in error.errors[:5])
        return f"This cannot run yet: {shown or 'the draft does not parse'}"
    return str(error)


def _answer(
    request: HtmxHttpRequest, slug: str, node: str, action: Any, done: str, **kept: Any
) -> HttpResponse:
    try:
        action()
    except (NotAllowed, UnknownDocument):
        raise  # the page's own answers: 403, 404
    except ForkHazard as hazard:
        return _render(request, slug, node, [], error=_said(hazard), writes=hazard.writes, **kept)
    except WritesUnconfirmed as unconfirmed:
        tools = unconfirmed.tools
        return _render(request, slug, node, [], error=_said(unconfirmed), tools=tools, **kept)
    except ServiceError as refused:
        return _render(request, slug, node, [], error=_said(refused), **kept)
    response = _render(request, slug, node, [], message=done)
    return trigger_client_event(response, RUNS_CHANGED)


@require_POST
def execute(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Execute this node**: with the typed input, or (left empty) the input it received in
    the latest test run that reached it."""
    node, _level = _node(request, request.POST)
    text = request.POST.get("input", "").strip()

    def go() -> None:
        value: Any = MISSING
        if text:
            try:
                value = read_json(text)
            except ValueError as error:
                raise InvalidRequest(f"The input is not JSON: {error}", "input") from None
        test_nodes.execute_node(
            request.user, slug, node, value, confirm_writes=request.POST.getlist("confirm_writes")
        )

    done = f"Test run started: {node} alone."
    return _answer(request, slug, node, go, done, input_text=text)


@require_POST
def from_here(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Test from here**: the latest test run that entered the node, forked there onto the
    draft. A write it would run again is listed to acknowledge, then posted again."""
    node, _level = _node(request, request.POST)
    seqs = request.POST.getlist("acknowledge_writes")

    def go() -> None:
        acknowledged = [strict_int(seq, "acknowledge_writes", maximum=SEQ_MAX) for seq in seqs]
        test_nodes.test_from_here(
            request.user,
            slug,
            node,
            acknowledged=acknowledged,
            confirm_writes=request.POST.getlist("confirm_writes"),
        )

    done = f"Test run started from {node}."
    return _answer(request, slug, node, go, done, from_here=True, acknowledged=seqs)
