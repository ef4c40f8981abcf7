"""Create the first user on a new install, once.

On the first start there is no way to sign in, so this creates the superuser ``admin`` with a
random password, prints it once and keeps it in a file only its owner can read
(``settings.GATEHOUSE_ADMIN_PASSWORD_FILE``). Later runs change nothing and print only where the
password is kept.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.urls import reverse

from editor.local_state import private_directory

USERNAME = "admin"


class Command(BaseCommand):
    help = "Create the superuser `admin` with a random password on first start (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url",
            default="",
            help="Where the site is served (http://127.0.0.1:8000), to print the sign-in link.",
        )

    def handle(self, *args: Any, base_url: str, **options: Any) -> None:
        password_file = Path(settings.GATEHOUSE_ADMIN_PASSWORD_FILE)
        sign_in = base_url.rstrip("/") + reverse("login")
        users = get_user_model().objects

        if users.filter(username=USERNAME).exists():
            if password_file.exists():
                self.stdout.write(
                    f"Sign in at {sign_in} as {USERNAME}; "
                    f"the first password is kept in {password_file}"
                )
            else:
                self.stdout.write(f"Sign in at {sign_in} as {USERNAME}.")
            return
        if users.filter(is_superuser=True).exists():
            self.stdout.write(f"A superuser already exists; sign in at {sign_in}.")
            return

        password = secrets.token_urlsafe(18)
        with transaction.atomic():
            users.create_superuser(username=USERNAME, email="", password=password)
            # Written inside the transaction: if the file cannot be kept, no user is created.
            _write_private(password_file, password + "\n")

        self.stdout.write(
            self.style.SUCCESS(f"Created the superuser {USERNAME}.")
            + f"\n\n    Sign in at {sign_in}\n"
            f"    username: {USERNAME}\n"
            f"    password: {password}\n\n"
            f"This password is shown only once. It is also kept in {password_file}, "
            "readable only by you; change it under Account once signed in."
        )


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that only the owner can read it (mode 0600)."""
    private_directory(path.parent, what="the first user's password file")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
        # The mode given to open() applies only to a new file; an old one keeps its own.
        os.fchmod(stream.fileno(), 0o600)
        stream.write(text)
