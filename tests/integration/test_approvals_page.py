"""The **Approvals** page of a document (``/graphs/<slug>/approvals/``), the editor's warning
about a gate the policy names and the draft lacks, and the policy's refusals in the inbox
(issue 26)."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from editor.models import GatePolicy, Run, RunEvent
from editor.services import documents, runs
from editor.services.documents import approvals
from tests.integration.api.callers import make_user
from tests.integration.api.running import drive, event_count
from tests.integration.html import assert_no_inline_script
from tests.integration.inbox import frozen, gated

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def signed_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def page_of(client: Client, slug: str) -> str:
    response = client.get(f"/graphs/{slug}/approvals/")
    assert response.status_code == 200
    return response.content.decode()


def gate_post(**fields: Any) -> dict[str, Any]:
    """The form of the gate ``review`` as the page sends it, with ``fields`` changed."""
    return {
        "gate": "review",
        "groups": ["approvers"],
        "four_eyes": "on",
        "quorum": "1",
        "due": "",
        "remind_at": "",
        "on_expiry": "",
        "resolve_with": "",
        **fields,
    }


def waiting_run(starter: User, slug: str, digest: str) -> str:
    run_id = runs.start_run(starter, digest, {"note": "v2"}, document_slug=slug).run
    assert drive(run_id) == "suspended"
    return run_id


def card_post(run_id: str, **fields: str) -> dict[str, str]:
    seq = str(Run.objects.get(pk=run_id).status["pending"][0]["seq"])
    return {"node": "review", "seq": seq, **fields}


# --- The page ---------------------------------------------------------------------------------


def test_an_author_sees_a_form_per_gate_of_the_draft_with_its_defaults(
    client: Client, author: User
) -> None:
    slug, _ = frozen(author, gated(name="Final review"))

    page = page_of(signed_in(client, author), slug)

    assert "Approvals of “Release notes”" in page
    assert "Final review" in page
    assert "the approvers role" in page
    assert re.search(r'name="groups" value="approvers" checked', page)
    assert re.search(r'name="four_eyes" value="on" checked', page)
    assert 'name="quorum" value="1"' in page
    assert "Save the policy of Final review" in page
    assert "The defaults: this document does not name this gate." in page
    assert_no_inline_script(page)


def test_someone_without_authoring_or_operating_sees_the_policy_read_only(
    client: Client, author: User, approver: User
) -> None:
    slug, _ = frozen(author, gated())

    page = page_of(signed_in(client, approver), slug)
    refused = client.post(f"/graphs/{slug}/approvals/gate/", gate_post(quorum="2"))

    assert "you see it read-only" in page
    assert '<form class="stacked-form policy-form"' not in page
    assert refused.status_code == 403
    assert not GatePolicy.objects.exists()


def test_the_editor_and_the_versions_page_link_to_the_approvals_page(
    client: Client, author: User
) -> None:
    slug, _ = frozen(author, gated())
    signed_in(client, author)

    for path in (f"/graphs/{slug}/", f"/graphs/{slug}/versions/"):
        page = client.get(path).content.decode()
        assert f'href="/graphs/{slug}/approvals/"' in page, path


def test_an_author_saves_a_gates_policy_and_the_answer_says_which_waiting_cards_keep_the_old(
    client: Client, author: User, operator: User
) -> None:
    slug, digest = frozen(author, gated())
    waiting_run(operator, slug, digest)
    waiting_run(operator, slug, digest)
    make_user("fiona", "approvers")

    response = signed_in(client, author).post(
        f"/graphs/{slug}/approvals/gate/",
        gate_post(quorum="2", users=["fiona"], due="24h", remind_at="75"),
        headers=HTMX,
    )

    assert response.status_code == 200
    answer = html.unescape(response.content.decode())
    assert "Saved the policy of review: runs started from now on use it." in answer
    assert "2 waiting cards keep the policy its run started with." in answer
    assert "2 waiting cards keep the policy their runs started with." in answer
    assert 'role="status"' in answer
    saved = approvals.policy_json(slug)["gates"]["review"]
    assert saved["quorum"] == 2
    assert saved["deciders"] == {"groups": ["approvers"], "users": ["fiona"]}
    assert (saved["due"], saved["remind_at"]) == ("1d", "75%")


def test_a_save_without_script_goes_back_to_the_page_at_the_gate(
    client: Client, author: User
) -> None:
    slug, _ = frozen(author, gated())

    response = signed_in(client, author).post(
        f"/graphs/{slug}/approvals/gate/", gate_post(quorum="3")
    )

    assert response.status_code == 302
    assert response["Location"].startswith(f"/graphs/{slug}/approvals/#gate-")
    assert "Saved the policy of review" in client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    ("fields", "beside", "words"),
    [
        ({"quorum": "9"}, "quorum", "Must be a whole number from 1 to 5."),
        ({"due": "whenever"}, "due", "like `24h` or `90m`"),
        ({"remind_at": "50%"}, "remind", "Needs a due time to be a share of."),
        ({"groups": []}, "deciders", "Name at least one group or user."),
        ({"groups": ["ghosts"]}, "deciders", "No group is named `ghosts`."),
        (
            {"due": "1h", "on_expiry": "resolve", "resolve_with": '{"approved": "yes"}'},
            "resolve",
            "Does not match the gate&#x27;s approval schema",
        ),
        ({"due": "1h", "on_expiry": "resolve", "resolve_with": "{nope"}, "resolve", "not valid"),
    ],
)
def test_a_refused_value_is_shown_beside_its_field_and_nothing_is_saved(
    client: Client, author: User, fields: dict[str, Any], beside: str, words: str
) -> None:
    slug, _ = frozen(author, gated())

    response = signed_in(client, author).post(
        f"/graphs/{slug}/approvals/gate/", gate_post(**fields), headers=HTMX
    )

    assert response.status_code == 200  # htmx swaps it
    answer = response.content.decode()
    assert re.search(rf'id="gate-[0-9a-f]+-{beside}-error">[^<]*{re.escape(words)}', answer), answer
    assert "autofocus" in answer
    assert not GatePolicy.objects.exists()


def test_a_gate_renamed_in_the_draft_is_flagged_on_the_page_and_warned_of_in_the_editor(
    client: Client, author: User
) -> None:
    slug, _ = frozen(author, gated())
    signed_in(client, author).post(f"/graphs/{slug}/approvals/gate/", gate_post(quorum="2"))
    renamed = json.dumps(gated()).replace('"review"', '"approve"')
    documents.save_draft(author, slug, text=renamed, expected_revision=1)

    page = html.unescape(page_of(client, slug))
    editor = html.unescape(client.get(f"/graphs/{slug}/").content.decode())

    assert "The policy names a gate the draft no longer has" in page
    assert "The draft has no gate review" in re.sub(r"<[^>]+>", "", page)
    assert "Remove this policy" in page
    # A warning beside the verdict, which still lets the draft be frozen.
    assert "No errors · this graph can be frozen · 1 warning" in editor
    assert "The policy names the gate <code>review</code>, which the draft no longer has." in editor
    assert 'id="freeze-button" disabled' not in editor


def test_removing_a_renamed_gates_policy_drops_it_from_the_page(
    client: Client, author: User
) -> None:
    slug, _ = frozen(author, gated())
    signed_in(client, author).post(f"/graphs/{slug}/approvals/gate/", gate_post(quorum="2"))
    documents.save_draft(
        author, slug, text=json.dumps(gated()).replace('"review"', '"approve"'), expected_revision=1
    )

    response = client.post(f"/graphs/{slug}/approvals/remove/", {"gate": "review"})

    assert response.status_code == 302
    assert not GatePolicy.objects.exists()
    assert "no longer has" not in client.get(response["Location"]).content.decode()


# --- The inbox --------------------------------------------------------------------------------


def test_the_runs_starter_sees_its_card_read_only_under_four_eyes(
    client: Client, author: User
) -> None:
    slug, digest = frozen(author, gated())
    starter = make_user("sam", "operators")
    starter.groups.add(Group.objects.get(name="approvers"))
    run_id = waiting_run(starter, slug, digest)

    mine = html.unescape(signed_in(client, starter).get("/inbox/").content.decode())
    page = html.unescape(client.get(f"/inbox/?run={run_id}").content.decode())

    assert f'id="card-{run_id}-' not in mine  # not theirs to decide
    card = page[page.index(f'id="card-{run_id}-') :]
    assert 'data-code="four_eyes"' in card
    assert "Four eyes: you started this run, so another approver decides the gate `review`." in card
    assert 'name="field-approved"' not in card[: card.index("</article>")]


def test_a_refused_post_of_a_card_shows_the_refusal_and_records_nothing(
    client: Client, author: User, approver: User
) -> None:
    slug, digest = frozen(author, gated())
    Group.objects.create(name="finance")
    approvals.replace_policy(
        author, slug, {"gates": {"review": {"deciders": {"groups": ["finance"], "users": []}}}}
    )
    run_id = waiting_run(make_user("otto", "operators"), slug, digest)
    before = event_count(run_id)
    signed_in(client, approver)

    inbox = html.unescape(client.get(f"/inbox/?run={run_id}").content.decode())
    answer = client.post(
        f"/inbox/{run_id}/resolve/", card_post(run_id, **{"field-approved": "true"}), headers=HTMX
    )

    assert 'data-code="not_an_approver"' in inbox
    assert "its approval policy leaves it to the group finance" in inbox
    assert answer.status_code == 200
    assert 'data-code="not_an_approver"' in answer.content.decode()
    assert event_count(run_id) == before


def test_a_quorum_card_counts_its_approvals_and_an_approver_who_voted_sees_it_read_only(
    client: Client, author: User, operator: User
) -> None:
    slug, digest = frozen(author, gated())
    approvals.replace_policy(author, slug, {"gates": {"review": {"quorum": 2}}})
    run_id = waiting_run(operator, slug, digest)
    amy = make_user("amy", "approvers")
    signed_in(client, amy)

    receipt = client.post(
        f"/inbox/{run_id}/resolve/", card_post(run_id, **{"field-approved": "true"}), headers=HTMX
    ).content.decode()
    again = html.unescape(client.get(f"/inbox/?run={run_id}").content.decode())
    other = html.unescape(
        signed_in(Client(), make_user("ben", "approvers")).get("/inbox/").content.decode()
    )

    assert "approval recorded" in receipt
    assert "1 of 2 approvals" in receipt
    assert 'data-code="already_voted"' in again
    assert "1 of 2 approvals (amy), needs one more." in other
    assert 'name="field-approved"' in other
    assert RunEvent.objects.filter(run_id=run_id, kind="ApprovalVoted").count() == 1


def test_the_decision_log_page_shows_the_policy_and_the_votes(
    client: Client, author: User, operator: User
) -> None:
    slug, digest = frozen(author, gated())
    approvals.replace_policy(author, slug, {"gates": {"review": {"quorum": 2}}})
    run_id = waiting_run(operator, slug, digest)
    for name in ("amy", "ben"):
        runs.resume(make_user(name, "approvers"), run_id, {"input": {"approved": True}})

    page = html.unescape(signed_in(client, author).get("/inbox/resolved/").content.decode())

    assert "approval 1 of 2" in page
    assert "Policy: approvers · four eyes · quorum 2" in page
    assert "after the approval of amy" in page


def test_each_approval_of_a_quorum_of_three_counts_itself_on_its_receipt_and_in_the_log(
    client: Client, author: User, operator: User
) -> None:
    slug, digest = frozen(author, gated())
    approvals.replace_policy(author, slug, {"gates": {"review": {"quorum": 3}}})
    run_id = waiting_run(operator, slug, digest)
    receipts = []
    for name in ("amy", "ben"):
        receipts.append(
            signed_in(Client(), make_user(name, "approvers"))
            .post(
                f"/inbox/{run_id}/resolve/",
                card_post(run_id, **{"field-approved": "true"}),
                headers=HTMX,
            )
            .content.decode()
        )

    log = html.unescape(signed_in(client, author).get("/inbox/resolved/").content.decode())

    assert "1 of 3 approvals" in receipts[0]
    assert "2 of 3 approvals" in receipts[1]
    assert "approval 2 of 3" in log and "approval 1 of 3" in log
