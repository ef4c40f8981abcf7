"""The one error envelope of ``/v1``, and every mapping of an exception onto it.

``{"error": {"code", "message", "details"?}}`` for every failure: the services' own
errors (one table, below), ninja's (a body of the wrong shape, no credentials), a
CSRF failure, a body over the cap, the database being unreachable, an unknown route,
and anything unexpected (logged, answered without a traceback). The few failures that
happen outside ninja's operations (a wrong method, a body refused before routing) are
rendered with :func:`error_response` by ``editor.middleware.ApiBoundaryMiddleware``.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.db import DataError, InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, UnreadablePostError
from django.http.multipartparser import MultiPartParserError
from django.utils import timezone
from ninja import NinjaAPI, Router
from ninja.errors import AuthenticationError, HttpError, ValidationError

from editor.api.auth import CsrfFailed
from editor.api.schemas import ErrorOut
from editor.services.errors import (
    AlreadyVoted,
    Claimed,
    DraftInvalid,
    ForkHazard,
    FourEyes,
    InputTooLarge,
    InvalidAgent,
    InvalidForkNode,
    InvalidGraph,
    InvalidPin,
    InvalidPolicy,
    InvalidRequest,
    InvalidResume,
    MixedCards,
    NotAllowed,
    NotAnApprover,
    NotClaimed,
    NotComparable,
    NotOffered,
    NotPinned,
    NotRunnable,
    NotSuspended,
    OriginNeedsReconciliation,
    OverLimit,
    PreconditionRequired,
    QuotaExceeded,
    RateLimited,
    RunBusy,
    ServiceError,
    SlugTaken,
    StaleDraft,
    StillSleeping,
    UnknownAgent,
    UnknownDocument,
    UnknownGraph,
    UnknownRun,
    UnsupportedMediaType,
    WritesUnconfirmed,
    WrongState,
    mapped,
)
from editor.services.installation import MISCONFIGURED

__all__ = [
    "CODES_BY_STATUS",
    "error_body",
    "error_response",
    "install_error_handlers",
    "not_found_router",
    "over_limit",
]

logger = logging.getLogger(__name__)

#: What every operation with a schema body calls that parameter.
BODY_PARAMETER = "payload"

#: Status and code of each service error (the most specific class wins). A code of ``None``
#: means the error names its own (``NotRunnable``: the first resolution error's code).
SERVICE_ERRORS: dict[type[ServiceError], tuple[int, str | None]] = {
    NotAllowed: (403, "forbidden"),
    NotAnApprover: (403, "not_an_approver"),
    FourEyes: (403, "four_eyes"),
    AlreadyVoted: (409, "already_voted"),
    Claimed: (409, "claimed"),
    NotClaimed: (409, "not_claimed"),
    MixedCards: (400, "mixed_cards"),
    InvalidPolicy: (400, "invalid_policy"),
    DraftInvalid: (409, "draft_invalid"),
    WritesUnconfirmed: (409, "writes_unconfirmed"),
    InvalidPin: (400, "invalid_pin"),
    NotComparable: (400, "not_comparable"),
    NotPinned: (404, "not_pinned"),
    NotOffered: (404, "not_offered"),
    InvalidRequest: (400, "bad_request"),
    InputTooLarge: (413, "payload_too_large"),
    InvalidGraph: (400, "invalid_graph"),
    InvalidAgent: (400, "invalid_agent"),
    UnknownGraph: (404, "unknown_graph"),
    UnknownDocument: (404, "unknown_document"),
    UnknownAgent: (404, "unknown_agent"),
    UnknownRun: (404, "unknown_run"),
    NotRunnable: (404, None),
    InvalidResume: (400, None),
    NotSuspended: (409, "not_suspended"),
    StillSleeping: (409, "still_sleeping"),
    WrongState: (409, "wrong_state"),
    RunBusy: (409, "run_busy"),
    InvalidForkNode: (400, "invalid_fork_node"),
    OriginNeedsReconciliation: (409, "origin_needs_reconciliation"),
    ForkHazard: (409, "write_replay_hazard"),
    SlugTaken: (409, "slug_taken"),
    StaleDraft: (412, "stale_draft"),
    UnsupportedMediaType: (415, "unsupported_media_type"),
    PreconditionRequired: (428, "precondition_required"),
    QuotaExceeded: (413, "quota_exceeded"),
    RateLimited: (429, "rate_limited"),
}

#: The code of a failure known only by its status (framework responses, ``HttpError``).
CODES_BY_STATUS: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "too_many_requests",
    500: "internal_error",
    503: "unavailable",
}

_MESSAGES: dict[int, str] = {
    401: "sign in, or send an API token as Authorization: Bearer <token>",
    404: "there is nothing at this address",
    405: "this address does not take this method",
    500: "the server failed to answer this request",
    503: "the database is not reachable; try again shortly",
}


def error_response(
    status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> JsonResponse:
    """The envelope as a response."""
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return JsonResponse({"error": body}, status=status)


def status_response(status: int, message: str | None = None) -> JsonResponse:
    """The envelope for a failure known only by its status."""
    code = CODES_BY_STATUS.get(status, "error")
    if message is None:
        message = _MESSAGES.get(status) or HTTPStatus(status).phrase.lower()
    return error_response(status, code, message)


def payload_too_large(limit: int) -> JsonResponse:
    return error_response(
        413,
        "payload_too_large",
        f"the request body is larger than the limit of {limit} bytes",
        {"limit": limit},
    )


# --- Handlers ---------------------------------------------------------------------------------


def _service_error(request: HttpRequest, exc: ServiceError) -> HttpResponse:
    found = mapped(SERVICE_ERRORS, exc)
    if found is None:
        return _unexpected(request, exc)
    status, code = found
    if code is None:
        code = str(getattr(exc, "code", None) or CODES_BY_STATUS[status])
    response = error_response(status, code, str(exc), exc.details())
    if isinstance(exc, OverLimit):
        _retry_after(response, exc)
    return response


def error_body(exc: ServiceError) -> dict[str, Any]:
    """The envelope's ``error`` for a service error that is one part of an answer (an item
    of a bulk decision): its code and message as its own answer would give them."""
    found = mapped(SERVICE_ERRORS, exc)
    status, code = found if found is not None else (500, "internal_error")
    if code is None:
        code = str(getattr(exc, "code", None) or CODES_BY_STATUS[status])
    body: dict[str, Any] = {"code": code, "message": str(exc)}
    details = exc.details()
    if details is not None:
        body["details"] = details
    return body


def over_limit(exc: OverLimit) -> JsonResponse:
    """The envelope of a quota or rate refused outside an operation (the write-rate check)."""
    found = mapped(SERVICE_ERRORS, exc)
    status, code = found if found is not None else (429, "rate_limited")
    response = error_response(status, code or "rate_limited", str(exc), exc.details())
    _retry_after(response, exc)
    return response


def _retry_after(response: HttpResponse, exc: OverLimit) -> None:
    seconds = exc.retry_after(timezone.now())
    if seconds is not None:
        response["Retry-After"] = str(seconds)


def _validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = [
        {
            "loc": _location(error.get("loc", ())),
            "message": error.get("msg", ""),
            "type": error.get("type", ""),
        }
        for error in exc.errors
    ]
    return error_response(400, "bad_request", "the request is not valid", {"errors": errors})


def _location(loc: Any) -> list[Any]:
    """Where a field error is, without ninja's name for the body parameter."""
    parts = list(loc)
    if len(parts) > 2 and parts[0] == "body" and parts[1] == BODY_PARAMETER:
        del parts[1]
    return parts


