"""The first user: `manage.py ensure_admin`."""

import io
import stat
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def ensure_admin(*args: str) -> str:
    stdout = io.StringIO()
    call_command("ensure_admin", *args, stdout=stdout)
    return stdout.getvalue()


def test_on_first_start_it_creates_a_superuser_and_prints_the_password_once(
    admin_password_file: Path,
) -> None:
    output = ensure_admin("--base-url", "http://127.0.0.1:8000")

    password = admin_password_file.read_text(encoding="utf-8").strip()
    assert f"password: {password}" in output
    assert "username: admin" in output
    assert "http://127.0.0.1:8000/accounts/login/" in output
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff
    assert admin.check_password(password)


def test_it_keeps_the_password_readable_only_by_its_owner(admin_password_file: Path) -> None:
    ensure_admin()

    assert stat.S_IMODE(admin_password_file.stat().st_mode) == 0o600


def test_it_makes_a_long_random_password(admin_password_file: Path) -> None:
    ensure_admin()
    first = admin_password_file.read_text(encoding="utf-8").strip()
    get_user_model().objects.all().delete()
    ensure_admin()
    second = admin_password_file.read_text(encoding="utf-8").strip()

    assert len(first) >= 20
    assert first != second


def test_on_later_starts_it_prints_only_where_the_password_is(admin_password_file: Path) -> None:
    ensure_admin()
    password = admin_password_file.read_text(encoding="utf-8").strip()
    user_before = get_user_model().objects.get(username="admin")

    output = ensure_admin()

    assert password not in output
    assert str(admin_password_file) in output
    assert get_user_model().objects.count() == 1
    user_after = get_user_model().objects.get(username="admin")
    assert user_after.pk == user_before.pk
    assert user_after.password == user_before.password
    assert admin_password_file.read_text(encoding="utf-8").strip() == password


def test_it_leaves_an_install_that_already_has_a_superuser_alone(
    admin_password_file: Path,
) -> None:
    get_user_model().objects.create_superuser("owner", "", "a-password-of-theirs")

    output = ensure_admin()

    assert "already exists" in output
    assert not get_user_model().objects.filter(username="admin").exists()
    assert not admin_password_file.exists()
