"""Found here (issue 20): the Account page's password change checked the current password
with no attempt limit, so a stolen session could guess it as fast as it could post."""

from typing import Any

GUESS = {
    "old_password": "a-guess",
    "new_password1": "Nw-pass-9913",
    "new_password2": "Nw-pass-9913",
}


def guess(corpus: Any) -> None:
    """Five wrong guesses, then a sixth: it is refused for its number with a 429 saying when
    the form opens again, whatever it guesses."""
    for _ in range(4):
        answer = corpus.request("POST", "/account/password/", client="browser_nobody", data=GUESS)
        assert answer.status_code == 200, answer.status_code
        assert "Your old password was entered incorrectly" in answer.text
    for password in ("a-guess", corpus.names["password"]):
        answer = corpus.request(
            "POST",
            "/account/password/",
            client="browser_nobody",
            data={**GUESS, "old_password": password},
        )
        assert answer.status_code == 429, answer.status_code
        assert "the password form opens again at" in answer.text
        assert int(answer.headers["Retry-After"]) <= 15 * 60


def lift_the_limit(corpus: Any) -> None:
    """As an administrator would, so that later attacks can still sign in from here."""
    corpus.shell("from axes.models import AccessAttempt\nAccessAttempt.objects.all().delete()\n")


CASE = {
    "found": [],
    "attack": (
        "A signed-in session guessing its user's password through the password-change form: "
        "no limit, unlike the sign-in form (5 failures per 15 minutes)"
    ),
    "bounds": {"seconds": 120},  # six password checks (PBKDF2) and a shell: slow machines
    "steps": [
        # Failures of earlier attacks from this address (a wrong sign-in in `15`) count too.
        {"do": "python", "call": lift_the_limit},
        {"do": "python", "call": guess},
        {"do": "python", "call": lift_the_limit},
        {
            "do": "request",
            "path": "/account/",
            "as": "browser_nobody",
            "expect": {"status": 200, "contains": ["Change password"]},
        },
    ],
}