def _unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = status_response(401)
    response["WWW-Authenticate"] = 'Bearer realm="gatehouse"'
    return response


def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    cause = exc.__cause__
    if isinstance(cause, RequestDataTooBig):
        return _too_big(request, cause)
    if exc.status_code == 400 and cause is not None:
        # ninja's "Cannot parse request body": say what the parser refused.
        return error_response(
            400, "bad_request", "the request body is not valid JSON", {"reason": str(cause)}
        )
    return status_response(exc.status_code, str(exc) or None)


def _csrf_failed(request: HttpRequest, exc: CsrfFailed) -> HttpResponse:
    return error_response(
        403,
        "csrf_failed",
        "the CSRF check failed: send the csrftoken cookie's value as X-CSRFToken, "
        "or use an API token",
    )


def _too_big(request: HttpRequest, exc: Exception) -> HttpResponse:
    return payload_too_large(settings.GATEHOUSE_MAX_BODY_BYTES)


def _bad_body(request: HttpRequest, exc: Exception) -> HttpResponse:
    return error_response(400, "bad_request", "the request body cannot be read")


def _unstorable(request: HttpRequest, exc: DataError) -> HttpResponse:
    logger.warning(
        "the database refused a value during %s %s: %s", request.method, request.path, exc
    )
    return error_response(400, "bad_request", "a value in this request cannot be stored")


def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return status_response(404)


def _unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.warning("database unavailable during %s %s: %s", request.method, request.path, exc)
    return status_response(503)


#: What a client is told while the installation's tools cannot be built (the detail is logged).
MISCONFIGURED_MESSAGE = (
    "this installation's tools are misconfigured; an operator must fix the server's "
    "configuration (its log names what is wrong)"
)


def _misconfigured(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.error("the tool registry cannot be built (%s %s): %s", request.method, request.path, exc)
    return status_response(503, MISCONFIGURED_MESSAGE)


def _unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.error("unexpected error during %s %s", request.method, request.path, exc_info=exc)
    return status_response(500)


def install_error_handlers(api: NinjaAPI) -> None:
    """Map every exception an operation can raise onto the envelope, once."""
    handlers: dict[type[Exception], Any] = {
        ServiceError: _service_error,
        ValidationError: _validation_error,
        AuthenticationError: _unauthorized,
        HttpError: _http_error,
        CsrfFailed: _csrf_failed,
        RequestDataTooBig: _too_big,
        SuspiciousOperation: _bad_body,
        MultiPartParserError: _bad_body,
        UnreadablePostError: _bad_body,
        Http404: _not_found,
        OperationalError: _unavailable,
        InterfaceError: _unavailable,
        DataError: _unstorable,
        **dict.fromkeys(MISCONFIGURED, _misconfigured),
        Exception: _unexpected,
    }
    for exc_class, handler in handlers.items():
        api.add_exception_handler(exc_class, handler)


# --- Unknown routes ---------------------------------------------------------------------------

#: Mounted last: whatever no other route matched is a ``404 not_found``, with or without
#: credentials.
not_found_router = Router(auth=None, tags=["errors"])

_ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@not_found_router.api_operation(
    _ALL_METHODS, "/", response={404: ErrorOut}, include_in_schema=False
)
def api_root(request: HttpRequest) -> HttpResponse:
    raise Http404


@not_found_router.api_operation(
    _ALL_METHODS, "/{path:rest}", response={404: ErrorOut}, include_in_schema=False
)
def unknown_route(request: HttpRequest, rest: str) -> HttpResponse:
    raise Http404
