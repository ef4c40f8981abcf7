"""The app's settings for the processes the fault tests start, with one change: static files
are served from ``static/`` under their plain names, as in the test suite, because the tests do
not run ``collectstatic`` (production serves the hashed names it writes)."""

from editor.settings import *  # noqa: F403

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
