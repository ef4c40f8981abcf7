"""The app's settings for the processes the hostile corpus attacks, with one change: static
files are served from ``static/`` under their plain names, as in the rest of the test suite,
because the corpus does not run ``collectstatic`` (production serves the hashed names it
writes; ``tests/integration/test_docker_build.py`` checks that path)."""

from editor.settings import *  # noqa: F403

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
