"""Email to the approvers when a gate suspends (spec 06 *Approval inbox*, spec 07 *Email*).

One message per suspension to each approver with an address (members of *approvers*, users
given the permission directly, and superusers), linking the gate's card in the inbox
(``GATEHOUSE_BASE_URL`` + ``/inbox/#card-…``). Sent through Django's email framework, and only
when email is configured (``GATEHOUSE_EMAIL_URL`` or ``EMAIL_HOST``): otherwise nothing is
queued at all.

The worker's store calls :func:`editor.tasks.queue_notification` once the ``Suspended``
event's append has committed. A position in a run's log is committed once, so a suspension is
announced once however often the run is driven again; the mail itself goes out from a task of
its own, never in a web request and never while a run's lease is held.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, mailers
from django.db.models import Q

from editor.models import Run, RunEvent
from editor.services.access import APPROVE
from editor.services.inbox import node_names

__all__ = ["approver_addresses", "card_link", "email_configured", "notify_suspension"]

logger = logging.getLogger(__name__)


def email_configured() -> bool:
    """Whether this installation has a mailer (``GATEHOUSE_EMAIL_URL`` or ``EMAIL_HOST``)."""
    return bool(getattr(settings, "GATEHOUSE_EMAIL_ENABLED", False))


def card_link(run_id: str, seq: int) -> str:
    """Where the card of a suspension is: absolute when ``GATEHOUSE_BASE_URL`` is set."""
    base = str(getattr(settings, "GATEHOUSE_BASE_URL", "") or "").rstrip("/")
    return f"{base}/inbox/#card-{run_id}-{seq}"


def approver_addresses() -> list[str]:
    """The addresses of everyone who may resolve a gate, each once."""
    app_label, codename = APPROVE.split(".")
    may_approve = (
        Q(is_superuser=True)
        | Q(
            groups__permissions__codename=codename,
            groups__permissions__content_type__app_label=app_label,
        )
        | Q(
            user_permissions__codename=codename, user_permissions__content_type__app_label=app_label
        )
    )
    rows = (
        get_user_model()
        .objects.filter(may_approve, is_active=True)
        .exclude(email="")
        .values_list("email", flat=True)
        .distinct()
    )
    return sorted(set(rows))


def _message(run: Run, payload: dict[str, Any], seq: int) -> tuple[str, str]:
    node = str(payload.get("node"))
    name = node_names([run.graph_id]).get(run.graph_id, {}).get(node) or node
    graph = run.document.title if run.document_id else run.graph_id[:15] + "…"
    prompt = str(payload.get("reason") or "")
    subject = f"Waiting for approval: {name} ({graph})"
    # One line per fact; user text is plain text here, never markup.
    body = "\n".join(
        [
            f"The gate “{name}” of {graph} waits for a decision.",
            "",
            prompt,
            "",
            f"Decide in the inbox: {card_link(str(run.id), seq)}",
            "",
            f"Run {run.id}, graph {run.graph_id}.",
        ]
    )
    # A header is one line: whatever the gate's name holds, the subject is flattened.
    return " ".join(subject.split())[:200], body


def notify_suspension(run_id: str, seq: int) -> int:
    """Tell the approvers about the suspension recorded at ``seq`` of a run; the number of
    messages sent. Nothing is sent when email is not configured, when there is no such
    suspension, or when it was resolved before this ran."""
    if not email_configured():
        return 0
    event = (
        RunEvent.objects.filter(run_id=run_id, seq=seq, kind="Suspended")
        .select_related("run", "run__document")
        .first()
    )
    if event is None:
        return 0
    run = event.run
    pending = (run.status or {}).get("pending") or []
    if not any(item.get("seq") == seq for item in pending):
        return 0
    addresses = approver_addresses()
    if not addresses:
        return 0
    subject, body = _message(run, event.payload if isinstance(event.payload, dict) else {}, seq)
    messages = [
        EmailMessage(subject, body, settings.DEFAULT_FROM_EMAIL, [address]) for address in addresses
    ]
    sent = mailers.default.send_messages(messages) or 0
    logger.info("run %s: suspension %s announced to %d approver(s)", run_id, seq, sent)
    return int(sent)
