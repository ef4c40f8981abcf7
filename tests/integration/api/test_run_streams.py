"""``GET /v1/runs/{id}/events`` as server-sent events (spec 05), and the pages' stream ``/live/``.

With Django's test client the streams run as under a WSGI server (polling in the request's
thread); the async test runs one as under ASGI, waiting on the event loop for the hub. The
reference's own client reads these streams from a real ASGI server in
``tests/integration/test_reference_client.py``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth.models import Group, User
from django.db import connections
from django.http import StreamingHttpResponse
from django.test import AsyncClient, Client

from editor.services.tokens import create_token
from editor.streams.hub import shut_down
from tests.integration.api.callers import Caller, bearer_caller, error_of
from tests.integration.api.running import (
    ECHO_CHAIN,
    GATED,
    drive,
    event_count,
    events_of,
    start,
    store,
)

pytestmark = pytest.mark.django_db

STREAM = {"Accept": "text/event-stream"}


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


@pytest.fixture
def suspended(api: Caller, operator_api: Caller) -> str:
    run_id = start(operator_api, store(api, GATED), input={"draft": "Tea is good."})
    assert drive(run_id) == "suspended"
    return run_id


@pytest.fixture
def queued(api: Caller, operator_api: Caller) -> str:
    return start(operator_api, store(api, ECHO_CHAIN))


def frames(chunks: Iterator[bytes]) -> Iterator[dict[str, Any]]:
    """The frames of a stream as ``{"id"?, "event"?, "data"?}`` (comments as ``{"comment"}``),
    read as the chunks arrive."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            frame: dict[str, Any] = {}
            for line in block.decode().split("\n"):
                if line.startswith(":"):
                    frame["comment"] = line[1:].strip()
                    continue
                name, _, value = line.partition(": ")
                frame[name] = json.loads(value) if name == "data" else value
            yield frame


def streamed(response: Any) -> Iterator[dict[str, Any]]:
    assert isinstance(response, StreamingHttpResponse), response.content[:300]
    assert response["Content-Type"] == "text/event-stream"
    assert response["Cache-Control"] == "no-cache"
    return frames(iter(response.streaming_content))


def test_the_events_stay_a_json_page_unless_a_stream_is_asked_for(
    operator_api: Caller, suspended: str
) -> None:
    response = operator_api.get(f"/v1/runs/{suspended}/events")

    assert response["Content-Type"].startswith("application/json")
    assert [envelope["seq"] for envelope in response.json()["events"]] == [0, 1, 2, 3, 4, 5, 6]


def test_a_stream_sends_every_event_then_ends_with_the_resting_status(
    operator_api: Caller, suspended: str
) -> None:
    response = operator_api.get(f"/v1/runs/{suspended}/events", headers=STREAM)

    sent = list(streamed(response))

    envelopes = events_of(operator_api, suspended)
    assert sent[:-1] == [{"id": str(envelope["seq"]), "data": envelope} for envelope in envelopes]
    status = operator_api.get(f"/v1/runs/{suspended}").json()["status"]
    assert sent[-1] == {"event": "end", "data": {"status": status}}
    assert status["state"] == "suspended"


def test_from_seq_starts_the_stream_there_and_last_event_id_after_the_one_named(
    operator_api: Caller, suspended: str
) -> None:
    from_five = list(streamed(operator_api.get(f"/v1/runs/{suspended}/events?from_seq=5")))
    resumed = list(
        streamed(
            operator_api.get(
                f"/v1/runs/{suspended}/events?from_seq=0",
                headers={**STREAM, "Last-Event-ID": "5"},
            )
        )
    )
    beyond = list(streamed(operator_api.get(f"/v1/runs/{suspended}/events?from_seq=99")))

    assert [frame.get("id") for frame in from_five] == ["5", "6", None]
    assert [frame.get("id") for frame in resumed] == ["6", None]
    assert [frame.get("event") for frame in beyond] == ["end"]


def test_a_stream_follows_a_run_as_its_worker_drives_it(operator_api: Caller, queued: str) -> None:
    live = streamed(operator_api.get(f"/v1/runs/{queued}/events", headers=STREAM))
    first = next(live)
    assert first["data"]["event"]["kind"] == "GraphRunStarted"

    drive(queued)  # while the stream is open: it finds the new events on its next look

    rest = list(live)
    assert [frame["data"]["seq"] for frame in rest[:-1]] == list(range(1, event_count(queued)))
    assert rest[-1]["event"] == "end"
    assert rest[-1]["data"]["status"]["state"] == "completed"


@pytest.mark.parametrize(
    ("path", "headers", "status", "code"),
    [
        ("/v1/runs/00000000-0000-0000-0000-000000000000/events?from_seq=0", {}, 404, "unknown_run"),
        ("/v1/runs/not-a-run/events", STREAM, 404, "unknown_run"),
        ("/v1/runs/{run}/events?from_seq=-1", {}, 400, "bad_request"),
        ("/v1/runs/{run}/events", {**STREAM, "Last-Event-ID": "seven"}, 400, "bad_request"),
    ],
)
def test_a_stream_that_cannot_start_is_an_error_envelope_not_a_stream(
    operator_api: Caller, suspended: str, path: str, headers: dict[str, str], status: int, code: str
) -> None:
    response = operator_api.get(path.format(run=suspended), headers=headers)

    assert response.status_code == status
    assert error_of(response)["code"] == code


