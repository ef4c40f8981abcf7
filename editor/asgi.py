"""ASGI entry point, for ASGI servers; the Docker image serves WSGI through gunicorn."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "editor.settings")

application = get_asgi_application()
