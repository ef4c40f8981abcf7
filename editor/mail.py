"""The mail backend of an installation that configured no email (spec 07).

Gatehouse sends email only when ``GATEHOUSE_EMAIL_URL`` or ``EMAIL_HOST`` is set; otherwise the
notifications are never queued at all. This backend is the default mailer then, so that any other
attempt to send (a password reset, say) is dropped on purpose rather than sent to a server nobody
configured — and, unlike Django's development backends, it is a deliberate production setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.mail.backends.base import BaseEmailBackend

__all__ = ["EmailDisabled"]


class EmailDisabled(BaseEmailBackend):
    """Sends nothing: this installation has no email configured."""

    def send_messages(self, email_messages: Sequence[Any]) -> int:
        return 0
