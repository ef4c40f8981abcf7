"""The approval inbox page (``/inbox/``): pending cards, resolving one in place, permissions."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from editor.models import Run, RunEvent
from editor.services import inbox, runs
from editor.services.inbox import graphs
from tests.integration.api.callers import make_user
from tests.integration.api.running import event_count, record
from tests.integration.inbox import HOSTILE, frozen, gated, parked, waiting

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def card_post(run_id: str, **fields: str) -> dict[str, str]:
    seq = str(Run.objects.get(pk=run_id).status["pending"][0]["seq"])
    return {"node": "review", "seq": seq, **fields}


def signed_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def test_an_approver_sees_the_card_with_its_generated_form(
    client: Client, author: User, operator: User, approver: User
) -> None:
    slug, digest = frozen(author, gated(name="Final review"), title="Release notes")
    run_id = waiting(author, operator, graph_hash=digest, document=slug, input={"note": "v2 ready"})

    page = signed_in(client, approver).get("/inbox/").content.decode()

    assert f'id="card-{run_id}-' in page
    assert "Release notes v1" in page
    assert f'href="/g/{digest.removeprefix("sha256:")}/"' in page
    assert f"<code>{digest[7:19]}</code>" in page
    assert "Final review" in page
    assert "Publish?" in page
    assert "&quot;note&quot;: &quot;v2 ready&quot;" in page
    assert "Waiting for" in page
    # The required boolean is decided by two buttons that submit the form (the one checkbox
    # selects the card to decide with others of its gate).
    assert page.count('type="checkbox"') == 1
    assert 'type="checkbox" id="card-' in page and 'form="bulk-select"' in page
    assert re.search(r'name="field-approved" value="true"[^>]*>Approve</button>', page)
    assert re.search(r'name="field-approved" value="false"[^>]*>Reject</button>', page)
    assert ">Resolve</button>" not in page
    assert re.search(r'name="field-note" value="v2 ready"', page)
    assert '<span class="source">from the run</span>' in page


def test_an_approver_resolves_a_gate_and_the_receipt_replaces_the_card(
    client: Client, author: User, operator: User, approver: User
) -> None:
    run_id = waiting(author, operator)
    signed_in(client, approver)

    response = client.post(
        f"/inbox/{run_id}/resolve/",
        card_post(run_id, **{"field-approved": "true", "field-note": "", "comment": "Looks good"}),
        headers=HTMX,
    )

    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith("<article")
    assert "Resolved by <strong>april</strong>" in body
    assert "&quot;approved&quot;: true" in body
    assert "Looks good" in body
    assert 'hx-swap-oob="true"><span class="inbox-count-number" sse-swap="count">0</span>' in body
    resumed = RunEvent.objects.get(run_id=run_id, kind="Resumed")
    assert resumed.payload["input"] == {"approved": True}
    assert resumed.payload["by"] == "april"
    assert resumed.payload["comment"] == "Looks good"
    assert Run.objects.get(pk=run_id).state == "running"


def test_without_script_the_form_posts_to_a_page_with_the_receipt(
    client: Client, author: User, operator: User, approver: User
) -> None:
    run_id = waiting(author, operator)

    response = signed_in(client, approver).post(
        f"/inbox/{run_id}/resolve/", card_post(run_id, **{"field-approved": "true"})
    )

    assert response.status_code == 200
    assert "<html" in response.content.decode()
    assert "Resolved by <strong>april</strong>" in response.content.decode()


def test_an_input_that_breaks_the_schema_is_shown_beside_its_field_and_nothing_is_recorded(
    client: Client, author: User, operator: User, approver: User
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean"},
            "copies": {"type": "integer", "maximum": 3, "title": "Copies"},
            "channel": {"enum": ["web", "print"]},
        },
        "required": ["approved", "channel"],
    }
    run_id = waiting(author, operator, gated(schema=schema))
    before = event_count(run_id)
    signed_in(client, approver)

    response = client.post(
        f"/inbox/{run_id}/resolve/",
        card_post(run_id, **{"field-approved": "true", "field-copies": "12"}),
        headers=HTMX,
    )

    assert response.status_code == 200
    body = response.content.decode()
    assert "12 is greater than the maximum of 3" in body
    assert "This field is required." in body  # the channel
    assert 'aria-invalid="true"' in body
    assert re.search(r'name="field-copies" value="12"', body)  # what was typed is kept
    assert event_count(run_id) == before
    assert Run.objects.get(pk=run_id).state == "suspended"


def test_a_value_that_is_not_even_a_number_is_refused_before_the_schema(
    client: Client, author: User, operator: User, approver: User
) -> None:
    schema = {"type": "object", "properties": {"copies": {"type": "integer"}}}
    run_id = waiting(author, operator, gated(schema=schema))
    before = event_count(run_id)

    response = signed_in(client, approver).post(
        f"/inbox/{run_id}/resolve/", card_post(run_id, **{"field-copies": "many"}), headers=HTMX
    )

    assert "Enter a number." in response.content.decode()
    assert event_count(run_id) == before


def test_a_schema_the_rules_cannot_turn_into_fields_takes_json(
    client: Client, author: User, operator: User, approver: User
) -> None:
    schema = {"type": "array", "items": {"type": "string"}, "minItems": 1}
    run_id = waiting(author, operator, gated(schema=schema))
    signed_in(client, approver)

    page = client.get("/inbox/").content.decode()
    refused = client.post(
        f"/inbox/{run_id}/resolve/", card_post(run_id, **{"approval-json": "[]"}), headers=HTMX
    )
    accepted = client.post(
        f"/inbox/{run_id}/resolve/",
        card_post(run_id, **{"approval-json": '["ship it"]'}),
        headers=HTMX,
    )

    assert "Approval (JSON)" in page
    assert "should be non-empty" in refused.content.decode()
    assert "Resolved by" in accepted.content.decode()
    assert RunEvent.objects.get(run_id=run_id, kind="Resumed").payload["input"] == ["ship it"]


@pytest.mark.parametrize("role", ["operators", "authors", None])
def test_anyone_but_an_approver_sees_the_gate_read_only_and_may_not_resolve_it(
    client: Client, author: User, operator: User, role: str | None
) -> None:
    run_id = waiting(author, operator)
    before = event_count(run_id)
    signed_in(client, make_user("someone", role))

    mine = client.get("/inbox/").content.decode()
    page = client.get(f"/inbox/?run={run_id}").content.decode()  # the run page's link
    response = client.post(
        f"/inbox/{run_id}/resolve/", card_post(run_id, **{"field-approved": "true"}), headers=HTMX
    )

    assert "Publish?" not in mine
    assert "Nothing waits for you to decide." in mine
    assert "Publish?" in page
    assert ">Resolve</button>" not in page
    assert "Only approvers can resolve a gate" in page
    assert response.status_code == 403
    assert event_count(run_id) == before


def test_when_someone_else_resolved_it_first_the_card_says_who_and_when(
    client: Client, author: User, operator: User, approver: User
) -> None:
    run_id = waiting(author, operator)
    post = card_post(run_id, **{"field-approved": "true"})
    runs.resume(make_user("bea", "approvers"), run_id, {"input": {"approved": False}})
    before = event_count(run_id)

    response = signed_in(client, approver).post(f"/inbox/{run_id}/resolve/", post, headers=HTMX)

    assert response.status_code == 200
    body = response.content.decode()
    assert "Someone else resolved this first: <strong>bea</strong>" in body
    resumed = RunEvent.objects.get(run_id=run_id, kind="Resumed")
    assert f'datetime="{resumed.recorded_at}"' in body
    assert event_count(run_id) == before


def test_hostile_names_prompts_and_values_are_shown_as_text(
    client: Client, author: User, operator: User, approver: User
) -> None:
    schema = {
        "type": "object",
        "properties": {HOSTILE: {"type": "string", "title": HOSTILE, "description": HOSTILE}},
    }
    graph = gated(prompt=HOSTILE, name=HOSTILE[:60], schema=schema)
    waiting(author, operator, graph, input={HOSTILE: HOSTILE})

    page = signed_in(client, approver).get("/inbox/").content.decode()

    assert "<img" not in page
    assert html.escape(HOSTILE) in page
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") >= 4


def test_a_budget_card_is_for_operators_and_raises_the_limit(
    client: Client, author: User, operator: User, approver: User
) -> None:
    run_id = parked(author, operator, "budget")  # steps: limit 2, observed 3

    approver_view = Client()
    approver_view.force_login(approver)
    assert "Budget exceeded" not in approver_view.get("/inbox/").content.decode()
    read_only = approver_view.get(f"/inbox/?run={run_id}").content.decode()
    refused = approver_view.post(
        f"/inbox/{run_id}/resolve/", {"node": "write", "limit": "9"}, headers=HTMX
    )
    page = signed_in(client, operator).get("/inbox/").content.decode()
    too_low = client.post(
        f"/inbox/{run_id}/resolve/", {"node": "write", "limit": "3"}, headers=HTMX
    )
    raised = client.post(f"/inbox/{run_id}/resolve/", {"node": "write", "limit": "4"}, headers=HTMX)

    assert "Only operators can resolve this" in read_only
    assert refused.status_code == 403
    assert "Budget exceeded at write" in page
    assert "Raise limit and continue" in page
    assert re.search(r'name="limit" value="4"', page)  # max(observed + 1, 2 × limit)
    assert "above what was observed (3)" in too_low.content.decode()
    assert "Resolved by <strong>otto</strong>" in raised.content.decode()
    assert RunEvent.objects.get(run_id=run_id, kind="BudgetRaised").payload["limit"] == 4


def test_a_cost_budget_card_takes_a_number_of_dollars(
    client: Client, author: User, operator: User
) -> None:
    run_id = parked(author, operator, "budget")
    record(run_id, ("BudgetRaised", {"node": "write", "kind": "steps", "limit": 4, "by": "x"}))
    budget = {"kind": "cost_usd", "limit": 0.5}
    record(run_id, ("BudgetExceeded", {"node": "write", "budget": budget, "observed": 0.75}))
    signed_in(client, operator)

    page = client.get("/inbox/").content.decode()
    words = client.post(
        f"/inbox/{run_id}/resolve/", {"node": "write", "limit": "lots"}, headers=HTMX
    )
    raised = client.post(
        f"/inbox/{run_id}/resolve/", {"node": "write", "limit": "1.25"}, headers=HTMX
    )

    assert 'step="any"' in page
    assert "Enter a number of dollars above 0, like 1.5." in words.content.decode()
    assert "Resolved by <strong>otto</strong>" in raised.content.decode()
    limits = [
        e.payload["limit"] for e in RunEvent.objects.filter(run_id=run_id, kind="BudgetRaised")
    ]
    assert limits == [4, 1.25]


def test_a_reconciliation_card_records_an_output_or_runs_the_write_again(
    client: Client, author: User, operator: User
) -> None:
    recorded = parked(author, operator, "reconciliation")
    retried = parked(author, operator, "reconciliation")
    signed_in(client, operator)

    page = client.get("/inbox/").content.decode()
    bad = client.post(
        f"/inbox/{recorded}/resolve/",
        {"node": "write", "action": "record", "output": "{oops"},
        headers=HTMX,
    )
    client.post(
        f"/inbox/{recorded}/resolve/",
        {"node": "write", "action": "record", "output": '{"status": 201}'},
        headers=HTMX,
    )
    client.post(f"/inbox/{retried}/resolve/", {"node": "write", "action": "retry"}, headers=HTMX)

    assert "Record output" in page and "Run again" in page
    assert "<code>http_request</code>" in page
    assert "This is not valid JSON" in bad.content.decode()
    assert RunEvent.objects.get(run_id=recorded, kind="Reconciled").payload["output"] == {
        "status": 201
    }
    assert RunEvent.objects.get(run_id=retried, kind="Reconciled").payload["retry"] is True


def test_the_list_can_be_filtered_by_graph(
    client: Client, author: User, operator: User, approver: User
) -> None:
    first = waiting(author, operator, gated(prompt="First graph?"))
    second = waiting(author, operator, gated(prompt="Second graph?", publish="ship"))
    digest = Run.objects.get(pk=second).graph_id
    signed_in(client, approver)

    everything = client.get("/inbox/").content.decode()
    filtered = client.get("/inbox/", {"graph": digest}, headers=HTMX).content.decode()

    assert "First graph?" in everything and "Second graph?" in everything
    assert f'<option value="{digest}"' in everything
    assert filtered.lstrip().startswith('<div id="inbox-cards" data-live-list>')
    assert "Second graph?" in filtered and "First graph?" not in filtered
    assert first != second


def test_cards_are_listed_oldest_first_fifty_to_a_page(
    client: Client, author: User, operator: User, approver: User
) -> None:
    digest = Run.objects.get(pk=waiting(author, operator)).graph_id
    for _ in range(50):
        waiting(author, operator, graph_hash=digest)
    signed_in(client, approver)

    first = inbox.pending_items()
    second = inbox.pending_items(cursor=first.next)
    page = client.get("/inbox/").content.decode()

    assert len(first.items) == 50 and len(second.items) == 1
    assert [item.suspended_at for item in first.items] == sorted(
        item.suspended_at for item in first.items
    )
    assert first.items[-1].suspended_at <= second.items[0].suspended_at
    assert page.count('class="card inbox-card') == 50
    assert "Later items" in page


def test_the_navigation_bar_counts_the_cards_its_person_may_decide_on_every_page(
    client: Client, author: User, operator: User, approver: User
) -> None:
    signed_in(client, approver)
    assert (
        '<span class="inbox-count-number" sse-swap="count">0</span>'
        in client.get("/").content.decode()
    )

    waiting(author, operator)
    waiting(author, operator)

    home = client.get("/").content.decode()
    fragment = client.get("/inbox/count/").content.decode()
    assert '<a href="/inbox/">Inbox <span id="inbox-count"' in home
    assert '<span class="inbox-count-number" sse-swap="count">2</span>' in home
    assert 'sse-connect="/live/"' in home  # the count's news comes from the page's stream
    assert "every 10s" not in home
    assert fragment.startswith('<span id="inbox-count"')
    assert '<span class="inbox-count-number" sse-swap="count">2</span>' in fragment
    # An author decides no gate: nothing counts for them.
    author_home = signed_in(Client(), author).get("/").content.decode()
    assert '<span class="inbox-count-number" sse-swap="count">0</span>' in author_home


def test_the_resolved_tab_lists_the_decisions_newest_first(
    client: Client, author: User, operator: User, approver: User
) -> None:
    first = waiting(author, operator)
    second = waiting(author, operator)
    runs.resume(approver, first, {"input": {"approved": True}, "comment": "Ship it"})
    runs.resume(approver, second, {"input": {"approved": False}})
    resumed = RunEvent.objects.get(run_id=first, kind="Resumed")

    page = signed_in(client, author).get("/inbox/resolved/").content.decode()

    assert page.index(second[:8]) < page.index(first[:8])
    assert "Ship it" in page
    assert "april" in page
    assert resumed.payload["schema_hash"] in page
    assert Run.objects.get(pk=first).graph_id[7:15] in page
    assert "&quot;approved&quot;: true" in page


def _inbox_queries(client: Client) -> int:
    inbox.forget_node_names()
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/inbox/")
    assert response.status_code == 200
    return len(queries)


def test_the_inbox_page_needs_as_many_queries_for_thirty_items_as_for_two(
    client: Client,
    author: User,
    operator: User,
    approver: User,
    django_assert_num_queries: Any,
) -> None:
    # One run of a document's version, one started from a frozen graph alone (whose label is
    # read from the versions that froze it): each kind of label has its query.
    slug, digest = frozen(author, gated(name="Review"))
    waiting(author, operator, graph_hash=digest, document=slug)
    _, other = frozen(author, gated(prompt="Other?", publish="ship"), title="Shipping")
    waiting(author, operator, graph_hash=other)
    signed_in(client, approver)
    client.get("/inbox/")  # the session and the user's permissions are cached after this
    two = _inbox_queries(client)

    for index in range(28):
        if index % 2:
            waiting(author, operator, graph_hash=digest, document=slug)
        else:
            waiting(author, operator, graph_hash=other)
    assert len(inbox.pending_items().items) == 30

    inbox.forget_node_names()
    with django_assert_num_queries(two):
        response = client.get("/inbox/")
    page = response.content.decode()
    assert page.count('class="card inbox-card') == 30
    assert page.count("Release notes v1 ·") == page.count("Shipping v1 ·") == 15


def test_the_list_alone_reads_neither_the_graph_filter_s_choices_nor_the_count(
    client: Client, author: User, operator: User, approver: User
) -> None:
    slug, digest = frozen(author, gated(name="Review"))
    waiting(author, operator, graph_hash=digest, document=slug)
    signed_in(client, approver)
    client.get("/inbox/")

    inbox.forget_graph_choices()
    with CaptureQueriesContext(connection) as full:
        page = client.get("/inbox/").content.decode()
    with CaptureQueriesContext(connection) as fragment:
        answer = client.get("/inbox/", headers=HTMX)

    # The whole page offers the graph and counts Mine in its navigation bar; the list that a
    # filter or the live list asks for (htmx) swaps in the cards only.
    assert f'<option value="{digest}"' in page
    assert any("WITH RECURSIVE graphs" in query["sql"] for query in full.captured_queries)
    assert any("COUNT(*)" in query["sql"] for query in full.captured_queries)
    assert answer.status_code == 200
    assert "<option" not in answer.content.decode()
    assert answer.content.decode().count('class="card inbox-card') == 1
    assert not any("WITH RECURSIVE graphs" in q["sql"] for q in fragment.captured_queries)
    assert not any("COUNT(*)" in query["sql"] for query in fragment.captured_queries)


def test_the_graph_filter_offers_a_graph_that_began_to_wait_within_seconds(
    client: Client,
    author: User,
    operator: User,
    approver: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(graphs.time, "monotonic", lambda: clock[0])
    _, first = frozen(author, gated(name="Review"), title="Desk")
    waiting(author, operator, graph_hash=first)
    signed_in(client, approver)
    assert f'<option value="{first}"' in client.get("/inbox/").content.decode()

    _, second = frozen(author, gated(prompt="Other?", publish="ship"), title="Shipping")
    waiting(author, operator, graph_hash=second)
    clock[0] += graphs.FRESH_FOR - 1
    with CaptureQueriesContext(connection) as kept:
        soon = client.get("/inbox/").content.decode()
    clock[0] += 1
    later = client.get("/inbox/").content.decode()

    # Its card is there at once; the filter offers it when the process reads the choices again.
    assert soon.count('class="card inbox-card') == 2
    assert f'<option value="{second}"' not in soon
    assert not any("WITH RECURSIVE graphs" in query["sql"] for query in kept.captured_queries)
    assert f'<option value="{second}">Shipping v1 (' in later


def test_each_item_a_run_waits_for_gets_its_own_card_and_is_resolved_alone(
    client: Client, author: User, operator: User
) -> None:
    # Gates cannot sit inside a map, but lost writes of a map's items can: one card each.
    run_id = parked(author, operator, "reconciliation")
    lost = {"node": "each", "tool": "http_request", "call": 0, "input": {"url": "http://x.test/"}}
    record(
        run_id,
        ("ReconciliationNeeded", {**lost, "scope": [["m", 0]]}),
        ("ReconciliationNeeded", {**lost, "scope": [["m", 1]]}),
    )
    pending = Run.objects.get(pk=run_id).status["pending"]
    second = next(item for item in pending if item.get("scope") == [["m", 1]])
    signed_in(client, operator)

    page = client.get("/inbox/").content.decode()
    response = client.post(
        f"/inbox/{run_id}/resolve/",
        {"node": "each", "seq": str(second["seq"]), "scope": '[["m", 1]]', "action": "retry"},
        headers=HTMX,
    )

    assert page.count('class="card inbox-card inbox-reconciliation"') == 3
    assert 'name="scope" value="[[&quot;m&quot;, 1]]"' in page
    assert "Resolved by <strong>otto</strong>" in response.content.decode()
    reconciled = RunEvent.objects.get(run_id=run_id, kind="Reconciled")
    assert reconciled.payload["scope"] == [["m", 1]]
    left = Run.objects.get(pk=run_id).status["pending"]
    assert [item.get("scope") for item in left] == [None, [["m", 0]]]


def _described(body: str, name: str) -> str:
    """The text of the message a control named ``name`` is described by (its error)."""
    control = re.search(rf'<(?:input|textarea)[^>]*name="{name}"[^>]*>', body)
    assert control is not None, name
    assert 'aria-invalid="true"' in control.group(0)
    described = re.search(r'aria-describedby="([^"]+)"', control.group(0))
    assert described is not None, control.group(0)
    message = re.search(rf'<p class="field-error" id="{described.group(1)}">([^<]*)</p>', body)
    assert message is not None, described.group(1)
    return html.unescape(message.group(1))


def test_a_refused_answer_is_tied_to_its_control_on_every_kind_of_card(
    client: Client, author: User, operator: User, approver: User
) -> None:
    budget = parked(author, operator, "budget")
    lost = parked(author, operator, "reconciliation")
    schema = {"type": "array", "items": {"type": "string"}, "minItems": 1}
    fallback = waiting(author, operator, gated(schema=schema))
    signed_in(client, operator)
    deciding = signed_in(Client(), approver)

    low = client.post(f"/inbox/{budget}/resolve/", {"node": "write", "limit": "3"}, headers=HTMX)
    bad = client.post(
        f"/inbox/{lost}/resolve/",
        {"node": "write", "action": "record", "output": "{oops"},
        headers=HTMX,
    )
    empty = deciding.post(
        f"/inbox/{fallback}/resolve/", card_post(fallback, **{"approval-json": "[]"}), headers=HTMX
    )

    low_body, bad_body, empty_body = (r.content.decode() for r in (low, bad, empty))
    assert "above what was observed (3)" in _described(low_body, "limit")
    assert re.search(r'name="limit" value="3"', low_body)  # what was typed is kept
    assert "This is not valid JSON" in _described(bad_body, "output")
    assert "{oops</textarea>" in bad_body
    assert "should be non-empty" in _described(empty_body, "approval-json")
    assert "The schema it must match" in empty_body
    assert "&quot;minItems&quot;: 1" in empty_body
    for run_id in (budget, lost, fallback):  # nothing was recorded: all three still wait
        assert Run.objects.get(pk=run_id).parked_at is not None
