"""``manage.py api_token create USER [--name NAME]``: a new API token for a user.

For scripts and first set-ups, where nobody has signed in to the Account page yet. The token is
printed alone on the last line (``tail -n 1`` takes it) and exits 0; it is shown only this once,
as only its digest is stored. An unknown user is refused on standard error with exit 1.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from editor.services.tokens import NAME_LENGTH, create_token, find_user

EXIT_UNKNOWN_USER = 1
EXIT_USAGE = 2
DEFAULT_NAME = "API token"


class Command(BaseCommand):
    help = "Create an API token for a user (api_token create USER); prints the token last."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="{create}")
        create = actions.add_parser(
            "create", help="create a token and print it alone on the last line"
        )
        create.add_argument("username", metavar="USER", help="the username the token acts as")
        create.add_argument(
            "--name",
            default=DEFAULT_NAME,
            help=f"what the token is for, shown on the Account page (default: {DEFAULT_NAME})",
        )

    def handle(self, *args: Any, action: str, username: str, name: str, **options: Any) -> None:
        limit = NAME_LENGTH
        if len(name.strip()) > limit:
            raise CommandError(
                f"--name is {len(name.strip())} characters long; at most {limit} fit",
                returncode=EXIT_USAGE,
            )
        user = find_user(username)
        if user is None:
            raise CommandError(f"no user named {username!r}", returncode=EXIT_UNKNOWN_USER)
        if not user.is_active:
            self.stderr.write(
                f"warning: {username} is inactive; the token will not work until the user "
                "is made active again",
                style_func=self.style.WARNING,
            )

        token, raw = create_token(user, name)
        self.stdout.write(
            f"Created the API token “{token.name}” for {username}. "
            "Copy it now: it will not be shown again."
        )
        self.stdout.write(raw)
