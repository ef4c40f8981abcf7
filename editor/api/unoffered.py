"""The parts of the reference's API that Gatehouse does not offer, each answering ``404
not_offered`` with a message that says so (instead of "there is nothing at this address"):
client-driven runs (``/v1/client-runs/…``) and client-performed tools (``/v1/client-tools``).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Router

from editor.api.schemas import ErrorOut
from editor.services.errors import NotOffered

__all__ = ["router"]

router = Router(auth=None, tags=["errors"])

_ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def _client_runs() -> NotOffered:
    return NotOffered(
        "client-driven runs (`/v1/client-runs`)",
        "runs are driven by this server's workers: start one with `POST /v1/graph-runs`",
    )


@router.api_operation(
    _ALL_METHODS, "/client-runs", response={404: ErrorOut}, include_in_schema=False
)
def client_runs(request: HttpRequest) -> HttpResponse:
    raise _client_runs()


@router.api_operation(
    _ALL_METHODS, "/client-runs/{path:rest}", response={404: ErrorOut}, include_in_schema=False
)
def client_run_paths(request: HttpRequest, rest: str) -> HttpResponse:
    raise _client_runs()


@router.api_operation(
    _ALL_METHODS, "/client-tools", response={404: ErrorOut}, include_in_schema=False
)
def client_tools(request: HttpRequest) -> HttpResponse:
    raise NotOffered(
        "client-performed tools (`/v1/client-tools`)",
        "tools run on the workers, from this installation's registry (`GET /v1/tools`)",
    )
