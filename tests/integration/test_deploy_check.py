"""Production settings pass Django's deployment checklist, and the responses carry the headers
it asks for: HTTPS only (a redirect and HSTS) when ``GATEHOUSE_TLS`` is on, and the security
headers on every page.
"""

from __future__ import annotations

import os
import runpy
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client
from pytest_django import Settings

PROJECT = Path(django_settings.BASE_DIR)
SETTINGS_FILE = PROJECT / "editor" / "settings.py"
YEAR = 365 * 24 * 3600

#: What a deployment behind a TLS-terminating proxy sets (docs/operations.md).
PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "gatehouse.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://gatehouse.example.com",
    "DATABASE_URL": "sqlite:///:memory:",
    "GATEHOUSE_TLS": "true",
    "GATEHOUSE_BEHIND_TLS_PROXY": "true",
}

#: Variables the test run sets that a deployment would not.
_TEST_ONLY = ("DJANGO_ALLOW_ASYNC_UNSAFE", "GATEHOUSE_SECURE_COOKIES", "DJANGO_SETTINGS_MODULE")
_TLS = (
    "GATEHOUSE_TLS",
    "GATEHOUSE_HSTS_SECONDS",
    "GATEHOUSE_HSTS_INCLUDE_SUBDOMAINS",
    "GATEHOUSE_HSTS_PRELOAD",
    "GATEHOUSE_BEHIND_TLS_PROXY",
)


def production_environment(**overrides: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if k not in _TEST_ONLY and k not in _TLS}
    return {**kept, **PRODUCTION, **overrides}


def check_deploy(environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def read_settings(monkeypatch: pytest.MonkeyPatch, **environment: str) -> dict[str, Any]:
    """settings.py evaluated afresh under the production environment and ``environment``."""
    for name in (*_TLS, "GATEHOUSE_SECURE_COOKIES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {**PRODUCTION, **environment}.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS_FILE))


def test_the_deployment_check_is_clean_under_production_settings() -> None:
    result = check_deploy(production_environment())

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_deployment_check_warns_when_https_is_not_configured() -> None:
    result = check_deploy(production_environment(GATEHOUSE_TLS="false"))

    assert result.returncode == 1
    assert "security.W004" in result.stderr  # no HSTS
    assert "security.W008" in result.stderr  # no redirect to HTTPS


def test_the_deployment_check_warns_when_cookies_are_not_secure() -> None:
    result = check_deploy(production_environment(GATEHOUSE_SECURE_COOKIES="false"))

    assert result.returncode == 1
    assert "security.W012" in result.stderr  # SESSION_COOKIE_SECURE
    assert "security.W016" in result.stderr  # CSRF_COOKIE_SECURE


def test_the_deployment_check_warns_when_email_is_configured_without_a_base_url() -> None:
    mail = {"GATEHOUSE_EMAIL_URL": "smtp://mail.example.com"}

    without = check_deploy(production_environment(**mail))
    with_base = check_deploy(
        production_environment(**mail, GATEHOUSE_BASE_URL="https://gatehouse.example.com")
    )

    assert without.returncode == 1
    assert "gatehouse.W001" in without.stderr
    assert "GATEHOUSE_BASE_URL" in without.stderr
    assert with_base.returncode == 0, with_base.stderr


def test_a_base_url_must_be_a_web_address(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="GATEHOUSE_BASE_URL"):
        read_settings(monkeypatch, GATEHOUSE_BASE_URL="gatehouse.example.com")
    values = read_settings(monkeypatch, GATEHOUSE_BASE_URL="https://gatehouse.example.com/app/")
    assert values["GATEHOUSE_BASE_URL"] == "https://gatehouse.example.com/app"


def test_tls_turns_on_the_redirect_and_a_years_hsts(monkeypatch: pytest.MonkeyPatch) -> None:
    values = read_settings(monkeypatch)

    assert values["SECURE_SSL_REDIRECT"] is True
    assert values["SECURE_HSTS_SECONDS"] == YEAR
    assert values["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert values["SECURE_HSTS_PRELOAD"] is False
    assert values["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")
    assert values["SESSION_COOKIE_SECURE"] is True
    assert values["CSRF_COOKIE_SECURE"] is True


def test_without_tls_there_is_no_redirect_and_no_hsts(monkeypatch: pytest.MonkeyPatch) -> None:
    values = read_settings(monkeypatch, GATEHOUSE_TLS="false")

    assert values["SECURE_SSL_REDIRECT"] is False
    assert values["SECURE_HSTS_SECONDS"] == 0


def test_the_hsts_settings_can_be_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    values = read_settings(
        monkeypatch,
        GATEHOUSE_HSTS_SECONDS="3600",
        GATEHOUSE_HSTS_INCLUDE_SUBDOMAINS="false",
        GATEHOUSE_HSTS_PRELOAD="true",
    )

    assert values["SECURE_HSTS_SECONDS"] == 3600
    assert values["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is False
    assert values["SECURE_HSTS_PRELOAD"] is True
    assert "security.W021" not in values.get("SILENCED_SYSTEM_CHECKS", [])


def test_a_client_address_header_must_be_a_header_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="GATEHOUSE_CLIENT_IP_HEADER"):
        read_settings(monkeypatch, GATEHOUSE_CLIENT_IP_HEADER="X-Forwarded-For: 1.2.3.4")


# --- What a browser receives --------------------------------------------------------------------


@pytest.fixture
def https_only(settings: Settings) -> None:
    """The settings GATEHOUSE_TLS=true and GATEHOUSE_BEHIND_TLS_PROXY=true produce."""
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = YEAR
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")


def test_plain_http_is_redirected_to_https(db: None, https_only: None) -> None:
    response = Client().get("/accounts/login/?next=/runs/")

    assert response.status_code == 301
    assert response["Location"] == "https://testserver/accounts/login/?next=/runs/"


def test_https_through_the_proxy_is_served_with_hsts(db: None, https_only: None) -> None:
    response = Client().get("/accounts/login/", headers={"X-Forwarded-Proto": "https"})

    assert response.status_code == 200
    assert response["Strict-Transport-Security"] == f"max-age={YEAR}; includeSubDomains"


def test_the_health_check_answers_over_plain_http(db: None, https_only: None) -> None:
    response = Client().get("/healthz")

    assert response.status_code == 200


def test_every_page_carries_the_security_headers(db: None) -> None:
    response = Client().get("/accounts/login/")

    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy


def test_the_session_and_csrf_cookies_are_secure_when_configured(
    django_user_model: Any, settings: Settings
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    django_user_model.objects.create_user("ada", password="a-long-test-password-1")
    browser = Client()

    form = browser.get("/accounts/login/")
    browser.post("/accounts/login/", {"username": "ada", "password": "a-long-test-password-1"})

    assert form.cookies["csrftoken"]["secure"] is True
    assert browser.cookies["sessionid"]["secure"] is True
    assert browser.cookies["sessionid"]["httponly"] is True
    assert browser.cookies["sessionid"]["samesite"] == "Lax"
