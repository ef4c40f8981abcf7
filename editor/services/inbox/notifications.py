"""Email about what waits in the inbox (spec 06 *Approval inbox*, spec 07 *Email*).

* **Gates** — one message per suspension to each person with an address who may decide it
  under its run's policy: the approvers its deciders name (the whole *approvers* role — members,
  users given the permission directly, superusers — by default), but for those four eyes keeps
  out.
* **Budget and reconciliation cards** — one message per card (a ``BudgetExceeded`` or
  ``ReconciliationNeeded`` event) to each operator with an address, found the same way.

Each message links the card in the inbox with an absolute address (``editor.services.links``:
``GATEHOUSE_BASE_URL`` + ``/inbox/#card-…``). Sent through Django's email framework, and only
when email is configured (``GATEHOUSE_EMAIL_URL`` or ``EMAIL_HOST``): otherwise nothing is
queued at all.

The worker's store calls :func:`editor.tasks.queue_notification` once the ``Suspended``
event's append has committed, and :func:`editor.tasks.queue_operator_notification` once a
budget or reconciliation event's has. A position in a run's log is committed once, so
each is announced once however often the run is driven again; the mail itself goes out from a
task of its own, never in a web request and never while a run's lease is held. A card resolved
before its task runs is not announced. Each message is sent on its own (:func:`send_each`):
the people the mail server did not take are tried again later, alone (``editor.tasks``).
"""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, mailers
from django.db.models import Q

from editor.engine.approvals import LEGACY, ROLE_GROUP, authors_of, gate_policy_of
from editor.models import Run, RunEvent
from editor.services.access import APPROVE, OPERATE
from editor.services.inbox import node_names
from editor.services.links import absolute_url, base_url, base_url_is_set, card_id
from editor.waiting import escalated_names

__all__ = [
    "OPERATOR_CARDS",
    "approver_addresses",
    "card_link",
    "decider_addresses",
    "email_configured",
    "gate_addresses",
    "notify_operator_card",
    "notify_suspension",
    "operator_addresses",
    "send_each",
]

#: The parking events whose cards operators resolve, and so are told about.
OPERATOR_CARDS = frozenset({"BudgetExceeded", "ReconciliationNeeded"})

logger = logging.getLogger(__name__)


def email_configured() -> bool:
    """Whether this installation has a mailer (``GATEHOUSE_EMAIL_URL`` or ``EMAIL_HOST``)."""
    return bool(getattr(settings, "GATEHOUSE_EMAIL_ENABLED", False))


def card_link(run_id: str, seq: int) -> str:
    """The absolute address of the inbox card of the item recorded at ``seq``: the run's
    cards, whichever view would list them, scrolled to this one."""
    return absolute_url(f"/inbox/?run={run_id}#{card_id(run_id, seq)}")


def _addresses(permission: str, among: Q | None = None, excluded: Q | None = None) -> list[str]:
    """The addresses of everyone who holds ``permission`` (``app.codename``), each once;
    ``among``: only those, ``excluded``: not those."""
    app_label, codename = permission.split(".")
    holds = (
        Q(is_superuser=True)
        | Q(
            groups__permissions__codename=codename,
            groups__permissions__content_type__app_label=app_label,
        )
        | Q(
            user_permissions__codename=codename, user_permissions__content_type__app_label=app_label
        )
    )
    people = get_user_model().objects.filter(holds, is_active=True).exclude(email="")
    if among is not None:
        people = people.filter(among)
    if excluded is not None:
        people = people.exclude(excluded)
    return sorted(set(people.values_list("email", flat=True).distinct()))


def approver_addresses() -> list[str]:
    """The addresses of everyone who may resolve a gate, each once."""
    return _addresses(APPROVE)


def decider_addresses(
    groups: Iterable[str],
    users: Iterable[str],
    *,
    excluded: Iterable[str] = (),
    starter: Any = None,
) -> list[str]:
    """The addresses of the approvers ``groups`` and ``users`` name (``approvers`` in
    ``groups``: every approver), but for the usernames ``excluded`` and the user of id
    ``starter`` (four eyes, earlier votes), each once."""
    groups, users = list(groups), list(users)
    among = None
    if ROLE_GROUP not in groups:
        among = Q(groups__name__in=groups) | Q(username__in=users)
    excluded_q = Q(username__in=list(excluded))
    if starter is not None:
        excluded_q |= Q(pk=starter)
    return _addresses(APPROVE, among, excluded_q)


