"""The inbox for a person on the page (issue 26): the views and their tabs, what a card says of
its policy and deadlines, claiming a card, deciding several at once, and the decision log's
kinds and exports."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from editor.engine.records import timestamp
from editor.engine.status import instant
from editor.models import InboxCard, Run, RunEvent
from editor.services import documents, runs
from editor.services.documents import approvals
from editor.services.inbox import claims, deadlines, exports, log
from editor.services.inbox.filters import NO_FILTER
from tests.integration.api.callers import make_user
from tests.integration.api.running import GATED, drive

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture
def team(db: None) -> dict[str, User]:
    Group.objects.create(name="finance")
    people = {name: make_user(name, "approvers") for name in ("fay", "dan")}
    people["fay"].groups.add(Group.objects.get(name="finance"))
    people["ada"] = make_user("ada", "authors")
    people["otto"] = make_user("otto", "operators")
    return people


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def waiting(
    team: dict[str, User],
    policy: dict[str, Any] | None = None,
    count: int = 1,
    title: str = "Refunds",
) -> list[str]:
    created = documents.create_document(team["ada"], title=title, text=json.dumps(GATED))
    digest = documents.freeze(team["ada"], created.slug, expected_revision=1).graph
    if policy is not None:
        approvals.replace_policy(team["ada"], created.slug, {"gates": {"review": policy}})
    made = []
    for n in range(count):
        run_id = runs.start_run(
            team["otto"], digest, {"note": f"refund {n}"}, document_slug=created.slug
        ).run
        assert drive(run_id) == "suspended"
        made.append(run_id)
    return made


def seq_of(run_id: str) -> int:
    return InboxCard.objects.get(run_id=run_id).seq


def test_the_tabs_offer_all_to_operators_only_and_the_page_says_what_each_card_needs(
    team: dict[str, User],
) -> None:
    policy = {"deciders": {"groups": ["finance"], "users": []}, "quorum": 3, "due": "3h"}
    (run_id,) = waiting(team, policy)
    fay = signed_in(team["fay"])

    page = fay.get("/inbox/").content.decode()
    everything = fay.get("/inbox/?view=all")
    operator_page = signed_in(team["otto"]).get("/inbox/?view=all").content.decode()

    assert ">Mine</a>" in page and ">My groups</a>" in page and ">All</a>" not in page
    assert "0 of 3 approvals, needs 3 more from <em>finance</em>." in page
    assert "Due in 3 h" in page
    assert everything.status_code == 403
    assert ">All</a>" in operator_page and f'id="card-{run_id}-' in operator_page


def aged(run_id: str, minutes: int) -> None:
    """Make the run's gate as old as ``minutes``, as if that time had passed: when its item was
    recorded (the event, and the status folded from it, which the card measures its due time
    from) and its card's instants."""
    run = Run.objects.get(pk=run_id)
    card = InboxCard.objects.get(run_id=run_id)
    shift = timedelta(minutes=minutes)
    event = RunEvent.objects.get(run_id=run_id, seq=card.seq)
    RunEvent.objects.filter(pk=event.pk).update(
        recorded_at=timestamp(instant(event.recorded_at) - shift)
    )
    status = run.status
    for item in status["pending"]:
        item["at"] = timestamp(instant(item["at"]) - shift)
    Run.objects.filter(pk=run_id).update(status=status)
    InboxCard.objects.filter(pk=card.pk).update(
        opened_at=card.opened_at - shift,
        due_at=card.due_at - shift if card.due_at else None,
        remind_at=card.remind_at - shift if card.remind_at else None,
    )


def test_overdue_due_soon_and_escalated_cards_say_so(team: dict[str, User]) -> None:
    expiry = {"escalate_to": {"groups": ["finance"], "users": []}}
    soon, late = waiting(team, {"due": "1h", "remind_at": "50%", "on_expiry": expiry}, count=2)
    aged(soon, 40)
    aged(late, 70)
    card = InboxCard.objects.get(run_id=late)
    assert deadlines.act(late, card.seq, "expire") == "escalated"

    page = signed_in(team["fay"]).get("/inbox/").content.decode()

    soon_card = page[page.index(f'id="card-{soon}-') :]
    late_card = page[page.index(f'id="card-{late}-') :]
    soon_card, late_card = (text[: text.index("</article>")] for text in (soon_card, late_card))
    assert '<span class="badge due-soon">Due soon</span>' in soon_card
    assert "Due in 20 min" in soon_card
    assert '<span class="badge overdue">Overdue</span>' in late_card
    assert "Overdue by 10 min" in late_card
    assert "escalated from <em>every approver</em> at" in late_card
    assert page.index(f'id="card-{late}-') < page.index(f'id="card-{soon}-')  # due first


def test_a_claim_on_the_page_is_seen_by_another_approver_who_is_warned(
    team: dict[str, User],
) -> None:
    (run_id,) = waiting(team)
    fay, dan = signed_in(team["fay"]), signed_in(team["dan"])
    post = {"node": "review", "seq": str(seq_of(run_id))}

    claimed = fay.post(f"/inbox/{run_id}/claim/", post, headers=HTMX).content.decode()
    seen = dan.get("/inbox/").content.decode()
    refused = dan.post(f"/inbox/{run_id}/claim/", post)
    released = fay.post(f"/inbox/{run_id}/release/", post, headers=HTMX).content.decode()

    assert "You are on it" in claimed and ">Release</button>" in claimed
    assert "<strong>fay</strong> is on it: you may still decide it, but check with them" in seen
    assert ">I'm on it</button>" not in seen
    assert 'name="field-approved"' in seen  # dan may still decide it
    assert refused.status_code == 409
    assert "fay is on the card of `review` until" in refused.content.decode()
    assert "I'm on it" in released and "is on it" not in released


