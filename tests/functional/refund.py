"""The refund graph of the approval browser tests (issue 26): a check, a gate whose approval
form is a required *Approve the refund* box and a note, a payment; and a run's card on the
inbox page."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "title": "Approve the refund"},
        "note": {"type": "string", "title": "Note"},
    },
    "required": ["approved"],
}

#: check (echo) → refund_review (gate) → pay (echo).
REFUND = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "check", "tool": "echo"}},
        {
            "kind": "gate",
            "payload": {
                "id": "refund_review",
                "name": "Refund review",
                "prompt": "Refund this customer?",
                "approval_schema": SCHEMA,
            },
        },
        {"kind": "tool", "payload": {"id": "pay", "tool": "echo"}},
    ],
    "edges": [{"from": "check", "to": "refund_review"}, {"from": "refund_review", "to": "pay"}],
}


def card_of(page: Page, run_id: str) -> Any:
    return page.locator(f'article.inbox-card[id^="card-{run_id}-"]')
