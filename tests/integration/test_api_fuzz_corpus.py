"""The API's fuzz corpus replayed: requests that once got (or could get) a server error, kept
in ``cases/api_fuzz/`` (``make fuzz`` writes a new one there when Schemathesis finds a 5xx),
still get a 4xx or a success, in the API's envelope, and never a 5xx."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from editor.services import documents
from editor.services.tokens import create_token

CORPUS = Path(__file__).parent / "cases" / "api_fuzz"


@pytest.fixture
def api(db: None) -> tuple[Client, dict[str, str]]:
    """A client, the headers of a user who holds every role, and the document ``fuzzed``."""
    user = get_user_model().objects.create_user("fuzzer")
    user.groups.set(Group.objects.all())
    documents.create_document(user, title="Fuzzed", slug="fuzzed", text="{}")
    return Client(), {"Authorization": f"Bearer {create_token(user, 'fuzz')[1]}"}


def test_the_api_corpus_has_cases() -> None:
    assert list(CORPUS.glob("*.json"))


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")), ids=lambda path: path.stem)
def test_a_corpus_request_gets_no_server_error(
    api: tuple[Client, dict[str, str]], path: Path
) -> None:
    client, auth = api
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    body = case["body"]
    if body is not None and not isinstance(body, str):
        body = json.dumps(body)
    headers = {**case["headers"], **auth}
    response = client.generic(
        case["method"],
        case["path"],
        data=(body or "").encode(),
        content_type=case["media_type"] or "application/octet-stream",
        QUERY_STRING="&".join(f"{key}={value}" for key, value in case["query"].items()),
        headers=headers,
    )
    assert response.status_code < 500, response.content[:500]
    if response.status_code >= 400:
        assert set(response.json()) == {"error"}