def test_a_stream_needs_credentials(client: Client, suspended: str) -> None:
    response = client.get(f"/v1/runs/{suspended}/events", headers=STREAM)

    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"


# --- Under ASGI ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_under_asgi_a_waiting_stream_is_woken_by_the_append_and_keeps_alive_meanwhile(
    operator: User, api: Caller, operator_api: Caller, settings: Any
) -> None:
    settings.GATEHOUSE_STREAM_KEEPALIVE_SECONDS = 1
    settings.GATEHOUSE_STREAM_POLL_MS = 20
    token = create_token(operator, "stream")[1]
    run_id = start(operator_api, store(api, ECHO_CHAIN))

    async def follow() -> list[dict[str, Any]]:
        response = await AsyncClient().get(
            f"/v1/runs/{run_id}/events",
            headers={**STREAM, "Authorization": f"Bearer {token}"},
        )
        assert response["Content-Type"] == "text/event-stream"
        chunks = aiter(response.streaming_content)
        seen = _parse(await anext(chunks))
        # Nothing happens for a while: the stream says it is alive and goes on waiting.
        seen += _parse(await asyncio.wait_for(anext(chunks), 10))
        await sync_to_async(drive)(run_id)  # in the test's thread, on its connection
        while seen[-1].get("event") != "end":
            seen += _parse(await asyncio.wait_for(anext(chunks), 10))
        await chunks.aclose()
        await shut_down()  # as the server does: the hub's connections are closed
        return seen

    seen = in_a_thread_of_its_own(async_to_sync(follow))

    assert seen[0]["data"]["event"]["kind"] == "GraphRunStarted"
    assert seen[1] == {"comment": "keep-alive"}
    events = [frame for frame in seen if "id" in frame]
    assert [int(frame["id"]) for frame in events] == list(range(event_count(run_id)))
    assert seen[-1]["data"]["status"]["state"] == "completed"


def in_a_thread_of_its_own[T](call: Callable[[], T]) -> T:
    """``call()`` in a new thread, its database connections closed after it: an event loop of
    its own even when one runs in this thread (the browser tests leave Playwright's)."""
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as error:
            failure.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=120)
    if failure:
        raise failure[0]
    assert result, "the thread did not finish"
    return result[0]


def _parse(chunk: bytes) -> list[dict[str, Any]]:
    return list(frames(iter([chunk])))


# --- The pages' stream -----------------------------------------------------------------------


def test_a_page_hears_the_waiting_count_and_its_runs_growth(
    client: Client, operator: User, operator_api: Caller, api: Caller
) -> None:
    # An operator who may approve too: the gate the run reaches is theirs to decide.
    operator.groups.add(Group.objects.get(name="approvers"))
    client.force_login(operator)
    queued = start(operator_api, store(api, GATED))

    live = streamed(client.get(f"/live/?run={queued}&seen=1"))
    assert next(live) == {"event": "count", "data": 0}

    drive(queued)  # to its gate: the log grows, and one more run waits for a person

    news = [next(live), next(live)]
    assert {"event": "run", "data": event_count(queued)} in news
    assert {"event": "count", "data": 1} in news


def test_the_pages_stream_needs_a_signed_in_user(client: Client) -> None:
    response = client.get("/live/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db(transaction=True)
def test_under_asgi_each_persons_page_hears_the_count_of_the_cards_they_may_decide(
    operator: User, api: Caller, operator_api: Caller, settings: Any
) -> None:
    """Two pages open at once, an approver's and an author's: a run parks at a gate only the
    approver may decide, and the hub, which counts once a person, tells each page its own."""
    settings.GATEHOUSE_STREAM_POLL_MS = 20
    approver = User.objects.create_user("april", password="not-used-by-these-tests")
    approver.groups.add(Group.objects.get(name="approvers"))
    author = User.objects.create_user("abe", password="not-used-by-these-tests")
    author.groups.add(Group.objects.get(name="authors"))
    run_id = start(operator_api, store(api, GATED))

    async def follow() -> tuple[list[Any], list[Any]]:
        pages = []
        for person in (approver, author):
            client = AsyncClient()
            await client.aforce_login(person)
            response = await client.get("/live/")
            pages.append(aiter(response.streaming_content))
        heard: list[list[Any]] = [[], []]
        for index, chunks in enumerate(pages):
            heard[index] += _parse(await asyncio.wait_for(anext(chunks), 10))
        await sync_to_async(drive)(run_id)  # to its gate: one card, the approver's
        while {"event": "count", "data": 1} not in heard[0]:
            heard[0] += _parse(await asyncio.wait_for(anext(pages[0]), 10))
        for chunks in pages:
            await chunks.aclose()
        await shut_down()
        return heard[0], heard[1]

    approver_heard, author_heard = in_a_thread_of_its_own(async_to_sync(follow))

    assert approver_heard[0] == {"event": "count", "data": 0}
    assert {"event": "count", "data": 1} in approver_heard
    assert author_heard == [{"event": "count", "data": 0}]
