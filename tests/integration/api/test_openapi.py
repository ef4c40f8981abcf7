"""The OpenAPI document at ``/v1/openapi.json`` and the docs page at ``/v1/docs``."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.integration.api.callers import Caller, error_of

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("post", "/v1/graphs"),
    ("get", "/v1/graphs"),
    ("post", "/v1/graphs/validate"),
    ("get", "/v1/graphs/{graph}"),
    ("get", "/v1/graphs/{graph}/export"),
    ("get", "/v1/schema/graph.json"),
    ("get", "/v1/documents"),
    ("post", "/v1/documents"),
    ("get", "/v1/documents/{slug}"),
    ("patch", "/v1/documents/{slug}"),
    ("delete", "/v1/documents/{slug}"),
    ("post", "/v1/documents/{slug}/duplicate"),
    ("get", "/v1/documents/{slug}/draft"),
    ("put", "/v1/documents/{slug}/draft"),
    ("post", "/v1/documents/{slug}/freeze"),
    ("get", "/v1/documents/{slug}/versions"),
    ("get", "/v1/documents/{slug}/diff"),
    ("get", "/v1/documents/{slug}/revisions"),
    ("get", "/v1/documents/{slug}/approvals"),
    ("put", "/v1/documents/{slug}/approvals"),
    ("post", "/v1/documents/{slug}/revisions/{number}/restore"),
    ("post", "/v1/agents"),
    ("get", "/v1/agents"),
    ("get", "/v1/agents/{agent}"),
    ("post", "/v1/graph-runs"),
    ("post", "/v1/runs"),  # agent runs (issue 22)
    ("get", "/v1/runs"),
    ("get", "/v1/runs/{run}"),
    ("get", "/v1/runs/{run}/events"),
    ("get", "/v1/runs/{run}/graph"),
    ("get", "/v1/runs/{run}/replay"),
    ("post", "/v1/runs/{run}/resolve"),
    ("post", "/v1/runs/{run}/resume"),
    ("post", "/v1/runs/{run}/wake"),
    ("post", "/v1/runs/{run}/abandon"),
    ("post", "/v1/runs/{run}/fork"),
    ("get", "/v1/runs/{run}/forks"),
    ("get", "/v1/tools"),
    ("get", "/v1/inbox"),
    ("get", "/v1/inbox/resolved"),
    ("get", "/v1/inbox/resolved/export"),
    ("post", "/v1/inbox/decisions"),
    ("post", "/v1/runs/{run}/claim"),
    ("post", "/v1/runs/{run}/release"),
    # Test runs of drafts, their sample inputs and pins; comparing two runs (issue 24).
    ("post", "/v1/documents/{slug}/test-runs"),
    ("get", "/v1/documents/{slug}/test-runs"),
    # **Test from here**: a run of the document forked onto the draft (one node alone is the
    # test-runs operation with `node`).
    ("post", "/v1/documents/{slug}/test-runs/fork"),
    ("get", "/v1/documents/{slug}/samples"),
    ("put", "/v1/documents/{slug}/samples"),
    ("get", "/v1/documents/{slug}/pins"),
    ("put", "/v1/documents/{slug}/pins"),
    ("delete", "/v1/documents/{slug}/pins"),
    ("get", "/v1/documents/{slug}/pins/{node}"),
    ("put", "/v1/documents/{slug}/pins/{node}"),
    ("delete", "/v1/documents/{slug}/pins/{node}"),
    ("get", "/v1/runs/{a}/compare/{b}"),
}


def test_the_openapi_document_lists_every_operation(reader: Caller) -> None:
    response = reader.get("/v1/openapi.json")

    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.")
    listed = {
        (method, path)
        for path, operations in document["paths"].items()
        for method in operations
        if method in {"get", "post", "put", "patch", "delete"}
    }
    assert listed == OPERATIONS


def test_every_operation_documents_its_answers_and_security(reader: Caller) -> None:
    document = reader.get("/v1/openapi.json").json()

    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert operation["responses"], (method, path)
            assert operation.get("security"), (method, path)
    schemes = document["components"]["securitySchemes"]
    assert {scheme["type"] for scheme in schemes.values()} == {"http", "apiKey"}


def test_the_docs_page_loads_swagger_from_our_own_static_files(nobody: User) -> None:
    client = Client()
    client.force_login(nobody)

    response = client.get("/v1/docs")

    assert response.status_code == 200
    page = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources
    assert all(source.startswith("/static/") for source in sources), sources
    assert "/v1/openapi.json" in page
    # No inline script: the only <script> without src is a JSON data block.
    for attributes in re.findall(r"<script([^>]*)>", page):
        assert "src=" in attributes or 'type="application/json"' in attributes
    for source in sources:
        assert client.get(source).status_code == 200, source


def test_the_docs_page_sends_a_visitor_to_sign_in(anonymous: Caller) -> None:
    response = anonymous.get("/v1/docs")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/v1/docs")


def test_the_openapi_document_needs_credentials(anonymous: Caller) -> None:
    response = anonymous.get("/v1/openapi.json")

    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"


def test_a_token_holder_may_read_the_openapi_document(reader: Caller) -> None:
    assert reader.get("/v1/openapi.json").status_code == 200
