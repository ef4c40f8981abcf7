"""``/graphs/<slug>/approvals/``: a document's **Approvals** page, a form per gate of its draft
(``docs/inbox.md``, *Approval policies*). Authors and operators edit; anyone signed in reads.

Each gate's form is its own fragment (``approvals/page.html#gate``): it posts with htmx and
the answer replaces it, saved or with the problems beside their fields (``200``, so htmx swaps
it). Without script the form posts normally: a save goes back to the page, a refusal shows the
page with the problems.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from editor.presentation import policy_form
from editor.services.documents import approvals
from editor.services.documents.approvals import DocumentPolicy, GateEntry
from editor.services.errors import InvalidPolicy, InvalidRequest
from editor.views.graphs import editor_url
from editor.views.htmx import HtmxHttpRequest

__all__ = ["approvals_page", "remove_gate", "save_gate"]

PAGE = "approvals/page.html"


def _page_url(slug: str, entry: GateEntry | None = None) -> str:
    url = reverse("approvals", args=[slug])
    return f"{url}#{entry.dom_id}" if entry is not None else url


def _context(
    policy: DocumentPolicy, forms: dict[str, policy_form.PolicyForm] | None = None
) -> dict[str, Any]:
    shown = {entry.gate: policy_form.form_of(entry.policy) for entry in policy.entries}
    shown.update(forms or {})
    return {
        "policy": policy,
        "gates": [(entry, shown[entry.gate]) for entry in policy.entries],
        "editor_url": editor_url(policy.slug),
        "expiry_choices": policy_form.EXPIRY_CHOICES,
    }


@require_safe
def approvals_page(request: HttpRequest, slug: str) -> HttpResponse:
    policy = approvals.read_policy(request.user, slug)
    return render(request, PAGE, _context(policy))


def _post_lists(request: HttpRequest) -> dict[str, list[str]]:
    return {name: request.POST.getlist(name) for name in request.POST}


@require_POST
@vary_on_headers("HX-Request")
def save_gate(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """One gate's form: its whole policy."""
    gate = request.POST.get("gate", "")
    body, form = policy_form.read_form(_post_lists(request))
    saved = None
    if not form.errors:
        try:
            saved = approvals.save_gate(request.user, slug, gate, body)
        except InvalidPolicy as error:
            form = policy_form.with_problems(form, error.problems)
    policy = saved or approvals.read_policy(request.user, slug)
    entry = policy.entry(gate)
    if entry is None:  # a gate no form shows: a crafted post
        raise InvalidRequest(f"the draft has no gate `{gate}`", "gate")
    if saved is not None and not request.htmx:
        messages.success(request, _saved_words(entry))
        return redirect(_page_url(slug, entry))
    forms = {} if saved is not None else {gate: form}
    context = _context(policy, forms)
    if request.htmx:
        context.update(entry=entry, form=forms.get(gate) or policy_form.form_of(entry.policy))
        context["saved"] = _saved_words(entry) if saved is not None else None
        return render(request, f"{PAGE}#gate", context)
    return render(request, PAGE, context)


def _saved_words(entry: GateEntry) -> str:
    words = f"Saved the policy of {entry.display_name}: runs started from now on use it."
    if entry.keeping_old:
        cards = "card keeps" if entry.keeping_old == 1 else "cards keep"
        words += f" {entry.keeping_old} waiting {cards} the policy its run started with."
    return words


@require_POST
def remove_gate(request: HttpRequest, slug: str) -> HttpResponse:
    """Forget what the policy says of a gate: back to the defaults, or (for a gate the draft
    no longer has) no longer listed."""
    gate = request.POST.get("gate", "")
    policy = approvals.remove_gate(request.user, slug, gate)
    entry = policy.entry(gate)
    if entry is not None:
        messages.success(request, f"The policy of {entry.display_name} is back to the defaults.")
    else:
        messages.success(request, f"Removed the policy of the gate `{gate}`.")
    return redirect(_page_url(slug, entry))
