"""Found (issue 20): documents without number, per user."""

from typing import Any

from tests.hostile.quota_users import refused, usage, user_with_limits

QUOTA = 3


def create_past_the_quota(corpus: Any) -> None:
    user_with_limits(corpus, "hoarder", {"documents": QUOTA})
    for number in range(QUOTA):
        answer = corpus.request(
            "POST", "/v1/documents", client="hoarder", json={"title": f"Doc {number}"}
        )
        assert answer.status_code == 201, answer.text[:500]
    for _ in range(5):
        error = refused(
            corpus.request("POST", "/v1/documents", client="hoarder", json={"title": "More"}),
            413,
            "quota_exceeded",
            "GATEHOUSE_QUOTA_DOCUMENTS",
        )
        assert error["details"]["used"] == QUOTA
    duplicate = corpus.request("POST", "/v1/documents/doc-0/duplicate", client="hoarder", json={})
    refused(duplicate, 413, "quota_exceeded", "GATEHOUSE_QUOTA_DOCUMENTS")
    assert usage(corpus, "hoarder")["documents"] == QUOTA
    # Another author is not affected.
    assert corpus.request("POST", "/v1/documents", json={"title": "Mine"}).status_code == 201


CASE = {
    "found": [],
    "attack": (
        "One author creates documents (and duplicates) in a loop: nothing bounded their number; "
        "now the one past the author's quota is refused with 413 quota_exceeded naming "
        "GATEHOUSE_QUOTA_DOCUMENTS, and none is created"
    ),
    # Most of the time is manage.py shell creating the attacker with its limits.
    "bounds": {"seconds": 60},
    "steps": [{"do": "python", "call": create_past_the_quota}],
}
