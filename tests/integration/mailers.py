"""A mail server for the tests that refuses some addresses, or is down (the retries of
``editor.tasks``: a notice is tried again for the people it missed)."""

from __future__ import annotations

import smtplib
from typing import Any, ClassVar

from django.core.mail.backends import locmem

__all__ = ["RefusingMailer"]


class RefusingMailer(locmem.EmailBackend):
    """Django's test mail backend (``mail.outbox``) that refuses the addresses in
    ``refused`` and, while ``down``, cannot be reached at all."""

    refused: ClassVar[set[str]] = set()
    down: ClassVar[bool] = False

    @classmethod
    def reset(cls) -> None:
        cls.refused, cls.down = set(), False

    def open(self) -> bool:
        if self.down:
            raise ConnectionRefusedError("the mail server is down")
        return False

    def send_messages(self, messages: Any) -> int:
        if self.down:
            raise ConnectionRefusedError("the mail server is down")
        for message in messages:
            if set(message.to) & self.refused:
                raise smtplib.SMTPRecipientsRefused({a: (550, b"no") for a in message.to})
        return int(super().send_messages(messages))
