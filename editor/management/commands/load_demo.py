"""``manage.py load_demo [--user USER]``: the demo content, once.

Creates the demo agent definitions and one frozen document per template
(:mod:`editor.services.documents.demo`) as ``USER`` (default ``admin``, the first user).
Documents that already exist are left alone, so running it again changes nothing; ``make run``
runs it on every start. Exits 1 when the user does not exist or may not author.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from editor.services.documents.demo import load_demo
from editor.services.errors import NotAllowed
from editor.services.tokens import find_user

EXIT_FAILED = 1


class Command(BaseCommand):
    help = "Load the demo agents and one frozen document per template, once (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--user", default="admin", help="who creates the demo content (default: admin)"
        )

    def handle(self, *args: Any, user: str, **options: Any) -> None:
        author = find_user(user)
        if author is None:
            raise CommandError(f"no user named {user!r}", returncode=EXIT_FAILED)
        try:
            created = load_demo(author)
        except NotAllowed:
            raise CommandError(
                f"{user} may not author documents (needs the authors role)",
                returncode=EXIT_FAILED,
            ) from None
        if created:
            self.stdout.write(f"Loaded the demo graphs: {', '.join(created)}")
        elif options["verbosity"] > 1:
            self.stdout.write("The demo graphs are already loaded.")