def gate_addresses(item: Mapping[str, Any], recorded_policy: Any, starter: Any) -> list[str]:
    """The addresses of the people who may decide the open gate ``item`` of a run that
    recorded ``recorded_policy`` and was started by the user of id ``starter``."""
    node = str(item.get("node"))
    policy = gate_policy_of(recorded_policy, node) if recorded_policy else LEGACY
    more_groups, more_users = escalated_names(item)
    votes = [vote for vote in item.get("votes") or () if isinstance(vote, Mapping)]
    excluded = [str(vote.get("by")) for vote in votes]
    if policy.four_eyes:
        excluded += list(authors_of(recorded_policy))
    return decider_addresses(
        [*policy.groups, *more_groups],
        [*policy.users, *more_users],
        excluded=excluded,
        starter=starter if policy.four_eyes else None,
    )


def operator_addresses() -> list[str]:
    """The addresses of everyone who may raise a budget or reconcile a write, each once."""
    return _addresses(OPERATE)


def _names(run: Run, node: str) -> tuple[str, str]:
    """The node's display name and the graph's (its document's title, or its short hash)."""
    name = node_names([run.graph_id]).get(run.graph_id, {}).get(node) or node
    graph = run.document.title if run.document is not None else run.graph_id[:15] + "…"
    return name, graph


def _one_line(subject: str) -> str:
    # A header is one line: whatever the names hold, the subject is flattened.
    return " ".join(subject.split())[:200]


def _pending_event(
    run_id: str, seq: int, kinds: frozenset[str]
) -> tuple[RunEvent, dict[str, Any]] | None:
    """The event recorded at ``seq`` when it is of ``kinds`` and its item still waits, with
    that item (the run's status's pending entry)."""
    event = (
        # A test run's items are its author's, decided in the editor: nobody is emailed.
        RunEvent.objects.filter(
            run_id=run_id, seq=seq, kind__in=kinds, run__test_revision__isnull=True
        )
        .select_related("run", "run__document")
        .first()
    )
    if event is None:
        return None
    pending = (event.run.status or {}).get("pending") or []
    item = next((item for item in pending if item.get("seq") == seq), None)
    return (event, item) if item is not None else None


def send_each(
    addresses: list[str], subject: str, body: str, only: Collection[str] | None = None
) -> tuple[int, list[str]]:
    """One message to each address (of those ``only`` lists, on a second try), each on its
    own: how many were sent, and the addresses the mail server did not take (it refused them,
    or it could not be reached), to be tried again; the others are not sent twice."""
    recipients = [address for address in addresses if only is None or address in only]
    if not recipients:
        return 0, []
    if not base_url_is_set():
        logger.warning("GATEHOUSE_BASE_URL is not set: the email links to %s", base_url())
    mailer = mailers.default
    try:
        mailer.open()  # one connection for all, when the server answers
    except (smtplib.SMTPException, OSError) as error:
        logger.warning("the mail server could not be reached: %s", type(error).__name__)
        return 0, recipients
    failed = []
    try:
        for address in recipients:
            message = EmailMessage(subject, body, settings.DEFAULT_FROM_EMAIL, [address])
            try:
                sent = mailer.send_messages([message])
            except (smtplib.SMTPException, OSError) as error:
                logger.warning("a message was not sent: %s", type(error).__name__)
                sent = 0
            if not sent:
                failed.append(address)
    finally:
        mailer.close()
    return len(recipients) - len(failed), failed


def _message(run: Run, payload: dict[str, Any], seq: int) -> tuple[str, str]:
    name, graph = _names(run, str(payload.get("node")))
    prompt = str(payload.get("reason") or "")
    subject = f"Waiting for approval: {name} ({graph})"
    opening = [f"The gate “{name}” of {graph} waits for a decision.", "", prompt]
    return _one_line(subject), _body(opening, "Decide in the inbox", run, seq)


