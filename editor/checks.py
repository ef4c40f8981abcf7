"""Gatehouse's own system checks (``manage.py check``; ``--deploy`` for the deployment ones).

* ``gatehouse.E010``: the MCP catalogue (``GATEHOUSE_MCP_SERVERS``) cannot be used; one error
  per problem, naming the server entry it belongs to.
* ``gatehouse.W001`` (deployment): email is configured but ``GATEHOUSE_BASE_URL`` is not, so the
  links in the approvers' and operators' email use a guessed address (``editor.services.links``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from editor.tools.mcp import CatalogueProblem, check_catalogue
from editor.tools.mcp.catalogue import MAX_CATALOGUE_BYTES

__all__ = ["email_links_need_a_base_url", "mcp_catalogue_is_usable"]


@register()
def mcp_catalogue_is_usable(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    path = getattr(settings, "GATEHOUSE_MCP_SERVERS", None)
    if not path:
        return []
    file = Path(path)
    try:
        with file.open("rb") as handle:
            raw = handle.read(MAX_CATALOGUE_BYTES + 1)
    except OSError as error:
        problems = [CatalogueProblem(None, f"`{file}` cannot be read: {error.strerror or error}")]
    else:
        problems = check_catalogue(raw, os.environ, base_dir=file.parent)[1]
    return [
        Error(
            str(problem),
            hint='See docs/registries.md, "MCP servers", for the file\'s keys.',
            obj=f"GATEHOUSE_MCP_SERVERS[{problem.server}]" if problem.server else None,
            id="gatehouse.E010",
        )
        for problem in problems
    ]


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
