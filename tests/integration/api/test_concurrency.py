"""Writers at the same moment, in real threads with their own database connections.

Each test starts its writers together at a barrier and asserts the outcome the API
promises: exactly one winner of a draft revision, gap-free version numbers, one stored
copy of a graph.

On SQLite the tests use a database file configured as the app configures it (WAL,
immediate transactions, a busy timeout), not the in-memory test database: that one shares
one cache between connections, whose table locks fail at once instead of waiting, which
is not how the app's database behaves.
"""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection, connections

from editor.models import Draft, FrozenGraph, Version
from tests.integration.api.callers import GRAPH, bearer_caller, graph_with, make_user

pytestmark = pytest.mark.django_db(transaction=True)

WRITERS = 4
#: A bound on how long a writer may take; the tests never wait for a duration otherwise.
JOIN_TIMEOUT = 60


def together(actions: list[Callable[[], Any]]) -> list[Any]:
    """Run the actions in threads released at once; their results, in order."""
    barrier = threading.Barrier(len(actions))
    results: list[Any] = [None] * len(actions)

    def run(index: int, action: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=JOIN_TIMEOUT)
            results[index] = action()
        except BaseException as error:  # reported by the assertions below
            results[index] = error
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=(index, action)) for index, action in enumerate(actions)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT)
        assert not thread.is_alive(), "a writer did not finish"
    return results


def ensure_roles() -> None:
    """The role groups, as the data migration creates them.

    A transactional test empties the database when it ends, and only the permissions come
    back (Django recreates them after a flush); the groups are data of a migration.
    """
    importlib.import_module("editor.migrations.0002_roles").create_roles(apps, None)


@pytest.fixture
def app_database(tmp_path: Path) -> Iterator[None]:
    """On SQLite, a migrated database file for every connection of the test; else the roles."""
    if connection.vendor != "sqlite":
        ensure_roles()
        yield
        return
    settings_dict = connection.settings_dict  # shared by the connections of every thread
    in_memory_name, in_memory = settings_dict["NAME"], connections["default"]
    # Django never closes an in-memory database's connection (that would drop the database),
    # so this thread gets a new connection to the file instead, and the old one back after.
    settings_dict["NAME"] = str(tmp_path / "race.sqlite3")
    connections["default"] = connections.create_connection("default")
    try:
        call_command("migrate", verbosity=0, interactive=False)
        yield
    finally:
        connections["default"].close()
        connections["default"] = in_memory
        settings_dict["NAME"] = in_memory_name


@pytest.fixture
def writer(app_database: None) -> User:
    return make_user("wanda", "authors")


def test_of_writers_racing_on_one_revision_exactly_one_wins(writer: User) -> None:
    callers = [bearer_caller(writer) for _ in range(WRITERS)]
    created = callers[0].post("/v1/documents", {"title": "Race", "text": "base"})
    assert created.status_code == 201

    responses = together(
        [
            lambda caller=caller, index=index: caller.put(
                "/v1/documents/race/draft", {"text": f"writer {index}"}, headers={"If-Match": '"1"'}
            )
            for index, caller in enumerate(callers)
        ]
    )

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [412] * (WRITERS - 1)
    [winner] = [response for response in responses if response.status_code == 200]
    draft = Draft.objects.get(document__slug="race")
    assert (draft.text, draft.revision) == (winner.json()["text"], 2)
    for response in responses:
        if response.status_code == 412:
            assert response.json()["error"]["details"] == {"revision": 2}


def test_racing_freezes_of_one_unchanged_draft_make_one_version(writer: User) -> None:
    callers = [bearer_caller(writer) for _ in range(WRITERS)]
    created = callers[0].post("/v1/documents", {"title": "Shared", "text": json.dumps(GRAPH)})
    assert created.status_code == 201

    responses = together(
        [
            lambda caller=caller: caller.post(
                "/v1/documents/shared/freeze", headers={"If-Match": '"1"'}
            )
            for caller in callers
        ]
    )

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] * (WRITERS - 1) + [201]
    assert {response.json()["version"] for response in responses} == {1}
    assert list(Version.objects.values_list("number", flat=True)) == [1]


def test_racing_save_and_freeze_cycles_number_versions_without_gaps(writer: User) -> None:
    callers = [bearer_caller(writer) for _ in range(WRITERS)]
    callers[0].post("/v1/documents", {"title": "Shared"})

    def save_and_freeze(index: int) -> int:
        """Save this writer's graph and freeze it, starting again when someone got between."""
        caller = callers[index]
        text = json.dumps(graph_with(f"writer{index}"))
        for _ in range(WRITERS * 10):
            revision = caller.get("/v1/documents/shared/draft").json()["revision"]
            saved = caller.put(
                "/v1/documents/shared/draft",
                {"text": text},
                headers={"If-Match": f'"{revision}"'},
            )
            if saved.status_code == 412:
                continue
            assert saved.status_code == 200, saved.content
            frozen = caller.post(
                "/v1/documents/shared/freeze",
                headers={"If-Match": f'"{saved.json()["revision"]}"'},
            )
            if frozen.status_code == 412:
                continue
            assert frozen.status_code == 201, frozen.content
            return frozen.json()["version"]
        raise AssertionError(f"writer {index} never got its graph frozen")

    results = together([lambda index=index: save_and_freeze(index) for index in range(WRITERS)])

    for result in results:
        assert isinstance(result, int), result
    assert sorted(results) == list(range(1, WRITERS + 1))
    numbers = list(Version.objects.order_by("number").values_list("number", flat=True))
    assert numbers == list(range(1, WRITERS + 1))


def test_racing_posts_of_one_graph_store_it_once(writer: User) -> None:
    callers = [bearer_caller(writer) for _ in range(WRITERS)]

    responses = together(
        [lambda caller=caller: caller.post("/v1/graphs", GRAPH) for caller in callers]
    )

    assert all(response.status_code == 201 for response in responses), responses
    assert sorted(response.json()["created"] for response in responses) == [False] * (
        WRITERS - 1
    ) + [True]
    assert len({response.json()["graph"] for response in responses}) == 1
    assert FrozenGraph.objects.count() == 1