def _body(opening: list[str], action: str, run: Run, seq: int) -> str:
    """A message: what happened, the link to its card, and the run. One line per fact;
    user text is plain text here, never markup."""
    link = card_link(str(run.id), seq)
    return "\n".join(
        [*opening, "", f"{action}: {link}", "", f"Run {run.id}, graph {run.graph_id}."]
    )


def _announce(
    run_id: str,
    seq: int,
    kinds: frozenset[str],
    addresses: Callable[[RunEvent, dict[str, Any]], list[str]],
    message: Callable[[RunEvent, dict[str, Any]], tuple[str, str]],
    only: Collection[str] | None,
) -> tuple[RunEvent, int, list[str]] | None:
    """Send ``message`` of the open item at ``seq`` (one of ``kinds``) to ``addresses`` (those
    ``only`` lists, on a second try): the event, how many were sent and the addresses the mail
    server did not take; ``None`` without email, such an item or an address."""
    if not email_configured():
        return None
    found = _pending_event(run_id, seq, kinds)
    if found is None:
        return None
    event, item = found
    recipients = addresses(event, item)
    if not recipients:
        return None
    payload = event.payload if isinstance(event.payload, dict) else {}
    subject, body = message(event, payload)
    return event, *send_each(recipients, subject, body, only)


def notify_suspension(
    run_id: str, seq: int, only: Collection[str] | None = None
) -> tuple[int, list[str]]:
    """Tell the approvers about the suspension recorded at ``seq`` of a run (those ``only``
    lists, on a second try): how many messages were sent, and the addresses to try again.
    Nothing is sent when email is not configured, when there is no such suspension, or when
    it was resolved before this ran."""
    announced = _announce(
        run_id,
        seq,
        frozenset({"Suspended"}),
        lambda event, item: gate_addresses(
            item, event.run.approval_policy, event.run.created_by_id
        ),
        lambda event, payload: _message(event.run, payload, seq),
        only,
    )
    if announced is None:
        return 0, []
    _, sent, failed = announced
    logger.info("run %s: suspension %s announced to %d approver(s)", run_id, seq, sent)
    return sent, failed


def _operator_message(run: Run, kind: str, payload: dict[str, Any], seq: int) -> tuple[str, str]:
    name, graph = _names(run, str(payload.get("node")))
    if kind == "BudgetExceeded":
        budget = found if isinstance(found := payload.get("budget"), dict) else {}
        subject = f"Budget exceeded: {name} ({graph})"
        what = (
            f"The {budget.get('kind', '')} budget of {budget.get('limit', '')} of “{name}” "
            f"in {graph} was crossed: {payload.get('observed')} observed. The run waits "
            "until an operator raises the limit."
        )
        action = "Raise the limit in the inbox"
    else:
        subject = f"Unknown outcome of a write: {name} ({graph})"
        what = (
            f"The write tool {payload.get('tool')} of “{name}” in {graph} was cut off "
            f"(call {payload.get('call')}): whether it happened is unknown. The run waits until "
            "an operator records what it returned or runs it again."
        )
        action = "Reconcile it in the inbox"
    return _one_line(subject), _body([what], action, run, seq)


def notify_operator_card(
    run_id: str, seq: int, only: Collection[str] | None = None
) -> tuple[int, list[str]]:
    """Tell the operators about the budget or reconciliation card recorded at ``seq`` of a
    run (those ``only`` lists, on a second try): how many messages were sent, and the
    addresses to try again. Nothing is sent when email is not configured, when there is no
    such card, or when it was resolved before this ran."""
    announced = _announce(
        run_id,
        seq,
        OPERATOR_CARDS,
        lambda event, item: operator_addresses(),
        lambda event, payload: _operator_message(event.run, event.kind, payload, seq),
        only,
    )
    if announced is None:
        return 0, []
    event, sent, failed = announced
    logger.info("run %s: %s %s announced to %d operator(s)", run_id, event.kind, seq, sent)
    return sent, failed
