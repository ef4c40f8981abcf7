"""What a list costs does not grow with what is listed: the first page of each list needs as many
queries over 200 rows as over one, and our own listings (documents, runs, the inbox) carry
nothing that grows with the size of the graphs they name (no per-graph node lists). The
reference-shaped ``GET /v1/graphs`` is the exception by design: its summaries list the entry
and terminal nodes, and its pages stop before 1 MiB (``tests/integration/api/test_graphs.py``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from editor.models import AgentDefinition, Run, RunEvent
from editor.services import agents, documents, inbox, runs
from editor.services.documents import approvals
from editor.services.inbox import claims
from editor.waiting import rebuild_cards
from tests.integration.api.callers import make_user
from tests.integration.api.running import APPROVAL_SCHEMA, drive

pytestmark = pytest.mark.django_db

MANY = 200


def gated(terminals: int = 1) -> dict[str, Any]:
    """write → review (gate) → ``terminals`` publish nodes, each a terminal of the graph."""
    ends = [f"publish-{n:04d}" for n in range(terminals)]
    gate = {"id": "review", "prompt": "Publish?", "approval_schema": APPROVAL_SCHEMA}
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
            {"kind": "gate", "payload": gate},
            *({"kind": "tool", "payload": {"id": end, "tool": "echo"}} for end in ends),
        ],
        "edges": [
            {"from": "write", "to": "review"},
            *({"from": "review", "to": end} for end in ends),
        ],
    }


def frozen(author: User, title: str, graph: dict[str, Any]) -> tuple[str, str]:
    made = documents.create_document(author, title=title, text=json.dumps(graph))
    return made.slug, documents.freeze(author, made.slug, expected_revision=1).graph


def waiting(operator: User, slug: str, digest: str) -> str:
    run = runs.start_run(operator, digest, {"draft": "Tea."}, {"team": "a"}, document_slug=slug)
    assert drive(run.run) == "suspended"
    return run.run


def copies(run_id: str, count: int) -> None:
    """``count`` more runs exactly like ``run_id`` (rows and events), each its own run."""
    model = Run.objects.get(id=run_id)
    events = list(RunEvent.objects.filter(run=model).order_by("seq"))
    clones, rows = [], []
    for _ in range(count):
        clone = uuid.uuid4()
        fields = {
            field.attname: getattr(model, field.attname)
            for field in Run._meta.concrete_fields
            if field.attname != "id"
        }
        clones.append(Run(id=clone, **fields))
        rows += [
            RunEvent(
                run_id=clone,
                seq=event.seq,
                recorded_at=event.recorded_at,
                kind=event.kind,
                payload=event.payload,
            )
            for event in events
        ]
    Run.objects.bulk_create(clones)
    RunEvent.objects.bulk_create(rows)
    rebuild_cards([str(clone.id) for clone in clones])  # as the store would have written them


def queries_of(client: Client, path: str) -> int:
    inbox.forget_node_names()  # as a process that never met these graphs
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
        assert response.status_code == 200, response.content[:300]
        if getattr(response, "streaming", False):
            b"".join(response.streaming_content)
    return len(captured)


def the_same_for_one_and_many(client: Client, paths: list[str], grow: Callable[[], None]) -> None:
    for path in paths:
        client.get(path)  # the session and the user's permissions, cached after the first
    one = {path: queries_of(client, path) for path in paths}
    grow()
    many = {path: queries_of(client, path) for path in paths}
    assert many == one


@pytest.fixture
def signed_in(client: Client, operator: User) -> Client:
    client.force_login(operator)
    return client


def test_the_runs_list_needs_as_many_queries_for_two_hundred_runs_as_for_one(
    signed_in: Client, author: User, operator: User
) -> None:
    other = make_user("olga", "operators")
    slug, digest = frozen(author, "Notes", gated())
    runs.start_run(operator, digest, None, {"team": "a"}, document_slug=slug)

    def grow() -> None:
        for n in range(MANY - 1):
            who = operator if n % 2 else other
            runs.start_run(who, digest, None, {"team": "a"}, document_slug=slug)

    the_same_for_one_and_many(
        signed_in,
        [
            "/runs/",
            f"/runs/?document={slug}&label=team%3Da&state=queued",
            "/v1/runs?limit=200",
            f"/v1/runs?limit=50&document={slug}&person=otto",
            "/v1/runs",  # the whole list, streamed a page at a time
        ],
        grow,
    )


def test_the_inbox_first_page_needs_as_many_queries_for_two_hundred_items_as_for_one(
    signed_in: Client, author: User, operator: User, approver: User
) -> None:
    slug, digest = frozen(author, "Notes", gated())
    first = waiting(operator, slug, digest)
    runs.resume(approver, waiting(operator, slug, digest), {"input": {"approved": True}})
    decided = Run.objects.exclude(id=first).get().id

    def grow() -> None:
        copies(first, MANY - 1)
        copies(str(decided), MANY - 1)

    the_same_for_one_and_many(
        signed_in,
        [
            "/inbox/",
            "/v1/inbox",
            "/inbox/resolved/",
            "/v1/inbox/resolved",
            f"/inbox/?document={slug}",
        ],
        grow,
    )


def test_the_inbox_views_need_as_many_queries_for_two_hundred_cards_as_for_one(
    client: Client, author: User, operator: User
) -> None:
    """Cards of several documents whose gates name different groups, due at different times,
    claimed and voted on: each view's first page (and the decision log with its claims and
    notes) costs the same for one card of each as for two hundred."""
    from django.contrib.auth.models import Group

    for name in ("finance", "desk"):
        Group.objects.create(name=name)
    person = make_user("fay", "approvers")
    for group in ("operators", "finance"):
        person.groups.add(Group.objects.get(name=group))
    policies = [
        {"deciders": {"groups": ["finance"], "users": []}, "due": "2h", "quorum": 2},
        {"deciders": {"groups": ["desk"], "users": ["fay"]}, "due": "30m"},
        {},  # the defaults: the approvers role, no due time
    ]
    firsts = []
    for n, policy in enumerate(policies):
        slug, digest = frozen(author, f"Notes {n}", gated())
        approvals.replace_policy(author, slug, {"gates": {"review": policy} if policy else {}})
        firsts.append(waiting(operator, slug, digest))
    amy = make_user("amy", "finance")
    amy.groups.add(Group.objects.get(name="approvers"))
    runs.resume(amy, firsts[0], {"input": {"approved": True}})
    claims.claim(person, firsts[1], "review")
    client.force_login(person)

    def grow() -> None:
        for first in firsts:
            copies(first, MANY - 1)
        for card in list(Run.objects.exclude(id__in=firsts).values_list("id", flat=True))[:20]:
            claims.claim(person, str(card), "review")

    the_same_for_one_and_many(
        client,
        [
            "/inbox/",
            "/inbox/?view=groups",
            "/inbox/?view=all",
            "/v1/inbox?view=mine",
            "/v1/inbox?view=groups",
            "/v1/inbox?view=all",
            "/inbox/count/",
            "/inbox/resolved/",
            "/v1/inbox/resolved",
            "/v1/inbox/resolved?kind=claim",
        ],
        grow,
    )
    # Every card is fay's to decide: due first (desk's 30 minutes, which name her, then
    # finance's two hours), then the ones without a due time, page after page.
    seen, cursor = [], ""
    while True:
        page = client.get(f"/v1/inbox?view=mine&limit=200{cursor}").json()
        seen += [item.get("due_at") for item in page["items"]]
        if page["next"] is None:
            break
        cursor = f"&cursor={page['next']}"
    assert len(seen) == 3 * MANY
    due = [moment for moment in seen if moment is not None]
    assert due == sorted(due) and len(due) == 2 * MANY and seen[len(due) :] == [None] * MANY


def test_the_agents_page_needs_as_many_queries_for_two_hundred_agents_as_for_one(
    signed_in: Client, author: User
) -> None:
    agents.create_agent(author, json.dumps({"name": "agent-0", "model": "echo", "prompt": "0"}))

    def grow() -> None:
        for n in range(1, MANY):
            agents.create_agent(
                author, json.dumps({"name": f"agent-{n}", "model": "echo", "prompt": f"{n}"})
            )

    the_same_for_one_and_many(signed_in, ["/agents/", "/v1/agents?limit=50"], grow)
    assert AgentDefinition.objects.count() == MANY


def test_the_graphs_list_needs_as_many_queries_for_two_hundred_documents_as_for_one(
    signed_in: Client, author: User
) -> None:
    frozen(author, "Notes 0", gated())

    def grow() -> None:
        for n in range(1, MANY):
            frozen(author, f"Notes {n}", gated())

    the_same_for_one_and_many(signed_in, ["/", "/v1/documents"], grow)


def test_our_own_listings_do_not_grow_with_the_size_of_the_graphs_they_name(
    client: Client, author: User, operator: User, approver: User
) -> None:
    """Two documents alike but for their graphs (one has 1 terminal node, the other 1,000),
    each with a run waiting at its gate and a decision: every listing answers the same size
    for either."""
    client.force_login(approver)
    made = {}
    for title, terminals in (("Small graph", 1), ("Large graph", 1000)):
        slug, digest = frozen(author, title, gated(terminals))
        waiting(operator, slug, digest)
        runs.resume(approver, waiting(operator, slug, digest), {"input": {"approved": True}})
        made[title] = (slug, digest)
    listed = client.get("/v1/documents", {"limit": 200}).json()["documents"]
    sizes: dict[str, dict[str, int]] = {}
    for title, (slug, digest) in made.items():
        (document,) = [item for item in listed if item["slug"] == slug]
        sizes[title] = {"GET /v1/documents (its item)": len(json.dumps(document))}
        for path in (
            f"/?q={title}",
            f"/runs/?graph={digest}",
            f"/v1/runs?graph={digest}&limit=50",
            f"/inbox/?graph={digest}",
            f"/v1/inbox?graph={digest}",
            f"/inbox/resolved/?graph={digest}",
            f"/v1/inbox/resolved?graph={digest}",
            f"/v1/documents/{slug}",
            f"/v1/documents/{slug}/versions",
            f"/graphs/{slug}/versions/",
        ):
            response = client.get(path)
            assert response.status_code == 200, path
            shape = path.replace(digest, "…").replace(slug, "…").replace(title, "…")
            sizes[title][shape] = len(response.content)
    small, large = sizes["Small graph"], sizes["Large graph"]
    assert small.keys() == large.keys()
    grown = {
        path: large[path] - small[path] for path in small if abs(large[path] - small[path]) > 16
    }
    assert not grown, f"bytes more for the larger graph: {grown}"


def test_the_decision_logs_index_names_every_kind_of_resolution_vote_and_escalation() -> None:
    from editor.engine.status import ITEM_KINDS
    from editor.engine.status import RESOLUTION_KINDS as ENGINE_KINDS
    from editor.models import DECISION_KINDS
    from editor.models import RESOLUTION_KINDS as stored_kinds

    assert stored_kinds == tuple(sorted(ENGINE_KINDS))
    assert tuple(sorted((*ENGINE_KINDS, *ITEM_KINDS))) == DECISION_KINDS
    (index,) = [i for i in RunEvent._meta.indexes if i.name == "event_decisions"]
    assert index.condition.children == [("kind__in", DECISION_KINDS)]
