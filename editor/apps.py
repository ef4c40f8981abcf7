"""The Django application that hosts Gatehouse's models, views and commands."""

import gc
from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def ensure_roles(sender: AppConfig, **kwargs: Any) -> None:
    """Recreate the role groups after every migrate and every test flush.

    The data migration creates them once; a database flushed by a transactional
    test keeps its permissions (re-created after migrations) but loses the groups.
    """
    from editor.roles import ensure_role_groups

    ensure_role_groups(using=kwargs.get("using", "default"))


class EditorConfig(AppConfig):
    name = "editor"
    verbose_name = "Gatehouse"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from editor import checks  # noqa: F401  (registers the system checks)

        post_migrate.connect(ensure_roles, sender=self)
        # What start-up made (Django, the apps, the models: most of a process's objects) lives
        # as long as the process: the garbage collector's full passes leave it alone instead
        # of walking it again every few requests (tens of milliseconds each, measured on
        # editor answers for large graphs, docs/benchmarks.md).
        gc.freeze()
