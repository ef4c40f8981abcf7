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
            waiting,
        )
        from editor.services.documents import hints
        from editor.services.runs import test_nodes

        # The servers' access loggers write query strings with their own handlers.
        log_redaction.install()

        # The services ask for runs to be driven through editor.drives; the task drives them.
        drives.connect(tasks.drive_run)
        # The editor's pickers offer what the latest test run gave a node: runs are read by
        # the runs family, a layer above the documents' editor answer that asks for them.
        hints.connect_tested_input(test_nodes.offered_value)
        waiting.connect(tasks.act_on_deadline, tasks.queue_deadline_notice)

        post_migrate.connect(ensure_roles, sender=self)
        # What start-up made lives as long as the process (see settle_start_up).
        gc.freeze()


def settle_start_up() -> None:
    """Load what every request needs (the URLconf: the views, the API and its schemas), then
    keep all that start-up made out of the garbage collector's full passes (``gc.freeze``).

    A ``GATEHOUSE_MCP_SERVERS`` file that cannot be read raises ``ImproperlyConfigured``.

    Those objects live as long as the process; without this, a full pass walks them again
    every few requests: tens of milliseconds each, which were most of the slowest editor
    answers on large graphs (docs/benchmarks.md). The servers' entry points call it once.
    """
    from django.core.exceptions import ImproperlyConfigured
    from django.urls import get_resolver

    from editor.services.installation import mcp_catalogue
    from editor.tools.mcp import CatalogueError

    get_resolver().url_patterns  # noqa: B018  (imports the URLconf)
    # A catalogue of MCP servers that cannot be read stops the server here, naming what is
    # wrong, as a bad setting does (its servers are started only by the calls that need them).
    try:
        mcp_catalogue()
    except CatalogueError as error:
        raise ImproperlyConfigured(str(error)) from None
    gc.collect()
    gc.freeze()
