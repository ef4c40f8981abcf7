"""WSGI entry point, served by gunicorn: ``gunicorn editor.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "editor.settings")

application = get_wsgi_application()
