"""The editor's **Test** panel: test runs of the draft, its sample inputs and its pins
(issue 24). Each form posts here and is answered with the panel again (``200``, a refusal said
inside it, so htmx swaps it); without JavaScript, the panel is a page of its own.

The newest test run is drawn on the canvas (``#test-results``, painted by
``static/js/test-panel.js``). While it moves, the panel follows its event stream (``/live/``,
``#test-live``): each ``run`` event fetches the list again (:func:`run_list`), which replaces the
stream only when the run to follow changed (a newer run, or this one resting), and tells the
page the results changed (``HX-Trigger``) so the node panel's result follows too. Nothing
polls."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import trigger_client_event

from editor.presentation.typed import read_typed_json
from editor.services import runs
from editor.services.documents import samples
from editor.services.errors import (
    DraftInvalid,
    InvalidRequest,
    NotAllowed,
    ServiceError,
    UnknownDocument,
)
from editor.services.runs import test_panel, test_runs
from editor.views.htmx import HtmxHttpRequest

__all__ = [
    "decide",
    "panel",
    "pin",
    "run_list",
    "save_sample",
    "save_samples",
    "start",
    "unpin",
]

PAGE = "editor/test.html"


#: The events the page's parts listen for: the list of test runs, and the node's result.
RUNS_CHANGED = "test-runs-changed"
RESULTS_CHANGED = "test-results-changed"


def _render(
    request: HtmxHttpRequest,
    slug: str,
    edited: samples.SampleForm | None = None,
    **extra: Any,
) -> HttpResponse:
    shown = test_panel.test_panel(request.user, slug)
    if edited is not None and shown.sample_forms is not None:
        # A refused sample's form comes back as it was typed, with its errors.
        shown = replace(shown, sample_forms=samples.with_form(shown.sample_forms, edited))
    context = {
        "panel": shown,
        "samples_json": json.dumps({s.name: s.input for s in shown.samples}),
        **extra,
    }
    response = render(request, f"{PAGE}#panel" if request.htmx else PAGE, context)
    if request.method == "POST" and request.htmx:
        return trigger_client_event(response, RESULTS_CHANGED)
    return response


def _json(text: str, what: str) -> Any:
    value, problem = read_typed_json(text.strip() or "null")
    if problem is not None:
        raise InvalidRequest(f"{what} is not JSON: {problem.error}")
    return value


@require_safe
@vary_on_headers("HX-Request")
def panel(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    return _render(request, slug)


@require_safe
def run_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The panel's test runs alone, with the canvas's results: what the run's event stream
    (``?watching=<run>``: the run the page follows now) and the node panel's actions fetch."""
    shown = test_panel.test_panel(request.user, slug)
    watching = request.GET.get("watching", "")
    context = {"panel": shown, "restream": watching != (shown.stream_run or "")}
    response = render(request, f"{PAGE}#run_list", context)
    return trigger_client_event(response, RESULTS_CHANGED)


def _attempt(request: HtmxHttpRequest, slug: str, action: Any, done: str, **kept: Any) -> Any:
    try:
        action()
    except (NotAllowed, UnknownDocument, samples.InvalidInput):
        raise  # the page's own answers (403, 404), and a form to show again (start)
    except ServiceError as refused:
        # Said inside the panel, answered 200 so htmx swaps it (a 4xx body is discarded).
        return _render(request, slug, error=_said(refused), **kept)
    return _render(request, slug, message=done)


def _said(error: ServiceError) -> str:
    if isinstance(error, DraftInvalid):
        shown = "; ".join(str(e.get("message")) for e in error.errors[:5])
        return f"The draft cannot be tested yet: {shown}"
    return str(error)


@require_POST
def start(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """**Test run**: the draft as it is, with the chosen sample's input, or the one typed in
    the fields of the entry nodes' input schema, or as JSON (its own button)."""
    text = request.POST.get("input", "")
    sample = request.POST.get("sample") or None
    source = request.POST.get("input_from", "")

    def go() -> None:
        if sample is not None and source != samples.FROM_JSON:
            value = samples.sample_input(request.user, slug, sample)
        elif source == "fields":
            value = samples.read_draft_input(slug, request.POST, prefix="test-input")
        else:
            value = _json(text, "The input")
        test_runs.start_test_run(
            request.user,
            slug,
            value,
            confirm_writes=request.POST.getlist("confirm_writes"),
            sample=sample,
        )

    try:
        return _attempt(request, slug, go, "Test run started.", input_text=text)
    except samples.InvalidInput as refused:
        said = "The test run did not start: the input has errors, beside its fields."
        return _render(request, slug, error=said, input_form=refused.form)


@require_POST
def save_samples(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    text = request.POST.get("samples", "")

    def go() -> None:
        samples.put_samples(request.user, slug, _json(text, "The samples"))

    return _attempt(request, slug, go, "Samples saved.", samples_text=text)


@require_POST
def save_sample(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """One sample from its generated form (``original``: its name before, empty for a new
    one), or with ``delete``, removed."""
    original = request.POST.get("original", "")
    if request.POST.get("delete"):

        def delete() -> None:
            samples.delete_sample(request.user, slug, original)

        return _attempt(request, slug, delete, f"The sample {original} is deleted.")
    name = request.POST.get("name", "")
    try:
        samples.save_sample(request.user, slug, original, name, request.POST.dict())
    except samples.InvalidSample as refused:
        said = f"The sample was not saved: {refused}."
        return _render(request, slug, edited=refused.form, error=said, samples_open=True)
    return _render(request, slug, message=f"The sample {name.strip()} is saved.")


@require_POST
def pin(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Pin a node's output from a test run (``from_run``) or typed (``output``)."""
    node = request.POST.get("node", "").strip()
    from_run = request.POST.get("from_run") or None

    def go() -> None:
        if not node:
            raise InvalidRequest("Choose the node to pin.")
        if from_run is not None:
            test_runs.pin_node(request.user, slug, node, from_run=from_run)
        else:
            output = _json(request.POST.get("output", ""), "The output")
            test_runs.pin_node(request.user, slug, node, output=output)

    return _attempt(request, slug, go, f"Pinned {node}: test runs use this output now.")


@require_POST
def unpin(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    if request.POST.get("all"):
        test_runs.clear_pins(request.user, slug)
        return _render(request, slug, message="Every pin cleared.")
    node = request.POST.get("node", "")
    test_runs.clear_pin(request.user, slug, node)
    return _render(request, slug, message=f"The pin of {node} is cleared.")


@require_POST
def decide(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Decide a test run's gate, as its author."""
    run_id = request.POST.get("run", "")

    def go() -> None:
        value = _json(request.POST.get("input", ""), "The decision")
        body = {"input": value, "node": request.POST.get("node") or None}
        try:
            runs.resume(request.user, run_id, body)
        except NotAllowed:
            raise InvalidRequest(
                "Only the author who started this test run decides its gates."
            ) from None

    return _attempt(request, slug, go, "Decided; the test run goes on.")
