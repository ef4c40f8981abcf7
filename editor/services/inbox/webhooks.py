"""JSON webhooks for chat tools (``GATEHOUSE_WEBHOOKS``; ``docs/operations.md``, *Webhooks*).

When a gate's reminder, escalation or due time acts, each URL the operator listed receives one
``POST`` of a JSON object whose ``text`` a chat tool's incoming webhook shows as it is (Slack's,
Mattermost's, Rocket.Chat's field), beside the facts as fields. The request is the
``http_request`` tool's (``editor.tools.http``) with the listed URL's own host and port as its
allow list: the host is resolved first and every address it resolves to must be public unless
that address is what the URL names (a chat server on the local network is listed by its
address), the connection goes to the address checked, no redirect is followed, and the answer
is read to at most a megabyte within :data:`TIMEOUT_SECONDS`.

A URL may carry a secret (a chat tool's webhook does, in its path), so logs name a webhook by
its position and host, never by its URL.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from editor.engine.errors import ToolError
from editor.engine.ports import ToolContext
from editor.tools.http import HttpRequest, parse_allow_list

__all__ = ["TIMEOUT_SECONDS", "post_all", "webhooks_configured"]

logger = logging.getLogger(__name__)

#: How long one webhook may take to answer.
TIMEOUT_SECONDS = 10.0


def webhooks_configured() -> bool:
    return bool(getattr(settings, "GATEHOUSE_WEBHOOKS", ()))


def _post(url: str, payload: dict[str, Any], key: str) -> int:
    split = urlsplit(url)
    allow = parse_allow_list([split.netloc])
    answer = HttpRequest(allow)(
        {"method": "POST", "url": url, "body": payload},
        ToolContext(run_id="", node="", idempotency_key=key, timeout=TIMEOUT_SECONDS),
    )
    return int(answer["status"])


def post_all(
    payload: dict[str, Any], key: str, only: Collection[int] | None = None
) -> tuple[int, list[int]]:
    """``POST`` ``payload`` to every webhook, or to those at the positions ``only`` lists
    (``key``: its ``Idempotency-Key``, the same for every delivery of one message): how many
    answered with a 2xx status, and the positions to try again (no answer, or a ``429`` or
    ``5xx``: a chat server down or busy; another ``4xx`` will not change)."""
    delivered, again = 0, []
    for position, url in enumerate(getattr(settings, "GATEHOUSE_WEBHOOKS", ()), start=1):
        if only is not None and position not in only:
            continue
        host = urlsplit(url).hostname or "?"
        try:
            status = _post(url, payload, key)
        except ToolError as error:
            said = str(error).replace(url, f"webhook {position}")
            logger.warning("webhook %d (%s) failed: %s", position, host, said)
            again.append(position)
            continue
        if 200 <= status < 300:
            delivered += 1
            continue
        logger.warning("webhook %d (%s) answered %d", position, host, status)
        if status == 429 or status >= 500:
            again.append(position)
    return delivered, again
