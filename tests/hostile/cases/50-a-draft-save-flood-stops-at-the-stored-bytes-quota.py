"""Found (issue 20): a draft stored 9.3 MB per save every 0.42 s, 4.2 GB per document."""

import json
from typing import Any

from tests.hostile.quota_users import refused, usage, user_with_limits

QUOTA = 13 << 20  # this user's own GATEHOUSE_QUOTA_STORED_BYTES: 13 MiB
SAVES = 8
BIG = 3 << 20  # each save: a 3 MiB draft, under the 8 MiB body cap


def flood(corpus: Any) -> None:
    user_with_limits(corpus, "flooder", {"stored_bytes": QUOTA})
    created = corpus.request("POST", "/v1/documents", client="flooder", json={"title": "Flood"})
    assert created.status_code == 201, created.text[:500]
    slug = created.json()["slug"]
    revision, saved, refusals = 1, 0, 0
    for number in range(SAVES):
        text = json.dumps({"schema_version": 1, "nodes": [], "edges": [],
                           "description": str(number % 10) * BIG})  # fmt: skip
        answer = corpus.request(
            "PUT", f"/v1/documents/{slug}/draft", client="flooder",
            json={"text": text}, headers={"If-Match": f'"{revision}"'},
        )  # fmt: skip
        if answer.status_code == 200:
            assert refusals == 0, "a save went through after the quota refused one"
            revision, saved = revision + 1, saved + 1
            continue
        refused(answer, 413, "quota_exceeded", "GATEHOUSE_QUOTA_STORED_BYTES")
        refusals += 1
    assert saved == QUOTA // BIG, saved
    assert refusals == SAVES - saved
    kept = usage(corpus, "flooder")
    # Bounded by the quota, and the running total is what is stored.
    assert kept["stored_bytes"] <= QUOTA, kept
    assert kept["stored_bytes"] == kept["revision_bytes"], kept
    assert kept["revisions"] == saved + 1  # the document's first revision, then each save
    draft = corpus.request("GET", f"/v1/documents/{slug}/draft", client="flooder").json()
    assert draft["revision"] == revision


CASE = {
    "found": [],
    "attack": (
        "One author saves a 3 MiB draft again and again: every save was kept in the history "
        "(500 a draft, 4.2 GB per document, documents without number); now the saves stop at "
        "the author's stored-bytes quota with 413 quota_exceeded naming it, and what is "
        "stored stays within it"
    ),
    "bounds": {"seconds": 90},
    "steps": [{"do": "python", "call": flood}],
}
