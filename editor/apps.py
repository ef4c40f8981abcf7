"""The Django application that hosts Gatehouse's models, views and commands."""

from django.apps import AppConfig


class EditorConfig(AppConfig):
    name = "editor"
    verbose_name = "Gatehouse"
    default_auto_field = "django.db.models.BigAutoField"
