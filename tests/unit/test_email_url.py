"""``GATEHOUSE_EMAIL_URL``: the mail server as a URL (spec 07, *Email*)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from editor.settings import email_from_url


def test_an_smtp_url_names_the_server_the_account_and_the_port() -> None:
    mailer = email_from_url("smtp+tls://gate%40example.org:s%3Acret@mail.example.org:2525")

    assert mailer["BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    assert mailer["OPTIONS"] == {
        "host": "mail.example.org",
        "port": 2525,
        "username": "gate@example.org",
        "password": "s:cret",
        "use_tls": True,
        "use_ssl": False,
        "timeout": 10,
    }


@pytest.mark.parametrize(
    ("url", "port", "tls", "ssl"),
    [
        ("smtp://mail.example.org", 25, False, False),
        ("smtp+tls://mail.example.org", 587, True, False),
        ("smtps://mail.example.org", 465, False, True),
    ],
)
def test_each_scheme_has_its_usual_port_and_encryption(
    url: str, port: int, tls: bool, ssl: bool
) -> None:
    options = email_from_url(url)["OPTIONS"]

    assert (options["port"], options["use_tls"], options["use_ssl"]) == (port, tls, ssl)


def test_console_prints_the_messages() -> None:
    assert email_from_url("console://") == {
        "BACKEND": "django.core.mail.backends.console.EmailBackend"
    }


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://mail.example.org", "must start with smtp://"),
        ("smtp://", "must name the mail server"),
        ("smtp://mail.example.org:port", "port that is not a number"),
    ],
)
def test_a_bad_url_stops_start_up_naming_the_variable(url: str, says: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="GATEHOUSE_EMAIL_URL") as raised:
        email_from_url(url)

    assert says in str(raised.value)
