"""How many streams may be open (``GATEHOUSE_STREAMS_PER_USER``, ``…_PER_PROCESS``), what is
answered past them, and the pieces of ``editor.asgi`` that pick a request's path."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.signals import request_finished
from django.db import close_old_connections
from django.test import Client, override_settings

from editor.asgi import opens_stream
from editor.models import RunEvent
from editor.services.runs.live import Credentials, run_slice
from editor.services.runs.log_reads import PayloadBytes
from editor.services.tokens import create_token, revoke_token
from editor.streams.limits import open_streams
from editor.views.health import answer_health_check
from tests.integration.api.callers import Caller, bearer_caller, error_of
from tests.integration.api.running import GATED, drive, start, store

pytestmark = pytest.mark.django_db

STREAM = {"Accept": "text/event-stream"}


def went_away(*responses: Any) -> None:
    """The clients of ``responses`` went away: each response is closed, as the server closes
    it, without the end-of-request signal closing the test's own database connection (what
    Django's test client does for the responses it closes itself)."""
    request_finished.disconnect(close_old_connections)
    try:
        for response in responses:
            response.close()
    finally:
        request_finished.connect(close_old_connections)


@pytest.fixture
def suspended(api: Caller, operator: User) -> str:
    run_id = start(bearer_caller(operator), store(api, GATED), input={"draft": "Tea is good."})
    assert drive(run_id) == "suspended"
    return run_id


@override_settings(GATEHOUSE_STREAMS_PER_USER=2)
def test_a_user_past_the_limit_is_told_429_with_the_limit_and_when_to_retry(
    operator: User, suspended: str
) -> None:
    caller = bearer_caller(operator)
    opened = [caller.get(f"/v1/runs/{suspended}/events", headers=STREAM) for _ in range(2)]
    assert [response.status_code for response in opened] == [200, 200]

    refused = caller.get(f"/v1/runs/{suspended}/events", headers=STREAM)

    assert refused.status_code == 429
    assert refused["Retry-After"] == "10"
    error = error_of(refused)
    assert error["code"] == "too_many_streams"
    assert "2 live streams" in error["message"]
    assert "GATEHOUSE_STREAMS_PER_USER" in error["message"]
    assert error["details"] == {"per": "user", "limit": 2}

    went_away(opened[0])  # its slot is free again
    again = caller.get(f"/v1/runs/{suspended}/events", headers=STREAM)
    assert again.status_code == 200
    went_away(opened[1], again)
    assert open_streams() == 0


@override_settings(GATEHOUSE_STREAMS_PER_USER=5, GATEHOUSE_STREAMS_PER_PROCESS=2)
def test_the_process_limit_counts_every_users_streams_and_the_page_gets_a_plain_429(
    client: Client, operator: User, author: User, suspended: str
) -> None:
    first = bearer_caller(operator).get(f"/v1/runs/{suspended}/events", headers=STREAM)
    client.force_login(author)
    second = client.get("/live/")
    assert (first.status_code, second.status_code) == (200, 200)

    refused = client.get("/live/")

    assert refused.status_code == 429
    assert refused["Content-Type"].startswith("text/plain")
    assert refused["Retry-After"] == "10"
    assert "GATEHOUSE_STREAMS_PER_PROCESS" in refused.content.decode()
    went_away(first, second)


def test_a_tokens_credentials_hold_until_it_is_revoked(operator: User) -> None:
    token, raw = create_token(operator, "stream")
    held = Credentials.of(operator.pk, raw, None)
    assert held.still_valid()

    revoke_token(operator, token.pk)

    assert not held.still_valid()


def test_a_sessions_credentials_end_with_sign_out_and_deactivation(
    client: Client, operator: User
) -> None:
    client.force_login(operator)
    held = Credentials.of(operator.pk, None, client.session.session_key)
    assert held.still_valid()
    User.objects.filter(pk=operator.pk).update(is_active=False)
    assert not held.still_valid()

    User.objects.filter(pk=operator.pk).update(is_active=True)
    assert held.still_valid()
    client.logout()
    assert not held.still_valid()


def test_an_unknown_token_is_no_credential(operator: User) -> None:
    assert not Credentials.of(operator.pk, "gh_not-a-token", None).still_valid()


def _scope(path: str, query: bytes = b"", accept: bytes = b"") -> dict[str, Any]:
    headers = [(b"accept", accept)] if accept else []
    return {"type": "http", "path": path, "query_string": query, "headers": headers}


@pytest.mark.parametrize(
    ("path", "query", "accept", "stream"),
    [
        ("/live/", b"", b"", True),
        ("/v1/runs/r/events", b"", b"text/event-stream", True),
        ("/v1/runs/r/events", b"from_seq=3", b"", True),
        ("/v1/runs/r/events", b"after=2&from_seq=0", b"", True),
        ("/v1/runs/r/events", b"note=from_seq=1", b"", False),
        ("/v1/runs/r/events", b"xfrom_seq=1", b"", False),
        ("/v1/runs/r/events", b"from_seq=", b"", False),
        ("/v1/runs/r/events", b"after=-1", b"application/json", False),
        ("/v1/runs", b"from_seq=1", b"", False),
    ],
)
def test_a_request_is_a_stream_only_when_the_view_would_stream_it(
    path: str, query: bytes, accept: bytes, stream: bool
) -> None:
    assert opens_stream(_scope(path, query, accept)) is stream


def _health(method: str) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async_to_sync(answer_health_check)({"type": "http", "method": method}, send)
    return sent


def test_the_asgi_health_check_answers_ok_and_is_never_cached() -> None:
    start_message, body = _health("GET")

    assert start_message["status"] == 200
    headers = dict(start_message["headers"])
    assert headers[b"content-type"] == b"application/json"
    assert b"no-cache" in headers[b"cache-control"]
    assert body["body"] == b'{"status": "ok"}'


def test_the_asgi_health_check_refuses_a_post_and_sends_no_body_to_head() -> None:
    refused, _ = _health("POST")
    assert refused["status"] == 405
    assert dict(refused["headers"])[b"allow"] == b"GET, HEAD"
    head, body = _health("HEAD")
    assert head["status"] == 200
    assert body["body"] == b""


def test_a_slice_stops_at_its_byte_bound_but_always_holds_one_envelope(suspended: str) -> None:
    whole = run_slice(suspended, 0)
    assert len(whole.events) >= 3
    # The bound is on the payloads as the database measures them (before reading any).
    sizes = [
        size
        for _, size in RunEvent.objects.filter(run_id=suspended)
        .order_by("seq")
        .values_list("seq", PayloadBytes())
    ]

    one = run_slice(suspended, 0, max_bytes=1)
    two = run_slice(suspended, 0, max_bytes=sizes[0] + sizes[1])

    assert [seq for seq, _ in one.events] == [0]
    assert one.next_start == 1
    assert [seq for seq, _ in two.events] == [0, 1]
    assert two.next_start == 2


def test_a_slice_past_a_gap_in_the_log_moves_on_to_the_runs_count(suspended: str) -> None:
    count = run_slice(suspended, 0).event_count
    RunEvent.objects.filter(run_id=suspended, seq__gte=1).delete()

    found = run_slice(suspended, 1)

    assert found.events == []
    assert found.next_start == count
