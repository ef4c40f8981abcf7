"""Gatehouse's own system checks (``manage.py check``; ``--deploy`` for the deployment ones).

* ``gatehouse.W001`` (deployment): email is configured but ``GATEHOUSE_BASE_URL`` is not, so the
  links in the approvers' and operators' email use a guessed address (``editor.services.links``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register

__all__ = ["email_links_need_a_base_url"]


@register(Tags.security, deploy=True)
def email_links_need_a_base_url(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if getattr(settings, "GATEHOUSE_EMAIL_ENABLED", False) and not getattr(
        settings, "GATEHOUSE_BASE_URL", ""
    ):
        return [
            Warning(
                "Email is configured but GATEHOUSE_BASE_URL is not: the links in notification "
                "email point to a guessed address.",
                hint="Set GATEHOUSE_BASE_URL to where people reach Gatehouse, "
                "e.g. https://gatehouse.example.com.",
                id="gatehouse.W001",
            )
        ]
    return []
