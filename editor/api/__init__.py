"""The ``/v1`` JSON API: one ninja API, one router per resource.

Operations are thin: they read the request, call one service and return a schema;
``editor.api.errors`` maps every failure onto the one error envelope. Every view is
exempt from ``LoginRequiredMiddleware``, because the API authenticates callers itself
(a session or a bearer token) and answers ``401`` as JSON instead of redirecting to the
sign-in page. The docs page (``/v1/docs``) and the OpenAPI document need a signed-in
user too: the page sends anyone else to sign in, the document answers ``401``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import redirect_to_login
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.openapi.views import openapi_json
from ninja.parser import Parser

from editor.api import (
    agents,
    documents,
    errors,
    forks,
    graphs,
    inbox,
    runs,
    test_runs,
    unoffered,
)
from editor.api.auth import api_auth
from editor.graph import read_json

__all__ = ["api", "urls"]


class StrictJsonParser(Parser):
    """Request bodies are read by the same strict JSON reader as graph documents.

    It refuses what the reference refuses (duplicate keys, lone surrogates, nesting
    deeper than 127 levels, …) with a message saying what and where; ninja turns the
    error into ``400 bad_request``.
    """

    def parse_body(self, request: HttpRequest) -> Any:
        return read_json(request.body)


def _signed_in_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The docs page and the OpenAPI document, for signed-in users and token holders."""
    is_document = getattr(view, "func", None) is openapi_json

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            user = next((found for auth in api_auth if (found := auth(request))), None)
        except (OperationalError, InterfaceError):
            return errors.status_response(503)
        if user is None:
            if is_document:
                return errors.status_response(401)
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return login_not_required(wrapper)


api = NinjaAPI(
    title="Gatehouse API",
    version="1",
    description=(
        "Store, validate and version agent-workflow graph documents. Authenticate with the "
        "browser session (writes need the CSRF token) or `Authorization: Bearer <token>`. "
        'Every error is `{"error": {"code", "message", "details"?}}`.'
    ),
    urls_namespace="api",
    auth=api_auth,
    parser=StrictJsonParser(),
    docs_decorator=_signed_in_only,
)
errors.install_error_handlers(api)
api.add_router("", graphs.router)
api.add_router("", documents.router)
api.add_router("", agents.router)
api.add_router("", runs.router)
api.add_router("", forks.router)
api.add_router("", test_runs.router)
api.add_router("", inbox.router)
api.add_router("", unoffered.router)
# Last, so that it only answers what no other route matched.
api.add_router("", errors.not_found_router)


def _api_urls() -> tuple[list[Any], str, str]:
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        if pattern.callback is not None:  # every one of ninja's patterns has its view
            login_not_required(pattern.callback)
    return patterns, app_name, namespace


#: For ``path("v1/", urls)`` in ``editor.urls``.
urls = _api_urls()
