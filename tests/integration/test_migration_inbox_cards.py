"""Migration 0023 writes the waiting cards of the runs parked when it runs (issue 26): an
installation that upgrades with gates waiting finds them in its people's inboxes at once."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("editor", "0022_approval_policies")]
AFTER = [("editor", "0023_inbox_cards")]
AT = "2026-12-01T09:00:00.000000Z"


@pytest.fixture
def executor() -> Iterator[MigrationExecutor]:
    found = MigrationExecutor(connection)
    latest = found.loader.graph.leaf_nodes()
    yield found
    found = MigrationExecutor(connection)
    found.migrate(latest)


def parked(apps: Any, *, policy: Any, test: bool = False) -> uuid.UUID:
    graph = apps.get_model("editor", "FrozenGraph")
    run = apps.get_model("editor", "Run")
    digest = "sha256:" + "a" * 64
    graph.objects.get_or_create(hash=digest, defaults={"canonical": b"{}", "summary": {}})
    item = {"kind": "gate", "node": "review", "seq": 3, "at": AT, "input_schema": {}}
    return run.objects.create(
        graph_id=digest,
        state="suspended",
        status={"state": "suspended", "node": "review", "pending": [item]},
        parked_at="2026-12-01T09:00:00Z",
        approval_policy=policy,
        test_revision=7 if test else None,
    ).id


def test_the_runs_parked_before_the_upgrade_get_their_cards(
    executor: MigrationExecutor,
) -> None:
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    gate = {
        "deciders": {"groups": ["finance"], "users": []},
        "four_eyes": True,
        "quorum": 2,
        "due": "1h",
        "remind_at": "50%",
        "on_expiry": None,
    }
    recorded = {"gates": {"review": gate}, "authors": ["ada"]}
    with_policy = parked(apps, policy=recorded)
    legacy = parked(apps, policy=None)
    parked(apps, policy=None, test=True)  # a test run's gate is its author's

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    apps = executor.loader.project_state(AFTER).apps
    card = apps.get_model("editor", "InboxCard")
    names = apps.get_model("editor", "InboxCardName")

    cards = {row.run_id: row for row in card.objects.all()}
    assert set(cards) == {with_policy, legacy}
    first = cards[with_policy]
    assert (first.seq, first.quorum, first.four_eyes, first.role_decides) == (3, 2, True, False)
    assert (first.due_at - first.opened_at).total_seconds() == 3600
    assert (first.remind_at - first.opened_at).total_seconds() == 1800
    assert sorted(names.objects.filter(card_id=first.pk).values_list("role", "name")) == [
        ("excluded", "ada"),
        ("group", "finance"),
    ]
    assert cards[legacy].role_decides and not cards[legacy].four_eyes