def test_five_cards_are_decided_with_one_form_that_leaves_out_what_each_run_gave(
    team: dict[str, User],
) -> None:
    cards = waiting(team, count=5)
    fay = signed_in(team["fay"])
    selected = [("card", f"{run_id}:{seq_of(run_id)}") for run_id in cards]
    query = "&".join(f"card={value}" for _, value in selected)

    form = fay.get(f"/inbox/bulk/?{query}").content.decode()
    refused = fay.post("/inbox/bulk/", {"card": [value for _, value in selected]})
    done = fay.post(
        "/inbox/bulk/",
        {"card": [value for _, value in selected], "field-approved": "true", "comment": "ok"},
    ).content.decode()

    assert "review: 5 cards" in form
    assert 'name="field-note"' not in form  # each card keeps its own
    assert "Each card keeps what arrived at it for <code>note</code>" in form
    assert "Choose Approve or Reject." in refused.content.decode()
    assert "5 of 5 cards decided" in done
    notes = [
        RunEvent.objects.get(run_id=run_id, kind="Resumed").payload["input"]["note"]
        for run_id in cards
    ]
    assert notes == [f"refund {n}" for n in range(5)]


def test_a_partial_failure_on_the_page_lists_which_and_why(team: dict[str, User]) -> None:
    cards = waiting(team, count=2)
    selected = [f"{run_id}:{seq_of(run_id)}" for run_id in cards]
    runs.resume(team["dan"], cards[0], {"input": {"approved": False}})
    fay = signed_in(team["fay"])

    done = fay.post("/inbox/bulk/", {"card": selected, "field-approved": "true"}).content.decode()

    assert "1 of 2 cards decided" in done
    assert "Not decided, and nothing recorded for it:" in done
    assert "The run was already resolved by dan" in done


def test_the_decision_log_keeps_one_kind_and_exports_csv_and_json_lines(
    team: dict[str, User],
) -> None:
    first, second = waiting(team, count=2)
    claims.claim(team["fay"], first)
    runs.resume(
        team["fay"], first, {"input": {"approved": True, "note": "=HYPERLINK(1)"}, "comment": "@x"}
    )
    fay = signed_in(team["fay"])

    claims_only = fay.get("/inbox/resolved/?kind=claim").content.decode()
    table = list(
        csv.reader(io.StringIO(b"".join(fay.get("/inbox/resolved.csv").streaming_content).decode()))
    )
    lines = b"".join(fay.get("/inbox/resolved.jsonl?kind=decision").streaming_content)

    assert "claimed" in claims_only and "decided by" not in claims_only
    assert table[0] == list(exports.COLUMNS)
    assert [row[1] for row in table[1:]] == ["decision", "claim"]  # newest first
    decision_row = dict(zip(table[0], table[1], strict=True))
    assert decision_row["comment"] == "'@x"  # never read as a formula
    assert json.loads(decision_row["input"]) == {"approved": True, "note": "=HYPERLINK(1)"}
    (entry,) = [json.loads(line) for line in lines.splitlines()]
    assert (entry["entry"], entry["by"], entry["run"]) == ("decision", "fay", first)
    assert second not in lines.decode()
    unknown = fay.get("/inbox/resolved/?kind=everything")
    assert unknown.status_code == 400


def test_an_export_reads_a_bounded_page_at_a_time_and_misses_nothing(
    team: dict[str, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    cards = waiting(team, count=3)
    for run_id in cards:
        runs.resume(team["fay"], run_id, {"input": {"approved": True, "note": "n" * 3000}})
    claims.claim(team["dan"], waiting(team, title="Other")[0])
    monkeypatch.setattr(exports, "PAGE_BYTES", 1)  # one event a page

    pages, cursor = [], None
    while True:
        chunk, cursor = exports.export_page("jsonl", NO_FILTER, None, cursor)
        pages.append([json.loads(line)["entry"] for line in chunk.splitlines()])
        if cursor is None:
            break

    assert pages[:3] == [["claim", "decision"], ["decision"], ["decision"]]
    assert sum(len(page) for page in pages) == 4


def test_the_decision_logs_pages_never_shift_as_claims_and_decisions_are_added(
    team: dict[str, User],
) -> None:
    first, second, third = waiting(team, count=3)
    claims.claim(team["dan"], second)
    runs.resume(team["fay"], first, {"input": {"approved": True}})
    runs.resume(team["fay"], third, {"input": {"approved": False}})
    before = [(entry.entry, entry.run) for entry in log.decision_log().items]

    page = log.decision_log(limit=2)  # two decisions: no note shown yet
    claims.release(team["dan"], second)  # newer than every page: it never lands on a later one
    runs.resume(team["dan"], second, {"input": {"approved": True}})
    rest = log.decision_log(cursor=page.next, limit=2)

    assert before == [("decision", third), ("decision", first), ("claim", second)]
    assert [(entry.entry, entry.run) for entry in page.items + rest.items] == before
    assert rest.next is None
