#!/usr/bin/env python
"""Django's command-line utility for Gatehouse."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "editor.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 - reads the settings, so a bad variable stops here
        # Also while a command runs: a database folder that cannot be created, say.
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        # The message names the variable or says what to do; a traceback would only bury it.
        sys.exit(f"Configuration error: {error}")


if __name__ == "__main__":
    main()
