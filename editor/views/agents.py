"""``/agents/``: the stored agent definitions, and the form that creates one (authors)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from editor.forms import AgentFileForm, AgentForm
from editor.graph import hex_digits
from editor.services import agents, runs
from editor.services.access import can_author
from editor.services.errors import InvalidAgent
from editor.views.graphs import go_to
from editor.views.htmx import HtmxHttpRequest


@require_http_methods(["GET", "HEAD", "POST"])
@vary_on_headers("HX-Request")
def agent_list(request: HtmxHttpRequest) -> HttpResponse:
    author = can_author(request.user)
    if request.method == "POST" and not author:
        raise PermissionDenied("Creating agent definitions needs the authors role.")
    from_file = request.method == "POST" and "source" in request.POST
    tool_names = [tool["name"] for tool in runs.list_tools()]
    form = AgentForm(
        request.POST if request.method == "POST" and not from_file else None,
        tool_names=tool_names,
    )
    file_form = AgentFileForm(request.POST if from_file else None)
    if from_file:
        if file_form.is_valid():
            try:
                stored = agents.create_agent(
                    request.user, file_form.cleaned_data["source"], "application/toml"
                )
            except InvalidAgent as error:
                file_form.add_service_errors(error.errors)
            else:
                return _stored(request, stored, agents.get_agent(stored.agent).name)
        if request.htmx:
            return render(request, "agents/list.html#file_form", {"file_form": file_form})
    elif request.method == "POST" and form.is_valid():
        try:
            stored = agents.create_agent(request.user, json.dumps(form.definition()))
        except InvalidAgent as error:
            form.add_service_errors(error.errors)
        else:
            return _stored(request, stored, form.cleaned_data["name"])
    if request.htmx and request.method == "POST":
        return render(request, "agents/list.html#form", {"form": form})
    cursor = request.GET.get("cursor") or None
    page = agents.list_agents(cursor=cursor)
    return render(
        request,
        "agents/list.html",
        {
            "agents": page.items,
            "next": page.next,
            "paged": cursor is not None,
            "form": form if author else None,
            "file_form": file_form if author else None,
        },
    )


def _stored(request: HtmxHttpRequest, stored: agents.StoredAgent, name: str | None) -> HttpResponse:
    """Say what was stored, and go to the list page that starts with it."""
    label = f"“{name}”" if name else "(unnamed)"
    if stored.created:
        messages.success(request, f"Agent {label} stored as {stored.agent}.")
    else:
        messages.info(
            request,
            f"This definition was already stored as {stored.agent}; it is now named {label}."
            if name
            else f"This definition was already stored as {stored.agent}.",
        )
    # The page that starts with it (the list is by name, fifty to a page).
    cursor = agents.page_starting_at(stored.agent)
    query = f"?{urlencode({'cursor': cursor})}" if cursor else ""
    target = f"{reverse('agents')}{query}#agent-{hex_digits(stored.agent)}"
    return go_to(request, target)
