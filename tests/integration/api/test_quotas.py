"""Quotas (stored bytes, documents, aliases, tokens) and rates (runs an hour, writes a minute) on
``/v1``: the limit trips with a message naming it and when it resets, nothing of the refused
write is kept, and under the limit nothing changes."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from pytest_django import Settings

from editor.models import (
    AgentDefinition,
    ApiToken,
    Document,
    DocumentAlias,
    DraftRevision,
    Run,
    UserUsage,
)
from editor.services import quotas
from editor.services.tokens import create_token
from tests.integration.api.callers import GRAPH, Caller, bearer_caller, graph_with, make_user

pytestmark = pytest.mark.django_db

BIG = json.dumps({**GRAPH, "description": "x" * 5000})


def save(api: Caller, slug: str, text: str, revision: int) -> Any:
    return api.put(
        f"/v1/documents/{slug}/draft", {"text": text}, headers={"If-Match": f'"{revision}"'}
    )


def refusal(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code
    return dict(error)


def stored(user: User) -> int:
    return UserUsage.objects.get(pk=user.pk).stored_bytes


# --- stored bytes ---------------------------------------------------------------------------


def test_each_save_adds_its_bytes_to_the_savers_total(
    api: Caller, author: User, new_document: Callable[..., dict[str, Any]]
) -> None:
    new_document("Flow", GRAPH)
    before = stored(author)
    assert save(api, "flow", BIG, 1).status_code == 200
    assert stored(author) == before + len(BIG.encode())
    assert stored(author) == sum(DraftRevision.objects.values_list("size", flat=True))


def test_a_save_over_the_stored_bytes_quota_is_refused_and_nothing_is_kept(
    api: Caller, author: User, new_document: Callable[..., dict[str, Any]], settings: Settings
) -> None:
    new_document("Flow", GRAPH)
    settings.GATEHOUSE_QUOTA_STORED_BYTES = stored(author) + 6000
    assert save(api, "flow", BIG, 1).status_code == 200
    used = stored(author)

    error = refusal(save(api, "flow", BIG + " ", 2), 413, "quota_exceeded")

    assert error["message"].startswith(
        f"quota reached: you have {used:,} bytes stored of the "
        f"{settings.GATEHOUSE_QUOTA_STORED_BYTES:,} allowed (GATEHOUSE_QUOTA_STORED_BYTES)"
    )
    assert "does not reset with time" in error["message"]
    assert error["details"] == {
        "limit_name": "stored_bytes",
        "setting": "GATEHOUSE_QUOTA_STORED_BYTES",
        "limit": settings.GATEHOUSE_QUOTA_STORED_BYTES,
        "used": used,
        "resets_at": None,
    }
    assert stored(author) == used
    assert DraftRevision.objects.count() == 2
    assert api.get("/v1/documents/flow/draft").json()["revision"] == 2


def test_a_deleted_document_gives_its_bytes_back(
    api: Caller, author: User, new_document: Callable[..., dict[str, Any]]
) -> None:
    new_document("Flow", GRAPH)
    assert save(api, "flow", BIG, 1).status_code == 200
    assert stored(author) > 0
    assert api.delete("/v1/documents/flow").status_code == 200
    assert stored(author) == 0


def test_pruned_history_gives_its_bytes_back(
    api: Caller, author: User, new_document: Callable[..., dict[str, Any]], settings: Settings
) -> None:
    settings.GATEHOUSE_DRAFT_HISTORY = 2
    new_document("Flow", GRAPH)
    for revision in range(1, 6):
        text = json.dumps({**GRAPH, "description": str(revision) * 1000})
        assert save(api, "flow", text, revision).status_code == 200
    assert DraftRevision.objects.count() == 2
    assert stored(author) == sum(DraftRevision.objects.values_list("size", flat=True))
    assert quotas.recount_stored_bytes([author.pk]) == 1
    assert stored(author) == sum(DraftRevision.objects.values_list("size", flat=True))


def test_revisions_removed_by_prune_give_their_bytes_back(
    api: Caller, author: User, new_document: Callable[..., dict[str, Any]], settings: Settings
) -> None:
    new_document("Flow", GRAPH)
    for revision in range(1, 4):
        text = json.dumps({**GRAPH, "description": str(revision) * 1000})
        assert save(api, "flow", text, revision).status_code == 200
    DraftRevision.objects.update(created_at=datetime(2020, 1, 1, tzinfo=UTC))
    settings.GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS = 30

    call_command("prune", stdout=io.StringIO())

    assert 0 < DraftRevision.objects.count() < 4
    assert stored(author) == sum(DraftRevision.objects.values_list("size", flat=True))


def test_graphs_and_agents_count_against_the_stored_bytes_quota(
    api: Caller, author: User, settings: Settings
) -> None:
    assert api.post("/v1/graphs", graph_with("a", "b")).status_code == 201
    after_graph = stored(author)
    assert after_graph > 0
    settings.GATEHOUSE_QUOTA_STORED_BYTES = after_graph + 10

    error = refusal(api.post("/v1/graphs", graph_with("c", "d", "e")), 413, "quota_exceeded")
    assert "storing this graph" in error["message"]
    agent = {"name": "helper", "model": "echo", "prompt": "Help."}
    error = refusal(api.post("/v1/agents", agent), 413, "quota_exceeded")
    assert "this agent definition" in error["message"]
    assert not AgentDefinition.objects.exists()
    assert stored(author) == after_graph
    assert quotas.recount_stored_bytes([author.pk]) == 1
    assert stored(author) == after_graph


# --- documents and aliases ------------------------------------------------------------------


def test_documents_past_the_quota_are_refused(
    api: Caller, new_document: Callable[..., dict[str, Any]], settings: Settings
) -> None:
    settings.GATEHOUSE_QUOTA_DOCUMENTS = 2
    new_document("One")
    new_document("Two")

    error = refusal(api.post("/v1/documents", {"title": "Three"}), 413, "quota_exceeded")

    assert error["message"].startswith(
        "quota reached: you have 2 documents of the 2 allowed (GATEHOUSE_QUOTA_DOCUMENTS), "
        "so a new document was refused"
    )
    assert error["details"]["used"] == 2
    assert Document.objects.count() == 2
    refusal(api.post("/v1/documents/one/duplicate", {}), 413, "quota_exceeded")
    # Deleting one frees its place.
    assert api.delete("/v1/documents/two").status_code == 200
    assert api.post("/v1/documents", {"title": "Three"}).status_code == 201


def test_renames_past_the_alias_quota_are_refused(
    api: Caller, author: User, new_document: Callable[..., dict[str, Any]], settings: Settings
) -> None:
    settings.GATEHOUSE_QUOTA_ALIASES = 2
    new_document("Flow")
    for old, new in (("flow", "flow-2"), ("flow-2", "flow-3")):
        assert api.request("PATCH", f"/v1/documents/{old}", {"slug": new}).status_code == 200

    error = refusal(
        api.request("PATCH", "/v1/documents/flow-3", {"slug": "flow-4"}), 413, "quota_exceeded"
    )

    assert "(GATEHOUSE_QUOTA_ALIASES)" in error["message"]
    assert api.get("/v1/documents/flow-3").status_code == 200
    assert set(DocumentAlias.objects.values_list("slug", "created_by")) == {
        ("flow", author.pk),
        ("flow-2", author.pk),
    }
    # A change of title alone reserves no slug.
    assert api.request("PATCH", "/v1/documents/flow-3", {"title": "T"}).status_code == 200


# --- tokens ---------------------------------------------------------------------------------


def test_tokens_past_the_quota_are_refused_and_revoked_ones_do_not_count(
    author: User, settings: Settings
) -> None:
    settings.GATEHOUSE_QUOTA_TOKENS = 2
    create_token(author, "one")
    second, _ = create_token(author, "two")

    with pytest.raises(quotas.QuotaExceeded) as refused:
        create_token(author, "three")

    assert "2 active API tokens of the 2 allowed (GATEHOUSE_QUOTA_TOKENS)" in str(refused.value)
    assert ApiToken.objects.filter(user=author).count() == 2
    second.revoked_at = datetime.now(UTC)
    second.save()
    create_token(author, "three")


def test_the_account_page_says_the_token_quota_was_reached(
    client: Client, author: User, settings: Settings
) -> None:
    settings.GATEHOUSE_QUOTA_TOKENS = 1
    client.force_login(author)
    create_token(author, "one")

    response = client.post("/account/tokens/", {"name": "two"})

    assert response.status_code == 413
    assert b"GATEHOUSE_QUOTA_TOKENS" in response.content
    assert ApiToken.objects.filter(user=author).count() == 1


# --- runs started an hour -------------------------------------------------------------------


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


def test_runs_past_the_hourly_rate_are_refused_until_the_hour_ends(
    api: Caller, operator_api: Caller, settings: Settings
) -> None:
    settings.GATEHOUSE_RATE_RUNS_PER_HOUR = 2
    graph = api.post("/v1/graphs", GRAPH).json()["graph"]
    for _ in range(2):
        assert operator_api.post("/v1/graph-runs", {"graph_hash": graph}).status_code == 201

    response = operator_api.post("/v1/graph-runs", {"graph_hash": graph})

    error = refusal(response, 429, "rate_limited")
    assert error["message"].startswith(
        "rate limit reached: at most 2 runs started an hour (GATEHOUSE_RATE_RUNS_PER_HOUR)"
    )
    resets_at = datetime.fromisoformat(error["details"]["resets_at"])
    assert resets_at.minute == 0 and resets_at.second == 0
    assert f"resets at {resets_at:%H:%M:%S} UTC" in error["message"]
    assert error["details"]["limit"] == 2
    assert 1 <= int(response["Retry-After"]) <= 3600
    assert Run.objects.count() == 2


def test_a_refused_run_start_is_not_counted(
    api: Caller, operator: User, operator_api: Caller, settings: Settings
) -> None:
    settings.GATEHOUSE_RATE_RUNS_PER_HOUR = 1
    graph = api.post("/v1/graphs", GRAPH).json()["graph"]
    # Refused for another reason (an input over the event cap): the hour's count stays 0.
    settings.GATEHOUSE_EVENT_MAX_BYTES = 100
    big = {"graph_hash": graph, "input": "x" * 200}
    assert operator_api.post("/v1/graph-runs", big).status_code == 413
    settings.GATEHOUSE_EVENT_MAX_BYTES = 1 << 20
    assert quotas.usage_of(operator).runs_this_hour == 0
    assert operator_api.post("/v1/graph-runs", {"graph_hash": graph}).status_code == 201
    assert quotas.usage_of(operator).runs_this_hour == 1


# --- write requests a minute ----------------------------------------------------------------


def test_writes_past_the_per_user_rate_are_refused_with_retry_after(
    api: Caller, settings: Settings
) -> None:
    settings.GATEHOUSE_RATE_WRITES_PER_MINUTE = 3
    for number in range(3):
        assert api.post("/v1/documents", {"title": f"Doc {number}"}).status_code == 201

    response = api.post("/v1/documents", {"title": "One too many"})

    error = refusal(response, 429, "rate_limited")
    assert error["message"].startswith(
        "rate limit reached: at most 3 write requests a minute (GATEHOUSE_RATE_WRITES_PER_MINUTE)"
    )
    assert error["details"]["setting"] == "GATEHOUSE_RATE_WRITES_PER_MINUTE"
    assert 1 <= int(response["Retry-After"]) <= 60
    assert datetime.fromisoformat(error["details"]["resets_at"]).second == 0
    assert Document.objects.count() == 3
    # Reads are not counted.
    assert api.get("/v1/documents").status_code == 200


def test_the_write_rate_is_per_user(author: User, settings: Settings) -> None:
    settings.GATEHOUSE_RATE_WRITES_PER_MINUTE = 1
    first, second = bearer_caller(author), bearer_caller(make_user("grace", "authors"))
    assert first.post("/v1/documents", {"title": "A"}).status_code == 201
    assert first.post("/v1/documents", {"title": "B"}).status_code == 429
    assert second.post("/v1/documents", {"title": "C"}).status_code == 201


def test_writes_past_the_per_address_rate_are_refused_whoever_sends_them(
    api: Caller, anonymous: Caller, settings: Settings
) -> None:
    settings.GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE = 2
    assert api.post("/v1/documents", {"title": "A"}).status_code == 201
    assert anonymous.post("/v1/documents", {"title": "B"}).status_code == 401

    error = refusal(api.post("/v1/documents", {"title": "C"}), 429, "rate_limited")

    assert "(GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE)" in error["message"]
    other = Client(REMOTE_ADDR="192.0.2.9")
    headers = api.headers
    assert (
        other.post("/v1/documents", {"title": "D"}, "application/json", headers=headers).status_code
        == 201
    )


def test_behind_a_proxy_the_address_is_the_one_the_proxy_wrote(
    api: Caller, settings: Settings
) -> None:
    settings.GATEHOUSE_CLIENT_IP_HEADER = "X-Forwarded-For"
    settings.GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE = 1
    first = {"X-Forwarded-For": "203.0.113.1"}
    # What the client itself put first proves nothing; the proxy's last entry is the address.
    second = {"X-Forwarded-For": "203.0.113.1, 203.0.113.2"}
    assert api.post("/v1/documents", {"title": "A"}, headers=first).status_code == 201
    assert api.post("/v1/documents", {"title": "B"}, headers=second).status_code == 201
    assert api.post("/v1/documents", {"title": "C"}, headers=first).status_code == 429


def test_a_users_own_limits_replace_the_installations(
    api: Caller, author: User, settings: Settings
) -> None:
    settings.GATEHOUSE_RATE_WRITES_PER_MINUTE = 1
    UserUsage.objects.update_or_create(user=author, defaults={"limits": {"writes_per_minute": 3}})
    for number in range(3):
        assert api.post("/v1/documents", {"title": f"Doc {number}"}).status_code == 201
    assert api.post("/v1/documents", {"title": "Four"}).status_code == 429


def test_an_address_rate_saved_as_one_users_limit_does_not_change_the_address_rate(
    api: Caller, author: User, settings: Settings
) -> None:
    # A row an older release let an operator save: the address's count is everyone's.
    settings.GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE = 2
    UserUsage.objects.update_or_create(
        user=author, defaults={"limits": {"address_writes_per_minute": 100}}
    )
    for number in range(2):
        assert api.post("/v1/documents", {"title": f"Doc {number}"}).status_code == 201

    error = refusal(api.post("/v1/documents", {"title": "Three"}), 429, "rate_limited")

    assert "at most 2 write requests from your address a minute" in error["message"]
    assert error["details"]["setting"] == "GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE"
    assert "address_writes_per_minute" not in quotas.usage_of(author).limits


def test_the_counter_starts_again_in_the_next_window(db: None) -> None:
    key = "writes:user:test"
    start = datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC)
    assert quotas._hit(key, 60, start)[0] == 1
    assert quotas._hit(key, 60, start.replace(second=59))[0] == 2
    count, resets_at = quotas._hit(key, 60, start.replace(minute=1, second=1))
    assert (count, resets_at) == (1, datetime(2026, 1, 1, 12, 2, tzinfo=UTC))
    # A hit stamped a little earlier (another machine's clock) counts in the current window.
    assert quotas._hit(key, 60, start.replace(second=58))[0] == 2
    assert quotas.forget_old_counters(start.replace(hour=14)) == 1
