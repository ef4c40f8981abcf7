"""WSGI entry point, served by gunicorn: ``gunicorn editor.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "editor.settings")

application = get_wsgi_application()

from editor.apps import settle_start_up  # noqa: E402 - needs the settings loaded

settle_start_up()
