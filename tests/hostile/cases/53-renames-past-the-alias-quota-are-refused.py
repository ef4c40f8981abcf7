"""Found (issue 20): every rename reserved a slug for good, without limit."""

from typing import Any

from tests.hostile.quota_users import refused, user_with_limits

QUOTA = 3


def rename_in_a_loop(corpus: Any) -> None:
    user_with_limits(corpus, "renamer", {"aliases": QUOTA})
    created = corpus.request("POST", "/v1/documents", client="renamer", json={"title": "Slugs"})
    assert created.status_code == 201, created.text[:500]
    slug = created.json()["slug"]
    for number in range(QUOTA):
        new = f"slugs-{number}"
        answer = corpus.request(
            "PATCH", f"/v1/documents/{slug}", client="renamer", json={"slug": new}
        )
        assert answer.status_code == 200, answer.text[:500]
        slug = new
    answer = corpus.request(
        "PATCH", f"/v1/documents/{slug}", client="renamer", json={"slug": "one-too-many"}
    )
    refused(answer, 413, "quota_exceeded", "GATEHOUSE_QUOTA_ALIASES")
    # The document keeps its slug, and the refused one is not reserved.
    assert corpus.request("GET", f"/v1/documents/{slug}", client="renamer").status_code == 200
    assert corpus.request("GET", "/v1/documents/one-too-many").status_code == 404
    # The old slugs still lead to it.
    old = corpus.request("GET", "/v1/documents/slugs", allow_redirects=False)
    assert old.status_code == 308 and old.headers["Location"].endswith(f"/{slug}")


CASE = {
    "found": [],
    "attack": (
        "One author renames a document again and again: each rename keeps the old slug "
        "reserved for good, so the slugs of everyone could be taken; now the rename past "
        "the author's alias quota is refused with 413 naming GATEHOUSE_QUOTA_ALIASES"
    ),
    # Most of the time is manage.py shell creating the attacker with its limits.
    "bounds": {"seconds": 60},
    "steps": [{"do": "python", "call": rename_in_a_loop}],
}
