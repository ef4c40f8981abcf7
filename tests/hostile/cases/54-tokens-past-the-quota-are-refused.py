"""Found (issue 20): API tokens without limit."""

from typing import Any

from tests.hostile.quota_users import user_with_limits

QUOTA = 2  # the attacker already has one (its API client's)


def mint_tokens(corpus: Any) -> None:
    user_with_limits(corpus, "minter", {"tokens": QUOTA}, browser=True)
    first = corpus.request(
        "POST", "/account/tokens/", client="minter_browser", data={"name": "second"}
    )
    assert first.status_code == 200 and "second" in first.text, first.text[:500]
    for _ in range(3):
        answer = corpus.request(
            "POST", "/account/tokens/", client="minter_browser", data={"name": "more"}
        )
        assert answer.status_code == 413, (answer.status_code, answer.text[:500])
        assert "Quota reached" in answer.text
        assert "2 active API tokens of the 2 allowed (GATEHOUSE_QUOTA_TOKENS)" in answer.text
        assert "http-equiv" not in answer.text
    account = corpus.request("GET", "/account/", client="minter_browser")
    assert account.text.count("more") == 0


CASE = {
    "found": [],
    "attack": (
        "A signed-in user creates API tokens in a loop on the account page: nothing bounded "
        "them; now the one past the quota gets a 413 page naming GATEHOUSE_QUOTA_TOKENS and "
        "none is created"
    ),
    # Most of the time is manage.py shell creating the attacker with its limits.
    "bounds": {"seconds": 60},
    "steps": [{"do": "python", "call": mint_tokens}],
}
