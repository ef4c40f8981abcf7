"""The inbox's actions beside a card's own form (``docs/inbox.md``): **I'm on it** and
**Release** (a claim), and deciding several cards of one gate at once.

A claim's answer is the card again (``inbox/page.html#card``): with htmx it replaces the card;
without script the same card is shown on a page of its own. The selected cards are decided on
a page of their own (``/inbox/bulk/``): the one form, the cards it decides, then what became
of each.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from editor.services.errors import Claimed, MixedCards, NotClaimed, ServiceError
from editor.services.inbox import bulk, claims
from editor.services.inbox import cards as inbox_cards
from editor.views.htmx import HtmxHttpRequest


def _claim_answer(
    request: HtmxHttpRequest, run_id: str, post: dict[str, str], act: Any
) -> HttpResponse:
    node = post.get("node") or None
    scope = inbox_cards.read_scope(post.get("scope", ""))
    notice, status = None, 200
    try:
        act(request.user, run_id, node, scope)
    except (Claimed, NotClaimed) as error:
        # A claim's refusal starts with a username, which keeps its case.
        notice, status = f"{error}.", 409
    card = inbox_cards.card_of(request.user, run_id, node, scope, notice=notice)
    if request.htmx:
        return render(request, "inbox/page.html#card", {"card": card})
    return render(request, "inbox/resolve.html", {"card": card}, status=status)


@require_POST
@vary_on_headers("HX-Request")
def claim(request: HtmxHttpRequest, run_id: uuid.UUID) -> HttpResponse:
    """**I'm on it**: claim the card (or renew one's claim)."""
    return _claim_answer(request, str(run_id), request.POST.dict(), claims.claim)


@require_POST
@vary_on_headers("HX-Request")
def release(request: HtmxHttpRequest, run_id: uuid.UUID) -> HttpResponse:
    """**Release**: give up one's claim on the card."""
    return _claim_answer(request, str(run_id), request.POST.dict(), claims.release)


@require_http_methods(["GET", "HEAD", "POST"])
def decide_several(request: HtmxHttpRequest) -> HttpResponse:
    """The selected cards (``card`` = ``<run id>:<seq>``, repeated): their one form (GET), and
    what became of each once decided (POST). A form that cannot be read is shown again with
    its problems, and nothing is recorded."""
    source = request.POST if request.method == "POST" else request.GET
    keys = bulk.read_keys(source.getlist("card"))
    try:
        selection = bulk.select(request.user, keys)
    except MixedCards as error:
        refused = {"problem": _sentence(error), "mixed": error.cards}
        return render(request, "inbox/bulk.html", refused, status=400)
    context: dict[str, Any] = {"selection": selection, "form": selection.form, "outcome": None}
    if request.method != "POST" or not selection.items:
        return render(request, "inbox/bulk.html", context)
    form, outcome = bulk.decide_form(request.user, selection, request.POST.dict())
    context.update(form=form, outcome=outcome)
    if outcome is not None:
        context["failures"] = [(result, _sentence(result.error)) for result in outcome.failed]
    return render(request, "inbox/bulk.html", context)


def _sentence(error: ServiceError | None) -> str:
    text = str(error) if error is not None else ""
    return f"{text[:1].upper()}{text[1:]}." if text else ""
