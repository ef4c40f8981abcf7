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
        from editor import (
            checks,  # noqa: F401  (registers the system checks)
            drives,
            log_redaction,
            tasks,
        )

        # The servers' access loggers write query strings with their own handlers.
        log_redaction.install()

        # The services ask for runs to be driven through editor.drives; the task drives them.
        drives.connect(tasks.drive_run)

        post_migrate.connect(ensure_roles, sender=self)
        # What start-up made lives as long as the process (see settle_start_up).
        gc.freeze()


def settle_start_up() -> None:
    """Load what every request needs (the URLconf: the views, the API and its schemas), then
    keep all that start-up made out of the garbage collector's full passes (``gc.freeze``).

    Those objects live as long as the process; without this, a full pass walks them again
    every few requests: tens of milliseconds each, which were most of the slowest editor
    answers on large graphs (docs/benchmarks.md). The servers' entry points call it once.
    """
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018  (imports the URLconf)
    gc.collect()
    gc.freeze()
